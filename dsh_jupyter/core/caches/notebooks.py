"""Where the notebooks are below a folder, kept between calls while every folder's stamp proves it.

Why it exists: grep searches notebooks by their cells, so each grep over a folder must first know
which ``.ipynb`` files lie below it. Asking rg (``rg --files --glob=*.ipynb``) meant a second
walk of the whole tree beside the search itself, and on two cores the search paid for most of
it in waiting. Which notebooks exist
depends only on folders' entries, and a folder's stamp moves whenever an entry is made, removed
or renamed in it. So this walk keeps, per folder, its subfolders and its notebook names, and on
the next call only looks at each folder's stamp (one ``stat``; ``stamps``: settled, on a local
filesystem); a folder whose stamp moved, or cannot prove itself, is opened and read again. The
last whole answer per root, rules and exclusions is kept too, with the stamp of every folder its
walk visited: when each folder is still the one it was, with the same settled stamp, the walk
would visit the same folders and find the same notebooks, so that answer is given as it is: one
``stat`` per folder instead of a walk over the kept entries, beside the search on the same cores.

What it answers must equal what rg's listing would: no symlink followed, regular files only, the
VCS folders left out, hidden names only where they are shown, protected folders (``excluded``)
left out. Names are shown or hidden by the caller's rule (``Visibility.shown``: hidden names,
Jupyter's ``hide_globs`` matched on names as Jupyter matches them); the caller asks rg instead,
as before, when a hide glob would read differently to rg (``plain_globs``: a ``/``, braces,
``**``, a backslash or ``[^``) or when grep has an ``include`` glob.

What it must never do: read a folder it did not open beneath the root with no symlink followed
(``openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS)``, or an ``O_NOFOLLOW`` walk), hold more than one
folder open at a time, or reuse a folder's entries when its stamp does not settle.
"""

from __future__ import annotations

import errno
import os
import stat as statmod
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from ..fs import syscalls
from ..notebooks.format import NOTEBOOK_SUFFIX
from .stamps import is_local, settled

__all__ = ["NotebookTree", "plain_globs"]

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_ANSWERS = 8  # whole answers kept (roots and rules searched lately)
_SKIPPED_ERRORS = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EACCES, errno.EPERM, errno.EXDEV)


def plain_globs(globs) -> bool:
    """Whether every glob means the same to ``fnmatch`` on a name as to rg at any depth."""
    return all(not any(mark in g for mark in ("/", "{", "}", "**", "\\", "[^")) for g in globs)


def _stamp(st: os.stat_result) -> tuple:
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_nlink)


class NotebookTree:
    """Folders' subfolder and notebook names, by folder identity; at most ``max_folders`` kept."""

    def __init__(self, max_folders: int = 100_000) -> None:
        self.max_folders = max_folders
        self._folders: OrderedDict[tuple, tuple[tuple, list[str], list[str]]] = OrderedDict()
        # The last whole answer per root and rules: (rules' owner, [(rel, stamp)] of every folder
        # the walk visited, the notebooks). Proven again by the stamps alone, with no walk.
        self._answers: OrderedDict[tuple, tuple[object, list[tuple[str, tuple]], list[str]]] = OrderedDict()
        self._lock = threading.Lock()
        self.reads = 0  # folders read from disk (not served from what was kept): for tests and benchmarks
        self.answered = 0  # walks answered whole from the last answer: for tests and benchmarks

    def __len__(self) -> int:
        return len(self._folders)

    def clear(self) -> None:
        with self._lock:
            self._folders.clear()
            self._answers.clear()

    def _entries(
        self, root_fd: int, rel: str, now: int, local: dict[int, bool]
    ) -> tuple[list[str], list[str], tuple | None] | None:
        """``(subfolders, notebook names, stamp)`` of the folder ``rel`` below ``root_fd`` (None:
        not a folder beneath the root now): the kept entries when its stamp proves them, else
        read; ``stamp`` is None when it cannot prove them (not settled, or not trusted).

        The stamp is looked up by path from the root: one system call, and safe although a
        symlinked component would be followed, because kept entries are reused only for the
        same folder identity (device and inode) with the same stamp, and a folder that must be
        read is opened beneath the root with no symlink followed. ``now`` is the clock read
        when the walk began, before any stat of it (an earlier clock only makes fewer looks
        settled); ``local`` remembers per device whether its stamps are trusted (``stamps``).
        """
        try:
            st = os.fstat(root_fd) if not rel else os.stat(rel, dir_fd=root_fd, follow_symlinks=False)
        except OSError:
            return None
        if not statmod.S_ISDIR(st.st_mode):
            return None
        if local.get(st.st_dev) and settled(st, now):
            with self._lock:
                kept = self._folders.get((st.st_dev, st.st_ino))
                if kept is not None and kept[0] == _stamp(st):
                    self._folders.move_to_end((st.st_dev, st.st_ino))
                    return kept[1], kept[2], kept[0]
        fd = _open_folder(root_fd, rel)
        if fd is None:
            return None
        try:
            st = os.fstat(fd)  # the opened folder is the one whose entries are read and kept
            trusted = local.get(st.st_dev)
            if trusted is None:
                trusted = local[st.st_dev] = is_local(fd)
            folders, notebooks = [], []
            self.reads += 1
            with os.scandir(fd) as it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            folders.append(entry.name)
                        elif entry.name.endswith(NOTEBOOK_SUFFIX) and entry.is_file(follow_symlinks=False):
                            notebooks.append(entry.name)
                    except OSError:
                        continue
        finally:
            os.close(fd)
        if not (trusted and settled(st, now)):
            return folders, notebooks, None
        stamp = _stamp(st)
        with self._lock:
            self._folders[(st.st_dev, st.st_ino)] = (stamp, folders, notebooks)
            self._folders.move_to_end((st.st_dev, st.st_ino))
            while len(self._folders) > self.max_folders:
                self._folders.popitem(last=False)
        return folders, notebooks, stamp

    def list_notebooks(
        self,
        root_fd: int,
        *,
        shown: Callable[[str], bool],
        skip_dirs: frozenset[str],
        excluded: frozenset[str],
        cancelled: Callable[[], bool] = lambda: False,
    ) -> list[str] | None:
        """The notebooks below the folder ``root_fd`` (paths relative to it, sorted), as rg's
        listing finds them; None when cancelled.

        ``shown(name)``: whether a name may appear (hidden files, hide globs: the caller checks
        ``plain_globs`` first); ``skip_dirs``: folder names left out at any depth (the VCS
        folders); ``excluded``: relative paths of folders left out (protected ones).
        """
        now = time.time_ns()
        root_st = os.fstat(root_fd)
        rules = getattr(shown, "__self__", shown)  # a bound method is a new object each time
        # the rules by identity: the answer holds them, so their id cannot be reused meanwhile
        key = (root_st.st_dev, root_st.st_ino, skip_dirs, excluded, id(rules))
        with self._lock:
            answer = self._answers.get(key)
        if answer is not None and answer[0] is rules and _still(root_fd, answer[1], now):
            self.answered += 1
            return list(answer[2])
        local = {root_st.st_dev: is_local(root_fd)}  # other devices: learnt when first read
        found: list[str] = []
        visited: list[tuple[str, tuple]] | None = []  # None once a folder cannot prove itself
        pending = [""]  # folders still to visit, relative to the root ("" is the root)
        while pending:
            if cancelled():
                return None
            rel = pending.pop()
            entries = self._entries(root_fd, rel, now, local)
            if entries is None:
                visited = None  # gone, not a folder any more, or not reachable: nothing to prove next time
                continue
            folders, notebooks, stamp = entries
            if visited is not None:
                if stamp is None:
                    visited = None
                else:
                    visited.append((rel, stamp))
            head = rel + "/" if rel else ""
            found += [head + name for name in notebooks if shown(name)]
            pending += [
                head + name for name in folders if name not in skip_dirs and shown(name) and head + name not in excluded
            ]
        found.sort()
        if visited is not None and len(visited) <= self.max_folders:
            with self._lock:
                self._answers[key] = (rules, visited, list(found))
                self._answers.move_to_end(key)
                while len(self._answers) > _ANSWERS:
                    self._answers.popitem(last=False)
        return found


def _still(root_fd: int, visited: list[tuple[str, tuple]], now: int) -> bool:
    """Whether every folder a walk visited is still the same folder with the same settled stamp:
    then every folder holds the same entries, so the walk would visit the same folders and find
    the same notebooks. One ``stat`` per folder, by path from the root (a symlinked component
    makes an identity differ)."""
    for rel, stamp in visited:
        try:
            st = os.fstat(root_fd) if not rel else os.stat(rel, dir_fd=root_fd, follow_symlinks=False)
        except OSError:
            return False
        if (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_nlink) != stamp or not settled(st, now):
            return False
    return True


def _open_folder(root_fd: int, rel: str) -> int | None:
    """A descriptor of the folder ``rel`` beneath ``root_fd``, no symlink followed; None if none."""
    if not rel:
        return os.dup(root_fd)
    try:
        if syscalls.openat2_available():
            return syscalls.openat2(root_fd, rel, _DIR, syscalls.RESOLVE_BENEATH | syscalls.RESOLVE_NO_SYMLINKS)
        fd = os.dup(root_fd)
        for part in rel.split("/"):
            try:
                nxt = os.open(part, _DIR, dir_fd=fd)
            finally:
                os.close(fd)
            fd = nxt
        return fd
    except OSError as exc:
        if exc.errno in _SKIPPED_ERRORS:
            return None
        raise
