"""Where lines start in recently read big files, per file version, so the next window can seek.

Why it exists: a ``read`` window of a big file starts by counting newlines from byte 0 up to its
offset; an agent paging through a 5 GB log with ``offset = last + 1`` paid that count again for
every page, so paging was quadratic. Here each streamed read leaves a few marks ``(line, byte
offset where that line starts)``: every 65,536th line passed while counting, the window's first
line and the line after what was shown; and once a read reached the end, the file's line count
(so a read of its last lines, ``offset=-N``, can number them). The next read of the same file version starts counting
at the nearest mark at or before its offset, so a continuation costs its window.

Marks are kept per file *version* (``fs.files.file_version``: device, inode, size, mtime and ctime in
ns), and only for a version whose stamp proves the content unchanged from the look on
(``stamps.look``: an old enough ctime on a local filesystem). Any write, truncation or replace
moves the ctime, so it is a different version and its marks start from nothing; a same-size
rewrite with the mtime set back still moves the ctime. Memory is bounded: at most ``max_files``
versions, least recently used first out, and at most ``MAX_MARKS`` marks per version (when full,
every other mark is dropped).

What it must never do: read a file, decide on a path string, or give a mark for a version other
than the one asked for.
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_right
from collections import OrderedDict

from ..fs.files import file_version
from .stamps import look

__all__ = ["MARK_EVERY", "MAX_MARKS", "NO_MARKS", "FileLines", "LineIndex"]

MARK_EVERY = 1 << 16  # a mark at every 65,536th line passed while counting
MAX_MARKS = 4096  # marks kept per file version


class _Marks:
    __slots__ = ("lines", "offsets", "total")

    def __init__(self) -> None:
        self.lines = array("q")
        self.offsets = array("q")
        self.total: int | None = None  # the version's line count, once a read reached its end

    def nearest(self, line: int) -> tuple[int, int]:
        i = bisect_right(self.lines, line)
        if i == 0:
            return 1, 0
        return self.lines[i - 1], self.offsets[i - 1]

    def add(self, line: int, offset: int) -> None:
        i = bisect_right(self.lines, line)
        if i and self.lines[i - 1] == line:
            return
        self.lines.insert(i, line)
        self.offsets.insert(i, offset)
        if len(self.lines) > MAX_MARKS:
            self.lines = self.lines[::2]
            self.offsets = self.offsets[::2]


class FileLines:
    """The marks of one open file's version for one call: ``nearest`` before reading, ``learn`` after."""

    def __init__(self, index: LineIndex | None, version: str | None) -> None:
        self._index, self._version = index, version

    @property
    def usable(self) -> bool:
        return self._index is not None

    def nearest(self, line: int) -> tuple[int, int]:
        """``(line, byte offset)`` of the closest known line start at or before ``line`` (``(1, 0)``)."""
        if self._index is None or self._version is None:
            return 1, 0
        return self._index._nearest(self._version, line)

    def total(self) -> int | None:
        """The line count of this version, when an earlier read counted it; else None."""
        if self._index is None or self._version is None:
            return None
        return self._index._total(self._version)

    def learn(self, marks) -> None:
        """Keep ``(line, byte offset)`` pairs: each names the first byte of that 1-based line."""
        if self._index is not None and self._version is not None:
            self._index._learn(self._version, marks)

    def learn_window(self, window, offset: int, shown: int) -> None:
        """Keep what a streamed ``fs.textwindow.Window`` read at ``offset`` saw, and where the line after
        the ``shown`` lines starts (the next read's ``offset``)."""
        if self._index is None or self._version is None:
            return
        after = window.start_of(offset + shown, offset)
        self._index._learn(
            self._version, [*window.marks, *([(offset + shown, after)] if after is not None else [])], window.total
        )


NO_MARKS = FileLines(None, None)  # for a file that is not streamed, or when there is no index


class LineIndex:
    """Sparse line offsets of up to ``max_files`` file versions."""

    def __init__(self, max_files: int) -> None:
        self.max_files = max_files
        self._files: OrderedDict[str, _Marks] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0  # reads that started counting at a kept mark (for tests and diagnostics)

    def __len__(self) -> int:
        return len(self._files)

    def for_file(self, fd: int, opened_version: str) -> FileLines:
        """The marks for the file open as ``fd``, whose version was ``opened_version`` when opened.

        Unusable (no marks given or kept) when the file changed since it was opened or its stamp
        cannot prove it unchanged from now on.
        """
        seen = look(fd)
        version = file_version(seen.st)
        if not seen.settled or version != opened_version:
            return NO_MARKS
        return FileLines(self, version)

    def marks(self, version: str) -> list[tuple[int, int]]:
        """Every mark kept for ``version`` (for tests and diagnostics)."""
        with self._lock:
            found = self._files.get(version)
            return [] if found is None else list(zip(found.lines, found.offsets))

    def clear(self) -> None:
        with self._lock:
            self._files.clear()

    def _nearest(self, version: str, line: int) -> tuple[int, int]:
        with self._lock:
            found = self._files.get(version)
            if found is None:
                return 1, 0
            self._files.move_to_end(version)
            mark = found.nearest(line)
            if mark != (1, 0):
                self.hits += 1
            return mark

    def _total(self, version: str) -> int | None:
        with self._lock:
            found = self._files.get(version)
            return None if found is None else found.total

    def _learn(self, version: str, marks, total: int | None = None) -> None:
        with self._lock:
            found = self._files.get(version)
            if found is None:
                found = self._files[version] = _Marks()
                while len(self._files) > self.max_files:
                    self._files.popitem(last=False)
            else:
                self._files.move_to_end(version)
            for line, offset in marks:
                if line > 1:
                    found.add(line, offset)
            if total is not None:
                found.total = total
