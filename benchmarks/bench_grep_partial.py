"""grep stopped at the raw-output guard, beside the same grep let finish, in one run.

    python benchmarks/bench_grep_partial.py [--runs 5] [--files 20000] [--dir DIR]

The tree (built once into DIR, default ``$TMPDIR/dsh-bench-partial``): ``--files`` files in
``gen/``, each holding 10 matching lines of about 60 bytes (200,000 lines, about 12 MB of rg's
heading form for 20,000 files). Medians of ``--runs``, in turns:

- ``grep("hit", offset=1)`` with ``raw_output_max_bytes`` 3,000,000: rg is stopped, then asked
  again walking in path order (one thread), so the page is the path order's first files, the
  same on every page;
- the same grep with the guard out of reach (200,000,000): rg runs whole on its threads;
- for the record, bare ``rg`` in the heading form with ``--sort=path`` read to its end.

The partial search costs its two rg runs, each stopped after 3 MB; the figure to watch is that it
stays below the complete search it stands for.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))

from timing import median_time

from dsh_jupyter import Workspace
from dsh_jupyter.core.rg.runner import find_rg


def build(top: str, files: int) -> str:
    root = os.path.join(top, f"tree-{files}")
    marker = os.path.join(root, ".built")
    if os.path.exists(marker):
        return root
    gen = os.path.join(root, "gen")
    os.makedirs(gen, exist_ok=True)
    for i in range(files):
        with open(os.path.join(gen, f"file-{i:05d}.txt"), "w") as f:
            f.write("".join(f"hit {k} in generated file number {i} of the tree\n" for k in range(10)))
    open(marker, "w").close()
    return root


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "dsh-bench-partial"))
    args = parser.parse_args()
    root = build(args.dir, args.files)
    state = tempfile.mkdtemp()
    cut = Workspace(root, state_path=os.path.join(state, "a.sqlite"), raw_output_max_bytes=3_000_000)
    whole = Workspace(root, state_path=os.path.join(state, "b.sqlite"), raw_output_max_bytes=200_000_000)
    first = cut.run("grep", pattern="hit", offset=1).value
    assert "partialAfterBytes" in first, "the guard was not reached: more --files"
    rg = find_rg()
    bare = [rg, "--heading", "--line-number", "--null", "--sort=path", "--regexp=hit", "."]

    def partial() -> None:
        cut.run("grep", pattern="hit", offset=1)

    def complete() -> None:
        whole.run("grep", pattern="hit", offset=1)

    def floor() -> None:
        subprocess.run(bare, cwd=root, stdout=subprocess.PIPE, check=True)

    times = {"partial": [], "complete": [], "rg": []}
    for _ in range(args.runs):
        times["partial"].append(median_time(partial, 1))
        times["complete"].append(median_time(complete, 1))
        times["rg"].append(median_time(floor, 1))
    med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    print(f"{args.files:,} files, {first['totalMatches']:,} matches in the partial page's totals")
    print(f"grep stopped at 3 MB, asked again in path order  {med['partial'] * 1000:8.0f} ms")
    print(f"grep let finish (the complete result)            {med['complete'] * 1000:8.0f} ms")
    print(f"rg --sort=path read to its end (for the record)  {med['rg'] * 1000:8.0f} ms")
    print(f"ratio partial / complete: {med['partial'] / med['complete']:.2f} (target < 1.0)")


if __name__ == "__main__":
    main()
