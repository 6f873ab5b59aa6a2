"""``edit_cells`` model text from values, on exact strings: each operation's line, the cell order
around the changes (gaps counted, rows capped), notebooks without ids, dry runs."""

from __future__ import annotations

from dsh_jupyter.core.render.cells import operation_line, render_edit_cells


def row(index: int, cid: str | None, kind: str = "code", changed: bool = False, was: int | None = None) -> dict:
    return {"index": index, "id": cid, "type": kind, "changed": changed, "was": index if was is None else was}


def test_each_operation_line():
    lines = [
        (
            {"op": "insert", "cell": "a1", "cellType": "code", "place": "start", "anchor": None},
            'inserted cell "a1" (code) at the start',
        ),
        (
            {"op": "insert", "cell": None, "cellType": "raw", "place": "before", "anchor": 3},
            "inserted a new cell (raw) before cell 3",
        ),
        (
            {"op": "move", "cell": "p", "cellType": "code", "place": "end", "anchor": None},
            'moved cell "p" (code) to the end',
        ),
        (
            {"op": "move", "cell": 2, "cellType": "code", "place": "after", "anchor": 1, "stayed": True},
            "moved cell 2 (code) after cell 1 (it was there already)",
        ),
        ({"op": "delete", "cell": 'say "hi"', "cellType": "markdown"}, 'deleted cell "say \\"hi\\"" (markdown)'),
        (
            {"op": "set_type", "cell": "c", "cellType": "markdown", "from": "code", "outputsDropped": 2},
            'changed cell "c" from code to markdown, dropping its 2 outputs',
        ),
        (
            {"op": "set_type", "cell": "c", "cellType": "code", "from": "raw", "outputsDropped": 0},
            'changed cell "c" from raw to code',
        ),
        (
            {"op": "clear_outputs", "cell": None, "outputsCleared": 0, "cellsCleared": 0},
            "cleared the outputs of every code cell: 0 outputs in 0 cells",
        ),
        (
            {"op": "clear_outputs", "cell": "c", "outputsCleared": 1, "cellsCleared": 1},
            'cleared the outputs of cell "c": 1 output',
        ),
    ]
    for record, line in lines:
        assert operation_line(record) == line


def value(rows: list[dict], total: int, **extra) -> dict:
    ops = [{"op": "delete", "cell": "x", "cellType": "code"}]
    return {"path": "nb.ipynb", "operations": ops, "totalCells": total, "order": rows, "orderRows": len(rows), **extra}


def test_an_id_that_could_forge_a_line_is_quoted():
    text = render_edit_cells(value([row(1, 'a\n* 2 "b" code', changed=True)], 1))
    assert text.splitlines()[-1] == '* 1 "a\\u000a* 2 \\"b\\" code" code'


def test_gaps_are_counted_and_a_long_order_is_cut():
    rows = [row(i, f"c{i}", changed=True) for i in range(1, 41)]
    v = value(rows, 100)
    v["orderRows"] = 57
    text = render_edit_cells(v)
    assert text.endswith('* 40 "c40" code\n(Showing 40 of 57 rows around the changes.)')
    text = render_edit_cells(value([row(5, "e"), row(9, "i", changed=True)], 12))
    assert text == (
        "The notebook nb.ipynb has been updated successfully: 1 operation.\n"
        '1. deleted cell "x" (code)\n'
        "Cell order now (12 cells), around the changes:\n"
        "  ... 4 cells\n"
        '  5 "e" code\n'
        "  ... 3 cells\n"
        '* 9 "i" code\n'
        "  ... 3 cells"
    )


def test_a_notebook_without_ids_names_rows_by_index_and_says_where_they_were():
    rows = [row(1, None, changed=True, was=3), row(2, None, "markdown"), {**row(3, None, changed=True), "was": None}]
    assert render_edit_cells(value(rows, 3)).splitlines()[-3:] == [
        "* 1 code (was 3)",
        "  2 markdown",
        "* 3 code (new)",
    ]


def test_dry_run_and_an_empty_result():
    assert render_edit_cells(value([], 0, dryRun=True)) == (
        "Dry run: nb.ipynb was not changed. The operation would make this change:\n"
        '1. deleted cell "x" (code)\n'
        "The notebook would have no cells."
    )
    assert render_edit_cells(value([], 0)).endswith("\nThe notebook has no cells now.")
    shared = render_edit_cells(value([], 0, live=True, open="shared"))
    assert shared.splitlines()[0] == (
        "The notebook nb.ipynb has been updated successfully: 1 operation. The change went to the notebook open in "
        "Jupyter, which saves it."
    )
    tab = render_edit_cells(value([], 0, open="tab"))
    assert tab.splitlines()[0].endswith("1 operation. The change went to the file open in JupyterLab, which saved it.")
