"""rg's match lines in its heading form, kept file by file as the bytes rg printed.

Why it exists: for a broad grep, ``--json`` makes rg print several times the bytes of the matches
themselves (every record carries the path, the submatches and offsets, JSON-escaped), and reading
that in Python can cost more than rg's search. The heading form (``HEADING_FLAGS``) prints each file once::

    PATH\\0N: TEXT\\nN: TEXT\\n\\nPATH\\0N: TEXT\\n

A third of the bytes, and already grouped by file: a file's lines stay one ``bytes`` body, the
spill is made from those bodies with C-level replaces (``render_grep_spill_runs``), and only the
few lines a page shows are split into numbers and texts (``FileBlocks.line``). The pieces rg has
written are read while it still runs (``BlockStream.feed``, every complete block at once, a few
C-level passes per piece): on two cores busy with rg's two threads that costs about half of what
the same work costs after rg has exited. Undecodable bytes
stay bytes until the end: paths become text with surrogate escapes (so a path can be named
back), line texts get U+FFFD, as the JSON parser decodes them.

It is exact because nothing can forge a boundary: a path cannot hold NUL, so the first NUL of a
block ends it; a text can hold neither NUL (rg stops searching a file at its first NUL) nor a
newline (no multiline mode); every match line starts with digits, so a blank line is only ever
the separator between two files. What would break the form is checked, never guessed: a path
holding a newline, or any line in a block that is not ``N: TEXT``. The one such line rg prints on
purpose is its warning that it stopped searching a binary file after a match, which names the
block's own path and ends the block; it is dropped (as ``--json`` reports no such line). Anything
else makes ``finish`` return None and the caller runs the search again with ``--json``
(``rg.jsonstream``), which says unambiguously what is what.

The submatch positions the widgets highlight are not in this form; a page's lines are searched
again for them (``tools/grep/spans``).
"""

from __future__ import annotations

import re
from itertools import repeat
from operator import add, itemgetter

__all__ = ["HEADING_FLAGS", "BlockStream", "FileBlocks"]

HEADING_FLAGS = [
    "--heading",
    "--with-filename",
    "--line-number",
    "--null",
    "--field-match-separator=: ",
    "--color=never",
]

_FIRST = re.compile(rb"\d+: ")  # a block's first line, right after the path's NUL
_HEAD = re.compile(rb"[^\0\n]+\0\d+: ")  # a block's start: a path without a newline, its NUL, a match line
# A newline that is followed by neither a match line, nor a blank line and a block's start, nor
# (being that blank line) a block's start: what the quick reading cannot vouch for.
_ODD = re.compile(rb"\n(?!\d+: |\n[^\0\n]+\0\d+: |(?<=\n\n)[^\0\n]+\0)")
_NOT_A_MATCH = re.compile(rb"\n(?!\d+: )")  # within one block: a later line that is not a match line
_BINARY_WARNING = b": WARNING: stopped searching binary file after match"
_BODY = itemgetter(0)
_FOUND = itemgetter(1)
_PATH = itemgetter(2)


class FileBlocks:
    """Every match of one search, as one block per file in rg's order.

    ``paths`` as rg printed them (decoded, undecodable bytes as surrogate escapes), ``bodies`` the
    file's match lines ``N: TEXT`` joined by newlines (texts byte for byte, CR kept), ``counts``
    how many lines each body holds.
    """

    __slots__ = ("_split", "bodies", "counts", "paths")

    def __init__(self, paths: list[str], bodies: list[bytes], counts: list[int]) -> None:
        self.paths, self.bodies, self.counts = paths, bodies, counts
        self._split: dict[int, list[bytes]] = {}

    def __len__(self) -> int:
        return sum(self.counts)

    def runs(self) -> tuple[list[str], list[int], list[int]]:
        """The path, key (block index) and match count of each run of one file: each block."""
        return self.paths, list(range(len(self.paths))), self.counts

    def _rows(self, block: int) -> list[bytes]:
        rows = self._split.get(block)
        if rows is None:
            rows = self._split[block] = self.bodies[block].split(b"\n")
        return rows

    def line(self, block: int, k: int) -> tuple[int, bytes]:
        """The ``k``-th match of ``block``: its line number and its text as rg printed it."""
        number, _, text = self._rows(block)[k].partition(b": ")
        return int(number), text

    def lines(self, block: int) -> list[tuple[int, bytes]]:
        return [self.line(block, k) for k in range(self.counts[block])]

    def kept(self, keep: list[list[int]]) -> FileBlocks:
        """These blocks with only the matches at the indices ``keep[block]``; empty blocks drop out."""
        paths, bodies, counts = [], [], []
        for block, ks in enumerate(keep):
            if not ks:
                continue
            if len(ks) == self.counts[block]:
                body = self.bodies[block]
            else:
                rows = self._rows(block)
                body = b"\n".join([rows[k] for k in ks])
            paths.append(self.paths[block])
            bodies.append(body)
            counts.append(len(ks))
        return FileBlocks(paths, bodies, counts)


class BlockStream:
    """Reads rg's heading-form output fed to it in pieces, as it arrives.

    Each piece's complete blocks (everything up to its last blank line) are read at once, while
    rg still runs, so that after rg has exited only the last piece is left; what follows the last
    blank line waits for the next piece. ``broken`` stops it: the caller asks rg again.
    """

    def __init__(self) -> None:
        self._carry: list[bytes] = []  # the output after the last blank line seen, in pieces
        self._raw_paths: list[bytes] = []
        self._bodies: list[bytes] = []
        self._counts: list[int] = []
        self.broken = False
        self.size = 0  # bytes fed
        self.matches = 0  # matching lines read so far (for progress)

    def feed(self, data: bytes) -> None:
        self.size += len(data)
        if self.broken or not data:
            return
        cut = data.rfind(b"\n\n")
        if cut >= 0:
            self._carry.append(data[:cut])
            region = b"".join(self._carry)
            rest = data[cut + 2 :]
        elif data[0] == 10 and self._carry and self._carry[-1].endswith(b"\n"):
            region = b"".join(self._carry)[:-1]  # the blank line began at the end of the last piece
            rest = data[1:]
        else:
            self._carry.append(data)
            return
        self._carry = [rest] if rest else []
        self._read(region)

    def _read(self, region: bytes) -> None:
        read = _read_region(region)
        if read is None:
            self.broken = True
            self._carry = []
            return
        raw_paths, bodies = read
        self._raw_paths += raw_paths
        self._bodies += bodies
        counts = _counts(bodies)
        self._counts += counts
        self.matches += sum(counts)

    def head(self, files: int) -> FileBlocks:
        """The first ``files`` whole files read so far (a running search's first matches)."""
        return FileBlocks(_decoded_paths(self._raw_paths[:files]), self._bodies[:files], self._counts[:files])

    @property
    def files(self) -> int:
        """Files whose matches were read so far (for progress)."""
        return len(self._counts)

    def finish_cut(self) -> FileBlocks | None:
        """The files whose blocks were complete when rg was stopped mid-output (the raw-output
        guard): the block being written then is left out, since it may lack matches. None when
        the output read so far could not be read for sure."""
        if self.broken:
            return None
        self._carry = []
        return FileBlocks(_decoded_paths(self._raw_paths), self._bodies, self._counts)

    def finish(self) -> FileBlocks | None:
        """Every match, or None when the search must be run again with ``--json``."""
        if self.broken:
            return None
        tail = b"".join(self._carry)
        self._carry = []
        if tail:
            if not tail.endswith(b"\n"):
                return None  # cut inside a line
            self._read(tail[:-1])
            if self.broken:
                return None
        elif self._bodies:
            return None  # the output ended with a blank line: no block follows it
        return FileBlocks(_decoded_paths(self._raw_paths), self._bodies, self._counts)


def _read_region(region: bytes) -> tuple[list[bytes], list[bytes]] | None:
    """The paths and bodies of ``region``: whole blocks of the output, the blank lines between
    them, no newline at its end; None when it is not that."""
    if _HEAD.match(region) is None:
        return None
    if _ODD.search(region) is not None:
        return _careful(region)
    # Every line is a match line, a blank line or a block's start, and every block starts with
    # a path and its NUL. Split at the NULs: each piece but the first and last is one file's
    # body, the blank line and the next file's path. A NUL within a text would leave a piece
    # without a blank line.
    pieces = region.split(b"\0")
    parts = list(map(bytes.rpartition, pieces[1:-1], repeat(b"\n\n")))
    if not all(map(_FOUND, parts)):
        return None
    return [pieces[0], *map(_PATH, parts)], [*map(_BODY, parts), pieces[-1]]


def _decoded_paths(raw_paths: list[bytes]) -> list[str]:
    """Every path in one decode (none holds a NUL), undecodable bytes as surrogate escapes."""
    if not raw_paths:
        return []
    return b"\0".join(raw_paths).decode("utf-8", "surrogateescape").split("\0")


def _counts(bodies: list[bytes]) -> list[int]:
    return list(map(add, map(bytes.count, bodies, repeat(b"\n")), repeat(1)))


def _careful(region: bytes) -> tuple[list[bytes], list[bytes]] | None:
    """Block by block, for a region holding a line that is not a match (rg's binary-file
    warning, or anything else: then None)."""
    raw_paths: list[bytes] = []
    bodies: list[bytes] = []
    for block in region.split(b"\n\n"):
        nul = block.find(b"\0")
        # one NUL, after a path without a newline, and a match line right after it
        if nul <= 0 or block.find(b"\n", 0, nul) >= 0 or block.find(b"\0", nul + 1) >= 0:
            return None
        if _FIRST.match(block, nul + 1) is None:
            return None
        odd = _NOT_A_MATCH.search(block, nul)
        if odd is None:
            body = block[nul + 1 :]
        else:
            # only rg's binary-file warning, naming this block's path, as the block's last line
            tail = block[odd.start() + 1 :]
            if b"\n" in tail or not tail.startswith(block[:nul] + _BINARY_WARNING):
                return None
            body = block[nul + 1 : odd.start()]
        raw_paths.append(block[:nul])
        bodies.append(body)
    return raw_paths, bodies
