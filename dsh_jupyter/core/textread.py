"""Windowed reading of text files, streamed for big ones.

A window of a large file must cost time proportional to its offset and memory proportional to
the window: newlines are counted in big binary chunks (``bytes.count`` runs at memory speed) and
only the lines of the window are ever decoded. Small files are read whole, which also gives the
total line count for the footer.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

__all__ = ["Window", "NotText", "read_window", "BINARY_SNIFF_BYTES"]

BINARY_SNIFF_BYTES = 8192
_CHUNK = 1 << 20


class NotText(Exception):
    """The file has a NUL byte in its first 8 KiB."""


@dataclass(frozen=True)
class Window:
    lines: list[str]  # decoded lines of the window, without their line ending
    total: int | None  # total number of lines, None when a streamed window did not reach the end
    reached_end: bool  # the window's last line is the file's last line


def _decode(raw: bytes) -> str:
    line = raw.decode("utf-8", "replace")
    return line[:-1] if line.endswith("\r") else line


def read_window(
    fd: int, size: int, offset: int, count: int, stream_min_size: int, max_line_bytes: int | None = None
) -> Window:
    """Read ``count`` lines starting at 1-based line ``offset`` from an open file descriptor.

    Raises ``NotText`` for a binary file. ``count`` is an upper bound: the caller trims the
    window further for its byte cap. A streamed window keeps at most ``max_line_bytes`` of each
    line (the caller truncates lines anyway), so one huge line cannot fill memory.
    """
    head = os.pread(fd, BINARY_SNIFF_BYTES, 0)
    if b"\0" in head:
        raise NotText()
    if size < stream_min_size:
        return _window_whole(fd, offset, count)
    return _window_streamed(fd, offset, count, max_line_bytes)


def _window_whole(fd: int, offset: int, count: int) -> Window:
    chunks = []
    while True:
        chunk = os.read(fd, _CHUNK * 4)
        if not chunk:
            break
        chunks.append(chunk)
    data = b"".join(chunks)
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    total = len(raw_lines)
    selected = raw_lines[offset - 1 : offset - 1 + count]
    end = offset - 1 + len(selected)
    return Window([_decode(b) for b in selected], total, end >= total)


def _window_streamed(fd: int, offset: int, count: int, max_line_bytes: int | None = None) -> Window:
    """Skip ``offset - 1`` lines by counting newlines, then collect the window's lines."""
    to_skip = offset - 1
    lines_before = 0  # complete lines consumed before ``buf``
    buf = b""
    eof = False
    partial = False  # the last chunk read ends inside a line (no newline yet)
    # Phase 1: find the byte where line ``offset`` starts. One reused buffer: no allocation
    # per chunk, and ``bytearray.count`` on a range runs at memory speed.
    scratch = bytearray(_CHUNK) if to_skip > 0 else bytearray()
    while to_skip > 0:
        got = os.readv(fd, [scratch])
        if not got:
            eof = True
            break
        partial = scratch[got - 1] != 0x0A
        n = scratch.count(b"\n", 0, got)
        if n < to_skip:
            to_skip -= n
            lines_before += n
            continue
        # The start lies in this chunk: walk to the to_skip-th newline.
        pos = -1
        for _ in range(to_skip):
            pos = scratch.index(b"\n", pos + 1, got)
        lines_before += to_skip
        to_skip = 0
        buf = bytes(scratch[pos + 1 : got])
    if to_skip > 0:
        # Ran out of file before the window began: the file has lines_before lines, plus one
        # when its last line has no newline.
        total = lines_before + (1 if partial else 0)
        return Window([], total, True)
    # Phase 2: collect up to ``count`` lines.
    collected: list[bytes] = []
    # Walk ``buf`` by position (no re-slicing per line) and carry at most ``keep`` bytes of a
    # line across chunks (no ``buf += chunk``: a line longer than memory must not be gathered).
    keep = max_line_bytes if max_line_bytes is not None else sys.maxsize
    pos = 0
    carried = b""  # the head of the current line, from earlier chunks
    while len(collected) < count:
        nl = buf.find(b"\n", pos)
        if nl >= 0:
            line = carried + buf[pos : min(nl, pos + keep)] if carried else buf[pos : min(nl, pos + keep)]
            collected.append(line[:keep])
            carried = b""
            pos = nl + 1
            continue
        if len(carried) < keep:
            carried += buf[pos : pos + keep - len(carried)]
        buf, pos = b"", 0
        chunk = b"" if eof else os.read(fd, _CHUNK)
        if not chunk:
            eof = True
            if carried:
                collected.append(carried)
                carried = b""
            break
        buf = chunk
    buf = buf[pos:]
    # Did the window reach the end? Only if nothing follows it.
    if not eof and not buf:
        peek = os.read(fd, 1)
        eof = not peek
        buf = peek
    reached_end = eof and not buf
    total = lines_before + len(collected) if reached_end else None
    return Window([_decode(b) for b in collected], total, reached_end)
