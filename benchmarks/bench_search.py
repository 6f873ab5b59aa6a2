"""glob and grep through the Python API, side by side with the same raw rg command.

    python benchmarks/bench_search.py [--files 100000] [--runs 5] [--tree DIR]

Generates (once, reusing DIR if it already holds the tree) a tree of N small files, then times,
in one run, the median of several calls of:
  - glob("*")       vs  raw ``rg --files --null --sort=modified …`` with the tool's exact flags
  - grep("needle")  vs  raw ``rg --json … --regexp=needle`` (about 20 MB of JSON)
and prints both figures and the ratio (tool / raw). The tool's figure includes everything a
caller pays: argument checks, confinement, rg, parsing, sampling, rendering, the spill file and
the call log.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from bigtrees import build_tree, built_once, needle_tree  # benchmarks/bigtrees.py
from timing import median_time  # benchmarks/timing.py

from dsh_jupyter import Workspace
from dsh_jupyter.core.rg.runner import find_rg, scrubbed_env
from dsh_jupyter.core.tools.search.flags import DISCOVERY as _DISCOVERY
from dsh_jupyter.core.tools.search.flags import VCS_EXCLUDES as _VCS_EXCLUDES


def raw(rg: str, args: list[str], cwd: str) -> int:
    out = subprocess.run(
        [rg, *args],
        cwd=cwd,
        env=scrubbed_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return len(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tree")
    opts = ap.parse_args()
    tree = opts.tree or os.path.join(tempfile.gettempdir(), f"dsh-bench-search-{opts.files}")
    os.makedirs(tree, exist_ok=True)
    t0 = time.perf_counter()
    # the marker lies beside the tree, so it is not one of its files
    built_once(tree.rstrip("/") + ".complete", lambda: build_tree(tree, needle_tree(opts.files)))
    print(f"tree: {tree} ({opts.files} files, ready in {time.perf_counter() - t0:.1f} s)")
    rg = find_rg()
    state = tempfile.mkdtemp(prefix="dsh-bench-state-")
    ws = Workspace(tree, state_path=os.path.join(state, "s.sqlite"), raw_output_max_bytes=200_000_000)

    glob_args = ["--files", "--null", "--sort=modified", *_DISCOVERY, "--glob=*", *_VCS_EXCLUDES, "--", "."]
    grep_args = ["--json", *_DISCOVERY, *_VCS_EXCLUDES, "--regexp=needle", "--", "."]
    size_glob = raw(rg, ["--no-config", *glob_args], tree)
    size_grep = raw(rg, ["--no-config", *grep_args], tree)
    check = ws.run("glob", pattern="*")
    hits = ws.run("grep", pattern="needle")
    assert not check.is_error and not hits.is_error, (check.text, hits.text)
    print(
        f"glob: {check.value['totalPaths']} paths ({size_glob / 1e6:.1f} MB raw); "
        f"grep: {hits.value['totalMatches']} matches ({size_grep / 1e6:.1f} MB of JSON)"
    )

    rows = [
        ("glob *", lambda: ws.run("glob", pattern="*"), lambda: raw(rg, ["--no-config", *glob_args], tree)),
        ("grep needle", lambda: ws.run("grep", pattern="needle"), lambda: raw(rg, ["--no-config", *grep_args], tree)),
    ]
    print(f"\n{'work':<14}{'tool (ms)':>12}{'raw rg (ms)':>14}{'ratio':>9}")
    for name, tool, base in rows:
        tool()  # warm caches for both sides alike
        base()
        t_tool = median_time(tool, opts.runs)
        t_raw = median_time(base, opts.runs)
        print(f"{name:<14}{t_tool * 1000:>12.0f}{t_raw * 1000:>14.0f}{t_tool / t_raw:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
