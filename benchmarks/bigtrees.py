"""The big generated trees the benchmarks measure on, built with the tests' tree builder.

    python benchmarks/bigtrees.py [DIR]     # build (or check) bench_targets.py's trees without timing anything

- ``build_tree(base, spec)`` and ``Link``: the tests' builder (``tests/trees.py``), re-exported
  here so a benchmark takes all its trees from one import; str/bytes -> file, dict -> folder,
  ``Link`` -> symlink; keys may hold ``/`` to create nested paths in one go.
- ``built_once(marker, build)``: a big tree is built once and reused while its marker exists
  (each benchmark keeps its marker where it always was: beside its tree, or inside it).
- The generated trees: ``folder_of`` (one folder of N entries, for the listing benchmarks),
  ``needle_tree`` (bench_search.py), ``rg_tree`` (bench_rg_runner.py), ``confinement_tree``
  (bench_confinement.py), ``numbered_lines`` (a big file of short lines, bench_read.py), and the
  trees of ``bench_targets.py``:

  - ``listing/``: one folder of 101,000 entries (1 in 100 a subfolder, the rest empty files);
  - ``search/``: 100,000 files in 5,000 folders (50 top-level folders of 100 each, 20 files per
    folder), 60,101 of them ``*.py``, with 44,453 lines holding ``perf_needle`` in 11,112 files;
  - ``big.txt``: a 1 GiB text file of short numbered lines (37 bytes each).

Why here: every benchmark is a script run from this folder, so ``from bigtrees import ...`` works
there as ``from timing import ...`` does; this module puts ``tests/`` on ``sys.path`` once, for
the builder. It imports neither the package nor pytest, and importing it creates nothing.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parents[1] / "tests")
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from trees import Link, build_tree  # noqa: E402  (tests/trees.py)

__all__ = [
    "DEFAULT_DIR",
    "LISTING_ENTRIES",
    "MIXES",
    "NEEDLE_LINES",
    "PY_FILES",
    "SEARCH_FILES",
    "SHAPES",
    "Link",
    "build_all",
    "build_shaped",
    "build_tree",
    "built_once",
    "confinement_tree",
    "folder_of",
    "needle_tree",
    "numbered_lines",
    "rg_tree",
]


def built_once(marker: str | os.PathLike, build: Callable[[], object]) -> bool:
    """Run ``build()`` unless ``marker`` exists, then create the marker; True when it built."""
    if os.path.exists(marker):
        return False
    build()
    Path(marker).touch()
    return True


# -- generated trees ------------------------------------------------------------------------------


def folder_of(
    entries: int, *, name: str = "entry{:06d}", folder_every: int = 100, suffix: str = "", text: str = ""
) -> dict:
    """One folder's spec: ``entries`` entries named ``name.format(i)``; every ``folder_every``-th
    (from the first; 0: none) an empty subfolder, the others files named with ``suffix`` added,
    each holding ``text``."""
    spec: dict = {}
    for i in range(entries):
        if folder_every and i % folder_every == 0:
            spec[name.format(i)] = {}
        else:
            spec[name.format(i) + suffix] = text
    return spec


def needle_tree(files: int) -> dict:
    """``files`` small files in 40 x 50 folders; one in three holds a ``needle`` line (bench_search.py:
    about 33,000 matches, about 20 MB of ``rg --json`` for 100,000 files)."""
    line = "needle " + "x" * 80 + "\n"
    return {
        f"top{i % 40:02d}/mid{i // 40 % 50:02d}/f{i:06d}.txt": (line if i % 3 == 0 else "plain text\n") + "filler\n"
        for i in range(files)
    }


def rg_tree(fanout: tuple[int, int, int] = (50, 20, 100)) -> dict:
    """top x sub folders x files (100,000 by default), each file with one ``beta <i % 8>`` line
    (bench_rg_runner.py: ``beta [0-2]`` matches 3/8 of them, about 20 MB of ``rg --json``)."""
    spec: dict = {}
    i = 0
    for a in range(fanout[0]):
        for b in range(fanout[1]):
            for _ in range(fanout[2]):
                spec[f"top{a:02d}/mid{b:02d}/file{i:06d}.txt"] = (
                    f"alpha line of file {i}\nbeta {i % 8} is the interesting one\ngamma end\n"
                )
                i += 1
    return spec


def confinement_tree(files: int) -> dict:
    """bench_confinement.py's tree: ``small/`` (50 files, half with ``needle``), ``big/`` (``files``
    files in 100 x 20 folders, one in three with ``needle``) and one file five folders deep."""
    spec: dict = {f"small/s{i:02}.txt": "needle\n" if i % 2 else "hay\n" for i in range(50)}
    for i in range(files):
        spec[f"big/d{i % 100:02}/e{i // 100 % 20:02}/f{i:06}.txt"] = "needle here\n" if i % 3 == 0 else "plain\n"
    spec["a/b/c/d/deep.txt"] = "deep\n" * 20
    return spec


def numbered_lines(path: str | os.PathLike, size: int) -> None:
    """A text file of short numbered lines (37 bytes each), at least ``size`` bytes, written in
    blocks of 100,000 lines (too big for a spec)."""
    block = 100_000
    with open(path, "w") as f:
        n = 0
        while f.tell() < size:
            f.write("".join(f"line {k:09d} of the benchmark file\n" for k in range(n, n + block)))
            n += block


# -- the trees of bench_targets.py ------------------------------------------------------------------

DEFAULT_DIR = os.path.join(tempfile.gettempdir(), "dsh-bench-targets")
LISTING_ENTRIES = 101_000
SEARCH_FILES = 100_000
PY_FILES = 60_101
NEEDLE_LINES = 44_453
BIG_BYTES = 1 << 30
_TOPS, _MIDS, _PER_FOLDER = 50, 100, 20  # 50 x 100 folders, 20 files each
_FILLER = "    value = compute(value, step) + offset  # an ordinary line of code, about this long\n"
_NEEDLE = (
    "    perf_needle = configure(perf_needle, retries=3, timeout=30.0, backoff=1.5)"
    "  # a matching line of roughly the length real code has, so the JSON is realistic\n"
)


def _is_py(i: int) -> bool:
    # 3 in 5 files are Python, plus 101 of the others: 60,000 + 100 + 1.
    return i % 5 < 3 or (i % 5 == 3 and i // 5 % 200 == 0) or i == 4


def _needles(i: int) -> int:
    # 11,112 files hold 4 matching lines each, and file 1 holds 5: 44,453 lines.
    if i == 1:
        return 5
    return 4 if i % 9 == 0 else 0


def _search_spec() -> dict:
    spec: dict = {}
    i = 0
    for a in range(_TOPS):
        for b in range(_MIDS):
            for _ in range(_PER_FOLDER):
                ext = ".py" if _is_py(i) else ".txt"
                body = [f"# file {i}\n", "import os\n", f"def f{i}(value, step, offset):\n"]
                body += [_FILLER] * 3
                body += [_NEEDLE] * _needles(i)
                body.append("    return value\n")
                spec[f"pkg{a:02d}/mod{b:03d}/file{i:06d}{ext}"] = "".join(body)
                i += 1
    return spec


# -- tree shapes (bench_shapes.py) ----------------------------------------------------------------
#
# The same 100,000 files (60,101 *.py; 44,453 perf_needle lines in 11,112 files) laid out and
# dated three ways, in two file-size mixes:
#   folders  50 x 100 folders of 20 files, written folder by folder: modification times follow the
#            folders (a tree unpacked or generated at once);
#   spread   the same folders, each file dated at random over a year: a workspace edited over
#            months, where any folder holds old and new files;
#   huge     one folder of 50,000 files beside 50 x 50 folders of 20, dated at random;
# and the mixes small (every file a few hundred bytes) and mixed (200 B to 20 KB, log-uniform:
# each file padded with ordinary lines to its size; the matching lines are the same).

SHAPES = ("folders", "spread", "huge")
MIXES = ("small", "mixed")
_YEAR = 365 * 24 * 3600


def _shaped_paths(shape: str) -> list[str]:
    if shape == "huge":
        half = SEARCH_FILES // 2
        rest = [f"pkg{a:02d}/mod{b:03d}/" for a in range(_TOPS) for b in range(_MIDS // 2)]
        return ["huge/" for _ in range(half)] + [d for d in rest for _ in range(_PER_FOLDER)]
    return [f"pkg{a:02d}/mod{b:03d}/" for a in range(_TOPS) for b in range(_MIDS) for _ in range(_PER_FOLDER)]


def build_shaped(top: str, shape: str, mix: str) -> str:
    """Build (once) the tree of ``shape`` and ``mix`` under ``top``; return its path."""
    path = os.path.join(top, f"{shape}-{mix}")
    built_once(os.path.join(top, f".{shape}-{mix}-complete"), lambda: _write_shaped(path, shape, mix))
    return path


def _write_shaped(path: str, shape: str, mix: str) -> None:
    import math
    import random

    rng = random.Random(f"{shape}-{mix}")
    now = time.time()
    made: set[str] = set()
    for i, folder in enumerate(_shaped_paths(shape)):
        ext = ".py" if _is_py(i) else ".txt"
        body = [f"# file {i}\n", "import os\n", f"def f{i}(value, step, offset):\n"]
        body += [_FILLER] * 3
        body += [_NEEDLE] * _needles(i)
        body.append("    return value\n")
        text = "".join(body)
        if mix == "mixed":
            size = int(math.exp(rng.uniform(math.log(200), math.log(20_000))))
            if size > len(text):
                text += _FILLER * ((size - len(text)) // len(_FILLER))
            elif size < len(text) and not _needles(i):
                text = text[:size]
        target = os.path.join(path, folder)
        if target not in made:
            os.makedirs(target, exist_ok=True)
            made.add(target)
        name = os.path.join(target, f"file{i:06d}{ext}")
        with open(name, "w") as f:
            f.write(text)
        if shape != "folders":
            stamp = now - rng.uniform(0, _YEAR)
            os.utime(name, (stamp, stamp))


def build_listing(top: str) -> str:
    path = os.path.join(top, "listing")
    built_once(os.path.join(top, ".listing-complete"), lambda: build_tree(path, folder_of(LISTING_ENTRIES)))
    return path


def build_search(top: str) -> str:
    path = os.path.join(top, "search")
    built_once(os.path.join(top, ".search-complete"), lambda: build_tree(path, _search_spec()))
    return path


def build_big(top: str) -> str:
    path = os.path.join(top, "big.txt")
    built_once(os.path.join(top, ".big-complete"), lambda: numbered_lines(path, BIG_BYTES))
    return path


def build_all(top: str = DEFAULT_DIR) -> dict[str, str]:
    os.makedirs(top, exist_ok=True)
    t0 = time.perf_counter()
    out = {"listing": build_listing(top), "search": build_search(top), "big": build_big(top)}
    out["seconds"] = f"{time.perf_counter() - t0:.1f}"
    return out


if __name__ == "__main__":
    print(build_all(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_DIR))
