"""``rg --json`` match records parsed while rg runs: one regular-expression pass per chunk.

Why it exists: a broad grep makes rg print tens of megabytes of JSON; parsing it only after rg has
finished, with a JSON parser building dicts for every record, cost more than rg itself. Here the
runner hands each chunk to ``MatchStream.feed`` as it arrives (so parsing overlaps rg's search),
and each chunk's complete lines go through one compiled pattern that picks, from every match
record of rg's usual shape, the path, the line text and the line number as bytes, plus the rest
of the record (where the submatches are). Nothing else is decoded: the texts become ``str`` in
one pass at the end, the raw record of a match is rebuilt only for the few shown matches.

What it must never do: guess. When a chunk holds a match record the pattern did not take (a
path or line given as base64 ``bytes``, no line number, any other shape) or a line that is not
one of rg's records, or the output ends inside a line, ``finish`` returns None and the caller
parses the whole output with ``rg.jsonform`` (which either agrees or raises its precise error).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import compress, islice
from operator import ne, sub

import orjson

from .jsonform import RgMatch, parse_match_records

__all__ = ["LineChunks", "MatchStream", "Matches", "parse_all", "parse_finished"]

_STR = rb'"([^"\\]*(?:\\.[^"\\]*)*)"'  # a JSON string's body: no unescaped quote inside
_RECORD = re.compile(
    rb'\{"type":"match","data":\{"path":\{"text":'
    + _STR
    + rb'\},"lines":\{"text":'
    + _STR
    + rb'\},"line_number":(\d+),"absolute_offset":([^\n]*)'
)
_MATCH = b'{"type":"match"'
_TYPED = b'\n{"type":"'  # every record but the summary starts like this (a JSON string cannot hold it)
_HEAD_PATH = b'{"type":"match","data":{"path":{"text":"'
_END = b'\n{"type":"end"'


def _strings(bodies: list[bytes]) -> list[str]:
    """JSON string bodies as text, in one parse (raises ``orjson.JSONDecodeError`` on a bad one)."""
    if not bodies:
        return []
    return orjson.loads(b'["' + b'","'.join(bodies) + b'"]')


class Matches:
    """Every match of one search as parallel lists, in rg's order.

    ``paths`` as rg printed them, ``lines`` (1-based; 0 when rg gave none), ``texts`` (with rg's
    line terminator); ``record(i)`` is match ``i``'s raw JSON record (for its submatches).
    """

    __slots__ = ("_groups", "_raw", "lines", "paths", "texts")

    def __init__(
        self,
        paths: list[str],
        lines: list,
        texts: list[str],
        raw: Sequence[bytes | None] | None = None,
        groups: list[tuple] | None = None,
    ) -> None:
        self.paths, self.lines, self.texts = paths, lines, texts
        self._raw, self._groups = raw, groups

    def __len__(self) -> int:
        return len(self.paths)

    def record(self, i: int) -> bytes | None:
        if self._raw is not None:
            return self._raw[i]
        if self._groups is None:
            return None
        path, text, line, rest = self._groups[i]
        return b"".join(
            (_HEAD_PATH, path, b'"},"lines":{"text":"', text, b'"},"line_number":', line, b',"absolute_offset":', rest)
        )

    def match(self, i: int) -> RgMatch:
        return RgMatch(self.paths[i], self.lines[i], self.texts[i])

    def runs(self) -> tuple[list[str], list[int], list[int]]:
        """The path, key (first index) and match count of each run of consecutive matches in one file."""
        paths = self.paths
        n = len(paths)
        if not n:
            return [], [], []
        # C-level passes: a path repeats as the same object, so != is quick
        starts = [0, *compress(range(1, n), map(ne, paths, islice(paths, 1, None)))]
        return list(map(paths.__getitem__, starts)), starts, list(map(sub, [*starts[1:], n], starts))

    def subset(self, keep: list[int]) -> Matches:
        """The matches at the indices ``keep``, in that order."""

        def pick(values):
            return None if values is None else [values[i] for i in keep]

        return Matches(pick(self.paths), pick(self.lines), pick(self.texts), pick(self._raw), pick(self._groups))


def parse_all(stdout: bytes) -> Matches:
    """The careful way (``rg.jsonform``) for a whole output; raises ``ValueError`` as it does."""
    found, records = parse_match_records(stdout)
    return Matches([m.path for m in found], [m.line for m in found], [m.text for m in found], records)


def parse_finished(stdout: bytes) -> Matches | None:
    """The careful way for an output cut mid-way: the matches of the files whose end record is
    whole in ``stdout``; None when that part cannot be parsed."""
    whole = stdout[: stdout.rfind(b"\n") + 1]  # whole lines only
    end = whole.rfind(_END)
    start = end + 1 if end >= 0 else (0 if whole.startswith(_END[1:]) else -1)
    if start < 0:
        return Matches([], [], [])
    try:
        return parse_all(whole[: whole.find(b"\n", start) + 1])
    except ValueError:
        return None


class LineChunks:
    """Output fed in pieces, handed on in blocks of whole lines (``_take``); what follows the last
    newline waits for the next piece. ``broken`` stops it: the caller reads the output another way."""

    def __init__(self) -> None:
        self._carry = b""
        self.broken = False

    def feed(self, data: bytes) -> None:
        if self.broken:
            return
        if self._carry:
            data = self._carry + data
        cut = data.rfind(b"\n") + 1
        self._carry = data[cut:]
        if cut:
            self._take(data[:cut] if cut < len(data) else data)

    def _take(self, block: bytes) -> None:
        raise NotImplementedError


class MatchStream(LineChunks):
    """Collects the match records of ``rg --json`` output fed to it in pieces."""

    def __init__(self) -> None:
        super().__init__()  # broken: something the pattern cannot vouch for; parse the whole output instead
        self._groups: list[tuple] = []
        self._complete = 0  # matches of the files whose end record has been read

    def _take(self, block: bytes) -> None:
        found = _RECORD.findall(block)
        if len(found) != block.count(_MATCH):
            self.broken = True
            return
        lines = block.count(b"\n")
        typed = block.count(_TYPED) + (1 if block.startswith(_TYPED[1:]) else 0)
        if typed != lines and not self._others_fine(block):
            self.broken = True
            return
        # rg writes each file's records together (begin, matches, end): the matches before the
        # block's last end record belong to files that are whole
        end = block.rfind(_END)
        if end < 0 and block.startswith(_END[1:]):
            end = 0
        if end >= 0:
            self._complete = len(self._groups) + block.count(_MATCH, 0, end)
        self._groups += found

    @staticmethod
    def _others_fine(block: bytes) -> bool:
        """Lines that are not typed records: only rg's summary (a JSON object) may be one."""
        for line in block.split(b"\n"):
            if line and not line.startswith(_TYPED[1:]):
                try:
                    record = orjson.loads(line)
                except orjson.JSONDecodeError:
                    return False
                if not isinstance(record, dict) or record.get("type") != "summary":
                    return False
        return True

    def finish(self) -> Matches | None:
        """Every match, or None when the whole output must be parsed the careful way."""
        if self.broken or self._carry:
            return None
        return self._matches(self._groups)

    def finish_cut(self) -> Matches | None:
        """The matches of the files rg had finished when it was stopped mid-output (the raw-output
        guard); None when what was read cannot be vouched for."""
        if self.broken:
            return None
        return self._matches(self._groups[: self._complete])

    @staticmethod
    def _matches(groups: list[tuple]) -> Matches | None:
        # Three C-level passes: every text body (and each distinct path once) unescaped by one
        # JSON parse of them all as an array, every line number by one map.
        try:
            texts = _strings([g[1] for g in groups])
            raw_paths = [g[0] for g in groups]
            unique = list(dict.fromkeys(raw_paths))
            names = dict(zip(unique, _strings(unique)))
            paths = list(map(names.__getitem__, raw_paths))
            lines = list(map(int, [g[2] for g in groups]))
        except (orjson.JSONDecodeError, ValueError):
            return None
        return Matches(paths, lines, texts, groups=groups)
