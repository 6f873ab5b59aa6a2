"""``edit_cells`` on a big notebook beside ``edit`` of one cell's source in the same notebook.

    python benchmarks/bench_edit_cells.py [--cells 2000] [--runs 5]

Writes a notebook of ``--cells`` code cells (each two source lines and one stream output, as
nbformat writes it) in a temporary folder and prints, as medians of ``--runs``:
  - the baseline: ``edit`` of one cell's source (parse, validate, write in the file's layout),
  - ``edit_cells`` of one operation (a cell moved to the end and back, in turns),
  - ``edit_cells`` of a batch of 10 operations (inserts, a move, a type change, outputs cleared,
    and the inserted cells deleted again, so every run starts from the same notebook),
  - each one's ``dry_run``.
Both tools parse and validate the whole notebook with nbformat and write it whole, so the figure
to watch is the difference: what the operations themselves cost.
"""

from __future__ import annotations

import argparse
import tempfile

import nbformat
from nbformat import v4
from timing import median_time  # benchmarks/timing.py

from dsh_jupyter import Workspace


def notebook(cells: int) -> str:
    nb = v4.new_notebook()
    for i in range(cells):
        cell = v4.new_code_cell(f"x{i} = {i}\nprint(x{i})", id=f"c{i}", execution_count=i + 1)
        cell.outputs = [v4.new_output("stream", name="stdout", text=f"{i}\n")]
        nb.cells.append(cell)
    return nbformat.writes(nb)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cells", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    a = parser.parse_args()
    root = tempfile.mkdtemp()
    with open(f"{root}/nb.ipynb", "w") as out:
        out.write(notebook(a.cells))
    ws = Workspace(root, session="bench", state_path=f"{root}/.state.sqlite")
    assert not ws.run("read", file_path="nb.ipynb", limit=1).is_error
    turn = {"edit": 0, "move": 0}

    def edit(dry: bool = False) -> None:
        old, new = ("x1 = 1", "x1 = 11") if turn["edit"] % 2 == 0 else ("x1 = 11", "x1 = 1")
        turn["edit"] += 0 if dry else 1
        r = ws.run("edit", file_path="nb.ipynb", old_string=old, new_string=new, cell_id="c1", dry_run=dry)
        assert not r.is_error, r.text

    def move(dry: bool = False) -> None:
        place = {"at": "end"} if turn["move"] % 2 == 0 else {"after": "c0"}
        turn["move"] += 0 if dry else 1
        r = ws.run(
            "edit_cells", file_path="nb.ipynb", operations=[{"op": "move", "cell_id": "c1", **place}], dry_run=dry
        )
        assert not r.is_error, r.text

    def batch(dry: bool = False) -> None:
        ops = [{"op": "insert", "cell_type": "markdown", "source": f"# {k}", "at": "end"} for k in range(5)]
        ops += [
            {"op": "move", "cell_id": "c2", "after": "c3"},
            {"op": "move", "cell_id": "c3", "after": "c1"},
            {"op": "set_type", "cell_id": "c4", "cell_type": "raw"},
            {"op": "set_type", "cell_id": "c4", "cell_type": "code"},
            {"op": "clear_outputs", "cell_id": "c5"},
        ]
        r = ws.run("edit_cells", file_path="nb.ipynb", operations=ops, dry_run=dry)
        assert not r.is_error, r.text
        if not dry:  # the inserted cells out again: every run starts from the same cells
            new = [op["cell"] for op in r.value["operations"][:5]]
            r = ws.run("edit_cells", file_path="nb.ipynb", operations=[{"op": "delete", "cell_id": c} for c in new])
            assert not r.is_error, r.text

    print(f"notebook of {a.cells} cells, medians of {a.runs} runs")
    rows = [
        ("edit of one cell source (baseline)", edit),
        ("edit_cells, 1 move", move),
        ("edit_cells, 10 operations (+ a delete call)", batch),
    ]
    for label, fn in rows:
        print(f"  {label:<56} {median_time(fn, a.runs) * 1000:8.1f} ms")
        print(f"  {label + ', dry run':<56} {median_time(lambda fn=fn: fn(True), a.runs) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
