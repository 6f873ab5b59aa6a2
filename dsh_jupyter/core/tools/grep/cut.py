"""Where a grep cut short at the raw-output guard stops being complete, in the page's path order.

Why it exists: a search stopped at the guard is asked again walking in path order
(``rg --sort=path``, one thread), so the files it finished are every file up to the last one,
``last``, in rg's walk. rg's walk compares a folder's entries by name, so it finishes a folder
before a sibling whose name continues the folder's with a character sorting before ``/``
(``gen/…`` before ``gen.txt``, ``gen-b/``); the page's path order compares whole paths and puts
that sibling first. Such a sibling, not searched, would be skipped by a page that showed the
files after it. The page therefore keeps only the paths that sort before the first such sibling
of ``last`` or of a folder above it, and not after ``last``: every matching file before the last
one shown is shown.

What it must never do: read a file, or keep a path that could sort after a file not searched. It
lists only the names in the folders on the way to ``last`` (below the search root's descriptor,
never following a link); a folder it cannot list leaves the bound where the folders above put it.
"""

from __future__ import annotations

import os

__all__ = ["complete_before"]


def complete_before(root_fd: int, last: str) -> str | None:
    """The first path (relative to the root) in path order that a walk ending at ``last`` may not
    have searched, beyond ``last`` itself; None when every path sorting before ``last`` was searched."""
    parts = last.split("/")
    bound: str | None = None
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.dup(root_fd)
    try:
        for depth, name in enumerate(parts):
            above = "/".join(parts[:depth]) + "/" if depth else ""
            try:
                names = os.listdir(fd)
            except OSError:
                names = []
            for entry in names:
                sibling = len(entry) > len(name) and entry.startswith(name) and entry[len(name)] < "/"
                if sibling and (bound is None or above + entry < bound):
                    bound = above + entry
            if depth == len(parts) - 1:
                break
            try:  # one folder down, never through a link
                down = os.open(name, flags, dir_fd=fd)
            except OSError:
                break
            os.close(fd)
            fd = down
    finally:
        os.close(fd)
    return bound
