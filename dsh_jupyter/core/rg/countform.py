"""Parse ``rg --count --null --with-filename`` output: each matching file with its count of matching lines.

Why it exists: grep's files_with_matches and count modes need no line of any match, only how many
each file holds. rg counts them itself and prints one short row per file (``PATH NUL COUNT
newline``), so a search over 100,000 files costs what rg's walk costs, not what printing and
reading tens of thousands of lines costs. A path cannot hold a NUL and a count holds only digits,
so the rows split without doubt, newlines in names included.

What it must never do: guess. Output that is not rows of that form raises ``ValueError``
starting with ``malformed rg --count output``.
"""

from __future__ import annotations

import re

from .headingform import FileBlocks

__all__ = ["COUNT_FLAGS", "parse_counts"]

COUNT_FLAGS = ["--count", "--null", "--with-filename"]


def parse_counts(out: bytes) -> FileBlocks:
    """The files and their counts, as blocks without bodies (``FileBlocks`` of empty bodies)."""
    if not out:
        return FileBlocks([], [], [])
    # One decode and one split in C: every NUL is followed by a count and a newline, so
    # splitting at "NUL digits newline" leaves PATH, COUNT, PATH, COUNT, ..., "" (a file name
    # holds no NUL). Bytes that are not UTF-8 become surrogate escapes, as decoded one by one.
    text = out.decode("utf-8", "surrogateescape")
    parts = _ROW_END.split(text)
    if len(parts) < 3 or parts[-1] != "" or text.count("\0") != len(parts) // 2:
        raise ValueError(f"malformed rg --count output near {_near(text)!r}")
    names = parts[0:-1:2]
    counts = list(map(int, parts[1::2]))
    return FileBlocks(names, [b""] * len(names), counts)


_ROW_END = re.compile("\0([0-9]+)\n")


def _near(text: str) -> str:
    """Where the output stops being rows: the first NUL not followed by a count and a newline."""
    at = 0
    while (at := text.find("\0", at)) >= 0:
        if not _ROW_END.match(text, at):
            return text[at : at + 60]
        at += 1
    return text[-60:]
