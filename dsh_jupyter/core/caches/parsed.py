"""Parsed notebooks kept per file version, so the next page, output or outline of one costs its own work.

Why it exists: every ``read`` of a notebook by cells (a page, ``cell_id``/``output``, ``outline``)
and every notebook ``grep`` parsed and validated the whole file again; on a notebook of a few MiB
that is most of the call, paid again for each page an agent turns. Here the parse (the
``Notebook``, or the one-line reason it is not one) is kept by file *version* (``fs.files.file_version``:
device, inode, size, mtime and ctime in ns), as ``caches.lines`` keeps line offsets, and only for a
version whose stamp proves the content unchanged from the look on (``stamps.look``: an old enough
ctime on a local filesystem). The bytes are read after that look, and the version is taken again
after the read: kept only when it is the same, so what is kept is that version's content. Any
write, truncation or replace (the tools' own writes included) moves the ctime, so it is another
version and is parsed anew.

Bounds (constants): at most ``MAX_FILES`` versions and ``MAX_BYTES`` bytes of their files together,
least recently used first out; a file larger than ``MAX_BYTES`` is parsed and not kept. A live
document (``core.documents``) has its own version and never comes here.

What it must never do: read a file itself (the caller hands a reader of the descriptor it opened),
answer for a version other than the one asked for, or let a caller change what is kept. A kept
``Notebook`` is shared by every later reader, so callers only read it; an edit parses the bytes it
is about to change itself (``tools.cells``, ``edit_cells``) and copies what it changes.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable

from ..fs.files import file_version
from ..notebooks.format import Notebook, NotNotebook, parse_notebook
from .stamps import look

__all__ = ["MAX_BYTES", "MAX_FILES", "ParsedNotebooks", "parse_open"]

MAX_FILES = 1024  # notebook versions kept (a grep over a tree parses each of its notebooks)
MAX_BYTES = 64 * 1024 * 1024  # their files' sizes together (parsed, a few times that in memory)


class ParsedNotebooks:
    """The parses of up to ``max_files`` notebook versions, ``max_bytes`` of their files together."""

    def __init__(self, max_files: int = MAX_FILES, max_bytes: int = MAX_BYTES) -> None:
        self.max_files, self.max_bytes = max_files, max_bytes
        self._kept: OrderedDict[str, tuple[Notebook | str, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0  # parses answered from what was kept (for tests and benchmarks)

    def __len__(self) -> int:
        return len(self._kept)

    def versions(self) -> list[str]:
        """The versions kept, least recently used first (for tests and diagnostics)."""
        with self._lock:
            return list(self._kept)

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._bytes = 0

    def parse(self, fd: int, fst: os.stat_result, read: Callable[[], bytes]) -> Notebook:
        """The notebook open as ``fd`` (``fst``: its stat when opened), parsed by ``read()``'s bytes or
        kept from an earlier parse of the same version; ``NotNotebook`` with the reason otherwise."""
        version = file_version(fst)
        seen = look(fd)
        keep = seen.settled and file_version(seen.st) == version and fst.st_size <= self.max_bytes
        if keep:
            with self._lock:
                found = self._kept.get(version)
                if found is not None:
                    self._kept.move_to_end(version)
                    self.hits += 1
                    return _answer(found[0])
        raw = read()
        try:
            value: Notebook | str = parse_notebook(raw)
        except NotNotebook as exc:
            value = exc.reason
        if keep and file_version(os.fstat(fd)) == version and len(raw) == fst.st_size:
            self._store(version, value, fst.st_size)
        return _answer(value)

    def _store(self, version: str, value: Notebook | str, size: int) -> None:
        with self._lock:
            old = self._kept.pop(version, None)
            if old is not None:
                self._bytes -= old[1]
            self._kept[version] = (value, size)
            self._bytes += size
            while len(self._kept) > self.max_files or self._bytes > self.max_bytes:
                _version, (_value, gone) = self._kept.popitem(last=False)
                self._bytes -= gone


def _answer(value: Notebook | str) -> Notebook:
    if isinstance(value, str):
        raise NotNotebook(value)
    return value


def parse_open(cache: ParsedNotebooks | None, fd: int, fst: os.stat_result, read: Callable[[], bytes]) -> Notebook:
    """``cache.parse``, or a fresh parse of ``read()`` when there is no cache."""
    if cache is None:
        return parse_notebook(read())
    return cache.parse(fd, fst, read)
