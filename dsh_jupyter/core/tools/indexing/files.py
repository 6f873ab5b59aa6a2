"""Which files the index holds and what it records of each: rg's own list, each file read once.

Why rg lists: the files a grep or glob searches are the ones ``rg --files`` lists with the same
discovery flags, hide globs and exclusions (``tools.search.flags``); asking rg the same question
keeps the index's list exactly rg's. A folder listed again after a change (``relist``) is asked
the same way, one level deep, from the workspace root, so rg's anchored exclusions still apply.

How a file is read: its folder is opened beneath the root's descriptor with no symlink followed on
the way (``fs.beneath``: a folder a neighbour swapped for a symlink to outside is not entered),
then the file by its bare name, never following a symlink and never blocking on a FIFO
(``FileReader`` keeps the last few folders open, as rg lists a folder's files together); a file
gone by then is left out; one that is not a regular file, cannot be read or is over
``index_max_file_bytes`` is recorded without its text (always a candidate: rg decides it). The
text is decoded as rg reads it: a UTF-16 byte-order mark is honoured (rg transcodes such files),
anything else as UTF-8 with each bad byte one replacement character (ASCII is never lost, and
the candidate query asks for ASCII only); a NUL byte is noted (rg searches such a file
differently when it finds it walking) and indexed as a space.

A build takes rg's list a batch at a time while rg still lists (``StreamedListing``) and reads
each batch (``read_batch``) through the compiled trigram reader
(``index.native``, the same rules in C: folders beneath the root, no symlink, the ASCII trigrams
of the text as decoded here), which leaves every file it does not take to ``FileReader``.

What it must never do: leave out a file rg would list, record a text other than the file's, or read
anything through a symlink (a file outside the root would give the index its text and time).
"""

from __future__ import annotations

import errno
import os
import stat as statmod
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence

from ...fs import syscalls
from ...fs.beneath import open_folder
from ...index import native
from ...index.store import BIG, TEXT, UNREAD, FileRow, file_row
from ..context import CallContext
from ..search.flags import VCS_DIRS, VCS_EXCLUDES, VCS_IN_PATH, discovery_flags, exclusion_flags, hide_flags
from ..search.root import SearchRoot
from ..search.run import diagnostic, file_errors, run_search
from ..search.scans import drop_excluded

__all__ = [
    "BATCH_BYTES",
    "FileReader",
    "Paths",
    "StreamedListing",
    "in_batches",
    "listed",
    "listing",
    "listing_flags",
    "read_batch",
    "read_batch_for_writer",
]

BATCH_BYTES = 1 << 17  # of rg's list at a time: a few thousand paths
_VCS_NAMES = tuple(VCS_DIRS)  # a batch holding none of these names holds no VCS folder
_VCS_BYTES = tuple(v.encode() for v in VCS_DIRS)
# every VCS folder's name starts with a dot, and in rg's "./"-led list each name follows a "/":
# a batch without "/." holds none (one scan for a pair of bytes that few paths hold, where each
# of the names took a scan of its own through every extension's dot: 0.2 s of a million files)
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NOT_BENEATH = (errno.ELOOP, errno.ENOTDIR, errno.EXDEV)  # a symlink (or a file) where a folder was


class ListingFailed(Exception):
    """rg could not list (the message says why); the index is not built or not trusted."""


def listing_flags(ctx: CallContext, excluded: list[str]) -> list[str]:
    """rg's flags for the files a grep or glob over the whole workspace would search: on one
    thread (a million files listed in a third less CPU for a seventh more time: a background
    build leaves the other core to the person and the server)."""
    flags = ["--files", "--null", "--threads=1", *discovery_flags(ctx), *VCS_EXCLUDES, *hide_flags(ctx)]
    return flags + exclusion_flags(excluded)


def listed(
    ctx: CallContext, root: SearchRoot, excluded: list[str], targets: list[str], depth: int | None = None
) -> tuple[list[str], int]:
    """The files rg lists below ``targets`` (relative to the root, "." for all), without "./",
    and how many folders it could not read."""
    out, unreadable = listing(ctx, root, excluded, targets, depth)
    return [rel for batch in in_batches(out, excluded) for rel in batch], unreadable


def listing(
    ctx: CallContext, root: SearchRoot, excluded: list[str], targets: list[str], depth: int | None = None
) -> tuple[bytes, int]:
    """rg's list of the files below ``targets`` as it printed it (``in_batches`` reads it), and
    how many folders it could not read: a million paths kept as one bytes object, not a list."""
    argv = listing_flags(ctx, excluded)
    if depth is not None:
        argv.append(f"--max-depth={depth}")
    argv += ["--", *("./" + t if t != "." else "." for t in targets)]
    outcome = run_search(ctx, argv, "grep", root)
    if outcome.returncode == 2 and not outcome.stdout and not file_errors(outcome):
        raise ListingFailed(diagnostic(outcome))
    if outcome.overflow:
        raise ListingFailed("the list of files is over the raw output bound")
    return outcome.stdout, file_errors(outcome)


class Paths(Sequence[str]):
    """A batch of rg's list as the bytes it printed: ``block``, the paths joined by NULs (no
    "./", no NUL at the end), and ``len`` of them; each path as text only once one is asked for.

    Why: the compiled reader takes the paths as those bytes. Made into a million strings, then
    joined and encoded again to be handed to it, they cost a million-file build 0.1–0.3 s of CPU
    for nothing; only a batch with a file the reader leaves to Python needs its text."""

    __slots__ = ("_count", "_list", "block")

    def __init__(self, block: bytes, count: int) -> None:
        self.block = block
        self._count = count
        self._list: list[str] | None = None

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, i):
        return self._text()[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self._text())

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    def _text(self) -> list[str]:
        if self._list is None:
            self._list = self.block.decode("utf-8", "surrogateescape").split("\0")
        return self._list


def in_batches(out: bytes, excluded: list[str], size: int = BATCH_BYTES) -> Iterator[Sequence[str]]:
    """The paths of ``listing``'s output, a batch of about ``size`` bytes of it at a time: as
    ``Paths`` where the batch is rg's bytes as they stand (every path "./"-led, nothing to drop),
    else as a list of the paths kept."""
    at, end = 0, len(out)
    while at < end:
        stop = out.rfind(b"\0", at, at + size) if at + size < end else end - 1
        if stop < at:  # one path longer than a batch
            stop = out.find(b"\0", at + size)
            stop = end - 1 if stop < 0 else stop
        piece = out[at : stop + 1]
        at = stop + 1
        if (
            not excluded
            and piece.startswith(b"./")
            and piece.endswith(b"\0")
            and piece.count(b"\0./") == (count := piece.count(b"\0")) - 1
            and (b"/." not in piece or not any(v in piece for v in _VCS_BYTES))
        ):
            yield Paths(piece[2:-1].replace(b"\0./", b"\0"), count)  # cut in C, left as bytes
            continue
        text = piece.decode("utf-8", "surrogateescape")
        if text.startswith("./") and text.endswith("\0") and text.count("\0./") == text.count("\0") - 1:
            rels = text[2:-1].replace("\0./", "\0").split("\0")  # every path "./"-led, as rg prints them: cut in C
        else:
            rels = [p[2:] if p.startswith("./") else p for p in text.split("\0") if p]
        if excluded:
            rels = drop_excluded(rels, excluded)
        if any(v in text for v in _VCS_NAMES):  # rg leaves VCS folders out; a name such as .github looks alike
            rels = [p for p in rels if not VCS_IN_PATH.search(p)]
        yield rels


class StreamedListing:
    """rg's list of every file below the root for a build, handed on a batch at a time while rg
    still lists (``batches``), so the files are read from the first batch on.

    Why: on a million files rg's list takes about a second, and the build read nothing until it
    was whole. rg runs on a thread of its own (``run_search`` with a consumer, its output taken
    every few milliseconds); what it printed waits in one buffer, cut from the front as batches
    are taken. ``close`` stops rg and waits for its thread: call it before the root's descriptor
    closes. Not thread-safe beyond that one producer and one consumer."""

    def __init__(
        self, context: Callable[[threading.Event], CallContext], root: SearchRoot, excluded: list[str]
    ) -> None:
        """``context(cancel)``: a call context whose search ``cancel`` stops (``close`` sets it)."""
        self._cancel = threading.Event()
        ctx = context(self._cancel)
        self._cond = threading.Condition()
        self._buf = bytearray()
        self._at = 0  # where the next batch starts in ``_buf``
        self._done = False
        self._error: BaseException | None = None
        self._excluded = excluded
        self.listed = 0  # paths rg printed so far
        self.unreadable = 0  # folders rg could not read (known once it is done)
        self._thread = threading.Thread(target=self._run, args=(ctx, root), name="dsh-index-list", daemon=True)
        self._thread.start()

    def _run(self, ctx: CallContext, root: SearchRoot) -> None:
        try:
            argv = [*listing_flags(ctx, self._excluded), "--", "."]
            outcome = run_search(ctx, argv, "grep", root, consume=self._take, keep_stdout=False, cut_ok=True)
            if outcome.overflow:
                raise ListingFailed("the list of files is over the raw output bound")
            if outcome.returncode == 2 and not self.listed and not file_errors(outcome):
                raise ListingFailed(diagnostic(outcome))
            self.unreadable = file_errors(outcome)
        except BaseException as exc:  # handed to the consumer, raised where it waits
            self._error = exc
        finally:
            with self._cond:
                self._done = True
                self._cond.notify_all()

    def _take(self, data: bytes) -> None:
        with self._cond:
            self._buf += data
            self.listed += data.count(b"\0")
            self._cond.notify_all()

    def at_least(self, enough: int, stop: threading.Event) -> bool:
        """Whether rg lists ``enough`` files (its exclusions applied): as soon as it has, or once
        it is done. Raises what stopped rg (``ListingFailed``, or the search's ``ToolError``)."""
        with self._cond:
            self._cond.wait_for(lambda: self._done or self.listed >= enough or stop.is_set())
            if self._error is not None:
                raise self._error
            head = bytes(self._buf[: self._buf.rfind(b"\0") + 1])
        if _at_least(head, self._excluded, enough):
            return True
        with self._cond:  # exclusions dropped some: all of rg's list decides
            self._cond.wait_for(lambda: self._done or stop.is_set())
            if self._error is not None:
                raise self._error
            whole = bytes(self._buf)
        return _at_least(whole, self._excluded, enough)

    def batches(self, stop: threading.Event, size: int = BATCH_BYTES) -> Iterator[Sequence[str]]:
        """The listed paths a batch of about ``size`` bytes at a time, as ``in_batches`` cuts
        them, each as soon as rg printed it; ends when rg is done, or at once when ``stop`` is set
        (the caller ends the build). Raises what stopped rg."""
        while True:
            with self._cond:
                while True:
                    if self._error is not None:
                        raise self._error
                    if stop.is_set():
                        return
                    end = len(self._buf)
                    cut = self._buf.rfind(b"\0", self._at, self._at + size) if end - self._at >= size else -1
                    if cut < self._at and end - self._at >= size:  # one path longer than a batch
                        cut = self._buf.find(b"\0", self._at + size)
                    if cut >= self._at:
                        break
                    if self._done:
                        if end == self._at:
                            return
                        cut = end - 1
                        break
                    self._cond.wait(0.05)
                chunk = bytes(self._buf[self._at : cut + 1])
                self._at = cut + 1
                if self._at >= 1 << 22:  # what was taken goes, a few MiB at a time
                    del self._buf[: self._at]
                    self._at = 0
            yield from in_batches(chunk, self._excluded, len(chunk) + 1)

    def close(self) -> None:
        """Stop rg if it still lists, and wait for its thread."""
        self._cancel.set()
        self._thread.join()


class FileReader:
    """Reads files beneath a root's descriptor for the index, holding the folders it opened.

    Not thread-safe: one reader per thread. ``close`` (or the ``with`` block's end) lets the
    folders go; the root's descriptor stays the caller's."""

    HELD = 8  # folders kept open: rg's threads interleave a few folders' files at a time

    def __init__(self, root_fd: int, max_bytes: int, use_openat2: bool = True) -> None:
        self.root_fd = root_fd
        self.max_bytes = max_bytes
        self.beneath = use_openat2 and syscalls.openat2_available()  # else the O_NOFOLLOW walk
        self._folders: dict[str, int] = {}

    def __enter__(self) -> FileReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        folders, self._folders = self._folders, {}
        for fd in folders.values():
            os.close(fd)

    def read_all(self, rels: Iterable[str]) -> list[tuple[FileRow, str | None]]:
        """``read`` of each, leaving out those not beneath the root."""
        return [got for got in map(self.read, rels) if got is not None]

    def look(self, rel: str) -> os.stat_result | None:
        """``rel``'s own stat (a symlink's, not its target's), reached through folders beneath the
        root; None: gone, or a folder on its way is a symlink or no folder now (as gone to rg's
        walk from the root)."""
        folder, _, name = rel.rpartition("/")
        try:
            return os.stat(name, dir_fd=self._folder(folder), follow_symlinks=False)
        except OSError as exc:
            if exc.errno == errno.ENOENT or exc.errno in _NOT_BENEATH:
                return None
            raise

    def read(self, rel: str) -> tuple[FileRow, str | None] | None:
        """What the index records of one file, and its text when it is indexed; None when it is
        gone, or a folder on its way is a symlink or no folder now: not a file rg's walk from the
        root lists now.

        Why a gone file is left out rather than kept as unread: rg may have listed it through a
        folder a neighbour had just swapped for a symlink to outside (rg follows the symlink it
        opens by path, and one it is handed as a target), and by the read the real folder is back.
        Kept, that would record a name from outside the root. A file that truly went after the
        listing is reported by its own file event, and one that comes back by another."""
        folder, _, name = rel.rpartition("/")
        try:
            folder_fd = self._folder(folder)
        except OSError as exc:
            if exc.errno in _NOT_BENEATH or exc.errno == errno.ENOENT:
                return None
            return FileRow(rel, 0, 0, UNREAD, False), None
        try:
            fd = os.open(name, _OPEN, dir_fd=folder_fd)
        except OSError as exc:
            if exc.errno == errno.ENOENT:  # gone: no name is recorded that is not in the root now
                return None
            return FileRow(rel, 0, 0, UNREAD, False), None  # a symlink now, no permission: rg decides
        try:
            return _read_open(fd, rel, self.max_bytes)
        finally:
            os.close(fd)

    def _folder(self, folder: str) -> int:
        fd = self._folders.get(folder)
        if fd is None:
            if len(self._folders) >= self.HELD:
                os.close(self._folders.pop(next(iter(self._folders))))  # the oldest opened
            fd = self._folders[folder] = open_folder(self.root_fd, folder, self.beneath)
        return fd


def read_batch(
    reader: FileReader, gatherer: native.Gatherer | None, rels: Sequence[str], first: int
) -> tuple[list[tuple], list[tuple[int, str]]]:
    """A build's batch: each of ``rels`` read, path i as id ``first + i``, into ``IndexStore.add``'s
    rows and texts. ``gatherer`` (when the compiled reader is loaded) reads the files it takes and
    gathers their trigrams, and makes their rows whole; ``reader`` reads the rest (and all of
    them without one), their text given for FTS5. A path below a folder that is a symlink or no
    folder now is left out."""
    if gatherer is None:
        return _python_rows(reader, rels, first, [native.PYTHON] * len(rels), [None] * len(rels))
    got = gatherer.read(reader.root_fd, reader.beneath, rels, first, reader.max_bytes)
    rows = list(zip(range(first, first + len(rels)), got.paths, got.sizes, got.mtimes, got.kinds, got.nuls, got.exts))
    if got.kinds.count(native.TEXT) == len(rels):  # the common case: every row made in C
        return rows, []
    return _python_rows(reader, rels, first, got.kinds, rows)


def read_batch_for_writer(
    reader: FileReader, gatherer: native.Gatherer, rels: Sequence[str], first: int
) -> tuple[native.Read, list[tuple], list[tuple[int, str]]]:
    """``read_batch`` for a build whose rows C writes (``native.Writer``): the compiled reader's
    ``Read``, whose ``TEXT`` rows the writer takes from its arrays, and the rows and texts of the
    rest, read in Python."""
    got = gatherer.read(reader.root_fd, reader.beneath, rels, first, reader.max_bytes, lists=False)
    assert got.raw is not None
    kinds = got.raw[1]
    if int((kinds == native.TEXT).sum()) == len(rels):
        return got, [], []
    rows, texts = _python_rows(reader, rels, first, kinds.tolist(), [None] * len(rels))
    return got, rows, texts


def _at_least(out: bytes, excluded: list[str], enough: int) -> bool:
    """Whether rg's list ``out`` names ``enough`` files (read only as far as it takes)."""
    count = 0
    for batch in in_batches(out, excluded):
        count += len(batch)
        if count >= enough:
            return True
    return False


def _python_rows(
    reader: FileReader, rels: Sequence[str], first: int, kinds: list[int], rows: list
) -> tuple[list[tuple], list[tuple[int, str]]]:
    """``rows`` (a row or None per path) with the paths the compiled reader left to Python
    (``kinds``) read here, and their texts for FTS5; a path it skipped, or one gone, has none."""
    texts: list[tuple[int, str]] = []
    for i, kind in enumerate(kinds):
        if kind == native.TEXT:
            continue
        read = reader.read(rels[i]) if kind == native.PYTHON else None
        if read is None:
            rows[i] = None
            continue
        row, text = read
        rows[i] = file_row(first + i, row)
        if text:
            texts.append((first + i, text))
    return [r for r in rows if r is not None], texts


def _read_open(fd: int, rel: str, max_bytes: int) -> tuple[FileRow, str | None]:
    try:
        st = os.fstat(fd)
        if not statmod.S_ISREG(st.st_mode):
            return FileRow(rel, st.st_size, st.st_mtime_ns, UNREAD, False), None
        if st.st_size > max_bytes:
            return FileRow(rel, st.st_size, st.st_mtime_ns, BIG, _holds_nul(fd)), None
        data = os.read(fd, max_bytes + 1)
        while len(data) <= max_bytes:  # a file still growing: read what is there now
            more = os.read(fd, max_bytes + 1 - len(data))
            if not more:
                break
            data += more
        if len(data) > max_bytes:
            return FileRow(rel, len(data), st.st_mtime_ns, BIG, _holds_nul(fd)), None
    except OSError:
        return FileRow(rel, 0, 0, UNREAD, False), None
    text = decode(data)
    nul = "\0" in text
    return FileRow(rel, len(data), st.st_mtime_ns, TEXT, nul), text.replace("\0", " ") if nul else text


def decode(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data[2:].decode("utf-16-le" if data[0] == 0xFF else "utf-16-be", "replace")
    return data.decode("utf-8", "replace")


def _holds_nul(fd: int) -> bool:
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return False
        if b"\0" in chunk:
            return True
        offset += len(chunk)
