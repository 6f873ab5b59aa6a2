"""A folder beneath a root's descriptor, opened without following a symlink anywhere on the way.

Why it exists: a path such as ``pkg/mod/file.py`` opened relative to the root with ``O_NOFOLLOW``
still follows ``pkg`` or ``mod`` if a neighbour swapped one of them for a symlink to outside the
root; ``O_NOFOLLOW`` only guards the last name. The file-event watcher and the index's reads open
the folder first, through this function, and then the file by its bare name relative to that
folder's descriptor, so nothing outside the root is ever watched or read.

How: ``openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`` where the kernel has it (Linux 5.6+; an
``EAGAIN`` from a rename racing the lookup is tried again, a path longer than ``PATH_MAX`` is
walked), else one name at a time from the root, each ``O_NOFOLLOW | O_DIRECTORY``.

What it must never do: return a descriptor of a folder reached through a symlink, or keep a
descriptor open when it raises. Errors are the kernel's (``ELOOP`` or ``ENOTDIR`` where a symlink
stands on the way, ``EXDEV`` for a path leaving the root, ``ENOENT``); callers decide what they mean.
"""

from __future__ import annotations

import errno
import os

from . import syscalls

__all__ = ["FOLDER_FLAGS", "open_folder"]

FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def open_folder(root_fd: int, rel: str, beneath: bool) -> int:
    """A new descriptor of folder ``rel`` ("/"-separated, relative; "" for the root itself);
    ``beneath``: use openat2 (``syscalls.openat2_available()``). Raises ``OSError``."""
    if not rel:
        return os.dup(root_fd)
    if beneath:
        resolve = syscalls.RESOLVE_BENEATH | syscalls.RESOLVE_NO_SYMLINKS
        for _ in range(3):  # EAGAIN: a rename raced the lookup; the next try sees it settled
            try:
                return syscalls.openat2(root_fd, rel, FOLDER_FLAGS, resolve)
            except BlockingIOError:
                continue
            except OSError as exc:
                if exc.errno != errno.ENAMETOOLONG:
                    raise
                break  # deeper than PATH_MAX: the walk takes one name at a time
    return _walk_open(root_fd, rel)


def _walk_open(root_fd: int, rel: str) -> int:
    fd = os.dup(root_fd)
    try:
        for name in rel.split("/"):
            below = os.open(name, FOLDER_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = below
    except BaseException:
        os.close(fd)
        raise
    return fd
