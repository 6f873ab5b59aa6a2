"""The trees ``bench_targets.py`` measures on, built once into a folder and reused.

    python benchmarks/targets_trees.py [DIR]     # build (or check) them without timing anything

- ``listing/``: one folder of 101,000 entries (1 in 100 a subfolder, the rest empty files);
- ``search/``: 100,000 files in 5,000 folders (50 top-level folders of 100 each, 20 files per
  folder), 60,101 of them ``*.py``, with 44,453 lines holding ``perf_needle`` in 11,112 files;
- ``big.txt``: a 1 GiB text file of short numbered lines (37 bytes each).

Each part is built only when its marker (beside it, never inside a measured tree) is missing, so a
second run starts timing at once. Nothing here is imported by the package or the tests.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

__all__ = ["DEFAULT_DIR", "build_all", "LISTING_ENTRIES", "SEARCH_FILES", "PY_FILES", "NEEDLE_LINES"]

DEFAULT_DIR = os.path.join(tempfile.gettempdir(), "dsh-bench-targets")
LISTING_ENTRIES = 101_000
SEARCH_FILES = 100_000
PY_FILES = 60_101
NEEDLE_LINES = 44_453
BIG_BYTES = 1 << 30
_TOPS, _MIDS, _PER_FOLDER = 50, 100, 20  # 50 x 100 folders, 20 files each
_FILLER = "    value = compute(value, step) + offset  # an ordinary line of code, about this long\n"
_NEEDLE = ("    perf_needle = configure(perf_needle, retries=3, timeout=30.0, backoff=1.5)"
           "  # a matching line of roughly the length real code has, so the JSON is realistic\n")


def _is_py(i: int) -> bool:
    # 3 in 5 files are Python, plus 101 of the others: 60,000 + 100 + 1.
    return i % 5 < 3 or (i % 5 == 3 and i // 5 % 200 == 0) or i == 4


def _needles(i: int) -> int:
    # 11,112 files hold 4 matching lines each, and file 1 holds 5: 44,453 lines.
    if i == 1:
        return 5
    return 4 if i % 9 == 0 else 0


def _done(marker: str) -> bool:
    return os.path.exists(marker)


def build_listing(top: str) -> str:
    path = os.path.join(top, "listing")
    marker = os.path.join(top, ".listing-complete")
    if not _done(marker):
        os.makedirs(path, exist_ok=True)
        for i in range(LISTING_ENTRIES):
            name = os.path.join(path, f"entry{i:06d}")
            if i % 100 == 0:
                os.makedirs(name, exist_ok=True)
            else:
                open(name, "w").close()
        open(marker, "w").close()
    return path


def build_search(top: str) -> str:
    path = os.path.join(top, "search")
    marker = os.path.join(top, ".search-complete")
    if not _done(marker):
        i = 0
        for a in range(_TOPS):
            for b in range(_MIDS):
                folder = os.path.join(path, f"pkg{a:02d}", f"mod{b:03d}")
                os.makedirs(folder, exist_ok=True)
                for _ in range(_PER_FOLDER):
                    ext = ".py" if _is_py(i) else ".txt"
                    body = [f"# file {i}\n", "import os\n", f"def f{i}(value, step, offset):\n"]
                    body += [_FILLER] * 3
                    body += [_NEEDLE] * _needles(i)
                    body.append("    return value\n")
                    with open(os.path.join(folder, f"file{i:06d}{ext}"), "w") as f:
                        f.write("".join(body))
                    i += 1
        open(marker, "w").close()
    return path


def build_big(top: str) -> str:
    path = os.path.join(top, "big.txt")
    marker = os.path.join(top, ".big-complete")
    if not _done(marker):
        block = 100_000
        with open(path, "w") as f:
            n = 0
            while f.tell() < BIG_BYTES:
                f.write("".join(f"line {k:09d} of the benchmark file\n" for k in range(n, n + block)))
                n += block
        open(marker, "w").close()
    return path


def build_all(top: str = DEFAULT_DIR) -> dict[str, str]:
    os.makedirs(top, exist_ok=True)
    t0 = time.perf_counter()
    out = {"listing": build_listing(top), "search": build_search(top), "big": build_big(top)}
    out["seconds"] = f"{time.perf_counter() - t0:.1f}"
    return out


if __name__ == "__main__":
    print(build_all(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_DIR))
