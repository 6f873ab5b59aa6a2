"""glob's compiled dater: the times of a block of rg's ``--files --null`` output, in one call.

Why it exists: glob answers oldest first, so it dates every path it lists, tens of thousands on a
big tree. ``os.stat`` costs 2-4 µs a path in Python (it builds a whole ``stat_result``); the
system call is about 1 µs. ``mtimes.c`` is that loop in C, loaded through ctypes, which lets the
interpreter go while it runs. It is built into ``libmtimes.so.2`` beside this file when the
package is built (``hatch_build.py``, with the machine's C compiler).

However deep the tree, it holds at most 64 folders open at once (``HELD_MAX``, as
``Rechecker``'s ``HELD``; deeper ones are reached hand over hand beneath the deepest held one),
so a chain of folders deeper than the descriptor limit is dated like any other; a path it could
not look at (a folder that may not be entered, no descriptor left even after letting the others
go) is ``UNDATED``, for glob to count.

Where the library is missing (no compiler when the package was built, another platform) or
cannot be loaded, ``mtimes`` returns None and glob dates in Python with ``Rechecker.mtimes``: the
same answer, slower on big trees. That is logged once per process, as a warning.

What it must never do: answer differently from ``Rechecker.mtimes`` (a path dated only if it
is a regular file beneath the root with no symlink on the way; undated where ``Rechecker``
counts it undated), or write past its output.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import threading

__all__ = ["LIBRARY", "NONE", "UNDATED", "available", "mtimes", "python_only"]

log = logging.getLogger(__name__)

NONE = -(2**63)  # the time given to a path that is not a regular file beneath the root
UNDATED = NONE + 1  # the time given to a path that could not be looked at (no permission, no descriptor)
ABI = 2  # what ``dsh_mtimes_abi()`` of a library built from this version's mtimes.c answers
LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"libmtimes.so.{ABI}")

_loaded = False
_function = None  # the C function, once loaded; None when it could not be
_loading = threading.Lock()  # two first globs at once (server threads) load it, and warn, once


def _load():
    if _loaded:
        return _function
    with _loading:
        return _load_once()


def _load_once():
    global _loaded, _function
    if _loaded:
        return _function
    try:
        library = ctypes.CDLL(LIBRARY)
        function, abi = library.dsh_mtimes, library.dsh_mtimes_abi
        abi.restype, abi.argtypes = ctypes.c_int, []
        if abi() != ABI:
            raise OSError(f"{LIBRARY} was built from another version of mtimes.c")
    except (OSError, AttributeError) as exc:
        log.warning(
            "dsh_jupyter: glob's compiled dater could not be loaded (%s); glob dates its paths in Python "
            "(the same answer, slower on big trees). Reinstall dsh-jupyter where a C compiler is found "
            "to build it.",
            exc,
        )
        _loaded = True
        return None
    function.restype = ctypes.c_long
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_long, ctypes.c_void_p, ctypes.c_long]
    _function = function
    _loaded = True  # after _function: a thread that sees it loaded sees the function too
    return function


@contextlib.contextmanager
def python_only():
    """Within the block, ``mtimes`` answers None, so glob dates in Python (benchmarks put the two
    ways side by side; not for use while other threads date)."""
    global _function
    function = _load()
    _function = None
    try:
        yield
    finally:
        _function = function


def available() -> bool:
    """Whether the compiled dater is loaded (loading it on first use)."""
    return _load() is not None


def mtimes(root_fd: int, block: bytes):
    """The time (ns) of each NUL-ended path of ``block`` (relative to ``root_fd``, with or without
    rg's "./"), as a numpy int64 array: ``NONE`` where the path is not a regular file beneath the
    root, ``UNDATED`` where it could not be looked at. None when the compiled dater is not there:
    the caller then dates in Python."""
    function = _load()
    if function is None:
        return None
    import numpy as np  # a core dependency (through pandas); imported where it is needed

    count = block.count(b"\0")
    if block and not block.endswith(b"\0"):
        raise ValueError("the block must end with a NUL: only whole paths are dated")
    out = np.empty(count, dtype=np.int64)
    if count == 0:
        return out
    done = function(root_fd, block, len(block), out.ctypes.data, count)
    if done != count:
        return None
    return out
