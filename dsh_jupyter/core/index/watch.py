"""File events under the workspace root, and whether they can still be trusted (Linux inotify).

Why it exists: the index answers from a table built once and kept fresh by file events. Such an
answer is right only while no event was lost since the build started, so this watcher says, besides
what changed, whether it has been authoritative all along. Once it is not (``lost``), it stays so
until ``close``: the index rebuilds rather than guess what it missed.

The API::

    w = Watcher(root, max_watches=100_000, skip_dir=lambda rel: rel.endswith(".git"))
    w.start()            # watches root and every folder below (no symlink followed)
    changes = w.drain()  # non-blocking: every queued event, read now in the calling thread
    changes.paths        # rel paths ("/"-separated, no "./") created, modified, closed after
                         # writing, deleted, renamed from or to, attributes changed
    changes.lost, w.lost # None while authoritative, else a short reason (kept until close)
    w.close()

``root`` is a path or an open descriptor of the root folder. ``skip_dir(rel)`` returning True
keeps a folder (and what is below it) unwatched; its own name still shows in ``paths`` when it is
created, deleted or renamed. A folder's path in ``paths`` may stand for everything below it: a
folder moved out of the root is reported by its path alone.

How: ``inotify_init1(IN_NONBLOCK|IN_CLOEXEC)`` through ``ctypes``; each folder is opened with
``O_NOFOLLOW`` beneath the root (``openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS)`` where the kernel
has it and the path is shorter than ``PATH_MAX``, else one name at a time from the root's
descriptor), watched through that descriptor (``/proc/self/fd/N``) *before* it is listed from
it, so nothing created in between is missed and no symlink swapped in leads the watch elsewhere.
A folder created later (``IN_CREATE|IN_ISDIR``, seen at drain) is watched and then listed, and
every file and folder found in it is reported in ``paths``. At ``start``, a folder whose link
count, read after its watch is added, says it has no subfolder is not listed at all, on the file
systems that keep that count (``filesystems.SUBFOLDER_LINKS``: ext4, xfs, tmpfs).

Authority is lost, with these reasons (the tool answer shows them as ``value.index_note``):

- ``"file events were lost (the kernel's event queue overflowed)"``: ``IN_Q_OVERFLOW``;
- ``"the kernel's limit on watched folders was reached"``: ``inotify_add_watch`` failed with
  ``ENOSPC`` (``/proc/sys/fs/inotify/max_user_watches``);
- ``"the workspace has more folders than max_watches (N)"``: the ``max_watches`` setting reached;
- ``"a folder was moved into the workspace"`` / ``"a folder was renamed in the workspace"``:
  ``IN_MOVED_TO|IN_ISDIR`` (the index rebuilds rather than re-map a subtree; a folder that
  ``skip_dir`` skips may come and go freely);
- ``"the workspace folder was deleted or moved"``: ``IN_DELETE_SELF``, ``IN_MOVE_SELF`` or
  ``IN_IGNORED`` on the root, or the root's link count 0 at a drain (the watcher holds the root
  open, which delays ``IN_DELETE_SELF`` until it lets go);
- ``"a file system in the workspace was unmounted"``: ``IN_UNMOUNT``, or a mount at or below the
  root gone from ``/proc/self/mountinfo`` (``mounts.py``);
- ``"a file system was mounted in the workspace"``: a new mount at or below the root (it covers a
  watched folder without any file event; the mount table polls when it changes);
- ``"the workspace is on a network file system (nfs)"`` (or ``smb``, ``cifs``, ``ceph``, ... as in
  ``filesystems.REMOTE_FILESYSTEMS``), ``"the workspace is on a user-space file system (fuse)"``, and
  ``"a folder in the workspace is on a network file system (nfs)"`` (or ``user-space``) for a mount
  below the root: events there miss changes made by other machines or by the file system's daemon;
- ``"a folder in the workspace could not be watched (Permission denied)"`` (the ``strerror`` of
  opening, ``statfs``, ``inotify_add_watch`` or listing of the folder);
- ``"the kernel's limit on file-event watchers was reached"``: ``inotify_init1`` failed with
  ``EMFILE`` (``/proc/sys/fs/inotify/max_user_instances``) or ``ENFILE``;
- ``"file events are not available on this system"``: not Linux, no ``/proc``, the mount table
  unreadable, or ``inotify_init1`` failed otherwise (logged with the error);
- ``"file events could not be read (...)"``: ``read`` of the inotify descriptor failed;
- ``"the watcher has not started"`` before ``start``, ``"the watcher was closed"`` after a
  ``close`` while authoritative.

What it cannot see, by inotify's design (not detected, so the index must not promise more): a
change through another hard link to a file from outside the root, writes through a shared
``mmap``, and changes inside folders that ``skip_dir`` skips.

What it must never do: report authority it does not have (any doubt is ``lost``), block (every read
is non-blocking), follow a symlink, or watch beyond the root.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import struct
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from ..fs import syscalls
from ..fs.beneath import open_folder
from .filesystems import SUBFOLDER_LINKS, remote_filesystem
from .mounts import MountTable

__all__ = ["Changes", "Watcher"]

log = logging.getLogger(__name__)

# <sys/inotify.h>
IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000

_CHANGED = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
_MASK = _CHANGED | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK
_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len; then name[len]
_READ_SIZE = 1 << 18

NOT_STARTED = "the watcher has not started"
CLOSED = "the watcher was closed"
OVERFLOW = "file events were lost (the kernel's event queue overflowed)"
KERNEL_WATCH_LIMIT = "the kernel's limit on watched folders was reached"
MAX_WATCHES = "the workspace has more folders than max_watches ({})"
MOVED_IN = "a folder was moved into the workspace"
RENAMED = "a folder was renamed in the workspace"
ROOT_GONE = "the workspace folder was deleted or moved"
UNMOUNTED = "a file system in the workspace was unmounted"
MOUNTED = "a file system was mounted in the workspace"
ROOT_REMOTE = "the workspace is on a {} file system ({})"
BELOW_REMOTE = "a folder in the workspace is on a {} file system ({})"
UNWATCHABLE = "a folder in the workspace could not be watched ({})"
INSTANCE_LIMIT = "the kernel's limit on file-event watchers was reached"
UNAVAILABLE = "file events are not available on this system"
UNREADABLE = "file events could not be read ({})"


@dataclass
class Changes:
    """What one ``drain`` found: the changed rel paths, and the reason authority was lost, if it was."""

    paths: set[str] = field(default_factory=set)
    lost: str | None = None


class _Lost(Exception):
    pass


_libc = None


def _lib():
    global _libc
    if _libc is None:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.inotify_init1.argtypes = [ctypes.c_int]
        lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        lib.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        _libc = lib
    return _libc


def _join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name


class Watcher:
    """Watches every folder under a root with one inotify descriptor (see the module docstring)."""

    def __init__(
        self,
        root_fd_or_path: str | int,
        *,
        max_watches: int = 100_000,
        skip_dir: Callable[[str], bool] | None = None,
    ) -> None:
        self._root = root_fd_or_path
        self._max = max_watches
        self._skip = skip_dir or (lambda rel: False)
        self._lock = threading.Lock()
        self._fd = -1
        self._root_fd = -1
        self._root_dev = -1
        self._counts_subfolders = False  # the root's file system keeps a folder's link count as 2 + subfolders
        self._rel: dict[int, str] = {}  # wd -> rel folder ("" is the root)
        self._wd: dict[str, int] = {}  # rel folder -> wd
        self._from_dirs: set[int] = set()  # cookies of folders moved away, to tell a rename
        self._lost: str | None = NOT_STARTED
        self._started = False
        self._beneath = False
        self._mounts: MountTable | None = None
        self._mount_ids: set[int] = set()
        self._root_path = ""

    @property
    def lost(self) -> str | None:
        """None while authoritative since ``start``; else why not (kept until ``close``)."""
        return self._lost

    def start(self) -> None:
        """Watch the root and every folder below it; lost (with the reason) where that fails."""
        with self._lock:
            if self._started:
                raise RuntimeError("a watcher starts once")
            self._started = True
            self._lost = None
            try:
                self._open()
                self._add_tree("", report=None)
            except _Lost:
                pass
            except OSError as exc:  # no descriptor left for a folder, and the like
                self._lose(UNWATCHABLE.format(exc.strerror))

    def drain(self) -> Changes:
        """Every event queued now, read without blocking; ``lost`` set if authority is gone."""
        with self._lock:
            changes = Changes()
            if self._lost is None:
                try:
                    self._read_all(changes.paths)
                    # The root's descriptor keeps its inode alive, so its deletion raises no
                    # IN_DELETE_SELF while this watcher holds it: a link count of 0 says it.
                    if os.fstat(self._root_fd).st_nlink == 0:
                        raise self._lose(ROOT_GONE)
                    self._check_mounts()
                except _Lost:
                    pass
                except OSError as exc:
                    self._lose(UNWATCHABLE.format(exc.strerror))
            changes.lost = self._lost
            return changes

    def close(self) -> None:
        """Release the inotify descriptor and the root; the watcher stays lost from now on."""
        with self._lock:
            if self._lost is None:
                self._lost = CLOSED
            self._release()

    def __enter__(self) -> Watcher:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        self._release()

    # -- losing ---------------------------------------------------------------------------------

    def _lose(self, reason: str) -> _Lost:
        if self._lost is None:
            self._lost = reason
            log.warning("file events under %r are no longer trusted: %s", self._root, reason)
        self._release()  # free the kernel's watches for others: nothing more will be read
        return _Lost(reason)

    def _release(self) -> None:
        for fd in (self._fd, self._root_fd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._fd = self._root_fd = -1
        if self._mounts is not None:
            self._mounts.close()
            self._mounts = None
        self._rel.clear()
        self._wd.clear()

    # -- watching -------------------------------------------------------------------------------

    def _open(self) -> None:
        if not sys.platform.startswith("linux") or not os.path.isdir("/proc/self/fd"):
            log.warning("file events are not available: inotify needs Linux with /proc")
            raise self._lose(UNAVAILABLE)
        try:
            lib = _lib()
            fd = lib.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError) as exc:
            log.warning("file events are not available: %s", exc)
            raise self._lose(UNAVAILABLE) from None
        if fd < 0:
            err = ctypes.get_errno()
            if err in (errno.EMFILE, errno.ENFILE):
                raise self._lose(INSTANCE_LIMIT)
            log.warning("file events are not available: inotify_init1: %s", os.strerror(err))
            raise self._lose(UNAVAILABLE)
        self._fd = fd
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
        root = f"/proc/self/fd/{self._root}" if isinstance(self._root, int) else self._root
        try:
            self._root_fd = os.open(root, flags)
        except (FileNotFoundError, NotADirectoryError):
            raise self._lose(ROOT_GONE) from None
        except OSError as exc:
            raise self._lose(UNWATCHABLE.format(exc.strerror)) from None
        self._root_dev = os.fstat(self._root_fd).st_dev
        self._beneath = syscalls.openat2_available()
        try:  # opened before the walk: a mount made while it runs shows at the first drain
            self._mounts = MountTable()
            self._root_path = os.readlink(f"/proc/self/fd/{self._root_fd}")
            self._mount_ids = self._mounts.under(self._root_path)
        except OSError as exc:
            log.warning("file events are not available: the mount table cannot be read: %s", exc)
            raise self._lose(UNAVAILABLE) from None

    def _check_mounts(self) -> None:
        """Lost if a file system was mounted or unmounted at or below the root since ``start``:
        a mount covers a watched folder without a file event."""
        assert self._mounts is not None
        if not self._mounts.changed():
            return
        now = self._mounts.under(self._root_path)
        if now - self._mount_ids:
            raise self._lose(MOUNTED)
        if self._mount_ids - now:
            raise self._lose(UNMOUNTED)

    def _open_dir(self, rel: str) -> int | None:
        """A descriptor of folder ``rel`` beneath the root (no symlink followed); None if it is gone."""
        try:
            return open_folder(self._root_fd, rel, self._beneath)
        except (FileNotFoundError, NotADirectoryError):
            return None  # gone or replaced since it was seen: its parent's events say so
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EXDEV):
                return None  # a symlink now: not a folder to watch
            raise self._lose(UNWATCHABLE.format(exc.strerror or os.strerror(exc.errno or 0))) from None

    def _add_tree(self, top: str, report: set[str] | None) -> None:
        """Watch ``top`` and every folder below, each before listing it; when ``report`` is given,
        every path found goes into it (a folder that appeared after ``start``)."""
        stack = [top]
        while stack:
            rel = stack.pop()
            fd = self._open_dir(rel)
            if fd is None:
                continue
            prefix = rel + "/" if rel else ""
            try:
                if not self._watch(rel, fd):
                    continue
                if report is None and self._no_subfolder(fd):
                    continue  # a leaf: nothing to watch below it, and nothing to report
                try:
                    with os.scandir(fd) as entries:
                        for entry in entries:
                            if report is not None:
                                report.add(prefix + entry.name)
                            try:
                                if not entry.is_dir(follow_symlinks=False):
                                    continue
                            except OSError:
                                continue
                            child = prefix + entry.name
                            if not self._skip(child):
                                stack.append(child)
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    raise self._lose(UNWATCHABLE.format(exc.strerror)) from None
            finally:
                os.close(fd)

    def _no_subfolder(self, fd: int) -> bool:
        """Whether the folder open as ``fd`` has no subfolder, read from its link count (taken
        after its watch is added: a subfolder made later raises its own event) where the root's
        file system keeps it so (``SUBFOLDER_LINKS``) and the folder is on the root's device.
        Why: a million files sit mostly in leaf folders, and listing each one to find no folder
        took a second of a build's start; the count takes a ``stat``."""
        if not self._counts_subfolders:
            return False
        st = os.fstat(fd)
        return st.st_nlink == 2 and st.st_dev == self._root_dev

    def _watch(self, rel: str, fd: int) -> bool:
        """Add the watch of folder ``rel`` (open as ``fd``); False when it is watched already."""
        st = os.fstat(fd)
        if st.st_dev != self._root_dev or not rel:
            try:
                f_type = syscalls.fstatfs_type(fd)
            except OSError as exc:  # a file system that will not say what it is: not trusted
                raise self._lose(UNWATCHABLE.format(exc.strerror)) from None
            remote = remote_filesystem(f_type)
            if not rel:
                self._counts_subfolders = (f_type & 0xFFFFFFFF) in SUBFOLDER_LINKS
            if remote is not None:
                name, kind = remote
                raise self._lose((BELOW_REMOTE if rel else ROOT_REMOTE).format(kind, name))
        if len(self._rel) >= self._max and rel not in self._wd:
            raise self._lose(MAX_WATCHES.format(self._max))
        wd = _lib().inotify_add_watch(self._fd, f"/proc/self/fd/{fd}".encode(), _MASK)
        if wd < 0:
            err = ctypes.get_errno()
            if err == errno.ENOSPC:
                raise self._lose(KERNEL_WATCH_LIMIT)
            if err in (errno.ENOENT, errno.ENOTDIR):
                return False
            raise self._lose(UNWATCHABLE.format(os.strerror(err)))
        if self._rel.get(wd) == rel:
            return False  # the same folder seen twice (its creation event after a listing)
        old = self._rel.get(wd)
        if old is not None and self._wd.get(old) == wd:
            del self._wd[old]
        self._rel[wd] = rel
        self._wd[rel] = wd
        return True

    def _forget(self, top: str) -> None:
        """Stop watching folder ``top`` and every folder below it (it left the root)."""
        prefix = top + "/"
        for rel in [r for r in self._wd if r == top or r.startswith(prefix)]:
            wd = self._wd.pop(rel)
            self._rel.pop(wd, None)
            _lib().inotify_rm_watch(self._fd, wd)  # its IN_IGNORED comes later, for an unknown wd

    # -- reading --------------------------------------------------------------------------------

    def _read_all(self, paths: set[str]) -> None:
        while True:
            try:
                data = os.read(self._fd, _READ_SIZE)
            except BlockingIOError:
                return
            except InterruptedError:
                continue
            except OSError as exc:
                raise self._lose(UNREADABLE.format(exc.strerror)) from None
            offset = 0
            while offset < len(data):
                wd, mask, cookie, size = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size
                name = os.fsdecode(data[offset : offset + size].rstrip(b"\0")) if size else ""
                offset += size
                self._event(wd, mask, cookie, name, paths)

    def _event(self, wd: int, mask: int, cookie: int, name: str, paths: set[str]) -> None:
        if mask & IN_Q_OVERFLOW:
            raise self._lose(OVERFLOW)
        if mask & IN_UNMOUNT:
            raise self._lose(UNMOUNTED)
        rel = self._rel.get(wd)
        if rel is None:
            return  # a folder no longer watched (moved away or deleted): nothing of the root's
        if not name:
            if rel == "" and mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED):
                raise self._lose(ROOT_GONE)
            if mask & IN_IGNORED:  # the folder was deleted: its parent reported it
                del self._rel[wd]
                if self._wd.get(rel) == wd:
                    del self._wd[rel]
            return
        path = _join(rel, name)
        if mask & _CHANGED:
            paths.add(path)
        if not mask & IN_ISDIR:
            return
        if mask & IN_MOVED_FROM:
            if len(self._from_dirs) > 4096:
                self._from_dirs.clear()  # a rename told apart from a move-in only in the reason
            self._from_dirs.add(cookie)
            self._forget(path)
        elif mask & IN_MOVED_TO and not self._skip(path):
            raise self._lose(RENAMED if cookie in self._from_dirs else MOVED_IN)
        elif mask & IN_CREATE and not self._skip(path):
            self._add_tree(path, report=paths)
