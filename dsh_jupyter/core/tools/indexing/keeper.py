"""The workspace index's keeper: builds it in the background, keeps it fresh, says when it may answer.

Why it exists: every grep and glob walks the whole tree; on a million files that is seconds per
call. An index built once and kept fresh by file events narrows grep to the files that can match
(rg still searches them, so every answer stays rg's) and answers glob and find from its table.

How it stays exact: the watcher (``core.index.watch``) starts before rg lists the tree, so no
change from then on is missed; before any answer, the calling thread reads every queued event
(``drain``) and brings the index up to date with what changed (``_apply``): a changed file is
read again, a changed folder listed again by rg (one level, or a new folder whole), a vanished
path removed. The index answers only while the watcher has been authoritative since the build
began; a lost event (queue overflow, watch limit, a folder moved in, the root moved, a network
filesystem), ignore files honoured (their rules are rg's to apply), or a build that is not done
yet: rg walks as it always did, and the value says why (``index_note``).

Only one process keeps a workspace's index (a lock file beside it); another process sharing the
state folder searches with rg and says so.

What it must never do: answer from an index that may miss a change, or block a call while it
builds (calls never wait for the build; they take the keeper's lock only to catch up with the
events queued since the last call).
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import hashlib
import logging
import math
import os
import sqlite3
import stat as statmod
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ...index import native
from ...index.store import COMPANIONS, IndexStore
from ...index.watch import (
    BELOW_REMOTE,
    INSTANCE_LIMIT,
    KERNEL_WATCH_LIMIT,
    MAX_WATCHES,
    ROOT_REMOTE,
    UNAVAILABLE,
    UNWATCHABLE,
    Watcher,
)
from ..context import CallContext
from ..search.flags import VCS_DIRS
from ..search.root import SearchRoot, excluded_below, open_search_root
from .files import FileReader, ListingFailed, StreamedListing, listed, read_batch, read_batch_for_writer

__all__ = ["IndexKeeper", "NotServed", "Served"]

log = logging.getLogger("dsh_jupyter.index")

RECOUNT_S = 600.0  # seconds before a workspace found small is counted again
# seconds before a build is tried again after a cause that may pass (kept elsewhere, a folder rg could not read)
ASK_AGAIN_S = 60.0
# bytes of posting lists a reading thread gathers before the keeper writes them: small, because
# what a thread's allocator held stays with the process after the build (8 MB kept 30 MiB more
# than 2 MB on a million files; a row per trigram per flush costs little)
FLUSH_BYTES = 2 << 20
READERS = 2  # threads reading the files while the build's thread writes them
# batches read ahead of the one being written: the writing thread is the build's slowest, and with
# one batch ahead per reader the readers waited for it about a second each on a million files;
# eight ahead took the build from 11.9 to 11.3 s there (medians), for 13 MiB more at its peak
AHEAD = 3 * READERS + 2


class NotServed(Exception):
    """The index may not answer this call; the message is the value's ``index_note``."""


@dataclass
class Served:
    store: IndexStore
    prefix: str  # the search root relative to the workspace root ("" for the root)


class IndexKeeper:
    """One workspace's index. ``context`` makes the call context the builder's rg runs with."""

    def __init__(
        self, context: Callable[[threading.Event], CallContext], folder: str, root_real: str, min_files: int
    ) -> None:
        self._context = context
        self.root_real = root_real
        self.min_files = min_files
        self._counted_at: float | None = None  # when a count last found the workspace small
        digest = hashlib.sha256(root_real.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        self.folder = folder
        self.path = os.path.join(self.folder, f"{digest}.sqlite")
        self._lock = threading.Lock()
        self._state = "idle"  # idle, building, ready, small, lost, elsewhere, failed
        self._note: str | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()  # set: the build's rg is killed and the build ends
        self._store: IndexStore | None = None
        self._watcher: Watcher | None = None
        self._lock_fd: int | None = None
        self._root: SearchRoot | None = None
        self._root_cm: contextlib.ExitStack | None = None
        self._ctx: CallContext | None = None
        self._excluded: list[str] = []
        self._stamp: tuple[int, int, int] | None = None  # the index file as this keeper last left it
        # what changed while the build read the tree: drained a batch at a time (so a long build
        # never lets the kernel's queue overflow), applied once the index is in
        self._pending: set[str] = set()
        self._ask_again_at: float | None = None  # when a failure that may pass is tried again
        self.listed = 0
        self.read = 0
        self.files = 0
        self.build_seconds: float | None = None
        self.started_at: float | None = None

    # -- what callers see ------------------------------------------------------------------------

    def status(self) -> dict:
        """For ``/dsh/api/status`` and ``%dsh status``."""
        out: dict = {"state": self._state}
        if self._note:
            out["note"] = self._note
        if self._state == "building":
            out["listed"], out["read"] = self.listed, self.read
        if self._store is not None and self._state == "ready":
            out["files"] = self.files
            out["diskBytes"] = self._store.disk_bytes()
        if self.build_seconds is not None:
            out["buildSeconds"] = round(self.build_seconds, 2)
        return out

    def in_play(self) -> bool:
        """Whether answers say which way they went (an index exists or is on its way: not while the
        workspace is counted, nor when it is too small to need one)."""
        return self._state not in ("idle", "counting", "small")

    def start(self) -> None:
        """Start the build in the background once (a later call after a loss starts it again)."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            # after another process was found keeping the index, ask again now and then: that
            # process may have ended (a kernel shut down) and left the index to this one; so may
            # a folder rg could not read (its mode changed back, a neighbour's rename settled)
            now = time.monotonic()
            again = math.inf if self._ask_again_at is None else self._ask_again_at
            retry = self._state in ("elsewhere", "failed") and now >= again
            # a small workspace is counted again now and then: it may have grown
            recount = self._state == "small" and now - (self._counted_at or 0.0) >= RECOUNT_S
            if self._state not in ("idle", "lost") and not retry and not recount:
                return
            if self._state in ("idle", "small") and count_files(self.root_real, self.min_files) < self.min_files:
                # no thread, no rg, nothing written for a workspace that is plainly small
                self._state, self._note, self._counted_at = "small", None, now
                return
            self._state, self._note, self._ask_again_at = "counting", None, None
            self.listed = self.read = 0
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._build, name="dsh-index-build", daemon=True)
            self._thread.start()

    def cancel(self) -> None:
        """End a build in progress, its rg killed before this returns; the next search starts it again."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        with self._lock:
            self._drop()
            self._let_go_of_lock()

    @contextlib.contextmanager
    def serving(self, ctx: CallContext, root: SearchRoot) -> Iterator[Served]:
        """The index brought up to date, for one call below ``root``; raises ``NotServed``."""
        if ctx.settings.respect_ignore_files:
            raise NotServed("ignore files are honoured (respect_ignore_files): rg applies their rules")
        if root.target.in_spill or not root.is_dir:
            raise NotServed("saved results are not indexed")
        rel = os.path.relpath(root.real, self.root_real)
        if rel.startswith(".."):
            raise NotServed("the search root is outside the indexed folder")
        with self._lock:
            if self._state != "ready":
                raise NotServed(self._note or "the index is not ready")
            self._catch_up()
            if self._state != "ready":
                raise NotServed(self._note or "the index is not ready")
            assert self._store is not None
            try:
                yield Served(self._store, "" if rel == "." else rel)
            except sqlite3.DatabaseError:
                self._lose("the index file is damaged; it is being built again")
                raise NotServed(self._note or "the index file is damaged") from None

    def catch_up(self) -> None:
        """Take in the changes queued so far (after a write through the tools, before it answers)."""
        with self._lock:
            if self._state == "ready":
                self._catch_up()

    # -- building --------------------------------------------------------------------------------

    def _build(self) -> None:
        started = time.monotonic()
        stack = contextlib.ExitStack()
        try:
            ctx = self._context(self._stop)
            root = stack.enter_context(open_search_root(ctx, None, "grep", spills=False))
            excluded = excluded_below(ctx, root)
            if not self._take_lock():
                stack.close()
                self._finish("elsewhere", "another process keeps this workspace's index", ask_again=True)
                return
            with self._lock:
                self._state, self._note = "building", "the index is being built"
            skip = _skipper(ctx.resolver.visibility.shown, excluded)
            watcher = Watcher(root.real, max_watches=ctx.settings.index_max_watches, skip_dir=skip)
            with self._lock:
                self._drop()
                self._ctx, self._root, self._root_cm, self._excluded = ctx, root, stack, excluded
                self._watcher = watcher
            watcher.start()  # before rg lists again: nothing changed from here on is missed
            if watcher.lost:
                self._finish("lost" if _passes(watcher.lost) else "failed", watcher.lost)
                return
            # rg lists on a thread of its own while the files it named are read (StreamedListing)
            rg_list = StreamedListing(self._context, root, excluded)
            try:
                if not rg_list.at_least(ctx.settings.index_min_files, self._stop):  # fewer than the count saw
                    rg_list.close()
                    if self._stop.is_set():
                        self._finish("idle", None)
                        return
                    self._finish("small", None)
                    with self._lock:
                        self._counted_at = time.monotonic()
                        self._let_go_of_lock()  # no index here: another process may keep one
                    return
                os.makedirs(self.folder, mode=0o700, exist_ok=True)
                for suffix in ("", *COMPANIONS):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(self.path + suffix)
                self.listed = rg_list.listed
                store = IndexStore(self.path, building=True)
                # the rows the compiled reader made are written by C, on a connection of its own
                writer = native.Writer.open(store.path) if native.available() else None
                try:
                    ended = self._fill(ctx, root, store, rg_list.batches(self._stop), started, rg_list, writer)
                except BaseException:
                    if writer is not None:
                        writer.close()
                    store.close()
                    raise
            finally:
                rg_list.close()  # before the root's descriptor can close: its rg runs in that folder
            if writer is not None and (ended is not None or rg_list.unreadable):
                writer.close()
            if ended is None and rg_list.unreadable:
                store.close()
                self._finish(
                    "failed", "rg could not read some folders; searches use rg, which counts them", ask_again=True
                )
                return
            if ended is not None:
                store.close()
                self._finish(*ended)
                return
            try:
                store.built(_time_order_of(writer))
            finally:
                if writer is not None:
                    writer.close()  # (the time order closed it already, before the write-ahead log)
            native.give_back()  # what the reading threads' lists and SQLite's sorting freed
            files = store.count()
            with self._lock:
                self._store = store
                self.build_seconds = time.monotonic() - started
                self.files = files
                self._stamp = self._file_stamp()
                self._state, self._note = "ready", None  # last: status() reads without the lock
                self._catch_up()
            log.info("workspace index of %s built: %d files in %.1f s", self.root_real, self.files, self.build_seconds)
        except ListingFailed as exc:
            stack.close()
            if self._stop.is_set():
                self._finish("idle", f"rg could not list the workspace: {exc}")
            else:
                self._finish("failed", f"rg could not list the workspace: {exc}", ask_again=True)
        except Exception as exc:  # the index is an optimisation: searches go on with rg
            if self._stop.is_set():  # cancelled: its rg was killed
                stack.close()
                self._finish("idle", None)
                return
            log.warning("workspace index of %s not built", self.root_real, exc_info=True)
            stack.close()
            self._finish("failed", f"the index could not be built ({type(exc).__name__})")

    def _fill(
        self,
        ctx: CallContext,
        root: SearchRoot,
        store: IndexStore,
        batches: Iterator[Sequence[str]],
        started: float,
        rg_list: StreamedListing | None = None,
        writer: native.Writer | None = None,
    ) -> tuple[str, str | None] | None:
        """Read every listed file into ``store``, one transaction a batch; None when all are in,
        else the state and note the build ends with (cancelled, or over a bound). ``writer``
        (the caller's, open on ``store``'s file) writes the rows the compiled reader made, from
        C, and keeps every row for the time order (``IndexStore.built``).

        ``READERS`` threads read the next batches while this one writes (the compiled reader,
        ``os.read`` and SQLite's inserts all let go of the GIL); they are done before this
        returns, so the root's descriptor outlives their reads. Each reading thread gathers
        trigrams into a gatherer of its own, and takes its batches in order, so the ids one
        gatherer sees only grow; it hands its posting lists over once they pass ``FLUSH_BYTES``
        (memory stays bounded), and the rest are written after the last batch."""
        limit = ctx.settings.index_max_file_bytes
        compiled = native.available()
        local = threading.local()
        gatherers: list[native.Gatherer] = []
        made = threading.Lock()

        def read(batch: Sequence[str], first: int) -> tuple[int, native.Read | None, list, list, bytearray | None]:
            gatherer = getattr(local, "gatherer", None)
            if compiled and gatherer is None:
                gatherer = local.gatherer = native.Gatherer()
                with made:
                    gatherers.append(gatherer)
            got = None
            with FileReader(root.fd, limit, ctx.settings.openat2) as reader:
                if writer is not None and gatherer is not None:
                    got, rows, texts = read_batch_for_writer(reader, gatherer, batch, first)
                else:
                    rows, texts = read_batch(reader, gatherer, batch, first)
            flushed = gatherer.flush() if gatherer is not None and gatherer.held() > FLUSH_BYTES else None
            return first, got, rows, texts, flushed

        ended: tuple[str, str | None] | None = None
        try:
            with ThreadPoolExecutor(READERS, thread_name_prefix="dsh-index-read") as pool:
                ahead: collections.deque = collections.deque()
                while True:
                    while len(ahead) < AHEAD and (batch := next(batches, None)) is not None:
                        ahead.append(pool.submit(read, batch, store.reserve(len(batch))))
                    if not ahead:
                        break
                    first, got, rows, texts, flushed = ahead.popleft().result()
                    if self._stop.is_set():
                        ended = ("idle", None)
                        break
                    written = writer.insert(got, first) if writer is not None and got is not None else 0
                    if flushed and writer is not None:
                        writer.postings(flushed)
                    store.begin()
                    store.add(rows, texts)
                    if flushed and writer is None:
                        store.add_postings(flushed)
                    store.commit()
                    if writer is not None and rows:
                        writer.note(rows)  # the rows this connection wrote, for the time order
                    self.read += written + len(rows)
                    if rg_list is not None:
                        self.listed = rg_list.listed
                    lost = self._drain_while_building()
                    if lost is not None:
                        ended = ("lost" if _passes(lost) else "failed", lost)
                        break
                    if time.monotonic() - started > ctx.settings.index_max_build_seconds:
                        ended = ("failed", "the index build took longer than index_max_build_seconds")
                    elif store.disk_bytes() > ctx.settings.index_max_bytes:
                        ended = ("failed", "the index would pass index_max_bytes on disk")
                    if ended is not None:
                        break
                for future in ahead:
                    future.cancel()
                if ended is None and self._stop.is_set():  # the list ended early: the build did not
                    ended = ("idle", None)
            if ended is None and gatherers:  # the readers are done: their gatherers are this thread's now
                if writer is not None:
                    for gatherer in gatherers:
                        writer.postings(gatherer.flush())
                else:
                    store.begin()
                    for gatherer in gatherers:
                        store.add_postings(gatherer.flush())
                    store.commit()
        finally:
            for gatherer in gatherers:
                gatherer.close()
        return ended

    def _drain_while_building(self) -> str | None:
        """Take the events queued so far into ``_pending``; the reason when one was lost."""
        watcher = self._watcher
        if watcher is None:
            return "the watcher was closed"
        changes = watcher.drain()
        self._pending |= changes.paths
        return changes.lost or watcher.lost

    def _finish(self, state: str, note: str | None, ask_again: bool = False) -> None:
        """End a build as ``state``; ``ask_again``: its cause may pass, so a search after
        ``ASK_AGAIN_S`` starts it again (else only a loss of the index does)."""
        with self._lock:
            self._drop()
            self._state, self._note = state, note
            self._ask_again_at = time.monotonic() + ASK_AGAIN_S if ask_again else None

    def _take_lock(self) -> bool:
        if self._lock_fd is not None:
            return True
        os.makedirs(self.folder, mode=0o700, exist_ok=True)
        fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._lock_fd = fd
        return True

    def _let_go_of_lock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _drop(self) -> None:
        """Close the watcher, the store and the root (the caller holds the lock)."""
        self._pending = set()
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._root_cm is not None:
            self._root_cm.close()
            self._root_cm = None
            self._root = None

    def _lose(self, reason: str) -> None:
        """Stop trusting the index: built again at the next search when what happened passes (an
        overflow, a folder moved, the file damaged); never again in this process when it lasts (a
        watch limit, a network filesystem, no file events)."""
        log.info("workspace index of %s no longer trusted: %s", self.root_real, reason)
        self._drop()
        self._state, self._note = ("lost" if _passes(reason) else "failed"), reason

    # -- keeping fresh ---------------------------------------------------------------------------

    def _file_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _catch_up(self) -> None:
        """Read the queued events and bring the index up to date (the caller holds the lock)."""
        assert self._watcher is not None and self._store is not None
        if self._file_stamp() != self._stamp:  # only this keeper writes it
            self._lose("the index file was changed or removed by another program; it is being built again")
            return
        changes = self._watcher.drain()
        if changes.lost or self._watcher.lost:
            self._lose(changes.lost or self._watcher.lost or "file events were lost")
            return
        paths = changes.paths | self._pending if self._pending else changes.paths
        self._pending = set()
        if not paths:
            return
        try:
            self._apply(paths)
            self._store.refresh_times()  # glob's time order, made again once its changes add up
            self._stamp = self._file_stamp()
        except sqlite3.DatabaseError:
            self._lose("the index file is damaged; it is being built again")
        except ListingFailed as exc:
            self._lose(f"rg could not list a changed folder: {exc}")
        except OSError as exc:
            self._lose(f"a changed file could not be looked at ({exc.strerror})")
        if self._store is not None and self._store.orphans() > max(self.files, 10_000):
            self._lose("the index holds more replaced text than files; it is being built again")

    def _apply(self, paths: set[str]) -> None:
        assert self._store is not None and self._root is not None and self._ctx is not None
        ctx, root, store = self._ctx, self._root, self._store
        skip = _skipper(ctx.resolver.visibility.shown, self._excluded)
        limit = ctx.settings.index_max_file_bytes
        folders: set[str] = set()  # new or changed folders: listed whole
        parents: dict[str, list[str]] = {}  # files whose being listed may have changed, by folder
        reread: list[str] = []  # indexed files changed in place
        gone: list[str] = []
        with FileReader(root.fd, limit, ctx.settings.openat2) as reader:
            for rel in sorted(paths):
                if _hidden_on_the_way(rel, skip):
                    continue
                st = reader.look(rel)  # never through a folder swapped for a symlink
                if st is None:
                    gone.append(rel)
                    continue
                if statmod.S_ISDIR(st.st_mode):
                    if not skip(rel):
                        folders.add(rel)
                    else:
                        store.delete_below(rel)
                elif statmod.S_ISREG(st.st_mode) and store.row(rel) is not None:
                    reread.append(rel)
                else:
                    parent = rel.rpartition("/")[0] or "."
                    parents.setdefault(parent, []).append(rel)
            store.begin()
            try:
                self._take_in(store, reader, gone, reread, folders, parents)
            finally:
                store.commit()
        self.files = store.count()

    def _take_in(
        self,
        store: IndexStore,
        reader: FileReader,
        gone: list[str],
        reread: list[str],
        folders: set[str],
        parents: dict[str, list[str]],
    ) -> None:
        """``_apply``'s changes, written in its transaction."""
        assert self._ctx is not None and self._root is not None
        ctx, root = self._ctx, self._root
        for rel in gone:
            store.delete([rel])
            store.delete_below(rel)
        if reread:
            reads = [(rel, reader.read(rel)) for rel in reread]
            store.upsert([read for _, read in reads if read is not None])
            store.delete([rel for rel, read in reads if read is None])  # gone since its look
        if folders:
            top = _outermost(folders)
            found, unreadable = listed(ctx, root, self._excluded, top)
            if unreadable:  # a search would count it: the index cannot
                raise ListingFailed("a folder could not be read")
            for folder in top:
                store.delete_below(folder)
            store.upsert(reader.read_all(found))
        if parents:
            shown, unreadable = listed(ctx, root, self._excluded, sorted(parents), depth=1)
            if unreadable:
                raise ListingFailed("a folder could not be read")
            visible = set(shown)
            for names in parents.values():
                for rel in names:
                    got = reader.read(rel) if rel in visible else None
                    if got is not None:
                        store.upsert([got])
                    else:
                        store.delete([rel])


# what a new build cannot mend: the limits, the filesystem, file events missing altogether
_LASTING = tuple(
    reason.partition("{")[0]
    for reason in (KERNEL_WATCH_LIMIT, MAX_WATCHES, ROOT_REMOTE, BELOW_REMOTE, UNWATCHABLE, INSTANCE_LIMIT, UNAVAILABLE)
)


def _time_order_of(writer: native.Writer | None) -> Callable[[str, int], int | None] | None:
    """``IndexStore.built``'s ``order``: the time order from the rows ``writer`` kept, on its own
    connection, which is closed once it is written (the file is then switched to its write-ahead
    log, which wants no other connection writing)."""
    if writer is None:
        return None

    def order(times_path: str, block_bytes: int) -> int | None:
        try:
            return writer.times(times_path, block_bytes)
        finally:
            writer.close()

    return order


def _passes(reason: str) -> bool:
    return not reason.startswith(_LASTING)


def count_files(top: str, enough: int) -> int:
    """Files below ``top`` (no symlink followed), counted until ``enough``: the quick look that
    spares a small workspace the build's background rg (whose own list decides in the end)."""
    count, folders = 0, [top]
    while folders and count < enough:
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                    else:
                        count += 1
        except OSError:
            continue
    return count


def _skipper(shown: Callable[[str], bool], excluded: list[str]) -> Callable[[str], bool]:
    """Whether a folder (relative to the root) is one rg never enters: a hidden name or one a
    hide glob matches (``Visibility.shown``), a VCS folder, a protected folder."""
    out = frozenset(excluded)
    vcs = frozenset(VCS_DIRS)

    def skip(rel: str) -> bool:
        name = rel.rpartition("/")[2]
        return name in vcs or not shown(name) or rel in out

    return skip


def _hidden_on_the_way(rel: str, skip: Callable[[str], bool]) -> bool:
    parts = rel.split("/")
    return any(skip("/".join(parts[: i + 1])) for i in range(len(parts) - 1))


def _outermost(folders: set[str]) -> list[str]:
    out: list[str] = []
    for rel in sorted(folders):
        if not out or not rel.startswith(out[-1] + "/"):
            out.append(rel)
    return out
