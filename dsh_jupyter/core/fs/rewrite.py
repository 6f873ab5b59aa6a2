"""Rewriting a file in place, as Jupyter's own save does when renaming would change the file.

Why it exists: a write through a temporary file and a rename gives the path a new inode owned by
the writer. In a shared folder that loses what makes the file the same file: a file ``bob:team``
becomes ``alice:alice``, a hard link to it is broken, a setgid folder's group is lost, and in a
sticky folder (``/tmp``-like) renaming over another user's file is not allowed at all. So when the
file is not the server user's own, has more than one link, or sits in a sticky or setgid folder,
its content is rewritten through a descriptor of the file itself (owner, group, mode, inode and
links all kept), after a copy of the old content is saved in the state area (never in the user's
folder). If the rewrite fails, the copy is written back; the copy is removed once the file is whole.

What it must never do: rewrite a file other than the one the caller checked (the descriptor is
opened by name and compared with the checked stat), or leave the copy in a place a workspace user
can read (the folder is ``0700``, the copies ``0600``).
"""

from __future__ import annotations

import logging
import os
import secrets
import stat as statmod
import sys

from .files import Changed, pread_all, same_file

__all__ = ["leftover_backups", "needs_in_place", "rewrite_in_place"]

log = logging.getLogger(__name__)

_RW = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def needs_in_place(dir_fd: int, st: os.stat_result) -> bool:
    """Whether replacing the file by a rename would change who owns it or what links to it."""
    if st.st_uid != os.geteuid() or st.st_nlink > 1:
        return True
    folder = os.stat(".", dir_fd=dir_fd)
    return bool(folder.st_mode & (statmod.S_ISVTX | statmod.S_ISGID))


def _pwrite_all(fd: int, data: bytes) -> None:
    view, pos = memoryview(data), 0
    while pos < len(data):
        pos += os.pwrite(fd, view[pos:], pos)


def _save_copy(backup_dir: str, data: bytes, label: str) -> str:
    """The old content, fsynced, and beside it (``.path``) which file it is a copy of."""
    os.makedirs(backup_dir, mode=0o700, exist_ok=True)
    path = os.path.join(backup_dir, f"{secrets.token_hex(8)}.bak")
    for target, payload in ((path + ".path", os.fsencode(label) + b"\n"), (path, data)):
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            _pwrite_all(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
    return path


def _drop_copy(copy: str) -> None:
    for p in (copy, copy + ".path"):
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


def rewrite_in_place(
    dir_fd: int, name: str, data: bytes, old: os.stat_result, backup_dir: str, label: str
) -> os.stat_result:
    """Rewrite the file ``name`` (checked as ``old``) with ``data`` through its own descriptor.

    Raises ``Changed`` when ``name`` is no longer that file, ``OSError`` otherwise (the old content
    is then back in place, and the exception's ``restored`` attribute is the file's stat after
    that: its bytes are the ones the caller checked, under a new ctime). Returns the file's stat
    after the rewrite.
    """
    fd = os.open(name, _RW, dir_fd=dir_fd)
    try:
        if not same_file(os.fstat(fd), old):
            raise Changed()
        original = pread_all(fd, old.st_size)
        copy = _save_copy(backup_dir, original, label)
        try:
            _pwrite_all(fd, data)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        except BaseException:
            try:
                _pwrite_all(fd, original)
                os.ftruncate(fd, len(original))
                os.fsync(fd)
            except OSError as exc:  # the copy stays: say where, so nothing is lost
                log.error("could not restore %s after a failed write (%s); its old content is in %s", name, exc, copy)
                raise
            _drop_copy(copy)
            failure = sys.exc_info()[1]
            if failure is not None:
                failure.restored = os.fstat(fd)  # type: ignore[attr-defined]
            raise
        _drop_copy(copy)
        return os.fstat(fd)
    finally:
        os.close(fd)


def leftover_backups(backup_dir: str) -> list[tuple[str, str]]:
    """``(copy, file it copies)`` left by writes a crash interrupted, for a start-up warning."""
    out = []
    try:
        names = sorted(n for n in os.listdir(backup_dir) if n.endswith(".bak"))
    except OSError:
        return []
    for n in names:
        copy = os.path.join(backup_dir, n)
        try:
            with open(copy + ".path", "rb") as fh:
                label = os.fsdecode(fh.read().rstrip(b"\n"))
        except OSError:
            label = "?"
        out.append((copy, label))
    return out
