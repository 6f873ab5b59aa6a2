"""Fence ripgrep in: it may read beneath its search root and nothing else, where Linux allows.

Why it exists: ``rg`` walks the tree itself. Handing it the search root as a descriptor (its
working directory becomes ``/proc/self/fd/N``) means the root it starts from is the one that was
checked, but a folder it meets during the walk can still be swapped for a symlink to outside
between rg listing it and rg opening it. Landlock closes that: rg runs under a ruleset that
allows reading files and folders beneath the search root (and executing its own binary) and
handles every other filesystem right, so an open outside is refused by the kernel whatever rg
was tricked into. This is how sandboxes for agent command lines confine their children on Linux.

How: Landlock restricts the calling *thread* and whatever it starts afterwards, irreversibly. So
each fenced rg is started from a short-lived thread that sets ``no_new_privs``, restricts itself
and starts rg; the thread then ends, and the rest of the process is untouched. The ruleset is
built from descriptors the caller already holds, never from path strings. Measured cost: a
ruleset and a thread, tens of microseconds per search (see benchmarks/bench_confinement.py).

Where the kernel has no Landlock (or the ``landlock`` setting is false) the mode is
``descriptors-only``: the search root is still passed as a descriptor, and since a swap deep in
the tree during rg's walk is not fenced, what rg reports is checked again beneath the root
(``recheck.py``). The mode is logged once and reported by the status routes.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Literal, TypeVar

from ..fs import syscalls
from .runner import RgMissing

__all__ = ["FenceError", "Fencing"]

log = logging.getLogger(__name__)

T = TypeVar("T")

_EXECUTE = 1 << 0
_READ_FILE = 1 << 2
_READ_DIR = 1 << 3
_TRUNCATE = 1 << 14  # ABI 3
# Every filesystem right each ABI knows: handling a right is what makes it refused by default.
_FS_RIGHTS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
_NET_TCP = (1 << 0) | (1 << 1)  # bind and connect (ABI 4)
_SCOPES = (1 << 0) | (1 << 1)  # abstract unix sockets and signals (ABI 6)
_LIB_DIRS = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/etc/ld.so.cache")
# A wrapper script standing in for rg runs an interpreter and system commands.
_BIN_DIRS = ("/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin")
_logged: set[str] = set()


class FenceError(Exception):
    """Landlock was expected but could not be applied; the search must not run unfenced."""


def _is_script(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"#!"
    except OSError:
        return False


def _dynamic(path: str) -> bool:
    """Whether the ELF file at ``path`` asks for a program interpreter (is dynamically linked)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2:  # not a 64-bit ELF: assume dynamic
                return True
            order: Literal["little", "big"] = "little" if head[5] == 1 else "big"
            phoff = int.from_bytes(head[32:40], order)
            phentsize = int.from_bytes(head[54:56], order)
            phnum = int.from_bytes(head[56:58], order)
            fh.seek(phoff)
            table = fh.read(phentsize * phnum)
    except OSError:
        return True
    return any(int.from_bytes(table[i * phentsize : i * phentsize + 4], order) == 3 for i in range(phnum))


class Fencing:
    """How this process confines ripgrep; ``spawn`` starts one rg under the fence."""

    def __init__(self, enabled: bool, rg: str | None) -> None:
        abi = syscalls.landlock_abi() if enabled else 0
        self.abi = abi
        self.mode = "landlock" if abi >= 1 and rg is not None else "descriptors-only"
        self._extra: list[tuple[str, int]] = []
        if self.mode == "landlock" and rg is not None:
            self._extra.append((rg, _READ_FILE | _EXECUTE))
            script = _is_script(rg)
            if script or _dynamic(rg):
                # What a dynamically linked rg loads, and what a wrapper script runs; never user data.
                dirs = _LIB_DIRS + ((*_BIN_DIRS, os.path.dirname(os.path.realpath(rg))) if script else ())
                self._extra += [
                    (d, _READ_FILE | _EXECUTE | (_READ_DIR if os.path.isdir(d) else 0))
                    for d in dirs
                    if os.path.exists(d)
                ]
        why = (
            "disabled by the landlock setting"
            if not enabled
            else "the kernel has no Landlock"
            if abi < 1
            else f"Landlock ABI {abi}"
        )
        self.detail = why
        key = f"{self.mode}:{why}"
        if key not in _logged:
            _logged.add(key)
            if self.mode == "landlock":
                log.info("dsh_jupyter: ripgrep runs under Landlock (ABI %d), reading only beneath its search root", abi)
            else:
                log.warning(
                    "dsh_jupyter: ripgrep is confined by descriptors only (%s): every path and line it "
                    "reports is checked again beneath the search root, which costs time on big results",
                    why,
                )

    def describe(self) -> dict:
        return {"confinement": self.mode, "landlockAbi": self.abi, "detail": self.detail}

    def spawn(self, start: Callable[[], T], readable: list[tuple[int, bool]]) -> T:
        """Run ``start`` (which starts rg) so that rg may read only beneath ``readable``.

        ``readable`` holds ``(fd, is_folder)`` pairs: each folder with everything beneath it, or
        one file. Without Landlock, ``start`` simply runs here.
        """
        if self.mode != "landlock":
            return start()
        ruleset = self._ruleset(readable)
        box: dict = {}

        def fenced() -> None:
            try:
                syscalls.set_no_new_privs()
                syscalls.landlock_restrict_self(ruleset)
            except OSError as exc:
                box["error"] = FenceError(f"Landlock could not be applied ({exc.strerror or exc})")
                return
            try:
                box["value"] = start()
            except BaseException as exc:  # handed to the caller's thread below
                box["error"] = exc

        try:
            worker = threading.Thread(target=fenced, name="dsh-rg-fence", daemon=True)
            worker.start()
            worker.join()
        finally:
            os.close(ruleset)
        if "error" in box:
            raise box["error"]
        return box["value"]

    def _ruleset(self, readable: list[tuple[int, bool]]) -> int:
        abi = min(self.abi, max(_FS_RIGHTS_BY_ABI))
        try:
            fd = syscalls.landlock_create_ruleset(
                _FS_RIGHTS_BY_ABI[abi], _NET_TCP if self.abi >= 4 else 0, _SCOPES if self.abi >= 6 else 0
            )
        except OSError as exc:
            raise FenceError(f"a Landlock ruleset could not be made ({exc.strerror or exc})") from None
        # Landlock asks at every open whether the truncate right is held too (ABI 3 on), walking
        # from the file up towards / until each right it asks about is granted: a right granted
        # nowhere sends every one of rg's 100,000 opens up to /, which measured half the fence's
        # cost. Granted beneath the root, the walk stops there. rg never truncates, and with no
        # write right it cannot open a file for writing: what it gains is truncate(2) of files
        # beneath the search root, which the server may change anyway.
        beneath = _READ_FILE | (_TRUNCATE if abi >= 3 else 0)
        try:
            for target, is_dir in readable:
                syscalls.landlock_add_path_rule(fd, target, beneath | (_READ_DIR if is_dir else 0))
            for i, (path, rights) in enumerate(self._extra):
                try:
                    pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError as exc:
                    if i == 0:  # the rg binary itself is gone
                        raise RgMissing(
                            f"ripgrep could not be started from {path!r} ({exc.strerror or exc})."
                        ) from None
                    continue
                try:
                    syscalls.landlock_add_path_rule(fd, pfd, rights)
                finally:
                    os.close(pfd)
        except OSError as exc:
            os.close(fd)
            raise FenceError(f"a Landlock rule could not be added ({exc.strerror or exc})") from None
        except BaseException:
            os.close(fd)
            raise
        return fd
