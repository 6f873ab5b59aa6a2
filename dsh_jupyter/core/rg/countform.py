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

from .headingform import FileBlocks

__all__ = ["COUNT_FLAGS", "parse_counts"]

COUNT_FLAGS = ["--count", "--null", "--with-filename"]


def parse_counts(out: bytes) -> FileBlocks:
    """The files and their counts, as blocks without bodies (``FileBlocks`` of empty bodies)."""
    if not out:
        return FileBlocks([], [], [])
    pieces = out.split(b"\0")
    # pieces: PATH0, "N0\nPATH1", "N1\nPATH2", ..., "Nlast\n"
    paths = [pieces[0]]
    counts = []
    for piece in pieces[1:]:
        number, newline, rest = piece.partition(b"\n")
        if not newline or not number.isdigit():
            raise ValueError(f"malformed rg --count output near {piece[:60]!r}")
        counts.append(int(number))
        paths.append(rest)
    if paths.pop() != b"":
        raise ValueError("malformed rg --count output: it does not end with a count")
    names = [p.decode("utf-8", "surrogateescape") for p in paths]
    return FileBlocks(names, [b""] * len(names), counts)
