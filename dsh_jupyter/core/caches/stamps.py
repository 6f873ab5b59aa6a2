"""When a file's or folder's stat proves that nothing in it changed since an earlier look.

Why it exists: the caches (``caches.folders`` for folder scans, ``caches.lines`` for line offsets) reuse
what an earlier call learned while the stat of the opened descriptor is the same. That is sound
only if every later change moves the stamp, and two things can defeat it:

* **the timestamp tick.** A change stamps the inode with the clock as it reads at that moment,
  in the filesystem's granularity (coarse kernel ticks, whole seconds on some filesystems). A
  change made in the same tick as the look, after it, leaves ctime (and mtime) as they were. So a
  look counts as *settled* only when the inode's ctime is older than the clock read just before
  the ``fstat`` by a margin (50 ms, or 3 s when the stamp is a whole second): every change after
  such a look gets a later ctime. ctime, not mtime, is the witness: ``utime`` can set mtime
  anywhere, but ctime always moves to "now" (and a directory's ctime moves on every create,
  delete and rename in it).
* **filesystems whose stamps are not the kernel's own.** Network filesystems cache attributes on
  the client and take times from the server's clock; FUSE filesystems report whatever their
  daemon says; FAT and NTFS have no real ctime. Only filesystems on a short list of local POSIX
  ones (``fstatfs`` of the same descriptor) are trusted; everywhere else nothing is cached.

What it must never do: call a look settled without both checks, or look anything up by a path
string (only the descriptor the caller holds is examined). A clock stepped back by more than the
margin could in principle repeat a stamp on a whole-second filesystem; that is the one case the
stamp cannot prove, and the margin is what keeps it out of reach of ordinary clock adjustment.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from ..fs import syscalls

__all__ = ["COARSE_MARGIN_NS", "LOCAL_FILESYSTEMS", "MARGIN_NS", "Look", "is_local", "look", "settled"]

MARGIN_NS = 50_000_000  # 50 ms: several kernel ticks (HZ=100 is 10 ms), for sub-second stamps
COARSE_MARGIN_NS = 3_000_000_000  # 3 s: whole-second (or two-second) stamps

# f_type magic numbers (linux/magic.h) of local filesystems whose ctime the kernel sets itself.
LOCAL_FILESYSTEMS = frozenset(
    {
        0xEF53,  # ext2, ext3, ext4
        0x01021994,  # tmpfs
        0x858458F6,  # ramfs
        0x58465342,  # xfs
        0x9123683E,  # btrfs
        0xF2F52010,  # f2fs
        0x794C7630,  # overlayfs (container root filesystems)
        0x2FC12FC1,  # zfs
        0xCA451A4E,  # bcachefs
    }
)


@dataclass(frozen=True, slots=True)
class Look:
    """The stat of an open descriptor and whether it proves the content unchanged from now on."""

    st: os.stat_result
    settled: bool


def settled(st: os.stat_result, now_ns: int) -> bool:
    """Whether every change after a look at ``now_ns`` (read before the ``fstat``) moves ``st``'s ctime."""
    margin = COARSE_MARGIN_NS if st.st_ctime_ns % 1_000_000_000 == 0 else MARGIN_NS
    return st.st_ctime_ns < now_ns - margin


def is_local(fd: int) -> bool:
    """Whether ``fd`` lies on a filesystem whose stamps the kernel sets itself (the short list)."""
    try:
        return syscalls.fstatfs_type(fd) in LOCAL_FILESYSTEMS
    except OSError:
        return False


def look(fd: int) -> Look:
    """``fstat`` of ``fd``, and whether a cache may key on it (see the module docstring)."""
    now = time.time_ns()  # before the fstat: a later change is stamped at least this late
    st = os.fstat(fd)
    return Look(st, settled(st, now) and is_local(fd))
