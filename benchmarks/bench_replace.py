"""``replace`` over 1,000 files and 50 notebooks in one call: the preview, and the apply (target 2 s).

    python benchmarks/bench_replace.py [--files 1000] [--notebooks 50] [--runs 3]

Makes a temporary workspace of ``--files`` Python files (40 lines, 3 occurrences each, in 20
folders) and ``--notebooks`` notebooks (10 code cells, an output each, 2 occurrences a cell),
then prints, as medians of ``--runs`` (each on a fresh copy of the tree):
  - the floor: ``rg --json --replace`` over the tree (one process, no notebooks' cells),
  - the preview: ``Workspace.run("replace", ...)`` without occurrences,
  - the apply: the same call with ``occurrences="all"`` and ``expected_count`` (search again,
    check, write every new version, journal, rename), against the 2 s target.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

from dsh_jupyter import Workspace
from dsh_jupyter.core.rg.runner import find_rg

TARGET_S = 2.0
LINE = "result = old_name(x) + old_name(y)  # old_name\n"


def _notebook() -> str:
    cells = [
        {
            "cell_type": "code",
            "execution_count": 1,
            "id": f"c{i}",
            "metadata": {},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": ["old_name in an output\n"]}],
            "source": ["x = old_name(1)\n", "y = old_name(2)\n"],
        }
        for i in range(10)
    ]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def make_tree(base: str, files: int, notebooks: int) -> str:
    root = os.path.join(base, "root")
    for i in range(files):
        folder = os.path.join(root, f"pkg{i % 20:02d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"m{i:04d}.py"), "w") as f:
            f.write("import os\n" * 39 + LINE)
    os.makedirs(os.path.join(root, "notebooks"), exist_ok=True)
    nb = _notebook()
    for i in range(notebooks):
        with open(os.path.join(root, "notebooks", f"n{i:02d}.ipynb"), "w") as f:
            f.write(nb)
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--notebooks", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rg = find_rg(None)
    floor, preview, apply = [], [], []
    expected = args.files * 3 + args.notebooks * 20
    for run in range(args.runs):
        base = tempfile.mkdtemp(prefix="bench-replace-")
        try:
            root = make_tree(base, args.files, args.notebooks)
            t0 = time.perf_counter()
            subprocess.run([rg, "--json", "--replace=new_name", "old_name", "."], cwd=root, capture_output=True)
            floor.append(time.perf_counter() - t0)
            ws = Workspace(root, session=f"bench{run}", state_path=os.path.join(base, "state.sqlite"))
            t0 = time.perf_counter()
            r = ws.run("replace", pattern="old_name", replacement="new_name")
            preview.append(time.perf_counter() - t0)
            assert r.value["totalOccurrences"] == expected, r.text[:500]
            t0 = time.perf_counter()
            done = ws.run(
                "replace", pattern="old_name", replacement="new_name", occurrences="all", expected_count=expected
            )
            apply.append(time.perf_counter() - t0)
            assert not done.is_error, done.text
            assert done.value["replacements"] == expected
            ws.close()
        finally:
            shutil.rmtree(base)
    print(f"{args.files:,} files and {args.notebooks} notebooks, {expected:,} occurrences; medians of {args.runs} runs")
    print(f"  rg --json --replace (floor, files only)  {statistics.median(floor):7.3f} s")
    print(f"  replace preview                          {statistics.median(preview):7.3f} s")
    apply_s = statistics.median(apply)
    verdict = "met" if apply_s <= TARGET_S else "NOT met"
    print(f"  replace apply (occurrences=all)          {apply_s:7.3f} s   target <= {TARGET_S:.1f} s: {verdict}")


if __name__ == "__main__":
    main()
