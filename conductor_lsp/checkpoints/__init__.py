"""Checkpoints of the working tree and the one undo: what every job takes before it changes
anything, and what the command line and the editor restore. ``git`` is the identity our
own commits carry."""
