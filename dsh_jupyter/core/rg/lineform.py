"""rg's one-line-per-match form, read when the heading form cannot be: each line carries its path.

Why it exists: grep reads rg's heading form (``headingform``), which cannot vouch for a path that
holds a newline (a name can hold one; a neighbour can make one on purpose). The search is then
asked again in this form, ``PATH NUL N: TEXT newline`` for every matching line, which stays exact
with such names and, unlike ``--json``, honours ``--max-columns``: a minified bundle's
megabyte-long lines are still printed as a bounded preview, so a strange name beside
``node_modules`` cannot make the raw output grow with line length again.

It is exact because a path cannot hold NUL and a text can hold neither NUL nor a newline: split
at the NULs, each piece after the first is one line's ``N: TEXT``, its newline, and the path of
the next line. The one line rg prints without a NUL is its note that it met a binary file after
a match; it starts with the path just searched and ``": "``. A piece that could be that note, or
anything that is not of the form, makes ``parse_lines`` answer None, and the caller asks again
in ``--json``.
"""

from __future__ import annotations

import re

from .headingform import FileBlocks, _decoded_paths

__all__ = ["LINE_FLAGS", "parse_lines"]

LINE_FLAGS = [
    "--no-heading",
    "--with-filename",
    "--line-number",
    "--null",
    "--field-match-separator=: ",
    "--color=never",
]

_MATCH_LINE = re.compile(rb"\d+: ")


def parse_lines(out: bytes) -> FileBlocks | None:
    """Every match of ``out`` as one block per file, in rg's order; None when unsure."""
    if not out:
        return FileBlocks([], [], [])
    pieces = out.split(b"\0")
    raw_paths: list[bytes] = []
    bodies: list[bytes] = []
    counts: list[int] = []
    path, lines = pieces[0], []
    if not path:
        return None
    last = len(pieces) - 1
    for k, piece in enumerate(pieces[1:], 1):
        line, newline, rest = piece.partition(b"\n")
        if not newline or _MATCH_LINE.match(line) is None:
            return None
        lines.append(line)
        if rest == path and k < last:
            continue  # the next line is the same file's
        raw_paths.append(path)
        bodies.append(b"\n".join(lines))
        counts.append(len(lines))
        if k == last:
            return FileBlocks(_decoded_paths(raw_paths), bodies, counts) if not rest else None
        if not rest or rest.startswith(path + b": "):
            return None  # no path, or maybe rg's note on a binary file
        path, lines = rest, []
    return None
