"""Linux system calls the standard library has no binding for: openat2, renameat2, Landlock, fstatfs.

Why it exists: confinement must be enforced by the kernel, not by comparing path strings that a
neighbour can change between the check and the use. ``openat2(RESOLVE_BENEATH)`` resolves a path
beneath an open directory in one step; ``renameat2(RENAME_NOREPLACE)`` creates a file without
ever replacing one that appeared meanwhile, and ``RENAME_EXCHANGE`` lets a write confirm what it
replaced; Landlock lets a child process (ripgrep) read beneath one folder and nothing else.
``fstatfs`` names the filesystem an open descriptor lies on, so the caches trust a change stamp
only where the filesystem keeps honest ones (``stamps.py``).

Each call is a thin ``ctypes`` wrapper that raises ``OSError`` like the ``os`` module does, and
each feature is probed once: ``openat2_available()``, ``renameat2_available()`` and
``landlock_abi()`` say what this kernel offers, so callers fall back explicitly (and say so)
where it is missing. No package on PyPI offers all three maintained and small; the calls are a
few lines each, so a dependency would not pay for itself.

What it must never do: guess. A missing feature is reported as missing (``ENOSYS`` and friends
are turned into "not available"), never emulated here; the fallbacks live with the callers.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import sys
import threading

__all__ = [
    "RENAME_EXCHANGE",
    "RENAME_NOREPLACE",
    "RESOLVE_BENEATH",
    "RESOLVE_NO_MAGICLINKS",
    "fstatfs_type",
    "landlock_abi",
    "landlock_add_path_rule",
    "landlock_create_ruleset",
    "landlock_restrict_self",
    "openat2",
    "openat2_available",
    "rename_noreplace",
    "renameat2",
    "renameat2_available",
    "set_no_new_privs",
]

RESOLVE_NO_XDEV = 0x01
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08

RENAME_NOREPLACE = 1 << 0
RENAME_EXCHANGE = 1 << 1

_LINUX = sys.platform.startswith("linux")

# Syscall numbers. openat2 and the Landlock calls came after the numbering was unified across
# architectures, so they are the same everywhere; renameat2 is older and differs.
_SYS_OPENAT2 = 437
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_SYS_RENAMEAT2 = {"x86_64": 316, "aarch64": 276, "arm64": 276, "i686": 353, "i386": 353}.get(platform.machine())
_SYS_PRCTL = {"x86_64": 157, "aarch64": 167, "arm64": 167}.get(platform.machine())
_PR_SET_NO_NEW_PRIVS = 38
_AT_FDCWD = -100

_libc = None
_lock = threading.Lock()
_probed: dict[str, object] = {}


def _lib():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    return _libc


def _check(result: int, filename: str | None = None) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), filename)
    return result


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_HOW_SIZE = ctypes.sizeof(_OpenHow)


def openat2(dir_fd: int, path: str | bytes, flags: int, resolve: int, mode: int = 0) -> int:
    """``openat2(dir_fd, path, {flags, mode, resolve})``; raises ``OSError`` (ENOSYS if absent)."""
    if not _LINUX:
        raise OSError(errno.ENOSYS, "openat2 is Linux-only")
    how = _OpenHow(flags | os.O_CLOEXEC, mode, resolve)
    raw = os.fsencode(path)
    fd = _lib().syscall(_SYS_OPENAT2, ctypes.c_int(dir_fd), raw, ctypes.byref(how), ctypes.c_size_t(_HOW_SIZE))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), os.fsdecode(raw))
    return fd


def openat2_available() -> bool:
    """Whether this kernel has a working openat2 (Linux 5.6+; some sandboxes filter it)."""
    with _lock:
        if "openat2" not in _probed:
            ok = False
            if _LINUX:
                try:
                    os.close(openat2(_AT_FDCWD, "/", os.O_PATH | os.O_DIRECTORY, RESOLVE_NO_MAGICLINKS))
                    ok = True
                except OSError:
                    ok = False
            _probed["openat2"] = ok
        return bool(_probed["openat2"])


def renameat2(src_dir_fd: int, src: str, dst_dir_fd: int, dst: str, flags: int) -> None:
    """``renameat2`` through glibc (2.28+) or the raw syscall; raises ``OSError``."""
    if not _LINUX:
        raise OSError(errno.ENOSYS, "renameat2 is Linux-only")
    lib = _lib()
    a, b = os.fsencode(src), os.fsencode(dst)
    fn = getattr(lib, "renameat2", None)
    if fn is not None:
        res = fn(
            ctypes.c_int(src_dir_fd),
            ctypes.c_char_p(a),
            ctypes.c_int(dst_dir_fd),
            ctypes.c_char_p(b),
            ctypes.c_uint(flags),
        )
    elif _SYS_RENAMEAT2 is not None:
        res = lib.syscall(
            _SYS_RENAMEAT2,
            ctypes.c_int(src_dir_fd),
            ctypes.c_char_p(a),
            ctypes.c_int(dst_dir_fd),
            ctypes.c_char_p(b),
            ctypes.c_uint(flags),
        )
    else:
        raise OSError(errno.ENOSYS, "renameat2 is not known on this architecture")
    _check(res, os.fsdecode(b))


def renameat2_available() -> bool:
    """Whether renameat2 exists at all (a filesystem may still refuse a flag with EINVAL)."""
    with _lock:
        if "renameat2" not in _probed:
            ok = False
            if _LINUX:
                try:
                    # Renaming a missing name fails with ENOENT only when the call exists.
                    renameat2(
                        _AT_FDCWD, "/nonexistent-dsh-probe", _AT_FDCWD, "/nonexistent-dsh-probe-2", RENAME_NOREPLACE
                    )
                except OSError as exc:
                    ok = exc.errno not in (errno.ENOSYS, errno.EPERM)
            _probed["renameat2"] = ok
        return bool(_probed["renameat2"])


_NOREPLACE_REFUSED = (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP)


def rename_noreplace(src_dir_fd: int, src: str, dst_dir_fd: int, dst: str) -> bool:
    """Rename ``src`` to ``dst`` only if ``dst`` does not exist, in one call: True when done;
    False when the kernel or the filesystem cannot (the caller falls back, and says so);
    ``FileExistsError`` when ``dst`` exists; ``OSError`` for anything else."""
    if not renameat2_available():
        return False
    try:
        renameat2(src_dir_fd, src, dst_dir_fd, dst, RENAME_NOREPLACE)
        return True
    except OSError as exc:
        if exc.errno == errno.EEXIST:
            raise FileExistsError(errno.EEXIST, "File exists", dst) from None
        if exc.errno in _NOREPLACE_REFUSED:
            return False
        raise


# -- Landlock ------------------------------------------------------------------------------------

_LANDLOCK_CREATE_RULESET_VERSION = 1 << 0
_LANDLOCK_RULE_PATH_BENEATH = 1


class _RulesetAttr(ctypes.Structure):
    # handled_access_net (ABI 4) and scoped (ABI 6) are zero unless the ABI has them; a larger
    # struct with zeroed tail is accepted by older kernels.
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    """The Landlock ABI version this kernel offers (0: none, disabled, or not Linux)."""
    with _lock:
        if "landlock" not in _probed:
            abi = 0
            if _LINUX:
                res = _lib().syscall(
                    _SYS_LANDLOCK_CREATE_RULESET,
                    None,
                    ctypes.c_size_t(0),
                    ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION),
                )
                abi = int(res) if res > 0 else 0
            _probed["landlock"] = abi
        return int(_probed["landlock"])  # type: ignore[call-overload]


def landlock_create_ruleset(handled_fs: int, handled_net: int = 0, scoped: int = 0) -> int:
    attr = _RulesetAttr(handled_fs, handled_net, scoped)
    return _check(
        _lib().syscall(
            _SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0)
        )
    )


def landlock_add_path_rule(ruleset_fd: int, parent_fd: int, allowed: int) -> None:
    attr = _PathBeneathAttr(allowed, parent_fd)
    _check(
        _lib().syscall(
            _SYS_LANDLOCK_ADD_RULE,
            ctypes.c_int(ruleset_fd),
            ctypes.c_int(_LANDLOCK_RULE_PATH_BENEATH),
            ctypes.byref(attr),
            ctypes.c_uint32(0),
        )
    )


def landlock_restrict_self(ruleset_fd: int) -> None:
    """Restrict the calling *thread* (and every process it starts from now on), irreversibly."""
    _check(_lib().syscall(_SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset_fd), ctypes.c_uint32(0)))


def set_no_new_privs() -> None:
    """``prctl(PR_SET_NO_NEW_PRIVS, 1)`` for the calling thread (Landlock requires it unprivileged)."""
    lib = _lib()
    fn = getattr(lib, "prctl", None)
    if fn is not None:
        res = fn(
            ctypes.c_int(_PR_SET_NO_NEW_PRIVS),
            ctypes.c_ulong(1),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
        )
    elif _SYS_PRCTL is not None:
        res = lib.syscall(_SYS_PRCTL, _PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    else:
        raise OSError(errno.ENOSYS, "prctl is not known on this architecture")
    _check(res)


# -- fstatfs -------------------------------------------------------------------------------------


def fstatfs_type(fd: int) -> int:
    """The filesystem magic number (``f_type``) of what ``fd`` is open on; raises ``OSError``.

    ``f_type`` is the first field of ``struct statfs`` on every Linux architecture; the buffer
    is larger than the struct anywhere (120 bytes on 64-bit systems).
    """
    if not _LINUX:
        raise OSError(errno.ENOSYS, "fstatfs is Linux-only")
    buf = (ctypes.c_long * 64)()
    _check(_lib().fstatfs(ctypes.c_int(fd), ctypes.byref(buf)))
    return buf[0] & 0xFFFFFFFF
