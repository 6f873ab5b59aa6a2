"""grep over notebooks by scope (sources, outputs, all) beside raw rg over the same files' JSON.

    python benchmarks/bench_grep_notebooks.py [--notebooks 300] [--cells 20] [--runs 7] [--tree DIR]

Generates (once, reusing DIR if it already holds them) N notebooks of C code cells each; every
cell has a few source lines, a stream output of 20 lines, an ``execute_result`` with
``text/plain`` and ``text/html``, and every fifth cell an image of 30 KB (base64) and an error
with an ANSI traceback. "needle" occurs in sources and in outputs' text alike. Then times the
median of several calls, in turns, of ``grep("needle", notebook_scope=...)`` for each scope, and
of a pattern that matches nothing (what a scope costs before any match), beside the baseline
``rg --json --regexp=needle`` over the notebooks as files (which searches their JSON, base64
included: the floor of reading them at all), and beside the default scope, ``sources``. Each figure includes
everything a caller pays: the listing, parsing and validating every notebook, rg over the cells'
text, the page and the spill.
"""

from __future__ import annotations

import argparse
import base64
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import nbformat
from nbformat import v4

from dsh_jupyter import Workspace
from dsh_jupyter.core.rg.runner import find_rg, scrubbed_env
from dsh_jupyter.core.tools.grep.notebooks import SCOPES

TRACEBACK = [
    "\x1b[0;31m" + "-" * 75 + "\x1b[0m",
    "\x1b[0;31mValueError\x1b[0m                                Traceback (most recent call last)",
    "Cell \x1b[0;32mIn[3], line 2\x1b[0m\n\x1b[0;32m----> 2\x1b[0m needle(x)",
    "\x1b[0;31mValueError\x1b[0m: no needle here",
]


def notebook(cells: int, seed: int) -> nbformat.NotebookNode:
    image = base64.b64encode(os.urandom(30_000)).decode()
    out = []
    for c in range(cells):
        outputs = [
            v4.new_output(
                "stream", name="stdout", text="".join(f"step {i} of cell {c}\n" for i in range(19)) + "needle found\n"
            ),
            v4.new_output(
                "execute_result",
                execution_count=c + 1,
                data={"text/plain": f"   a  b\n0  {seed}  needle\n1  {c}  hay", "text/html": "<table>needle</table>"},
            ),
        ]
        if c % 5 == 0:
            outputs.append(v4.new_output("display_data", data={"image/png": image, "text/plain": "<Figure>"}))
            outputs.append(v4.new_output("error", ename="ValueError", evalue="no needle here", traceback=TRACEBACK))
        source = f"x = load({seed}, {c})\ny = needle(x)\nprint(y)\n# cell {c}"
        out.append(v4.new_code_cell(source, execution_count=c + 1, outputs=outputs))
    return v4.new_notebook(cells=out)


def build(tree: str, notebooks: int, cells: int) -> None:
    for n in range(notebooks):
        folder = os.path.join(tree, f"part{n % 10}")
        os.makedirs(folder, exist_ok=True)
        nbformat.write(notebook(cells, n), os.path.join(folder, f"nb{n:04}.ipynb"))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notebooks", type=int, default=300)
    ap.add_argument("--cells", type=int, default=20)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--tree")
    opts = ap.parse_args()
    tree = opts.tree or os.path.join(tempfile.gettempdir(), f"dsh-bench-nbgrep-{opts.notebooks}x{opts.cells}")
    marker = tree.rstrip("/") + ".complete"  # beside the tree, so it is not one of its files
    t0 = time.perf_counter()
    if not os.path.exists(marker):
        build(tree, opts.notebooks, opts.cells)
        open(marker, "w").close()
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(tree) for f in fs)
    print(
        f"tree: {tree} ({opts.notebooks} notebooks of {opts.cells} cells, {size / 2**20:.1f} MiB, "
        f"ready in {time.perf_counter() - t0:.1f} s)"
    )
    rg = find_rg()
    state = tempfile.mkdtemp(prefix="dsh-bench-state-")
    ws = Workspace(tree, state_path=os.path.join(state, "s.sqlite"))

    def baseline() -> None:
        subprocess.run(
            [rg, "--json", "--no-config", "--glob=*.ipynb", "--regexp=needle", "--", "."],
            cwd=tree,
            env=scrubbed_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    # Timed in turns (the baseline, then each scope, then again), so that a busy moment of the
    # shared machine falls on every figure alike. "needle" matches everywhere (the page, the spill
    # and their rows grow with the scope); a pattern that matches nothing times what a scope costs
    # before any match: parsing, extracting the text, rg.
    calls: dict[str, Callable[[], object]] = {"baseline": baseline}
    for pattern in ("needle", "absent_word"):
        for scope in SCOPES:
            r = ws.run("grep", pattern=pattern, notebook_scope=scope)
            if r.is_error:
                print(r.text, file=sys.stderr)
                return 1
            calls[f"{pattern} {scope} {r.value['totalMatches']}"] = lambda p=pattern, s=scope: ws.run(
                "grep", pattern=p, notebook_scope=s
            )
    times: dict[str, list[float]] = {key: [] for key in calls}
    for _ in range(opts.runs):
        for key, call in calls.items():
            t0 = time.perf_counter()
            call()
            times[key].append(time.perf_counter() - t0)
    took = {key: statistics.median(ts) for key, ts in times.items()}
    floor = took.pop("baseline")
    print(f"baseline rg --json over the notebooks' JSON: {floor * 1000:,.0f} ms")
    for key, seconds in took.items():
        pattern, scope, total = key.split()
        base = took[next(k for k in took if k.startswith(f"{pattern} sources "))]
        print(
            f"grep({pattern!r}, notebook_scope={scope}): {seconds * 1000:,.0f} ms, {int(total):,} matches "
            f"({seconds / floor:.1f}x the baseline, {seconds / base:.2f}x sources)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
