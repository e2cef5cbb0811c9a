"""How workers are asked to write edits: the formats ``edits.parse`` reads back.

Whole files for small files (small models write those far more reliably: measured in
``bench/README.md``, fix quality on ``bench/tasks``), SEARCH/REPLACE blocks for big ones;
the example names a real file of the task, since small models copy an example path
literally.
"""

from __future__ import annotations

from pathlib import PurePosixPath

WHOLE = (
    "To change a file, write its path on one line and then the complete new file in a "
    "fenced code block, for example:\n\n{path}\n```{lang}\n...the whole new file...\n```\n\n"
)
BLOCKS = (
    "To change a file, write SEARCH/REPLACE blocks with the file's path on the line before "
    "each, for example:\n\n{path}\n<<<<<<< SEARCH\nexact lines from the file\n=======\n"
    "the new lines\n>>>>>>> REPLACE\n\nSEARCH must copy existing lines exactly; keep it "
    "short and unique. "
)
#: Files up to this many lines are answered whole.
WHOLE_FILE_LINES = 150
_LANGS = {".py": "python", ".js": "javascript", ".ts": "typescript", ".go": "go", ".rs": "rust"}


def edit_instructions(example: str, longest: int) -> str:
    """How to write a change, with ``example`` as the path in the example; ``longest`` is
    the line count of the biggest file under repair."""
    lang = _LANGS.get(PurePosixPath(example).suffix, "")
    return (WHOLE if longest <= WHOLE_FILE_LINES else BLOCKS).format(path=example, lang=lang)


__all__ = ["BLOCKS", "WHOLE", "WHOLE_FILE_LINES", "edit_instructions"]
