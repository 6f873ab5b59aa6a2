"""Build step: compile the package's two C files, each into ``lib<name>.so.N`` beside it.

- glob's dater (dsh_jupyter/core/fs/mtimes.c): glob dates every path it lists, and a date taken in
  Python costs two to four times the system call (see the C file).
- the index's trigram reader and glob's list (dsh_jupyter/core/index/grams.c): reading a million
  files and indexing their text in Python and FTS5 took ten times rg's pass over them, and
  joining a glob's 600,000 paths in SQL twice the time of reading them (see the C file).

A library has no Python in it (ctypes loads it), so one build serves every Python version on the
machine and its wheel is tagged ``py3-none-<platform>``. N is the number the file's
``dsh_<name>_abi()`` returns, the one its Python loader asks for; the name does not end in
``.so``, so Python never takes a library for a module of the package.

Where one cannot be built (not Linux, no C compiler, a compiler that fails) the package is built
without it, with a warning here; at run time the Python way is taken instead (glob dates in
Python, the index reads in Python and glob joins its list in SQL: the same answers, slower on
big trees) and that is logged once.
``CC`` chooses the compiler (default ``cc``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE = os.path.join("dsh_jupyter", "core", "fs", "mtimes.c")  # glob's dater
GRAMS = os.path.join("dsh_jupyter", "core", "index", "grams.c")  # the index's trigram reader, glob's list
SOURCES = {SOURCE: "glob's compiled dater", GRAMS: "the index's compiled trigram reader and glob's list"}


def library_path(root: str, source: str = SOURCE) -> str:
    """Where the library of the C file ``source`` below ``root`` goes (relative to ``root``)."""
    name = os.path.splitext(os.path.basename(source))[0]
    with open(os.path.join(root, source), encoding="utf-8") as fh:
        abi = re.search(rf"int dsh_{name}_abi\(void\)\s*\{{\s*return (\d+);", fh.read())
    if abi is None:
        raise ValueError(f"{source} does not say its ABI (dsh_{name}_abi)")
    return os.path.join(os.path.dirname(source), f"lib{name}.so.{abi[1]}")


def compile_dater(root: str, cc: str | None = None) -> str | None:
    """``compile_library`` of glob's dater."""
    return compile_library(root, SOURCE, cc)


def compile_library(root: str, source: str, cc: str | None = None) -> str | None:
    """Compile ``source`` into ``library_path(root, source)``; None when built, else why not.

    The library is written to a temporary name and moved into place, so a process that has the
    old one loaded never sees a half-written file, and a failed build leaves no library behind
    other than the one that was there."""
    if not sys.platform.startswith("linux"):
        return f"it is written for Linux, not {sys.platform}"
    compiler = cc or os.environ.get("CC") or "cc"
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler!r} was not found)"
    target = os.path.join(root, library_path(root, source))
    stem = os.path.basename(target).partition(".so")[0]
    fd, scratch = tempfile.mkstemp(prefix=f".{stem}.", dir=os.path.dirname(target))
    os.close(fd)
    try:
        argv = [compiler, "-O2", "-shared", "-fPIC", "-Wall", "-o", scratch, os.path.join(root, source)]
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
        built = False
        for source, what in SOURCES.items():
            why = compile_library(self.root, source)
            if why is not None:
                self.app.display_warning(
                    f"dsh-jupyter: {what} was not built ({why}); the package does that work in Python"
                )
                continue
            build_data["artifacts"].append(library_path(self.root, source).replace(os.sep, "/"))  # gitignored
            built = True
        if built and version != "editable":  # an editable install loads them from the source tree
            build_data["pure_python"] = False
            build_data["tag"] = f"py3-none-{_platform_tag()}"
