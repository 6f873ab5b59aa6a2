"""One ``list`` page through the Python API beside its floor, ``os.scandir`` + sort + first 200.

    python benchmarks/bench_list.py [--entries 101000] [--runs 7] [--dir DIR]

Creates (once) a directory of N entries (1% subdirectories, the rest empty files), then prints
the median time of the floor, of ``Workspace.run("list")`` (first page) and of a deep page, and
the ratios. The tool's figure includes argument checks, confinement, the stat of the page's 200
entries for widgets, rendering and the call log.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from bigtrees import build_tree, built_once, folder_of  # benchmarks/bigtrees.py
from timing import median_time  # benchmarks/timing.py

from dsh_jupyter import Workspace


def floor(path: str) -> list[str]:
    with os.scandir(path) as it:
        names = sorted(e.name for e in it)
    return names[:200]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=101_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--dir")
    opts = ap.parse_args()
    path = opts.dir or os.path.join(tempfile.gettempdir(), f"dsh-bench-list-{opts.entries}")
    built_once(path + ".complete", lambda: build_tree(path, folder_of(opts.entries)))
    ws = Workspace(path, state_path=os.path.join(tempfile.mkdtemp(), "s.sqlite"))
    assert not ws.run("list").is_error
    t_floor = median_time(lambda: floor(path), opts.runs)
    t_first = median_time(lambda: ws.run("list"), opts.runs)
    t_deep = median_time(lambda: ws.run("list", offset=opts.entries - 150), opts.runs)
    print(f"{opts.entries} entries in {path}")
    print(f"{'work':<34}{'ms':>8}{'ratio':>8}")
    print(f"{'scandir + sort + first 200':<34}{t_floor * 1000:>8.0f}{1:>8.2f}")
    print(f"{'list, first page':<34}{t_first * 1000:>8.0f}{t_first / t_floor:>8.2f}")
    print(f"{'list, last page':<34}{t_deep * 1000:>8.0f}{t_deep / t_floor:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
