"""``edit_cells``: a notebook's cells inserted, deleted, moved, retyped and cleared, on real files.

Exact texts, every refusal with the bytes on disk unchanged, all or nothing, dry runs that write
nothing, the read-before-write gate, and notebooks written by nbformat 4.0 to 4.5 (ids only where
the format has them).
"""

from __future__ import annotations

import json
import os
import re

import nbformat
import pytest
from conftest import assert_error, slow_imports_after
from nbformat import v4

NB = "nb.ipynb"


def write_nb(path, minor: int = 5, with_output: bool = True) -> bytes:
    """intro (markdown), load (code, one output, run once), plot (code), notes (raw)."""
    nb = v4.new_notebook()
    nb.nbformat_minor = minor
    load = v4.new_code_cell("import pandas as pd\n", execution_count=1 if with_output else None)
    if with_output:
        load.outputs = [v4.new_output("stream", name="stdout", text="loaded\n")]
    nb.cells = [
        v4.new_markdown_cell("# Title"),
        load,
        v4.new_code_cell("plot()"),
        v4.new_raw_cell("raw text"),
    ]
    for cell, cid in zip(nb.cells, ["intro", "load", "plot", "notes"]):
        if minor >= 5:
            cell.id = cid
        else:
            del cell["id"]
    data = nbformat.writes(nb, version=4).encode("utf-8")
    path.write_bytes(data)
    return data


@pytest.fixture
def nbfile(root):
    path = root / NB
    write_nb(path)
    return path


def read_ok(ws, path=NB):
    r = ws.run("read", file_path=path)
    assert not r.is_error, r.text
    return r


def cells_of(path) -> list[tuple]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [(c.get("id"), c["cell_type"], "".join(c["source"])) for c in nb["cells"]]


def new_id(r, k: int = 0) -> str:
    cid = r.value["operations"][k]["cell"]
    assert re.fullmatch(r"[0-9a-f]{8}", cid), cid
    return cid


# -- what each operation does -------------------------------------------------------------------


def test_insert_after_answers_the_change_and_the_order_around_it(ws, nbfile):
    read_ok(ws)
    r = ws.run(
        "edit_cells",
        file_path=NB,
        operations=[{"op": "insert", "cell_type": "code", "source": "df = pd.read_csv('a.csv')\ndf", "after": "load"}],
    )
    assert not r.is_error, r.text
    cid = new_id(r)
    assert r.text == (
        "The notebook nb.ipynb has been updated successfully: 1 operation.\n"
        f'1. inserted cell "{cid}" (code) after "load"\n'
        "Cell order now (5 cells), around the changes:\n"
        '  1 "intro" markdown\n'
        '  2 "load" code\n'
        f'* 3 "{cid}" code\n'
        '  4 "plot" code\n'
        '  5 "notes" raw'
    )
    assert cells_of(nbfile) == [
        ("intro", "markdown", "# Title"),
        ("load", "code", "import pandas as pd\n"),
        (cid, "code", "df = pd.read_csv('a.csv')\ndf"),
        ("plot", "code", "plot()"),
        ("notes", "raw", "raw text"),
    ]
    nb = nbformat.reads(nbfile.read_text(encoding="utf-8"), as_version=nbformat.NO_CONVERT)
    nbformat.validate(nb)
    new = json.loads(nbfile.read_text(encoding="utf-8"))["cells"][2]
    # as nbformat writes a new code cell: keys sorted, source as lines, no outputs, not run
    assert new == {
        "cell_type": "code",
        "execution_count": None,
        "id": cid,
        "metadata": {},
        "outputs": [],
        "source": ["df = pd.read_csv('a.csv')\n", "df"],
    }
    assert r.value["operations"] == [
        {"op": "insert", "cell": cid, "cellType": "code", "place": "after", "anchor": "load"}
    ]
    assert r.value["totalCells"] == 5 and r.value["orderRows"] == 5
    assert r.value["footer"] == "" and r.value["nextOffset"] is None


def test_a_batch_applies_in_order_and_the_file_keeps_its_layout(ws, nbfile):
    read_ok(ws)
    before = nbfile.read_bytes()
    r = ws.run(
        "edit_cells",
        file_path=NB,
        operations=[
            {"op": "move", "cell_id": "plot", "at": "start"},
            {"op": "delete", "cell_id": "notes"},
            {"op": "set_type", "cell_id": "intro", "cell_type": "raw"},
            {"op": "clear_outputs", "cell_id": "load"},
            {"op": "insert", "cell_type": "markdown", "source": "## End", "at": "end"},
            {"op": "move", "cell_id": "load", "before": "intro"},
        ],
    )
    assert not r.is_error, r.text
    cid = new_id(r, 4)
    assert r.text == (
        "The notebook nb.ipynb has been updated successfully: 6 operations.\n"
        '1. moved cell "plot" (code) to the start\n'
        '2. deleted cell "notes" (raw)\n'
        '3. changed cell "intro" from markdown to raw\n'
        '4. cleared the outputs of cell "load": 1 output\n'
        f'5. inserted cell "{cid}" (markdown) at the end\n'
        '6. moved cell "load" (code) before "intro"\n'
        "Cell order now (4 cells), around the changes:\n"
        '* 1 "plot" code\n'
        '* 2 "load" code\n'
        '* 3 "intro" raw\n'
        f'* 4 "{cid}" markdown'
    )
    assert cells_of(nbfile) == [
        ("plot", "code", "plot()"),
        ("load", "code", "import pandas as pd\n"),
        ("intro", "raw", "# Title"),
        (cid, "markdown", "## End"),
    ]
    cells = json.loads(nbfile.read_text(encoding="utf-8"))["cells"]
    assert cells[1]["outputs"] == [] and cells[1]["execution_count"] is None
    assert "outputs" not in cells[2] and "execution_count" not in cells[2]
    # the file's own layout, here nbformat's (indent 1, keys sorted): what Jupyter itself would write
    text = nbfile.read_text(encoding="utf-8")
    assert text == nbformat.writes(nbformat.reads(text, as_version=nbformat.NO_CONVERT))
    assert before.startswith(b'{\n "cells": [\n  {\n')


def test_set_type_to_code_and_away_from_code(ws, nbfile):
    read_ok(ws)
    r = ws.run(
        "edit_cells",
        file_path=NB,
        operations=[
            {"op": "set_type", "cell_id": "load", "cell_type": "markdown"},
            {"op": "set_type", "cell_id": "notes", "cell_type": "code"},
        ],
    )
    assert r.text == (
        "The notebook nb.ipynb has been updated successfully: 2 operations.\n"
        '1. changed cell "load" from code to markdown, dropping its 1 output\n'
        '2. changed cell "notes" from raw to code\n'
        "Cell order now (4 cells), around the changes:\n"
        '  1 "intro" markdown\n'
        '* 2 "load" markdown\n'
        '  3 "plot" code\n'
        '* 4 "notes" code'
    )
    cells = json.loads(nbfile.read_text(encoding="utf-8"))["cells"]
    assert cells[1] == {"cell_type": "markdown", "id": "load", "metadata": {}, "source": ["import pandas as pd\n"]}
    assert cells[3] == {
        "cell_type": "code",
        "execution_count": None,
        "id": "notes",
        "metadata": {},
        "outputs": [],
        "source": ["raw text"],
    }


def test_clear_outputs_without_cell_id_clears_every_code_cell(ws, nbfile):
    read_ok(ws)
    r = ws.run("edit_cells", file_path=NB, operations=[{"op": "clear_outputs"}])
    assert r.text == (
        "The notebook nb.ipynb has been updated successfully: 1 operation.\n"
        "1. cleared the outputs of every code cell: 1 output in 1 cell\n"
        "Cell order now (4 cells), around the changes:\n"
        '  1 "intro" markdown\n'
        '* 2 "load" code\n'
        '  3 "plot" code\n'
        '  4 "notes" raw'
    )
    cells = json.loads(nbfile.read_text(encoding="utf-8"))["cells"]
    assert [(c.get("outputs"), c.get("execution_count")) for c in cells] == [
        (None, None),
        ([], None),
        ([], None),
        (None, None),
    ]


def test_delete_and_a_move_that_stays_put(ws, nbfile):
    read_ok(ws)
    r = ws.run(
        "edit_cells",
        file_path=NB,
        operations=[
            {"op": "move", "cell_id": "plot", "after": "load"},
            {"op": "delete", "cell_id": "intro"},
            {"op": "delete", "cell_id": "notes"},
        ],
    )
    assert r.text == (
        "The notebook nb.ipynb has been updated successfully: 3 operations.\n"
        '1. moved cell "plot" (code) after "load" (it was there already)\n'
        '2. deleted cell "intro" (markdown)\n'
        '3. deleted cell "notes" (raw)\n'
        "Cell order now (2 cells), around the changes:\n"
        '  1 "load" code\n'
        '  2 "plot" code'
    )
    assert cells_of(nbfile) == [("load", "code", "import pandas as pd\n"), ("plot", "code", "plot()")]
    r = ws.run(
        "edit_cells",
        file_path=NB,
        operations=[{"op": "delete", "cell_id": "load"}, {"op": "delete", "cell_id": "plot"}],
    )
    assert r.text.endswith("\nThe notebook has no cells now.")
    assert cells_of(nbfile) == []


def test_the_order_shows_a_few_cells_around_each_change_and_counts_the_rest(ws, root):
    nb = v4.new_notebook()
    nb.cells = [v4.new_code_cell(f"x = {i}") for i in range(1, 21)]
    for i, cell in enumerate(nb.cells, start=1):
        cell.id = f"c{i}"
    (root / NB).write_text(nbformat.writes(nb))
    read_ok(ws)
    r = ws.run(
        "edit_cells",
        file_path=NB,
        operations=[
            {"op": "insert", "cell_type": "markdown", "source": "# A", "before": "c10"},
            {"op": "delete", "cell_id": "c18"},
        ],
    )
    cid = new_id(r)
    assert r.text == (
        "The notebook nb.ipynb has been updated successfully: 2 operations.\n"
        f'1. inserted cell "{cid}" (markdown) before "c10"\n'
        '2. deleted cell "c18" (code)\n'
        "Cell order now (20 cells), around the changes:\n"
        "  ... 7 cells\n"
        '  8 "c8" code\n'
        '  9 "c9" code\n'
        f'* 10 "{cid}" markdown\n'
        '  11 "c10" code\n'
        '  12 "c11" code\n'
        "  ... 4 cells\n"
        '  17 "c16" code\n'
        '  18 "c17" code\n'
        '  19 "c19" code\n'
        '  20 "c20" code'
    )


# -- dry run ------------------------------------------------------------------------------------


def test_dry_run_answers_the_same_and_writes_nothing(ws, nbfile):
    read_ok(ws)
    before, st = nbfile.read_bytes(), os.stat(nbfile)
    ops = [{"op": "delete", "cell_id": "plot"}, {"op": "set_type", "cell_id": "notes", "cell_type": "markdown"}]
    r = ws.run("edit_cells", file_path=NB, operations=ops, dry_run=True)
    assert r.text == (
        "Dry run: nb.ipynb was not changed. The 2 operations would make these changes:\n"
        '1. deleted cell "plot" (code)\n'
        '2. changed cell "notes" from raw to markdown\n'
        "Cell order it would leave (3 cells), around the changes:\n"
        '  1 "intro" markdown\n'
        '  2 "load" code\n'
        '* 3 "notes" markdown'
    )
    assert r.value["dryRun"] is True
    after = os.stat(nbfile)
    assert nbfile.read_bytes() == before
    assert (after.st_ino, after.st_mtime_ns, after.st_ctime_ns) == (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
    one = ws.run("edit_cells", file_path=NB, operations=ops[:1], dry_run=True)
    assert one.text.startswith("Dry run: nb.ipynb was not changed. The operation would make this change:\n")
    # the session's observation is still the read's: the real call needs no new read
    assert not ws.run("edit_cells", file_path=NB, operations=ops).is_error
    assert [c[0] for c in cells_of(nbfile)] == ["intro", "load", "notes"]


def test_dry_run_keeps_the_gate(ws, nbfile):
    assert_error(
        ws.run("edit_cells", file_path=NB, operations=[{"op": "delete", "cell_id": "plot"}], dry_run=True),
        "FS_NOT_OBSERVED",
        'cannot write "nb.ipynb": read it first in this session',
    )


# -- the gate -----------------------------------------------------------------------------------


def test_unread_and_changed_since_read_are_refused(ws, nbfile):
    before = nbfile.read_bytes()
    ops = [{"op": "delete", "cell_id": "plot"}]
    assert_error(
        ws.run("edit_cells", file_path=NB, operations=ops),
        "FS_NOT_OBSERVED",
        'cannot write "nb.ipynb": read it first in this session',
    )
    assert nbfile.read_bytes() == before
    read_ok(ws)
    changed = write_nb(nbfile, with_output=False)  # someone else saved it since the read
    assert_error(
        ws.run("edit_cells", file_path=NB, operations=ops),
        "FS_NOT_OBSERVED",
        'cannot write "nb.ipynb": it changed since this session last read it; read it again',
    )
    assert nbfile.read_bytes() == changed


def test_after_its_own_change_no_new_read_is_needed(ws, nbfile):
    read_ok(ws)
    assert not ws.run("edit_cells", file_path=NB, operations=[{"op": "delete", "cell_id": "notes"}]).is_error
    r = ws.run("edit_cells", file_path=NB, operations=[{"op": "move", "cell_id": "intro", "at": "end"}])
    assert not r.is_error, r.text
    assert not ws.run("edit", file_path=NB, old_string="plot()", new_string="plot(df)").is_error
    assert [c[0] for c in cells_of(nbfile)] == ["load", "plot", "intro"]


def test_another_session_must_read_first(make_ws, nbfile):
    a, b = make_ws(session="a"), make_ws(session="b")
    read_ok(a)
    read_ok(b)
    assert not a.run("edit_cells", file_path=NB, operations=[{"op": "delete", "cell_id": "notes"}]).is_error
    assert_error(
        b.run("edit_cells", file_path=NB, operations=[{"op": "delete", "cell_id": "plot"}]),
        "FS_NOT_OBSERVED",
        'cannot write "nb.ipynb": it changed since this session last read it; read it again',
    )


# -- refusals: one sentence each, the file untouched --------------------------------------------

REFUSALS = [
    (
        [{"op": "move", "cell_id": "plot", "at": "start"}, {"op": "delete", "cell_id": "nope"}],
        "EDIT_NOT_FOUND",
        'operation 2 of 2 (delete): no cell has the id "nope" in "nb.ipynb"; nothing was changed',
    ),
    (
        [
            {"op": "insert", "cell_type": "code", "source": "x", "at": "end"},
            {"op": "delete", "cell_id": "load"},
            {"op": "set_type", "cell_id": "gone", "cell_type": "raw"},
        ],
        "EDIT_NOT_FOUND",
        'operation 3 of 3 (set_type): no cell has the id "gone" in "nb.ipynb"; nothing was changed',
    ),
    (
        [{"op": "delete", "cell_id": "plot"}, {"op": "move", "cell_id": "plot", "at": "end"}],
        "EDIT_NOT_FOUND",
        'operation 2 of 2 (move): cell "plot" was deleted by operation 1; nothing was changed',
    ),
    (
        [{"op": "insert", "cell_type": "code", "source": "x", "after": "nope"}],
        "EDIT_NOT_FOUND",
        'operation 1 of 1 (insert): no cell has the id "nope" in "nb.ipynb"; nothing was changed',
    ),
    (
        [{"op": "move", "cell_id": "load", "after": "load"}],
        "ARGUMENT_INVALID",
        'operation 1 of 1 (move): cell "load" cannot move after itself; nothing was changed',
    ),
    (
        [{"op": "move", "cell_id": "load", "before": "load"}],
        "ARGUMENT_INVALID",
        'operation 1 of 1 (move): cell "load" cannot move before itself; nothing was changed',
    ),
    (
        [{"op": "set_type", "cell_id": "load", "cell_type": "code"}],
        "ARGUMENT_INVALID",
        'operation 1 of 1 (set_type): cell "load" is a code cell already; nothing was changed',
    ),
    (
        [{"op": "clear_outputs", "cell_id": "intro"}],
        "ARGUMENT_INVALID",
        'operation 1 of 1 (clear_outputs): cell "intro" is a markdown cell, which has no outputs; nothing was changed',
    ),
    (
        [{"op": "delete", "cell_id": 2}],
        "ARGUMENT_INVALID",
        'operation 1 of 1 (delete): the cells of "nb.ipynb" have ids: name cell 2 by its id, as read shows it; '
        "nothing was changed",
    ),
    ([], "ARGUMENT_INVALID", "operations must hold at least 1 item"),
    (
        [{"op": "remove", "cell_id": "load"}],
        "ARGUMENT_INVALID",
        "operations[0].op must be one of insert, delete, move, set_type, clear_outputs",
    ),
    ([{"cell_id": "load"}], "ARGUMENT_INVALID", "operations[0].op is required"),
    ([{"op": "delete"}], "ARGUMENT_INVALID", "operations[0].cell_id is required"),
    (
        [{"op": "insert", "cell_type": "code", "after": "load"}],
        "ARGUMENT_INVALID",
        "operations[0].source is required",
    ),
    (
        [{"op": "insert", "cell_type": "code", "source": "x"}],
        "ARGUMENT_INVALID",
        "operations[0] (insert) needs one of after, before or at",
    ),
    (
        [{"op": "move", "cell_id": "load"}],
        "ARGUMENT_INVALID",
        "operations[0] (move) needs one of after, before or at",
    ),
    (
        [{"op": "insert", "cell_type": "code", "source": "x", "after": "load", "before": "plot"}],
        "ARGUMENT_INVALID",
        "operations[0] (insert) takes one of after, before or at, not after and before together",
    ),
    (
        [{"op": "delete", "cell_id": "load", "foo": 1}],
        "ARGUMENT_INVALID",
        'operations[0] has an unknown key "foo" (delete takes: op, cell_id)',
    ),
    (
        [{"op": "delete", "cell_id": "load", "at": "end"}],
        "ARGUMENT_INVALID",
        'operations[0] has an unknown key "at" (delete takes: op, cell_id)',
    ),
    (
        [{"op": "set_type", "cell_id": "load", "cell_type": "heading"}],
        "ARGUMENT_INVALID",
        "operations[0].cell_type must be one of code, markdown, raw",
    ),
    (
        [{"op": "insert", "cell_type": "code", "source": "x", "at": "middle"}],
        "ARGUMENT_INVALID",
        "operations[0].at must be one of start, end",
    ),
    (
        [{"op": "delete", "cell_id": True}],
        "ARGUMENT_INVALID",
        "operations[0].cell_id must be a string or an integer",
    ),
    (
        [{"op": "delete", "cell_id": "load"}, "delete"],
        "ARGUMENT_INVALID",
        "operations[1] must be an object",
    ),
]


@pytest.mark.parametrize("ops, code, message", REFUSALS)
def test_refusals_leave_the_file_untouched(ws, nbfile, ops, code, message):
    read_ok(ws)
    before = nbfile.read_bytes()
    assert_error(ws.run("edit_cells", file_path=NB, operations=ops), code, message)
    assert nbfile.read_bytes() == before
    assert_error(ws.run("edit_cells", file_path=NB, operations=ops, dry_run=True), code, message)


def test_operations_are_required_and_a_list(ws, nbfile):
    assert_error(ws.run("edit_cells", file_path=NB), "ARGUMENT_INVALID", "operations is required")
    assert_error(
        ws.run("edit_cells", file_path=NB, operations={"op": "delete", "cell_id": "x"}),
        "ARGUMENT_INVALID",
        "operations must be a list",
    )


def test_a_file_that_is_not_a_notebook(ws, root):
    (root / "a.txt").write_text("hello\n")
    read_ok(ws, "a.txt")
    assert_error(
        ws.run("edit_cells", file_path="a.txt", operations=[{"op": "clear_outputs"}]),
        "ARGUMENT_INVALID",
        'cannot edit "a.txt" by cells: edit_cells changes notebooks (.ipynb files) only',
    )
    assert (root / "a.txt").read_text() == "hello\n"
    (root / "bad.ipynb").write_text('{"cells": [')
    read_ok(ws, "bad.ipynb")
    r = ws.run("edit_cells", file_path="bad.ipynb", operations=[{"op": "clear_outputs"}])
    assert_error(r, "NOTEBOOK_INVALID")
    assert r.value["message"].startswith('cannot edit "bad.ipynb" by cells: it is not valid JSON (')
    assert (root / "bad.ipynb").read_text() == '{"cells": ['
    assert_error(
        ws.run("edit_cells", file_path="missing.ipynb", operations=[{"op": "clear_outputs"}]),
        "FS_NOT_FOUND",
        'cannot edit "missing.ipynb": not found',
    )


def test_a_result_nbformat_refuses_is_not_written(ws, root):
    nb = v4.new_notebook()
    nb.cells = [v4.new_markdown_cell("text", id="m")]
    nb.cells[0].metadata["collapsed"] = "yes"  # fine on a markdown cell, not on a code cell
    (root / NB).write_text(nbformat.writes(nb))
    before = (root / NB).read_bytes()
    read_ok(ws)
    assert_error(
        ws.run("edit_cells", file_path=NB, operations=[{"op": "set_type", "cell_id": "m", "cell_type": "code"}]),
        "NOTEBOOK_INVALID",
        "cannot edit \"nb.ipynb\": the result would not be a valid notebook: 'yes' is not of type 'boolean' "
        "(in cell 1); nothing was written",
    )
    assert (root / NB).read_bytes() == before


def test_attachments_never_go_into_a_code_cell(ws, root):
    nb = v4.new_notebook()
    cell = v4.new_markdown_cell("![x](attachment:x.png)", id="m")
    cell.attachments = {"x.png": {"image/png": "iVBORw0KGgo="}}
    nb.cells = [cell]
    (root / NB).write_text(nbformat.writes(nb))
    read_ok(ws)
    assert_error(
        ws.run("edit_cells", file_path=NB, operations=[{"op": "set_type", "cell_id": "m", "cell_type": "code"}]),
        "ARGUMENT_INVALID",
        'operation 1 of 1 (set_type): cell "m" has attachments, which a code cell cannot hold; nothing was changed',
    )
    r = ws.run("edit_cells", file_path=NB, operations=[{"op": "set_type", "cell_id": "m", "cell_type": "raw"}])
    assert not r.is_error, r.text
    raw = json.loads((root / NB).read_text())["cells"][0]
    assert raw["cell_type"] == "raw" and raw["attachments"] == {"x.png": {"image/png": "iVBORw0KGgo="}}


def test_a_result_over_edit_max_bytes_is_refused(make_ws, nbfile):
    ws = make_ws(edit_max_bytes=2000)
    before = nbfile.read_bytes()
    read_ok(ws)
    r = ws.run(
        "edit_cells", file_path=NB, operations=[{"op": "insert", "cell_type": "raw", "source": "x" * 3000, "at": "end"}]
    )
    assert_error(r, "FS_TOO_LARGE")
    assert re.fullmatch(
        r'cannot edit "nb\.ipynb": the result would be \d+ bytes, more than the 2000 an edit may write '
        r"\(setting edit_max_bytes\)",
        r.value["message"],
    ), r.value["message"]
    assert nbfile.read_bytes() == before


# -- notebooks of every nbformat 4 minor version ------------------------------------------------


@pytest.mark.parametrize("minor", [0, 1, 2, 3, 4, 5])
def test_notebooks_written_by_each_nbformat_4_minor(ws, root, minor):
    path = root / NB
    write_nb(path, minor=minor)
    read = read_ok(ws)
    ids = minor >= 5
    name = {True: ("load", "plot", "intro"), False: (2, 3, 1)}[ids]
    r = ws.run(
        "edit_cells",
        file_path=NB,
        operations=[
            {"op": "insert", "cell_type": "code", "source": "new()", "after": name[0]},
            {"op": "move", "cell_id": name[1], "at": "start"},
            {"op": "delete", "cell_id": name[2]},
            {"op": "clear_outputs"},
        ],
    )
    assert not r.is_error, r.text
    data = json.loads(path.read_text(encoding="utf-8"))
    assert (data["nbformat"], data["nbformat_minor"]) == (4, minor)  # never upgraded
    assert [c["cell_type"] for c in data["cells"]] == ["code", "code", "code", "raw"]
    assert ["".join(c["source"]) for c in data["cells"]] == ["plot()", "import pandas as pd\n", "new()", "raw text"]
    assert all(("id" in c) == ids for c in data["cells"])  # ids only where the format has them
    nbformat.validate(nbformat.reads(path.read_text(encoding="utf-8"), as_version=nbformat.NO_CONVERT))
    if ids:
        assert '<cell index="2" id="load" type="code" execution_count="1">' in read.text
        return
    assert '<cell index="2" type="code" execution_count="1">' in read.text
    assert r.text == (
        "The notebook nb.ipynb has been updated successfully: 4 operations.\n"
        "1. inserted a new cell (code) after cell 2\n"
        "2. moved cell 3 (code) to the start\n"
        "3. deleted cell 1 (markdown)\n"
        "4. cleared the outputs of every code cell: 1 output in 1 cell\n"
        "Cell order now (4 cells), around the changes:\n"
        "* 1 code (was 3)\n"
        "* 2 code\n"
        "* 3 code (new)\n"
        "  4 raw"
    )
    assert r.value["operations"][0]["cell"] is None
    assert_error(
        ws.run("edit_cells", file_path=NB, operations=[{"op": "delete", "cell_id": "load"}]),
        "ARGUMENT_INVALID",
        f'operation 1 of 1 (delete): the cells of "nb.ipynb" have no ids (nbformat 4.{minor}): name a cell by '
        "its index, as read shows it; nothing was changed",
    )
    assert_error(
        ws.run("edit_cells", file_path=NB, operations=[{"op": "delete", "cell_id": 9}]),
        "EDIT_NOT_FOUND",
        'operation 1 of 1 (delete): no cell has the index 9 in "nb.ipynb" (it had 4 before this call); nothing was '
        "changed",
    )


# -- the tool on offer --------------------------------------------------------------------------


def test_the_spec_is_destructive_and_strict(ws):
    spec = ws.registry["edit_cells"]
    assert (spec.writes, spec.destructive, spec.idempotent) == (True, True, False)
    items = spec.input_schema["properties"]["operations"]["items"]
    assert len(items["oneOf"]) == 9
    for branch in items["oneOf"]:
        assert branch["additionalProperties"] is False
        assert set(branch["required"]) <= set(branch["properties"])


def test_a_lone_surrogate_in_a_new_source_is_written_as_u_fffd(ws, nbfile):
    read_ok(ws)
    r = ws.run(
        "edit_cells",
        file_path=NB,
        operations=[{"op": "insert", "cell_type": "code", "source": "a\ud800b", "at": "end"}],
    )
    assert not r.is_error, r.text
    assert cells_of(nbfile)[-1][2] == "a\ufffdb"


@pytest.mark.parametrize("kind", ["code", "markdown", "raw"])
@pytest.mark.parametrize("ids", [True, False])
@pytest.mark.parametrize("lines", [True, False])
def test_a_new_cell_is_the_cell_nbformat_makes(kind, ids, lines):
    from dsh_jupyter.core.tools.edit_cells.operations import _new_cell

    taken = {"aaaaaaaa"}
    made = _new_cell(kind, "a = 1\nb = 2", ids, taken, lines)
    make = {"code": v4.new_code_cell, "markdown": v4.new_markdown_cell, "raw": v4.new_raw_cell}[kind]
    want = json.loads(json.dumps(make(source="a = 1\nb = 2")))
    if ids:
        assert re.fullmatch(r"[0-9a-f]{8}", made["id"]) and made["id"] in taken and len(taken) == 2
        want["id"] = made["id"]
    else:
        want.pop("id")
    if lines:
        want["source"] = ["a = 1\n", "b = 2"]
    assert made == dict(sorted(want.items())) and list(made) == sorted(made)
    nb = {"cells": [made], "metadata": {}, "nbformat": 4, "nbformat_minor": 5 if ids else 4}
    nbformat.validate(nbformat.from_dict(json.loads(json.dumps(nb))))


def test_inserting_a_cell_imports_neither_nbformat_nor_jsonschema(tmp_path):
    (tmp_path / "n.ipynb").write_text(json.dumps(v4.new_notebook(cells=[v4.new_code_cell("x = 1", id="c1")])))
    code = (
        "from dsh_jupyter import Workspace\n"
        f"ws = Workspace({str(tmp_path)!r}, state_path={str(tmp_path / 's.sqlite')!r})\n"
        "assert not ws.run('read', file_path='n.ipynb').is_error\n"
        "r = ws.run('edit_cells', file_path='n.ipynb', operations=[{'op': 'insert', 'cell_type': 'markdown',\n"
        "           'source': '# new', 'after': 'c1'}])\n"
        "assert not r.is_error, r.text\n"
    )
    assert slow_imports_after(code) == []
    cells = nbformat.read(str(tmp_path / "n.ipynb"), as_version=4).cells
    assert [c.source for c in cells] == ["x = 1", "# new"]
