"""What race-free confinement costs: each confinement mode side by side, same run, same tree.

    python benchmarks/bench_confinement.py [--files 20000] [--runs 9]

Times through ``Workspace.run`` (medians):
  - a small glob and a small grep (one folder of 50 files: the start of rg dominates) with
    Landlock on and off: the fence's cost per call;
  - the same over a tree of N files with Landlock on and off (off means every reported path and
    line is checked again beneath the root, see dsh_jupyter/core/rg/recheck.py);
  - a read of a small file and a list page, with openat2 and with the O_NOFOLLOW walk, beside a
    bare ``open``+``read`` and ``os.scandir``: what descriptor resolution costs.
Prints each figure and the difference (ms) or ratio to its baseline.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

from bigtrees import build_tree, confinement_tree  # benchmarks/bigtrees.py
from timing import median_time  # benchmarks/timing.py

from dsh_jupyter import Workspace


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=9)
    opts = ap.parse_args()
    tree = tempfile.mkdtemp(prefix="dsh-bench-confine-")
    build_tree(tree, confinement_tree(opts.files))
    state = tempfile.mkdtemp(prefix="dsh-bench-state-")

    def ws(**kw) -> Workspace:
        return Workspace(tree, state_path=os.path.join(state, "s.sqlite"), raw_output_max_bytes=500_000_000, **kw)

    fenced, unfenced = ws(landlock=True), ws(landlock=False)
    beneath, walked = ws(openat2=True), ws(openat2=False)
    print(f"tree: {tree}; Landlock here: {fenced.status()['detail']}; resolver: {beneath.status()['resolver']}")
    if fenced.status()["confinement"] != "landlock":
        print("(no Landlock on this kernel: the two search columns measure the same mode)")

    def run(w, tool, **args):
        return lambda: w.run(tool, **args)

    rows = [
        (
            "glob small/",
            run(fenced, "glob", pattern="*", path="small"),
            run(unfenced, "glob", pattern="*", path="small"),
        ),
        (
            "grep small/",
            run(fenced, "grep", pattern="needle", path="small"),
            run(unfenced, "grep", pattern="needle", path="small"),
        ),
        (
            f"glob big/ ({opts.files})",
            run(fenced, "glob", pattern="*", path="big"),
            run(unfenced, "glob", pattern="*", path="big"),
        ),
        (
            f"grep big/ ({opts.files // 3} hits)",
            run(fenced, "grep", pattern="needle", path="big"),
            run(unfenced, "grep", pattern="needle", path="big"),
        ),
    ]
    print(f"\n{'search':<26}{'landlock (ms)':>15}{'descriptors (ms)':>18}{'landlock - off':>16}")
    for name, a, b in rows:
        a(), b()
        ta, tb = median_time(a, opts.runs), median_time(b, opts.runs)
        print(f"{name:<26}{ta * 1000:>15.2f}{tb * 1000:>18.2f}{(ta - tb) * 1000:>+15.2f}")

    deep = os.path.join(tree, "a", "b", "c", "d", "deep.txt")

    def bare_read():
        with open(deep, "rb") as f:
            f.read()

    def bare_list():
        sorted(e.name for e in os.scandir(os.path.join(tree, "small")))

    rows = [
        (
            "read a/b/c/d/deep.txt",
            run(beneath, "read", file_path="a/b/c/d/deep.txt"),
            run(walked, "read", file_path="a/b/c/d/deep.txt"),
            bare_read,
        ),
        ("list small/", run(beneath, "list", path="small"), run(walked, "list", path="small"), bare_list),
    ]
    print(f"\n{'tool':<24}{'openat2 (ms)':>14}{'walk (ms)':>12}{'bare (ms)':>12}")
    for name, a, b, c in rows:
        a(), b(), c()
        ta, tb, tc = (median_time(f, opts.runs * 5) for f in (a, b, c))
        print(f"{name:<24}{ta * 1000:>14.3f}{tb * 1000:>12.3f}{tc * 1000:>12.3f}")
    t0 = time.perf_counter()
    for _ in range(200):
        beneath.resolver.resolve(beneath.root, "a/b/c/d/deep.txt", verb="read").close()
    t1 = time.perf_counter()
    for _ in range(200):
        walked.resolver.resolve(walked.root, "a/b/c/d/deep.txt", verb="read").close()
    t2 = time.perf_counter()
    print(
        f"\nresolution alone, 5 levels deep: openat2 {(t1 - t0) / 200 * 1e6:.1f} µs, "
        f"walk {(t2 - t1) / 200 * 1e6:.1f} µs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
