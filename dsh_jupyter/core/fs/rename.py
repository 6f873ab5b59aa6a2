"""Renames between two folders held open by descriptor: never over a name that appeared meanwhile.

Why it exists: ``os.rename`` replaces whatever holds the new name, silently, so a plain rename
would lose a file that a neighbour created between the tool's check and its move. Here a move
onto a free name uses ``renameat2(RENAME_NOREPLACE)``, which fails when the name exists; a move
that is meant to replace a file the caller checked uses ``RENAME_EXCHANGE`` and then looks at
what it displaced: if that is not the checked file, the exchange is undone and ``Changed`` is
raised, so the neighbour's file stays. Both names are looked up in folders the caller holds
open (``fs.resolver.Target``), so nothing outside the root can be named.

Where the kernel or the filesystem lacks those flags the fallbacks are explicit and logged once:
a file (or a symlink) is hard-linked to its new name (``link`` also refuses an existing name) and
its old name removed; a folder cannot be hard-linked, so its move is refused (``Unsupported``)
rather than risk replacing one; a replacement falls back to a last check of the name, then
``rename``.

What it must never do: take a path of more than one component, follow a symlink, or remove a
name it has not just checked.
"""

from __future__ import annotations

import errno
import logging
import os

from . import syscalls
from .files import Changed, same_file

__all__ = [
    "Changed",
    "Unsupported",
    "check_then_rename",
    "link_then_unlink",
    "move_over",
    "move_to_free_name",
]

log = logging.getLogger(__name__)

# errno values that say "this kernel or filesystem does not offer that flag" (not "that failed").
_UNSUPPORTED = (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP)
_warned: set[str] = set()


class Unsupported(Exception):
    """No way to move this without the risk of replacing a name that appeared meanwhile."""


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        log.warning(message)


def _lstat(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def move_to_free_name(src_dir: int, src: str, dst_dir: int, dst: str, *, is_dir: bool) -> None:
    """Move ``src`` (in ``src_dir``) to ``dst`` (in ``dst_dir``) only while ``dst`` is free.

    Raises ``FileExistsError`` when ``dst`` exists (nothing moved), ``Unsupported`` for a folder
    where the filesystem cannot promise that, ``Changed`` when the fallback found ``src`` swapped
    while it worked (nothing moved), and ``OSError`` otherwise.
    """
    if syscalls.rename_noreplace(src_dir, src, dst_dir, dst):
        return
    if syscalls.renameat2_available():
        _warn_once(
            "noreplace",
            "this filesystem refuses renameat2(RENAME_NOREPLACE); files are moved by linking the new name "
            "and removing the old one, and folders are not moved",
        )
    elif is_dir:
        _warn_once("noreplace", "this kernel has no renameat2(RENAME_NOREPLACE); folders are not moved")
    if is_dir:
        raise Unsupported()
    link_then_unlink(src_dir, src, dst_dir, dst)


def link_then_unlink(src_dir: int, src: str, dst_dir: int, dst: str) -> None:
    """The fallback for a file or a symlink: link the new name (refused when it exists), then
    remove the old name, but only while it still names what was linked."""
    before = _lstat(src_dir, src)
    if before is None:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", src)
    try:
        os.link(src, dst, src_dir_fd=src_dir, dst_dir_fd=dst_dir, follow_symlinks=False)
    except FileExistsError:
        raise FileExistsError(errno.EEXIST, "File exists", dst) from None
    linked = _lstat(dst_dir, dst)
    now = _lstat(src_dir, src)
    if linked is None or now is None or not (same_file(linked, before) and same_file(now, before)):
        # The old name was swapped between the look and the link: drop the new name again (when
        # it is the link made here) and leave the old one as the neighbour left it.
        if linked is not None and now is not None and same_file(linked, now):
            os.unlink(dst, dir_fd=dst_dir)
        raise Changed()
    os.unlink(src, dir_fd=src_dir)


def move_over(src_dir: int, src: str, dst_dir: int, dst: str, expected: os.stat_result) -> None:
    """Move ``src`` onto ``dst``, replacing it, only while ``dst`` is still the file ``expected``
    describes (the one the caller checked); ``Changed`` otherwise, with every name as it was."""
    if syscalls.renameat2_available():
        try:
            syscalls.renameat2(src_dir, src, dst_dir, dst, syscalls.RENAME_EXCHANGE)
        except OSError as exc:
            if exc.errno not in _UNSUPPORTED:
                raise
            _warn_once(
                "exchange",
                "this filesystem refuses renameat2(RENAME_EXCHANGE); a move over a file checks the name "
                "last, then renames",
            )
        else:
            # ``src`` now names what was at ``dst``: is it the file the caller checked?
            displaced = _lstat(src_dir, src)
            if displaced is not None and same_file(displaced, expected):
                os.unlink(src, dir_fd=src_dir)
                return
            syscalls.renameat2(src_dir, src, dst_dir, dst, syscalls.RENAME_EXCHANGE)  # put both back
            raise Changed()
    check_then_rename(src_dir, src, dst_dir, dst, expected)


def check_then_rename(src_dir: int, src: str, dst_dir: int, dst: str, expected: os.stat_result) -> None:
    """The fallback for a replacement: a last look at ``dst`` (``Changed`` unless it is still the
    file ``expected`` describes), then ``rename`` over it."""
    now = _lstat(dst_dir, dst)
    if now is None or not same_file(now, expected):
        raise Changed()
    moving = _lstat(src_dir, src)
    if moving is not None and (moving.st_dev, moving.st_ino) == (now.st_dev, now.st_ino):
        # Two names of one file: rename would do nothing, so the old name is removed instead.
        os.unlink(src, dir_fd=src_dir)
        return
    os.rename(src, dst, src_dir_fd=src_dir, dst_dir_fd=dst_dir)
