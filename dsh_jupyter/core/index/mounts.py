"""The mounts at or below a folder, and whether the mount table changed: what inotify cannot say.

Why it exists: a file system mounted on a folder of the workspace after the watcher started hides
that folder's contents behind new ones, and raises no file event at all; the watch stays on the
covered folder and never sees a change in the new file system. The kernel does say that the mount
table changed: ``/proc/self/mountinfo`` polls with ``POLLPRI`` after any mount or unmount in this
process's mount namespace (proc(5)). ``MountTable`` holds that file open; ``changed()`` asks, without
blocking, and ``under(path)`` names the mounts (by mount ID) at or below a folder, so the watcher
compares them with those it started with.

What it must never do: block, or say "unchanged" when it could not tell (``changed()`` is True if
the file cannot be polled or read).
"""

from __future__ import annotations

import os
import re
import select

__all__ = ["MountTable"]

MOUNTINFO = "/proc/self/mountinfo"
_ESCAPE = re.compile(rb"\\([0-7]{3})")  # mountinfo writes space, tab, newline, backslash as \040 ...


class MountTable:
    """``/proc/self/mountinfo`` held open; raises ``OSError`` if it cannot be opened."""

    def __init__(self) -> None:
        self._fd = os.open(MOUNTINFO, os.O_RDONLY | os.O_CLOEXEC)
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLPRI)
        self._poll.poll(0)  # take the table's current event count as seen

    def changed(self) -> bool:
        """Whether a mount or unmount happened since the last call (or since opening)."""
        try:
            return any(ev & (select.POLLPRI | select.POLLERR) for _, ev in self._poll.poll(0))
        except OSError:
            return True

    def under(self, path: str) -> set[int]:
        """The IDs of the mounts whose mount point is ``path`` or below it."""
        os.lseek(self._fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(self._fd, 1 << 16):
            chunks.append(chunk)
        top = os.fsencode(path).rstrip(b"/")
        found = set()
        for line in b"".join(chunks).splitlines():
            fields = line.split(b" ", 5)
            if len(fields) < 5:
                continue
            point = _ESCAPE.sub(lambda m: bytes([int(m.group(1), 8)]), fields[4])
            if point == top or point.startswith(top + b"/"):
                found.add(int(fields[0]))
        return found

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
