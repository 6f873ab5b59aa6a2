"""``find`` beside ``rg --files`` read through a pipe, on the 100,000-file trees (and a million files).

    python benchmarks/bench_find.py [--runs 5] [--only folders-small] [--million] [--index]

For each tree (bench_shapes.py's shapes, built once under ``--dir``; ``--million`` adds a tree of
1,000,000 empty files in 1,000 folders), times in turns, as medians, the floor — rg listing the
same files with the same flags, its output read whole through a pipe, as any file finder must
first have it — and ``find`` for queries from selective to broad:

- ``f42py``: scattered letters, a few thousand paths;
- ``mod017 file01``: two words, a few hundred paths;
- ``file``: in every path (the ranking's worst case: every path is ranked);

and prints each beside the floor with the ratio (target ≤ 1.2×); then the same in CPU time (this
process and the rg processes it started: what a loaded machine's waits for a core leave out).
With ``--index``, ``find`` answers from the workspace index, built before the timing; without it
the index is off, so no build runs beside the walk.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time

from bigtrees import MIXES, SHAPES, build_shaped, built_once  # benchmarks/bigtrees.py
from timing import wall_and_cpu_in_turns  # benchmarks/timing.py

from dsh_jupyter import Workspace
from dsh_jupyter.core.rg.runner import find_rg, scrubbed_env
from dsh_jupyter.core.tools.search.flags import DISCOVERY, VCS_EXCLUDES

QUERIES = ("f42py", "mod017 file01", "file")


def files_floor(rg: str, cwd: str):
    argv = [rg, "--no-config", "--files", "--null", *DISCOVERY, *VCS_EXCLUDES, "--", "."]

    def run() -> int:
        out = subprocess.run(argv, cwd=cwd, env=scrubbed_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return len(out.stdout)

    return run


def million(top: str) -> str:
    path = os.path.join(top, "million")

    def build() -> None:
        for d in range(1000):
            folder = os.path.join(path, f"pkg{d // 100:02d}", f"mod{d % 100:03d}")
            os.makedirs(folder, exist_ok=True)
            for i in range(1000):
                open(os.path.join(folder, f"file{d * 1000 + i:07d}.{'py' if i % 5 else 'txt'}"), "w").close()

    built_once(os.path.join(top, ".million-complete"), build)
    return path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "dsh-bench-shapes"))
    ap.add_argument("--only", help="comma-separated trees such as spread-small (default: all six)")
    ap.add_argument("--million", action="store_true", help="also a tree of 1,000,000 files")
    ap.add_argument(
        "--index",
        action="store_true",
        help="find from the workspace index (built before the timing), not from rg's walk",
    )
    opts = ap.parse_args()
    rg = find_rg()
    assert rg, "no rg"
    names = [f"{s}-{m}" for s in SHAPES for m in MIXES]
    if opts.only:
        names = [n for n in names if n in opts.only.split(",")]
    trees = [(n, build_shaped(opts.dir, *n.split("-"))) for n in names]
    if opts.million:
        trees.append(("million", million(opts.dir)))
    print(
        f"{'tree':<16} {'query':<15} {'matches':>9} {'find':>9} {'rg --files':>11} {'ratio':>6}"
        f"   {'CPU: find':>10} {'rg --files':>11} {'ratio':>6}"
    )
    for name, tree in trees:
        ws = Workspace(
            tree,
            state_path=os.path.join(tempfile.mkdtemp(prefix="dsh-bench-"), "s.sqlite"),
            raw_output_max_bytes=500_000_000,
            index_min_files=1 if opts.index else 0,  # no build running beside the walk's timing
        )
        if opts.index:
            ws.run("find", query="start")
            while ws.index.status()["state"] != "ready":
                assert ws.index.status()["state"] in ("counting", "building"), ws.index.status()
                time.sleep(0.2)
        floor = files_floor(rg, tree)
        for query in QUERIES:
            r = ws.run("find", query=query)
            assert not r.is_error, r.text
            assert r.value.get("source") == ("index" if opts.index else None), r.value.get("index_note")
            t, c = wall_and_cpu_in_turns(
                {"floor": floor, "find": lambda q=query, w=ws: w.run("find", query=q)}, opts.runs
            )
            print(
                f"{name:<16} {query:<15} {r.value['totalPaths']:>9,} {t['find'] * 1000:>7.0f} ms"
                f" {t['floor'] * 1000:>8.0f} ms {t['find'] / t['floor']:>5.2f}x"
                f"   {c['find'] * 1000:>7.0f} ms {c['floor'] * 1000:>8.0f} ms {c['find'] / c['floor']:>5.2f}x"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
