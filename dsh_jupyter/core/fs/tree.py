"""Find files and folders beneath a root through descriptors, never by re-opening a checked path.

Why it exists: checking ``realpath(p)`` and then opening ``p`` again lets a neighbour swap a
folder for a symlink to outside in between (seen: a ``read`` returned an outside file after a few
hundred tries, ``list`` showed an outside folder after three). Here the root is opened once and
every path is walked from that descriptor, one component at a time, each step an ``*at`` call on
the descriptor of the step before with ``O_NOFOLLOW``. A symlink met on the way is read (its text)
and resolved by this walk itself, within a hop limit; whatever happens to the names meanwhile, the
walk only ever holds descriptors of folders beneath the root. Where the kernel has ``openat2``
(Linux 5.6+), ``RESOLVE_BENEATH`` does the common case in one call and the walk handles what it
refuses (absolute in-root links, a ``..`` that leaves and comes back).

What it must never do: open anything by a path string that a check approved earlier, follow the
final symlink of an entry by name, or close the root's own descriptor while the tree lives. The
one path-string step, ``os.path.realpath`` of an absolute symlink target outside the root, only
maps where such a link lands; the walk then starts again from the root's descriptor, so the
result is still beneath the root.
"""

from __future__ import annotations

import errno
import os
import stat as statmod
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from . import syscalls

__all__ = ["MAX_HOPS", "Entry", "OutsideRoot", "Raced", "SymlinkLoop", "Tree", "proc_fd_path"]

MAX_HOPS = 40  # symlinks followed in one resolution, as Linux allows
_MAX_RACES = 64  # times one walk may find a name changed under it before giving up
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_PATH = getattr(os, "O_PATH", os.O_RDONLY)
_DIR_FLAGS = _PATH | os.O_DIRECTORY | _NOFOLLOW | _CLOEXEC
_PROC_FD = "/proc/self/fd"


class OutsideRoot(Exception):
    """The path (or a symlink on it) leads outside the root."""


class SymlinkLoop(Exception):
    """More than ``MAX_HOPS`` symlinks on one path: a loop."""


class Raced(Exception):
    """Names kept changing under the walk; the caller may try again."""


def proc_fd_path(fd: int) -> str | None:
    """``/proc/self/fd/N`` when this system has it (a name for an open descriptor), else None."""
    return f"{_PROC_FD}/{fd}" if _HAS_PROC else None


_HAS_PROC = os.path.isdir(_PROC_FD)


def _lstat(name: str, dir_fd: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None


@dataclass
class Entry:
    """One resolved name: its folder's descriptor (owned), the name in it, where it is, its lstat.

    ``name`` is ``"."`` when the entry is a folder reached as a whole (the root, or a symlink
    that points at a folder up the tree). ``st`` is None when nothing has that name; when
    ``missing_parent`` is set, not even the folder it would be in exists.
    """

    dir_fd: int
    name: str
    real: str
    st: os.stat_result | None
    missing_parent: bool = False
    parent_not_dir: bool = False  # a file stands where a folder of the path should be
    created: list[tuple[int, str]] = field(default_factory=list)  # (folder fd, name) made on the way

    @property
    def exists(self) -> bool:
        return self.st is not None

    @property
    def is_dir(self) -> bool:
        return self.st is not None and statmod.S_ISDIR(self.st.st_mode)

    def where(self) -> str:
        """Where the entry lies now: its folder's current place (from the descriptor held) and its name.

        A folder can be renamed while its descriptor is held; what a change does is decided on
        where the folder is now, not where it was found. A folder that was removed keeps its
        last known place.
        """
        try:
            folder = os.readlink(f"{_PROC_FD}/{self.dir_fd}") if _HAS_PROC else ""
        except OSError:
            folder = ""
        if not folder.startswith("/") or folder.endswith(" (deleted)"):
            return self.real
        if self.name == ".":
            return folder
        return folder.rstrip("/") + "/" + self.name if folder != "/" else "/" + self.name

    def open(self, flags: int, mode: int = 0o666) -> int:
        """Open this entry by its name in its folder, never following a symlink swapped in since.

        A symlink found in its place now (``ELOOP``/``ENOTDIR``) raises ``Raced``.
        """
        try:
            return os.open(self.name, flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=self.dir_fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK) and not flags & os.O_CREAT:
                raise Raced() from None
            raise

    def close(self) -> None:
        for fd, _name in self.created:
            _close(fd)
        self.created = []
        if self.dir_fd >= 0:
            _close(self.dir_fd)
            self.dir_fd = -1

    def remove_created(self) -> None:
        """Remove the folders this resolution made (newest first), where they are still empty."""
        for fd, name in reversed(self.created):
            try:
                os.rmdir(name, dir_fd=fd)
            except OSError:
                pass

    def __enter__(self) -> Entry:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


class Tree:
    """A root folder held open by descriptor; ``locate`` resolves root-relative paths beneath it."""

    def __init__(self, root: str, *, use_openat2: bool = True) -> None:
        self.real = os.path.realpath(root)
        self.fd = os.open(self.real, _DIR_FLAGS)
        self._finalizer = weakref.finalize(self, _close, self.fd)
        self.openat2 = bool(use_openat2 and _HAS_PROC and syscalls.openat2_available())

    def close(self) -> None:
        self._finalizer()

    @property
    def resolver_name(self) -> str:
        return "openat2" if self.openat2 else "walk"

    def relative(self, path: str) -> str | None:
        """``path`` (absolute, normalised) relative to the root ("" for the root), or None if outside."""
        if path == self.real:
            return ""
        prefix = self.real if self.real.endswith("/") else self.real + "/"
        return path[len(prefix) :] if path.startswith(prefix) else None

    def locate(
        self,
        rel: str,
        *,
        follow_last: bool = True,
        make_parents: bool = False,
        dir_mode: int = 0o777,
        before_make: Callable[[str], None] | None = None,
    ) -> Entry:
        """Resolve ``rel`` (root-relative, ``/``-separated) to an ``Entry`` beneath the root.

        Raises ``OutsideRoot``, ``SymlinkLoop``, ``Raced`` or ``OSError`` (permission and the like).
        ``make_parents`` creates missing folders on the way (mode ``dir_mode``, less the umask;
        recorded in ``Entry.created``); ``before_make`` is told where each would lie, just before it
        is made, and may refuse it by raising (the folders made so far are removed again).
        """
        if self.openat2 and not make_parents:
            found = self._fast(rel, follow_last)
            if found is not None:
                return found
        return self._walk(rel, follow_last, make_parents, dir_mode, before_make)

    # -- openat2: the common case in one call -------------------------------------------------

    def _fast(self, rel: str, follow_last: bool) -> Entry | None:
        parent, _, name = rel.rpartition("/")
        if not name or name in (".", "..") or "/../" in f"/{rel}/" or "/./" in f"/{rel}/" or "//" in rel:
            return None  # the root itself, or dot segments: the walk handles them exactly
        try:
            fd = syscalls.openat2(
                self.fd,
                parent or ".",
                os.O_PATH | os.O_DIRECTORY,
                syscalls.RESOLVE_BENEATH | syscalls.RESOLVE_NO_MAGICLINKS,
            )
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM):
                raise
            return None  # escape attempt, loop, missing folder, race: let the walk say exactly what
        try:
            st = _lstat(name, fd)
            if st is not None and statmod.S_ISLNK(st.st_mode) and follow_last:
                _close(fd)
                return None
            real = os.readlink(f"{_PROC_FD}/{fd}")
        except BaseException:
            _close(fd)
            raise
        return Entry(fd, name, real.rstrip("/") + "/" + name if real != "/" else "/" + name, st)

    # -- the walk -------------------------------------------------------------------------------

    def _map_absolute(self, target: str) -> str:
        """Where an absolute path lands, relative to the root; ``OutsideRoot`` if not beneath it."""
        rel = self.relative(target.rstrip("/") or "/")
        if rel is not None:
            return rel
        # A path that reaches the root through symlinks outside it (e.g. /home -> /srv/home).
        landed = os.path.realpath(target)
        rel = self.relative(landed)
        if rel is None:
            raise OutsideRoot()
        return rel

    def _walk(
        self,
        rel: str,
        follow_last: bool,
        make_parents: bool,
        dir_mode: int = 0o777,
        before_make: Callable[[str], None] | None = None,
    ) -> Entry:
        walk = _Walk(self, rel, before_make)
        try:
            while walk.parts:
                found = walk.step(follow_last, make_parents, dir_mode)
                if found is not None:
                    return found
            # The path ended on a folder reached as a whole (the root, or via ".." in a link).
            fd, real = walk.here()
            return self._entry(walk.stack, fd, ".", real, os.stat(".", dir_fd=fd, follow_symlinks=False), walk.created)
        except BaseException:
            walk.abandon()
            raise

    def _entry(self, stack, fd, name, real, st, created, missing_parent=False) -> Entry:
        """Hand the folder descriptor ``fd`` to a new Entry (a dup for the root) and close the rest."""
        if stack and stack[-1][0] == fd:
            stack.pop()
            owned = fd
        else:
            owned = os.dup(fd)
        while stack:
            _close(stack.pop()[0])
        if name == ".":
            full = real
        else:
            full = real.rstrip("/") + "/" + name if real != "/" else "/" + name
        return Entry(owned, name, full, st, missing_parent=missing_parent, created=created)


class _Walk:
    """One component-by-component walk beneath a ``Tree``'s root.

    It holds the descriptors of the folders it went down (``stack``), the folders it made
    (``created``, removed again if the walk fails), the components still to walk, and counts
    symlink hops (``SymlinkLoop`` past ``MAX_HOPS``) and names that changed between two looks
    (``Raced`` past ``_MAX_RACES``).
    """

    def __init__(self, tree: Tree, rel: str, before_make: Callable[[str], None] | None = None) -> None:
        self.tree = tree
        self.stack: list[tuple[int, str]] = []  # folders opened below the root: (fd, real path)
        self.created: list[tuple[int, str]] = []
        self.parts = deque(p for p in rel.split("/") if p and p != ".")
        self.hops = self.races = 0
        self.before_make = before_make
        self.just_made: str | None = None  # the folder made last, until the walk steps into it

    def here(self) -> tuple[int, str]:
        return self.stack[-1] if self.stack else (self.tree.fd, self.tree.real)

    def step(self, follow_last: bool, make_parents: bool, dir_mode: int) -> Entry | None:
        """Walk one component; the ``Entry`` when the path ends here, else None."""
        tree = self.tree
        comp = self.parts.popleft()
        if comp == "..":
            self._up()
            return None
        fd, real = self.here()
        last = not self.parts
        st = _lstat(comp, fd)
        if st is None:
            if last:
                return tree._entry(self.stack, fd, comp, real, None, self.created)
            if make_parents:
                self._make(fd, comp, dir_mode)
                return None
            return tree._entry(self.stack, fd, comp, real, None, self.created, missing_parent=True)
        if statmod.S_ISLNK(st.st_mode) and (follow_last or not last):
            self._follow(fd, comp)
            return None
        if last:
            return tree._entry(self.stack, fd, comp, real, st, self.created)
        if not statmod.S_ISDIR(st.st_mode):
            # A file where a folder should be: nothing of that name can exist.
            found = tree._entry(self.stack, fd, comp, real, None, self.created, missing_parent=True)
            found.parent_not_dir = True
            return found
        self.just_made = None
        self._descend(fd, real, comp)
        return None

    def _up(self) -> None:
        if self.stack:
            _close(self.stack.pop()[0])
            return
        self._hop()  # leaving the root: where does the rest of the path land?
        rest = "/".join(self.parts)
        self._restart(self.tree._map_absolute(os.path.normpath(os.path.join(os.path.dirname(self.tree.real), rest))))

    def _make(self, fd: int, comp: str, dir_mode: int) -> None:
        if self.just_made == comp:  # made a moment ago, and gone again: a neighbour removed it
            self._count_race()
        if self.before_make is not None:
            real = self.here()[1]
            self.before_make(real.rstrip("/") + "/" + comp if real != "/" else "/" + comp)
        try:
            os.mkdir(comp, dir_mode, dir_fd=fd)
            self.created.append((os.dup(fd), comp))
        except FileExistsError:
            self._again(comp)  # a neighbour made it first: use theirs (a name that changed)
            return
        # Made here: look at it again, which is no race (so any number of missing folders can be
        # made, as long as the path is); if a neighbour removes it before the look, that is one.
        self.parts.appendleft(comp)
        self.just_made = comp

    def _follow(self, fd: int, comp: str) -> None:
        self._hop()
        try:
            target = os.readlink(comp, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.EINVAL, errno.ENOENT):  # no longer a symlink
                self._again(comp)
                return
            raise
        if target.startswith("/"):
            rest = "/".join(self.parts)
            self._restart(self.tree._map_absolute(os.path.normpath(target)) + ("/" + rest if rest else ""))
        else:
            self.parts.extendleft(reversed([p for p in target.split("/") if p and p != "."]))

    def _descend(self, fd: int, real: str, comp: str) -> None:
        try:
            child = os.open(comp, _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ENOTDIR, errno.ELOOP, errno.ENOENT):
                self._again(comp)  # swapped since the lstat: look again
                return
            raise
        self.stack.append((child, real.rstrip("/") + "/" + comp if real != "/" else "/" + comp))

    def _hop(self) -> None:
        self.hops += 1
        if self.hops > MAX_HOPS:
            raise SymlinkLoop()

    def _again(self, comp: str) -> None:
        """The name changed between two looks: look at it again, a bounded number of times."""
        self.parts.appendleft(comp)
        self._count_race()

    def _count_race(self) -> None:
        self.races += 1
        if self.races > _MAX_RACES:
            raise Raced() from None

    def _restart(self, new_rel: str) -> None:
        while self.stack:
            _close(self.stack.pop()[0])
        self.parts.clear()
        self.parts.extend(p for p in new_rel.split("/") if p and p != ".")

    def abandon(self) -> None:
        """The walk failed: close what it holds and remove the folders it made."""
        while self.stack:
            _close(self.stack.pop()[0])
        for cfd, name in reversed(self.created):
            try:
                os.rmdir(name, dir_fd=cfd)
            except OSError:
                pass
            _close(cfd)
