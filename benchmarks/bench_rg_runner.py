"""How much does ``run_rg`` cost over running rg bare?

Usage: python benchmarks/bench_rg_runner.py [TREE_DIR]

Builds (once; reused when TREE_DIR already holds it) a tree of 100,000 small files in nested
directories, then times, as the median of 5 runs each:

* ``rg --no-config --files --sort=modified --no-ignore --hidden`` (about 100,000 paths), and
* ``rg --no-config --json <pattern>`` whose output is about 20 MB,

round-robin through ``subprocess.run(..., stdout=PIPE)`` and ``run_rg`` with the same
arguments, and prints the figures and their ratios to the raw run (the project's
target is <= 1.3x).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bigtrees import build_tree, built_once, rg_tree  # benchmarks/bigtrees.py

from dsh_jupyter.core.rg.runner import find_rg, run_rg

N_FILES = 100_000
FANOUT = (50, 20, 100)  # top dirs x sub dirs x files = 100,000
RUNS = 5
DONE = ".bench-tree-complete-v2"
# Every file has one "beta <i % 8>" line; "beta [0-2]" matches 3/8 of the files, which with
# rg's begin/match/end JSON messages comes to roughly 20 MB.
JSON_PATTERN = "beta [0-2]"


def build(root: Path) -> None:
    def write() -> None:
        print(f"building {N_FILES:,} files under {root} ...", flush=True)
        build_tree(root, rg_tree(FANOUT))

    built_once(root / DONE, write)


def medians(*fns) -> list[tuple[float, int]]:
    """(median wall time, output size) of each function, run round-robin so drift hits all."""
    times: list[list[float]] = [[] for _ in fns]
    sizes = [0] * len(fns)
    for _ in range(RUNS):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            sizes[i] = fn()
            times[i].append(time.perf_counter() - t0)
    return [(statistics.median(t), n) for t, n in zip(times, sizes)]


def compare(label: str, rg: str, args: list[str], cwd: str) -> None:
    def raw() -> int:
        return len(subprocess.run([rg, *args], cwd=cwd, stdout=subprocess.PIPE, check=False).stdout)

    def check(out) -> int:
        assert not out.overflow and out.returncode == 0, out
        return len(out.stdout)

    def runner() -> int:
        return check(run_rg(rg, args, cwd=cwd, timeout_s=120, max_stdout_bytes=1 << 30))

    raw()  # warm the page cache
    (t_raw, n_raw), (t_run, n_run) = medians(raw, runner)
    print(f"{label}: {n_raw / 1e6:.1f} MB (runner {n_run / 1e6:.1f} MB)")
    print(f"  raw subprocess.run: {t_raw * 1000:8.1f} ms")
    print(f"  run_rg:             {t_run * 1000:8.1f} ms   ratio {t_run / t_raw:.3f}x")


def main() -> None:
    rg = find_rg()
    if rg is None:
        sys.exit("no rg found")
    if len(sys.argv) > 1:
        root = Path(sys.argv[1])
        root.mkdir(parents=True, exist_ok=True)
        tmp = None
    else:
        tmp = tempfile.TemporaryDirectory(prefix="bench-rg-")
        root = Path(tmp.name)
    try:
        build(root)
        print(f"rg: {rg}; median of {RUNS} runs")
        compare("--files", rg, ["--no-config", "--files", "--sort=modified", "--no-ignore", "--hidden"], str(root))
        compare("--json", rg, ["--no-config", "--json", JSON_PATTERN], str(root))
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()
