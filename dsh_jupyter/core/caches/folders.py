"""The sorted scans of recently listed folders, reused while the folder's stamp proves them current.

Why it exists: ``list`` shows 200 entries of a folder, but its footer states the complete counts
and its order is the folder's sorted order, so every page needs the whole sorted scan. Paging
through a 100,000-entry folder scanned and sorted the whole folder for every page; a person
clicking "next" in the listing widget paid the same. Here one scan serves every page while the
folder is unchanged: the scan is kept per folder identity (``st_dev``, ``st_ino``) with the
folder's change stamp (``st_mtime_ns``, ``st_ctime_ns``, ``st_size``, ``st_nlink``), and each call
``fstat``s the folder descriptor it just opened and compares. Any create, delete or rename in the
folder moves its ctime, so the next call sees it; a scan is kept at all only when ``stamps.look``
says the stamp can prove that (an old enough ctime on a local filesystem), so a change within the
same timestamp tick, or on a network filesystem, is never hidden: such folders are scanned again
on every call, as before. Views derived from a scan (the visible entries, the widgets' sorted and
filtered orders) are kept with it and die with it.

Memory is bounded by a count of names (a scan's entries plus those of its kept views), least
recently used first out; a folder larger than the whole bound is never kept.

What it must never do: scan or stat by a path string (only the descriptor the caller opened
beneath the root is read, so confinement decided by the caller holds), return a scan whose stamp
differs from the folder's stamp now, or hand out a cached list for the caller to modify (views
are shared between calls: treat them as read-only).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..fs.files import Listing, scan_directory
from .stamps import look

__all__ = ["FolderCache", "FolderScan", "uncached_scan"]

_VIEWS_PER_FOLDER = 8  # derived views kept per folder (a filter typed letter by letter makes many)


class _Entry:
    __slots__ = ("cost", "listing", "stamp", "views")

    def __init__(self, stamp: tuple, listing: Listing) -> None:
        self.stamp = stamp
        self.listing = listing
        self.views: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self.cost = len(listing)


class FolderScan:
    """One folder's sorted scan for this call, and the views derived from it.

    ``cached`` says whether it came from the cache (or will be kept there); ``view`` computes a
    derived value once per scan.
    """

    def __init__(
        self,
        listing: Listing,
        cache: FolderCache | None = None,
        key: tuple | None = None,
        entry: _Entry | None = None,
        cached: bool = False,
    ) -> None:
        self.listing = listing
        self.cached = cached
        self._cache, self._key, self._entry = cache, key, entry
        self._local: dict[Any, Any] = {}

    def view(self, name: Any, make: Callable[[], Any], size: Callable[[Any], int] = len) -> Any:
        """``make()``, computed once for this scan (and kept with it when the scan is cached).

        ``size`` counts the names a value holds toward the cache's bound (0 for a value that
        shares the scan's own lists).
        """
        if name in self._local:
            return self._local[name]
        cache, key, entry = self._cache, self._key, self._entry
        if cache is not None and key is not None and entry is not None:
            found = cache._view(key, entry, name)
            if found is not None:
                self._local[name] = found[0]
                return found[0]
        value = make()
        self._local[name] = value
        if cache is not None and key is not None and entry is not None:
            cache._keep_view(key, entry, name, value, size(value))
        return value


def uncached_scan(fd: int) -> FolderScan:
    """A scan of the open folder ``fd`` that is not kept (no cache, or the cache is off)."""
    return FolderScan(scan_directory(fd))


class FolderCache:
    """Sorted folder scans by folder identity, bounded by ``max_entries`` names in all."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple, _Entry] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()
        self.hits = 0  # calls served from a kept scan (for tests and diagnostics)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def total(self) -> int:
        """Names held now (scans and their views), at most ``max_entries``."""
        return self._total

    def scan(self, fd: int) -> FolderScan:
        """The sorted scan of the open folder ``fd``: the kept one if its stamp is the folder's now.

        Raises ``OSError`` as ``os.scandir`` does.
        """
        seen = look(fd)
        st = seen.st
        key = (st.st_dev, st.st_ino)
        stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_nlink)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                if entry.stamp == stamp and seen.settled:
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return FolderScan(entry.listing, self, key, entry, cached=True)
                self._drop(key)
        listing = scan_directory(fd)
        if not seen.settled or len(listing) > self.max_entries:
            return FolderScan(listing)
        entry = _Entry(stamp, listing)
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._total -= old.cost
            self._entries[key] = entry
            self._total += entry.cost
            self._evict()
        return FolderScan(listing, self, key, entry, cached=True)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._total = 0

    # -- internals (called with the lock released; they take it) ---------------------------------

    def _drop(self, key: tuple) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._total -= entry.cost

    def _evict(self) -> None:
        while self._total > self.max_entries and self._entries:
            _key, entry = self._entries.popitem(last=False)
            self._total -= entry.cost

    def _view(self, key: tuple, entry: _Entry, name: Any) -> tuple[Any, int] | None:
        with self._lock:
            found = entry.views.get(name)
            if found is not None:
                entry.views.move_to_end(name)
            return found

    def _keep_view(self, key: tuple, entry: _Entry, name: Any, value: Any, size: int) -> None:
        with self._lock:
            if self._entries.get(key) is not entry or entry.cost + size > self.max_entries:
                return  # evicted or replaced meanwhile, or too big to keep beside its scan
            entry.views[name] = (value, size)
            entry.cost += size
            self._total += size
            while len(entry.views) > _VIEWS_PER_FOLDER:
                _name, (_value, dropped) = entry.views.popitem(last=False)
                entry.cost -= dropped
                self._total -= dropped
            self._entries.move_to_end(key)
            self._evict()
