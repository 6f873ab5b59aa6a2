"""The rename journal: a change to several files made all at once, or completed at the next start.

Why it exists: ``replace`` changes many files in one call, and a process killed between two of
its renames must not leave the workspace half-changed. So the renames are recorded here, in the
state file, with the temporary names beside each file, and committed; then every new version is
written whole and synced under its temporary name; then the journal is marked ready and
committed, and only then does the first rename happen. A journal that is still there when a
``Workspace`` starts belongs to a process that died half-way. Not ready: nothing was renamed,
so its temporary files are removed (the change is rolled back). Ready: each file whose temporary
file is still there and which still is the file the change was prepared over is renamed into
place (the change is completed); a temporary file whose file changed meanwhile is removed.

Identity: a file is named by ``identity`` (device, inode, size, modification time), what a rename
keeps and a write moves.

What it must never do: rename over a file other than the one the change was prepared over,
follow a symlink on the way to a folder, or touch a journal of a process still running on this
host (it may be between its two transactions).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os

from ..fs.files import fsync_folder
from .store import StateError, StateStore

__all__ = ["identity", "open_folder", "process_mark", "recover"]

log = logging.getLogger(__name__)

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def identity(st: os.stat_result) -> str:
    """What names one version of a file across a rename: device, inode, size, modification time."""
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


def open_folder(root_fd: int, rel: str) -> int:
    """The folder ``rel`` (``""``: the root) opened beneath ``root_fd``, no symlink followed."""
    fd = os.dup(root_fd)
    for name in [p for p in rel.split("/") if p]:
        if name in (".", ".."):
            os.close(fd)
            raise OSError(errno.EINVAL, "not a plain folder name", name)
        try:
            nxt = os.open(name, _DIR, dir_fd=fd)
        finally:
            os.close(fd)
        fd = nxt
    return fd


def process_mark(pid: int) -> str:
    """What tells process ``pid`` from any other with that number: the host, this boot, and when
    the process started (``/proc``); the host alone where there is no ``/proc``."""
    host = os.uname().nodename
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        with open(f"/proc/{pid}/stat") as f:
            started = f.read().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return host
    return f"{host} {boot} {started}"


def _alive(pid: int, mark: str) -> bool:
    """Whether the process that recorded a journal still runs (then it is between its steps)."""
    if mark.split(" ", 1)[0] != os.uname().nodename:
        return False  # another host's journal (a shared state file): its renames are its own
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return process_mark(pid) == mark


def _finish(root_fd: int, entries: list[tuple[str, str, str, str]], ready: bool) -> tuple[int, int]:
    """Each entry's temporary file renamed into place where the journal is ready and its file is
    still the old one, else removed; returns (renamed, dropped)."""
    renamed = dropped = 0
    for folder, name, tmp, old in entries:
        try:
            dir_fd = open_folder(root_fd, folder)
        except OSError:
            continue
        try:
            try:
                os.stat(tmp, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                continue  # renamed before the process died (or never written)
            try:
                current = identity(os.stat(name, dir_fd=dir_fd, follow_symlinks=False))
            except FileNotFoundError:
                current = None
            if ready and current == old:
                os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                renamed += 1
            else:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=dir_fd)
                dropped += 1
            fsync_folder(dir_fd)
        except OSError as exc:
            log.warning("could not complete an interrupted change of %s/%s: %s", folder, name, exc)
        finally:
            os.close(dir_fd)
    return renamed, dropped


def recover(store: StateStore, root: str, root_fd: int) -> int:
    """Complete the changes that processes which died left recorded below ``root``; how many."""
    done = 0
    try:
        with store.write_gate() as gate:
            for journal, (pid, host, ready, entries) in gate.journals(root).items():
                if _alive(pid, host):
                    continue
                renamed, dropped = _finish(root_fd, entries, ready)
                log.warning(
                    "completed an interrupted replace below %s: %d files renamed into place, %d left as they were",
                    root,
                    renamed,
                    dropped,
                )
                gate.drop_journal(journal)
                done += 1
    except StateError as exc:
        log.warning("could not look for interrupted changes: %s", exc)
    return done
