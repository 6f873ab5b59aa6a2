"""Build step: compile glob's dater (dsh_jupyter/core/fs/mtimes.c) into ``libmtimes.so.N`` beside it.

Why: glob dates every path it lists, and a date taken in Python costs two to four times the system
call (see the C file). The library has no Python in it (ctypes loads it), so one build serves
every Python version on the machine and its wheel is tagged ``py3-none-<platform>``. N is the
number the file's ``dsh_mtimes_abi()`` returns, the one core/fs/mtimes.py asks for; the name does
not end in ``.so``, so Python never takes the library for a module of the package.

Where it cannot be built (not Linux, no C compiler, a compiler that fails) the package is built
without it, pure Python, with a warning here; at run time glob then dates in Python (the same
answer, slower on big trees) and logs that once. ``CC`` chooses the compiler (default ``cc``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE = os.path.join("dsh_jupyter", "core", "fs", "mtimes.c")


def library_path(root: str) -> str:
    """Where the library of the C file below ``root`` goes (relative to ``root``)."""
    with open(os.path.join(root, SOURCE), encoding="utf-8") as fh:
        abi = re.search(r"int dsh_mtimes_abi\(void\)\s*\{\s*return (\d+);", fh.read())
    if abi is None:
        raise ValueError(f"{SOURCE} does not say its ABI (dsh_mtimes_abi)")
    return os.path.join(os.path.dirname(SOURCE), f"libmtimes.so.{abi[1]}")


def compile_dater(root: str, cc: str | None = None) -> str | None:
    """Compile ``SOURCE`` into ``library_path(root)``; None when built, else why not.

    The library is written to a temporary name and moved into place, so a process that has the
    old one loaded never sees a half-written file, and a failed build leaves no library behind
    other than the one that was there."""
    if not sys.platform.startswith("linux"):
        return f"it is written for Linux, not {sys.platform}"
    compiler = cc or os.environ.get("CC") or "cc"
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler!r} was not found)"
    target = os.path.join(root, library_path(root))
    fd, scratch = tempfile.mkstemp(prefix=".libmtimes.", dir=os.path.dirname(target))
    os.close(fd)
    try:
        argv = [compiler, "-O2", "-shared", "-fPIC", "-Wall", "-o", scratch, os.path.join(root, SOURCE)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            return f"{compiler} failed: {(done.stderr or done.stdout).strip()[:500]}"
        os.chmod(scratch, 0o755)
        os.replace(scratch, target)
        scratch = ""
        return None
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{compiler} could not run: {exc}"
    finally:
        if scratch:
            os.unlink(scratch)


def _platform_tag() -> str:
    from packaging.tags import sys_tags  # hatchling's own dependency

    return next(t.platform for t in sys_tags() if "manylinux" not in t.platform and "musllinux" not in t.platform)


try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # imported outside a build (the tests call compile_dater)
    BuildHookInterface = object  # type: ignore[assignment,misc]


class DaterBuildHook(BuildHookInterface):  # type: ignore[misc,valid-type]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":  # the sdist ships the C source, and builds it with its wheel
            return
        why = compile_dater(self.root)
        if why is not None:
            self.app.display_warning(
                f"dsh-jupyter: glob's compiled dater was not built ({why}); glob will date its paths in Python"
            )
            return
        build_data["artifacts"].append(library_path(self.root).replace(os.sep, "/"))  # it is gitignored
        if version != "editable":  # an editable install loads it from the source tree
            build_data["pure_python"] = False
            build_data["tag"] = f"py3-none-{_platform_tag()}"
