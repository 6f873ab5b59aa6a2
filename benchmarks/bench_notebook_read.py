"""A big notebook read by cells: the first read (parsed) and the reads after it (the kept parse).

    python benchmarks/bench_notebook_read.py [--cells 5000] [--output-lines 100000] [--runs 5]

Writes (with nbformat) a notebook of ``--cells`` cells — a markdown heading every 50 cells, code
cells with a short stream output — and one code cell whose stream output has ``--output-lines``
lines, then times, as medians:
  - ``json.load`` of the file (the floor: any read of it must parse its JSON once) and
    ``nbformat.read`` (parse and validate, as nbformat does it),
  - the first ``read`` of a page of cells, with no parse kept (``Workspace.parsed`` cleared),
  - the reads after it, answered from the kept parse (``caches.parsed``): the first page of cells,
    a page from the middle, ``outline=true`` (its first page), and ``cell_id`` with ``output`` of
    2,000 lines from the middle of the long output,
and prints each beside ``json.load``. All are timed in turns (one of each per round), so that
a change in the machine's load reaches them alike; once as wall time, and once more as the CPU
time of the calling thread, which a busy machine's waits for a core do not lengthen. The kept
reads need the file's stamp to have settled (its ctime older than ``stamps.MARGIN_NS``), so the
script waits that long after writing.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import nbformat
from nbformat import v4
from timing import medians_in_turns  # benchmarks/timing.py

from dsh_jupyter import Workspace


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", type=int, default=5000)
    ap.add_argument("--output-lines", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    opts = ap.parse_args()
    folder = tempfile.mkdtemp()
    cells = []
    for i in range(1, opts.cells + 1):
        if i % 50 == 1:
            cells.append(v4.new_markdown_cell(f"# Part {i // 50 + 1}\n\nWhat this part does.", id=f"h{i}"))
        else:
            out = v4.new_output("stream", name="stdout", text=f"value {i}\n")
            cells.append(v4.new_code_cell(f"x_{i} = f({i})\nprint(x_{i})", id=f"c{i}", outputs=[out]))
    long = "".join(f"step {k} of {opts.output_lines}\n" for k in range(1, opts.output_lines + 1))
    cells.append(v4.new_code_cell("run()", id="long", outputs=[v4.new_output("stream", name="stdout", text=long)]))
    path = os.path.join(folder, "big.ipynb")
    nbformat.write(v4.new_notebook(cells=cells), path)
    time.sleep(3.1)  # the stamp settles: the kept parse may be used (stamps.COARSE_MARGIN_NS at most)
    ws = Workspace(folder, state_path=os.path.join(tempfile.mkdtemp(), "s.sqlite"))
    middle = opts.output_lines // 2
    page = ws.run("read", file_path="big.ipynb", cell_id="long", output=1, offset=middle)
    assert not page.is_error and page.value["lines"][0]["number"] == middle, page.text[-300:]
    outline = ws.run("read", file_path="big.ipynb", outline=True)
    assert not outline.is_error, outline.text[-300:]

    def load():
        with open(path, "rb") as f:
            return json.load(f)

    def first():
        ws.parsed.clear()
        return ws.run("read", file_path="big.ipynb")

    ws.run("read", file_path="big.ipynb")
    hits = ws.parsed.hits
    work = {
        "json": load,
        "nbformat": lambda: nbformat.read(path, as_version=4),
        "first": first,
        "cells": lambda: ws.run("read", file_path="big.ipynb"),
        "middle": lambda: ws.run("read", file_path="big.ipynb", offset=opts.cells // 2),
        "outline": lambda: ws.run("read", file_path="big.ipynb", outline=True),
        "output": lambda: ws.run("read", file_path="big.ipynb", cell_id="long", output=1, offset=middle),
    }
    wall = medians_in_turns(work, opts.runs)
    cpu = medians_in_turns(work, opts.runs, time.thread_time)  # what the busy machine's waits leave out
    # every "first" clears the kept parse, so each kept read follows a fresh parse: 4 hits a round
    assert ws.parsed.hits == hits + 8 * opts.runs, "the kept reads did not use the kept parse"
    size = os.path.getsize(path)
    print(f"notebook: {len(cells)} cells, {size / (1 << 20):.1f} MiB; long output {opts.output_lines} lines")
    print(f"{'':34} {'wall':>8}    {'ratio':>6}   {'CPU':>8}    {'ratio':>6}")
    for label, name in (
        ("json.load (floor)", "json"),
        ("nbformat.read", "nbformat"),
        ("first read, page of cells", "first"),
        ("kept: first page of cells", "cells"),
        (f"kept: page at cell {opts.cells // 2}", "middle"),
        (f"kept: outline (cells 1-{outline.value['lastCell']})", "outline"),
        ("kept: output, 2,000 lines", "output"),
    ):
        print(
            f"{label:<34} {wall[name] * 1000:8.1f} ms {wall[name] / wall['json']:5.2f}x"
            f"   {cpu[name] * 1000:8.1f} ms {cpu[name] / cpu['json']:5.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
