"""A big notebook's outline and one long output read whole, beside the parse they cannot avoid.

    python benchmarks/bench_notebook_read.py [--cells 5000] [--output-lines 100000] [--runs 5]

Writes (with nbformat) a notebook of ``--cells`` cells — a markdown heading every 50 cells, code
cells with a short stream output — and one code cell whose stream output has ``--output-lines``
lines, then times, as medians:
  - ``nbformat.read`` of the file (the floor: every read of a notebook parses and validates it),
  - ``read`` of the first page of cells (the cell view),
  - ``read`` with ``outline=true`` (its first page),
  - ``read`` with ``cell_id`` and ``output`` of 2,000 lines from the middle of the long output,
and prints each beside the floor.
"""

from __future__ import annotations

import argparse
import os
import tempfile

import nbformat
from nbformat import v4
from timing import median_time  # benchmarks/timing.py

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
    ws = Workspace(folder, state_path=os.path.join(tempfile.mkdtemp(), "s.sqlite"))
    middle = opts.output_lines // 2
    page = ws.run("read", file_path="big.ipynb", cell_id="long", output=1, offset=middle)
    assert not page.is_error and page.value["lines"][0]["number"] == middle, page.text[-300:]
    outline = ws.run("read", file_path="big.ipynb", outline=True)
    assert not outline.is_error, outline.text[-300:]

    t_parse = median_time(lambda: nbformat.read(path, as_version=4), opts.runs)
    t_cells = median_time(lambda: ws.run("read", file_path="big.ipynb"), opts.runs)
    t_outline = median_time(lambda: ws.run("read", file_path="big.ipynb", outline=True), opts.runs)
    t_output = median_time(
        lambda: ws.run("read", file_path="big.ipynb", cell_id="long", output=1, offset=middle), opts.runs
    )
    size = os.path.getsize(path)
    print(f"notebook: {len(cells)} cells, {size / (1 << 20):.1f} MiB; long output {opts.output_lines} lines")
    print(f"nbformat.read (floor)        {t_parse * 1000:8.1f} ms")
    for label, t in (
        ("read, first page of cells", t_cells),
        (f"read outline (cells 1-{outline.value['lastCell']})", t_outline),
        ("read output, 2,000 lines", t_output),
    ):
        print(f"{label:<28} {t * 1000:8.1f} ms   {t / t_parse:5.2f}x the floor")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
