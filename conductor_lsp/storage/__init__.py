"""Where conductor-lsp keeps its own files: the user cache (sandboxes, weights, copies of
checkpoints outside git), and the workspace's ``.conductor/`` (traces, episodes, reports);
and how the records in them are written and read: one converter (``records``)."""
