"""A real FUSE file system in a few lines: one empty folder, served by a thread of this process.

    with empty_fuse("/some/folder"):   # needs root (mount) and /dev/fuse; use a private mount namespace
        ...                            # /some/folder is now a FUSE mount (f_type 0x65735546)

Why it exists: to show that a check of the file system's type meets a real user-space file
system, not a number typed into a test. It speaks the kernel's FUSE protocol
(``linux/fuse.h``) directly on ``/dev/fuse``, so no libfuse or fusermount is needed; it answers
what listing an empty folder takes (INIT, GETATTR, OPENDIR, READDIR, RELEASEDIR, STATFS) and
refuses the rest with ENOSYS. It is for tests only and serves nothing else.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import struct
import threading
from collections.abc import Iterator

IN_HEADER = struct.Struct("IIQQIIIHH")  # len, opcode, unique, nodeid, uid, gid, pid, extlen, pad
OUT_HEADER = struct.Struct("IiQ")  # len, error, unique
LOOKUP, FORGET, GETATTR, STATFS, INIT, OPENDIR, READDIR, RELEASEDIR = 1, 2, 3, 17, 26, 27, 28, 29
INTERRUPT, DESTROY, BATCH_FORGET = 36, 38, 42
NO_REPLY = {FORGET, INTERRUPT, BATCH_FORGET}


def _attr() -> bytes:
    # fuse_attr: ino size blocks atime mtime ctime (u64), atimensec mtimensec ctimensec mode nlink
    # uid gid rdev blksize flags (u32)
    return struct.pack("QQQQQQIIIIIIIIII", 1, 0, 0, 0, 0, 0, 0, 0, 0, 0o40755, 2, 0, 0, 0, 4096, 0)


def _answer(opcode: int, body: bytes) -> tuple[int, bytes]:
    if opcode == INIT:
        minor = struct.unpack_from("II", body)[1]
        # fuse_init_out: major minor max_readahead flags, max_background congestion_threshold
        # (u16), max_write time_gran, max_pages map_alignment (u16), flags2 max_stack_depth, 6 unused
        return 0, struct.pack("IIIIHHIIHHII6I", 7, min(minor, 31), 0, 0, 0, 0, 4096, 1, 0, 0, 0, 0, *[0] * 6)
    if opcode == GETATTR:
        return 0, struct.pack("QII", 1, 0, 0) + _attr()  # attr_valid, attr_valid_nsec, dummy
    if opcode == OPENDIR:
        return 0, struct.pack("QII", 1, 0, 0)  # fh, open_flags, padding
    if opcode == READDIR:
        return 0, b""  # no entries
    if opcode in (RELEASEDIR, DESTROY):
        return 0, b""
    if opcode == STATFS:
        # fuse_kstatfs: blocks bfree bavail files ffree (u64), bsize namelen frsize padding, 6 spare
        return 0, struct.pack("QQQQQIIII6I", 0, 0, 0, 0, 0, 4096, 255, 4096, 0, *[0] * 6)
    if opcode == LOOKUP:
        return -errno.ENOENT, b""
    return -errno.ENOSYS, b""


def _serve(fd: int) -> None:
    while True:
        try:
            data = os.read(fd, 1 << 20)
        except OSError:
            return  # unmounted, or the connection ended
        _, opcode, unique, *_ = IN_HEADER.unpack_from(data)
        if opcode in NO_REPLY:
            continue
        error, body = _answer(opcode, data[IN_HEADER.size :])
        try:
            os.write(fd, OUT_HEADER.pack(OUT_HEADER.size + len(body), error, unique) + body)
        except OSError:
            return


@contextlib.contextmanager
def empty_fuse(target: str) -> Iterator[None]:
    """Mount an empty FUSE folder on ``target`` for the duration (raises ``OSError`` if it cannot)."""
    fd = os.open("/dev/fuse", os.O_RDWR | os.O_CLOEXEC)
    libc = ctypes.CDLL(None, use_errno=True)
    options = f"fd={fd},rootmode=40000,user_id=0,group_id=0".encode()
    if libc.mount(b"dshtest", target.encode(), b"fuse", ctypes.c_ulong(0), options) != 0:
        err = ctypes.get_errno()
        os.close(fd)
        raise OSError(err, os.strerror(err), target)
    threading.Thread(target=_serve, args=(fd,), daemon=True).start()
    try:
        yield
    finally:
        libc.umount2(target.encode(), 2)  # MNT_DETACH: never wait on the server
