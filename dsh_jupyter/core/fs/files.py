"""The filesystem seam: listing, file versions and writes, all through folder descriptors.

Tools reach the disk only through here, ``fs.textwindow`` and the descriptors ``fs.resolver.Target`` hands
out. Nothing here takes a path string that names more than one component: every name is looked
up in a folder the caller already holds open, so confinement decided once stays true.

Writes never lose a file. A new file is written to a temporary name, fsynced, then moved into
place with ``renameat2(RENAME_NOREPLACE)`` (or ``link``, which also fails when the name exists),
so a file another process created meanwhile is kept byte for byte and the caller is told. A
replacement is moved in with ``RENAME_EXCHANGE`` and the file it displaced is compared with the
one the caller checked; if a neighbour replaced it in between, the exchange is undone and the
neighbour's file stays. Where the filesystem lacks those calls the fallbacks are logged once.
"""

from __future__ import annotations

import errno
import logging
import os
import secrets
import stat as statmod
from dataclasses import dataclass

from . import syscalls

__all__ = [
    "Changed",
    "Listing",
    "can_write",
    "create_file",
    "entry_details",
    "file_version",
    "fsync_folder",
    "replace_file",
    "same_file",
    "scan_directory",
    "shown_link_target",
    "temp_name",
    "write_beside",
]

log = logging.getLogger(__name__)

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        log.warning(message)


def file_version(st: os.stat_result) -> str:
    """A version that changes whenever the content changes, without reading the file.

    Size and mtime alone miss a same-size rewrite whose mtime was set back (``touch -d``);
    ctime cannot be set from user space and moves on every write, and the inode moves on every
    atomic replace, so together they catch it.
    """
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


@dataclass(frozen=True, slots=True)
class Listing:
    """A directory's children by kind, each list sorted by code point."""

    directories: list[str]
    files: list[str]
    other: list[str]

    def __len__(self) -> int:
        return len(self.directories) + len(self.files) + len(self.other)

    def page(self, start: int, count: int) -> list[tuple[str, str]]:
        """``(name, type)`` for entries ``start`` .. ``start + count - 1`` (0-based) of the one order."""
        out: list[tuple[str, str]] = []
        for kind, names in (("directory", self.directories), ("file", self.files), ("other", self.other)):
            if count <= 0:
                break
            if start >= len(names):
                start -= len(names)
                continue
            chunk = names[start : start + count]
            out.extend((name, kind) for name in chunk)
            count -= len(chunk)
            start = 0
        return out


def scan_directory(fd: int) -> Listing:
    """Direct children of the open folder ``fd``: directories, then files, then other, each by code point.

    Symlinks are "other" and never followed: the type comes from the entry itself (``d_type``,
    no per-entry stat). Three lists of plain strings sorted separately keep this close to a bare
    ``scandir`` + sort, which matters for directories of 100,000 entries.
    """
    directories: list[str] = []
    files: list[str] = []
    other: list[str] = []
    with os.scandir(fd) as it:
        for e in it:
            # With follow_symlinks=False a symlink is neither a directory nor a file.
            if e.is_dir(follow_symlinks=False):
                directories.append(e.name)
            elif e.is_file(follow_symlinks=False):
                files.append(e.name)
            else:
                other.append(e.name)
    directories.sort()
    files.sort()
    other.sort()
    return Listing(directories, files, other)


OUTSIDE_TARGET = "(outside the workspace)"


def shown_link_target(text: str, folder: str, root: str) -> str:
    """A symlink's target as it may be shown: relative to the root when it lands inside it
    (``"."`` for the root itself), else ``(outside the workspace)``.

    Why: a link's text is the user's, and an absolute one names the root or the home folder
    (``/home/alice/proj/data``), which no answer shows; one that leads out says only that.
    ``folder`` is where the link lies (real), ``root`` the workspace root (real); the target is
    placed lexically (it is never followed: the listing shows the link, not what it leads to).
    """
    where = os.path.normpath(text if text.startswith("/") else os.path.join(folder, text))
    if where == root:
        return "."
    prefix = root.rstrip("/") + "/"
    return where[len(prefix) :] if where.startswith(prefix) else OUTSIDE_TARGET


def entry_details(dir_fd: int, name: str, place: tuple[str, str] | None = None) -> dict:
    """Size, mtime and link target of one entry, for widgets (never for model text).

    ``place`` is ``(folder, root)``, both real: a link's target is then shown as
    ``shown_link_target`` shows it; without it (no root to compare with) it is left out.
    """
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return {}
    out: dict[str, object] = {"size": st.st_size, "mtime": st.st_mtime}
    if statmod.S_ISLNK(st.st_mode) and place is not None:
        try:
            out["target"] = shown_link_target(os.readlink(name, dir_fd=dir_fd), *place)
        except OSError:
            pass
    return out


def pread_upto(fd: int, size: int) -> bytes:
    """At most ``size`` bytes of ``fd`` from byte 0, without moving its offset: fewer only where
    the file ends before (a file that grows meanwhile is never read past ``size``)."""
    parts: list[bytes] = []
    pos = 0
    while pos < size:
        chunk = os.pread(fd, min(1 << 22, size - pos), pos)
        if not chunk:
            break
        parts.append(chunk)
        pos += len(chunk)
    return b"".join(parts)


def pread_all(fd: int, size: int = 0) -> bytes:
    """Everything in ``fd`` from byte 0, whatever its offset (``size``: the expected length, so
    one read usually does), without moving the offset; a file that grew meanwhile is read to
    its new end."""
    parts: list[bytes] = []
    pos = 0
    while True:
        chunk = os.pread(fd, max(1 << 20, size - pos), pos)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        pos += len(chunk)


def can_write(dir_fd: int, name: str | None, st: os.stat_result | None) -> bool:
    """Whether this process may change the file ``name`` (or, with ``name`` None, the folder).

    As Jupyter's contents API does, a file without write permission is not replaced even though
    the folder would allow a rename over it. Root passes every permission check, so for root a
    file or folder with no write bit at all (``0444``, ``0555``) counts as read-only too.
    """
    target = "." if name is None else name
    try:
        allowed = os.access(target, os.W_OK, dir_fd=dir_fd, effective_ids=True, follow_symlinks=False)
    except (NotImplementedError, TypeError):  # no faccessat(AT_EACCESS) here
        allowed = os.access(target, os.W_OK, dir_fd=dir_fd, follow_symlinks=False)
    if allowed and os.geteuid() == 0 and st is not None:
        return bool(st.st_mode & 0o222)
    return allowed


class Changed(Exception):
    """The file a replacement was meant for was replaced by someone else first; nothing was lost."""


def _tmp_name(name: str) -> str:
    # The name is cut so a target near NAME_MAX (255 bytes) still gets a temporary name.
    return f".{name[:32]}.{secrets.token_hex(6)}.dsh-tmp"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_folder(dir_fd: int) -> None:
    try:
        fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def fsync_folder(dir_fd: int) -> None:
    """Make the renames in the folder ``dir_fd`` durable (best effort)."""
    _fsync_folder(dir_fd)


def temp_name(name: str) -> str:
    """A fresh name for a temporary file beside ``name`` (hidden, random, ending ``.dsh-tmp``)."""
    return _tmp_name(name)


def write_beside(dir_fd: int, name: str, tmp: str, data: bytes, old: os.stat_result) -> None:
    """A whole, synced temporary file ``tmp`` beside ``name`` holding ``data``, with the mode and
    (where permitted) the owner and group of ``old``. The caller renames it into place or removes
    it (``state.journal``)."""
    _, fd = _write_temp(dir_fd, name, data, old.st_mode, (old.st_uid, old.st_gid), tmp=tmp)
    os.close(fd)


def _unlink_quietly(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def _write_temp(
    dir_fd: int,
    name: str,
    data: bytes,
    mode: int | None,
    owner: tuple[int, int] | None,
    durable: bool = True,
    tmp: str | None = None,
):
    """A fully written (and, when ``durable``, fsynced) temporary file beside ``name``: ``(tmp name, open fd)``."""
    tmp = tmp or _tmp_name(name)
    # 0o666 through O_CREAT lets the process umask decide a new file's mode, as any editor does.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC | _NOFOLLOW, 0o666, dir_fd=dir_fd)
    try:
        _write_all(fd, data)
        if owner is not None:
            # Keep the replaced file's owner and group where allowed (a server running as root
            # must not take users' files over); before fchmod, which chown would undo.
            try:
                os.fchown(fd, *owner)
            except OSError:
                pass
        if mode is not None:
            os.fchmod(fd, statmod.S_IMODE(mode))
        if durable:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quietly(dir_fd, tmp)
        raise
    return tmp, fd


def _place_new(dir_fd: int, tmp: str, name: str) -> None:
    """Move ``tmp`` to ``name`` only if ``name`` does not exist; ``FileExistsError`` otherwise."""
    if syscalls.rename_noreplace(dir_fd, tmp, dir_fd, name):
        return
    if syscalls.renameat2_available():
        _warn_once("noreplace", "this filesystem refuses renameat2(RENAME_NOREPLACE); new files are linked into place")
    try:
        os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except OSError as exc:
        if exc.errno == errno.EEXIST:
            raise FileExistsError(errno.EEXIST, "File exists", name) from None
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK):
            raise
        # No hard links either (some network and FAT filesystems): the last check is by name.
        _warn_once(
            "nolink",
            "this filesystem has neither RENAME_NOREPLACE nor hard links; new files are "
            "renamed into place after a last check that the name is free",
        )
        try:
            os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            return
        raise FileExistsError(errno.EEXIST, "File exists", name) from None
    _unlink_quietly(dir_fd, tmp)


def create_file(
    dir_fd: int, name: str, data: bytes, mode: int | None = None, *, durable: bool = True
) -> os.stat_result:
    """Create ``name`` in the folder ``dir_fd`` with ``data``; never replaces an existing file.

    ``mode`` (default: what the umask leaves of 0666) is set before the file is in place.
    ``durable=False`` skips both fsyncs: for derived files (saved search results) that can be
    made again, where waiting for the disk can cost more than the search; the file still appears
    only whole, never half-written, to every reader.
    Returns the new file's stat (after it is in place, so its ctime is the one a later stat sees).
    Raises ``FileExistsError`` when ``name`` appeared meanwhile (that file is left untouched) and
    ``OSError`` otherwise; the temporary file is removed on every failure.
    """
    tmp, fd = _write_temp(dir_fd, name, data, mode, None, durable)
    try:
        try:
            _place_new(dir_fd, tmp, name)
        except BaseException:
            _unlink_quietly(dir_fd, tmp)
            raise
        st = os.fstat(fd)
    finally:
        os.close(fd)
    if durable:
        _fsync_folder(dir_fd)
    return st


def same_file(a: os.stat_result, b: os.stat_result) -> bool:
    """Whether two stats describe one file with the same content (ctime is left out: a rename or
    an exchange moves it)."""
    return (a.st_dev, a.st_ino, a.st_size, a.st_mtime_ns) == (b.st_dev, b.st_ino, b.st_size, b.st_mtime_ns)


def replace_file(dir_fd: int, name: str, data: bytes, old: os.stat_result) -> os.stat_result:
    """Replace the file ``name`` (whose stat the caller checked, ``old``) with ``data``, atomically.

    The new content gets the old file's mode and, where permitted, its owner and group. A crash
    or a full disk leaves the old content whole. If ``name`` is no longer the file ``old``
    describes when the new one moves in, the move is undone and ``Changed`` is raised.
    """
    tmp, fd = _write_temp(dir_fd, name, data, old.st_mode, (old.st_uid, old.st_gid))
    try:
        try:
            _swap_in(dir_fd, tmp, name, old)
        except BaseException:
            _unlink_quietly(dir_fd, tmp)
            raise
        st = os.fstat(fd)
    finally:
        os.close(fd)
    _fsync_folder(dir_fd)
    return st


def _swap_in(dir_fd: int, tmp: str, name: str, old: os.stat_result) -> None:
    if syscalls.renameat2_available():
        try:
            syscalls.renameat2(dir_fd, tmp, dir_fd, name, syscalls.RENAME_EXCHANGE)
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
                raise
            _warn_once(
                "exchange", "this filesystem refuses renameat2(RENAME_EXCHANGE); files are replaced with a plain rename"
            )
        else:
            # ``tmp`` now names what was at ``name``: is it the file the caller checked?
            try:
                displaced = os.stat(tmp, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                displaced = None
            if displaced is not None and same_file(displaced, old):
                _unlink_quietly(dir_fd, tmp)
                return
            # A neighbour's file was there: put it back, then drop ours (now at ``tmp``).
            syscalls.renameat2(dir_fd, tmp, dir_fd, name, syscalls.RENAME_EXCHANGE)
            raise Changed()
    os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
