"""Windowed reading of text files, streamed for big ones.

A window of a large file must cost time proportional to the distance it skips and memory
proportional to the window: newlines are counted with numpy over one reused 1 MiB buffer (at
about memory speed; docs/performance.md compares it with the alternatives) and only the lines of
the window are ever decoded. A streamed
window may start counting at a known line start (``start``, from ``caches.lines``) instead of byte
0, and reports the line starts it saw (``Window.marks``, ``Window.starts``) so the next window
can do the same. Small files are read whole, which also gives the total line count for the
footer.

What it must never do: read by a path (only the descriptor it is given), or hold more than one
chunk, the window and one capped line in memory.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from itertools import accumulate

__all__ = ["BINARY_SNIFF_BYTES", "NotText", "Tail", "Window", "read_tail", "read_window"]

BINARY_SNIFF_BYTES = 8192
_CHUNK = 1 << 20
_MARK_EVERY = 1 << 16  # caches.lines.MARK_EVERY: a line start is reported every this many lines


class NotText(Exception):
    """The file has a NUL byte in its first 8 KiB."""


@dataclass(frozen=True)
class Window:
    lines: list[str]  # decoded lines of the window, without their line ending
    total: int | None  # total number of lines, None when a streamed window did not reach the end
    reached_end: bool  # the window's last line is the file's last line
    # Streamed windows only: where lines start, as (1-based line, byte offset) pairs seen while
    # counting (every 65,536th line and the window's first line), the byte offset of each line of
    # the window, and where the line after the window starts (None at the end of the file).
    marks: list[tuple[int, int]] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    next_start: int | None = None

    def start_of(self, line: int, offset: int) -> int | None:
        """Byte offset of 1-based ``line`` when it is one of the window's lines or the one after it."""
        i = line - offset
        if 0 <= i < len(self.starts):
            return self.starts[i]
        if i == len(self.starts) and self.starts:
            return self.next_start
        return None


def _decode(raw: bytes) -> str:
    line = raw.decode("utf-8", "replace")
    return line[:-1] if line.endswith("\r") else line


def _decode_all(raws: list[bytes]) -> list[str]:
    """``[_decode(r) for r in raws]`` in one decode (a line holds no newline, so none moves)."""
    if not raws:
        return []
    text = b"\n".join(raws).decode("utf-8", "replace")
    if "\r" not in text:
        return text.split("\n")
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def read_window(
    fd: int,
    size: int,
    offset: int,
    count: int,
    stream_min_size: int,
    max_line_bytes: int | None = None,
    start: tuple[int, int] = (1, 0),
) -> Window:
    """Read ``count`` lines starting at 1-based line ``offset`` from an open file descriptor.

    Raises ``NotText`` for a binary file. ``count`` is an upper bound: the caller trims the
    window further for its byte cap. A streamed window keeps at most ``max_line_bytes`` of each
    line (the caller truncates lines anyway), so one huge line cannot fill memory. ``start`` is
    a known ``(line, byte offset)`` where that line begins, at or before ``offset``: a streamed
    window counts from there (``(1, 0)``: from the beginning).
    """
    head = os.pread(fd, BINARY_SNIFF_BYTES, 0)
    if b"\0" in head:
        raise NotText()
    if size < stream_min_size:
        return _window_whole(fd, offset, count)
    first_line, first_byte = start if 1 <= start[0] <= offset else (1, 0)
    return _window_streamed(fd, offset, count, max_line_bytes, first_line, first_byte)


@dataclass(frozen=True)
class Tail:
    """A window that starts ``back`` lines before the end of a file (``read_tail``)."""

    window: Window
    first: int | None  # 1-based number of the window's first line; None when the file was not counted


def read_tail(fd: int, size: int, back: int, count: int, stream_min_size: int, max_line_bytes: int) -> Tail:
    """Up to ``count`` lines from the ``back``-th last line of the open file on.

    Raises ``NotText`` for a binary file. A small file is read whole (its lines counted, so the
    first line's number is known). A big one is scanned backwards from its end, a chunk at a
    time, only until the start of that line: time and memory follow the distance from the end,
    not the size, so the last 2,000 lines of a 1 GiB log cost what they would in a small file.
    The line numbers are then unknown (``first`` is None) unless the scan reached byte 0. Each
    line keeps at most ``max_line_bytes`` bytes, as in a streamed window.
    """
    head = os.pread(fd, BINARY_SNIFF_BYTES, 0)
    if b"\0" in head:
        raise NotText()
    if size < stream_min_size:
        raw_lines = _whole_lines(fd)
        first = max(1, len(raw_lines) - back + 1)
        return Tail(_window_whole(fd, first, count, raw_lines), first)
    start, counted = _start_from_end(fd, size, back)
    os.lseek(fd, start, os.SEEK_SET)
    got = _collect(fd, b"", start, False, count, max_line_bytes)
    window = Window(_decode_all(got.lines), counted, got.reached_end, [], got.starts, got.next_start)
    return Tail(window, None if counted is None else 1)


_TAIL_CHUNK = 1 << 16  # the first chunk read back from the end; each next one twice as big, up to _CHUNK


def _start_from_end(fd: int, size: int, back: int) -> tuple[int, int | None]:
    """The byte where the ``back``-th last line starts, and the file's line count when the scan
    had to go back to byte 0 to find it (else None).

    A final newline ends the last line; it does not start an empty one (as ``_window_whole``
    counts). Only the chunk that holds the start is searched for positions (numpy); the others
    are only counted.
    """
    import numpy as np  # a core dependency (through pandas); imported where it is needed

    if size == 0:
        return 0, 0
    end = size - 1 if os.pread(fd, 1, size - 1) == b"\n" else size
    need = back  # newlines still to pass, going back from ``end``
    pos, step = end, _TAIL_CHUNK
    while pos > 0:
        base = max(0, pos - step)
        chunk = os.pread(fd, pos - base, base)
        if len(chunk) != pos - base:  # the file shrank under us: read what is there from the start
            return 0, None
        n = chunk.count(b"\n")
        if n >= need:
            hits = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 0x0A)
            return base + int(hits[n - need]) + 1, None
        need -= n
        pos, step = base, min(step * 2, _CHUNK)
    return 0, back - need + 1  # every newline before ``end`` was passed: that many lines plus the last


def _whole_lines(fd: int) -> list[bytes]:
    """Every line of the file from the descriptor's position on, without its newline."""
    chunks = []
    while True:
        chunk = os.read(fd, _CHUNK * 4)
        if not chunk:
            break
        chunks.append(chunk)
    raw_lines = b"".join(chunks).split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    return raw_lines


def _window_whole(fd: int, offset: int, count: int, raw_lines: list[bytes] | None = None) -> Window:
    if raw_lines is None:
        raw_lines = _whole_lines(fd)
    total = len(raw_lines)
    selected = raw_lines[offset - 1 : offset - 1 + count]
    end = offset - 1 + len(selected)
    return Window([_decode(b) for b in selected], total, end >= total)


def window_of_text(text: str, offset: int, count: int) -> Window:
    """A window of a text held in memory (a shared document's), lines as a file's would be."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    total = len(lines)
    selected = lines[offset - 1 : offset - 1 + count]
    end = offset - 1 + len(selected)
    return Window([line[:-1] if line.endswith("\r") else line for line in selected], total, end >= total)


def _marks_in(newlines, lines_before: int, base: int, n: int) -> list[tuple[int, int]]:
    """The every-65,536th line starts among the ``n`` newlines of a chunk read at byte ``base``.

    The chunk's newline ``j`` (0-based) ends line ``lines_before + j + 1``, so the next line starts
    just after it; ``newlines`` gives the positions of the chunk's newlines (computed only when
    a mark falls in the chunk).
    """
    out = []
    # line k * _MARK_EVERY + 1 starts in the chunk when lines_before < k * _MARK_EVERY <= lines_before + n
    for k in range(lines_before // _MARK_EVERY + 1, (lines_before + n) // _MARK_EVERY + 1):
        line = k * _MARK_EVERY + 1
        j = line - lines_before - 2
        if 0 <= j < n:
            out.append((line, base + int(newlines()[j]) + 1))
    return out


def _window_streamed(
    fd: int, offset: int, count: int, max_line_bytes: int | None = None, first_line: int = 1, first_byte: int = 0
) -> Window:
    """Skip to line ``offset`` by counting newlines from ``first_line`` (at ``first_byte``), then
    collect the window's lines."""
    os.lseek(fd, first_byte, os.SEEK_SET)
    start = _find_start(fd, offset - first_line, first_line - 1, first_byte)
    if start.missing > 0:
        # Ran out of file before the window began: the file has lines_before lines, plus one
        # when its last line has no newline.
        return Window([], start.lines_before + (1 if start.partial else 0), True, start.marks)
    start.marks.append((offset, start.buf_base))
    keep = max_line_bytes if max_line_bytes is not None else sys.maxsize
    got = _collect(fd, start.buf, start.buf_base, start.eof, count, keep)
    total = start.lines_before + len(got.lines) if got.reached_end else None
    return Window(_decode_all(got.lines), total, got.reached_end, start.marks, got.starts, got.next_start)


@dataclass
class _Start:
    """Where a streamed window begins: the bytes read past its first line's start, and what was learned."""

    missing: int  # lines still to skip when the file ended (0: the start was found)
    lines_before: int  # complete lines before ``buf_base``
    buf: bytes  # bytes already read, from the window's first line on
    buf_base: int  # the byte ``buf[0]`` was read from
    eof: bool
    partial: bool  # the last chunk read ends inside a line (no newline yet)
    marks: list[tuple[int, int]]


def _find_start(fd: int, to_skip: int, lines_before: int, file_pos: int) -> _Start:
    """Read from ``file_pos`` (the start of line ``lines_before + 1``) until ``to_skip`` newlines
    have passed. One reused buffer and one reused boolean array: no allocation per chunk, and
    numpy compares and counts at memory speed."""
    import numpy as np  # a core dependency (through pandas); imported where it is needed

    marks: list[tuple[int, int]] = []
    if to_skip <= 0:
        return _Start(0, lines_before, b"", file_pos, False, False, marks)
    scratch = bytearray(_CHUNK)
    data = np.frombuffer(scratch, dtype=np.uint8)
    is_newline = np.empty(_CHUNK, dtype=bool)
    partial = False
    while True:
        got = os.readv(fd, [scratch])
        if not got:
            return _Start(to_skip, lines_before, b"", file_pos, True, partial, marks)
        partial = scratch[got - 1] != 0x0A
        hits = is_newline[:got]
        np.equal(data[:got], 0x0A, out=hits)
        n = int(np.count_nonzero(hits))
        positions: list = []  # the chunk's newline positions, computed only when needed

        def newlines(hits=hits, positions=positions):
            if not positions:
                positions.append(np.flatnonzero(hits))
            return positions[0]

        if lines_before // _MARK_EVERY != (lines_before + min(n, to_skip)) // _MARK_EVERY:
            marks.extend(_marks_in(newlines, lines_before, file_pos, min(n, to_skip)))
        if n < to_skip:
            to_skip -= n
            lines_before += n
            file_pos += got
            continue
        # The start lies in this chunk: just after its to_skip-th newline.
        pos = int(newlines()[to_skip - 1])
        return _Start(
            0, lines_before + to_skip, bytes(scratch[pos + 1 : got]), file_pos + pos + 1, False, partial, marks
        )


@dataclass
class _Collected:
    lines: list[bytes]
    starts: list[int]  # the byte each collected line starts at
    next_start: int | None  # where the line after the window starts, when known
    reached_end: bool


def _collect(fd: int, buf: bytes, buf_base: int, eof: bool, count: int, keep: int) -> _Collected:
    """Up to ``count`` lines from ``buf`` (read from byte ``buf_base``) and what follows in ``fd``.

    ``buf`` is walked by position (no re-slicing per line) and at most ``keep`` bytes of a line
    are carried across chunks (no ``buf += chunk``: a line longer than memory must not be gathered).
    """
    collected: list[bytes] = []
    starts: list[int] = []
    pos = 0
    line_start = buf_base
    carried = b""  # the head of the current line, from earlier chunks
    if not buf and not eof:
        buf = os.read(fd, _CHUNK)
        eof = not buf
    # The common case in C: the whole window lies in ``buf`` and no line is longer than ``keep``.
    parts = buf.split(b"\n", count) if buf else []
    if len(parts) > count and max(map(len, parts[:-1]), default=0) <= keep:
        collected = parts[:-1]
        lengths = [len(p) + 1 for p in collected]
        starts = list(accumulate(lengths[:-1], initial=buf_base))
        pos = sum(lengths)
        line_start = buf_base + pos
    while len(collected) < count:
        nl = buf.find(b"\n", pos)
        if nl >= 0:
            line = carried + buf[pos : min(nl, pos + keep)] if carried else buf[pos : min(nl, pos + keep)]
            collected.append(line[:keep])
            starts.append(line_start)
            carried = b""
            pos = nl + 1
            line_start = buf_base + pos
            continue
        if len(carried) < keep:
            carried += buf[pos : pos + keep - len(carried)]
        buf_base += len(buf)
        buf, pos = b"", 0
        chunk = b"" if eof else os.read(fd, _CHUNK)
        if not chunk:
            eof = True
            if carried:
                collected.append(carried)
                starts.append(line_start)
                carried = b""
            break
        buf = chunk
    next_start = line_start if len(collected) == count else None
    buf = buf[pos:]
    # Did the window reach the end? Only if nothing follows it.
    if not eof and not buf:
        peek = os.read(fd, 1)
        eof = not peek
        buf = peek
    reached_end = eof and not buf
    return _Collected(collected, starts, None if reached_end else next_start, reached_end)
