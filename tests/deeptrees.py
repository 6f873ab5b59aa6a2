"""Chains of folders deeper than a path string can name, made and removed through descriptors.

A path of more than 4,096 bytes cannot be handed to ``mkdir`` or ``rm -rf`` (ENAMETOOLONG), and
Python 3.11's ``shutil.rmtree`` recurses once per folder (RecursionError past about 1,000): both
are done here one name at a time beneath an open folder, holding a bounded number of folders.
"""

from __future__ import annotations

import os
from pathlib import Path

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_HELD = 32  # folders the remover holds open at once


def make_chain(top: Path, depth: int, name: str = "d", files: dict[int, str] | None = None, mtime_ns: int = 0) -> str:
    """``depth`` nested folders called ``name`` below ``top`` (made if missing); ``files`` puts a
    file (its name) in the folder at that depth (0 is ``top``), dated ``mtime_ns`` plus the depth
    when given. Returns the path of the deepest folder relative to ``top``."""
    top.mkdir(parents=True, exist_ok=True)
    files = files or {}
    fd = os.open(top, _DIR)
    try:
        for level in range(depth + 1):
            if level in files:
                f = os.open(files[level], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644, dir_fd=fd)
                os.write(f, b"x\n")
                if mtime_ns:
                    os.utime(f, ns=(mtime_ns + level, mtime_ns + level))
                os.close(f)
            if level == depth:
                break
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, _DIR, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)
    return "/".join([name] * depth)


def remove_tree(top: Path) -> None:
    """Remove ``top`` and everything below it, however deep: depth first through descriptors,
    at most ``_HELD`` folders open; a folder above the ones held is opened again from ``top``."""
    if not os.path.lexists(top):
        return
    names: list[str] = []  # the folders from top down to the current one
    held: list[int] = [os.open(top, _DIR)]  # the deepest len(held) of top + names, the current last
    while True:
        fd = held[-1]
        sub = None
        with os.scandir(fd) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    sub = entry.name
                    break
                os.unlink(entry.name, dir_fd=fd)
        if sub is not None:
            names.append(sub)
            held.append(os.open(sub, _DIR, dir_fd=fd))
            if len(held) > _HELD:
                os.close(held.pop(0))
            continue
        os.close(held.pop())
        if not names:
            os.rmdir(top)
            return
        name = names.pop()
        if not held:  # the parent is above the folders held: down again from top
            held = [os.open(top, _DIR)]
            for step in names:
                held.append(os.open(step, _DIR, dir_fd=held[-1]))
                if len(held) > _HELD:
                    os.close(held.pop(0))
        os.rmdir(name, dir_fd=held[-1])
