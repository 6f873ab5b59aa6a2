"""glob and grep on a real checkout, each beside bare rg in one run: what a user's repository costs.

The generated trees of ``bench_shapes.py`` have one kind of name, no protected folders and no
ties in time. A real checkout has them all: this repository after ``./dev test`` holds a
virtual environment (with Jupyter's own folders in it, which the tools never show), the
labextension's ``node_modules`` with minified bundles, files unpacked in the same tick by the
thousand, and a few names with spaces. Run it on this repository (the default) or any folder::

    .venv/bin/python benchmarks/bench_checkout.py [--root PATH] [--runs 7]

Each row: the tool's call through ``Workspace.run`` (everything a caller pays: confinement,
rg under Landlock, parsing, sampling, rendering, the spill, the call log) and the same search
run as bare rg with its output read through a pipe, medians taken in turns
(``bench_shapes.paired``). Figures of one run are in docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from bench_shapes import paired, rg_floor  # benchmarks/bench_shapes.py

from dsh_jupyter import Workspace
from dsh_jupyter.core.rg.runner import find_rg

WORK = [
    # (label, tool call, floor flags)
    ("glob *", ("glob", {"pattern": "*"}), ["--files", "--null", "--sort=modified", "--glob=*"]),
    ("glob *.py", ("glob", {"pattern": "*.py"}), ["--files", "--null", "--sort=modified", "--glob=*.py"]),
    ("grep import", ("grep", {"pattern": "import"}), ["--json", "--max-columns=2000", "--regexp=import"]),
    (
        "grep import files_with_matches",
        ("grep", {"pattern": "import", "output_mode": "files_with_matches"}),
        ["--files-with-matches", "--regexp=import"],
    ),
]


def main() -> int:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=here)
    ap.add_argument("--runs", type=int, default=7)
    opts = ap.parse_args()
    rg = find_rg()
    ws = Workspace(
        opts.root,
        state_path=os.path.join(tempfile.mkdtemp(prefix="dsh-bench-"), "s.sqlite"),
        raw_output_max_bytes=200_000_000,
    )
    print(f"{'work':<34}{'found':>16}{'tool ms':>9}{'floor ms':>10}{'ratio':>8}")
    for label, (tool, args), flags in WORK:
        result = ws.run(tool, **args)
        assert not result.is_error, result.text
        v = result.value
        found = v["totalPaths"] if tool == "glob" else v["filesTotal"] if "output_mode" in args else v["totalMatches"]
        t, f = paired(lambda: ws.run(tool, **args), rg_floor(rg, flags, opts.root), opts.runs)  # noqa: B023
        print(f"{label:<34}{found:>16,}{t * 1000:>9.0f}{f * 1000:>10.0f}{t / f:>8.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
