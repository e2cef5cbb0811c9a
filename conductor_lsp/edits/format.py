"""How workers are asked to write edits: the formats ``edits.parse`` reads back.

Whole files for small files (small models write those far more reliably: measured in
``bench/README.md``, fix quality on ``bench/tasks``), SEARCH/REPLACE blocks for big ones;
the example names a real file of the task, since small models copy an example path
literally. Its text cannot be taken for an answer: an edit that comes back with the
example's words (``repeats_example``) is refused as such, so a retry knows why.
"""

from __future__ import annotations

from pathlib import PurePosixPath

#: The example's own words, which no file holds: an answer that returns them copied the
#: example instead of writing an edit.
EXAMPLE_WHOLE = "...the whole new file..."
EXAMPLE_SEARCH = "exact lines from the file"
EXAMPLE_REPLACE = "the new lines"
WHOLE = (
    "To change a file, write its path on one line and then the complete new file in a "
    f"fenced code block, for example:\n\n{{path}}\n```{{lang}}\n{EXAMPLE_WHOLE}\n```\n\n"
)
BLOCKS = (
    "To change a file, write SEARCH/REPLACE blocks with the file's path on the line before "
    f"each, for example:\n\n{{path}}\n<<<<<<< SEARCH\n{EXAMPLE_SEARCH}\n=======\n"
    f"{EXAMPLE_REPLACE}\n>>>>>>> REPLACE\n\nSEARCH must copy existing lines exactly; keep it "
    "short and unique. "
)
#: Said when an answer returns the example (the next round's prompt shows it).
REPEATS_EXAMPLE = (
    "the answer repeats the format's example ({what}), not the file's lines: write the "
    "real lines of the file"
)
#: Files up to this many lines are answered whole.
WHOLE_FILE_LINES = 150
_LANGS = {".py": "python", ".js": "javascript", ".ts": "typescript", ".go": "go", ".rs": "rust"}


def edit_instructions(example: str, longest: int) -> str:
    """How to write a change, with ``example`` as the path in the example; ``longest`` is
    the line count of the biggest file under repair."""
    lang = _LANGS.get(PurePosixPath(example).suffix, "")
    return (WHOLE if longest <= WHOLE_FILE_LINES else BLOCKS).format(path=example, lang=lang)


def repeats_example(search: str, replace: str) -> str:
    """Which of the example's words an edit returns ('' when none): the example's
    SEARCH text, its new lines, or its whole-file placeholder."""
    said = {
        EXAMPLE_SEARCH: "SEARCH", EXAMPLE_REPLACE: "REPLACE", EXAMPLE_WHOLE: "whole file",
    }  # fmt: skip
    found = [said[t.strip()] for t in (search, replace) if t.strip() in said]
    return " and ".join(f"its {w} text" for w in found)


__all__ = [
    "BLOCKS",
    "EXAMPLE_REPLACE",
    "EXAMPLE_SEARCH",
    "EXAMPLE_WHOLE",
    "REPEATS_EXAMPLE",
    "WHOLE",
    "WHOLE_FILE_LINES",
    "edit_instructions",
    "repeats_example",
]
