"""Whether Jupyter is saving a file now: its contents manager rewrites a file in place, emptying it first.

Why it exists: Jupyter's contents manager — what JupyterLab's Ctrl+S and autosave, a tab saving an
agent's change and jupyter-collaboration's rooms all save through — copies the file to
``.~<name>`` beside it, truncates the file, writes the new content, flushes and syncs it, and then
removes the copy (``atomic_writing`` in ``jupyter_server.services.contents.fileio``: safe against a
save that fails, not against a reader). Until the write is flushed the file is empty, and a tool
that read it then answered an empty file: a ``read`` during a person's Ctrl+S said ``total 0
lines`` (found by ``tests/e2e/test_person_and_agent.py``), and a reader beside a loop of saves
through the contents API saw an empty file in close to half of its reads. ``saving`` says whether
such a copy lies beside the file, made within ``RECENT_S`` (one left behind by a contents manager
that died mid-save is older, and says nothing); ``read`` waits while it does, and reads again when
the file changed while it read. It needs no Jupyter: only the name Jupyter gives the copy.

What it must never do: follow a symlink, open or change the copy, or take an old leftover copy for
a save under way.
"""

from __future__ import annotations

import os
import stat
import time

__all__ = ["COPY_PREFIX", "RECENT_S", "saving"]

COPY_PREFIX = ".~"  # jupyter_server's path_to_intermediate: the copy kept while a file is rewritten
RECENT_S = 30.0  # a save writes a file of tens of megabytes in seconds; a copy older than this is left over


def saving(dir_fd: int, name: str, now: float | None = None) -> bool:
    """Whether Jupyter's copy of ``name`` (in the folder ``dir_fd``) is there, made lately: a save
    of the file is under way."""
    try:
        st = os.stat(COPY_PREFIX + name, dir_fd=dir_fd, follow_symlinks=False)
    except (OSError, ValueError):
        return False
    # the copy's status change time is when it was made (copy2 sets its modification time to the file's)
    return stat.S_ISREG(st.st_mode) and (time.time() if now is None else now) - st.st_ctime < RECENT_S
