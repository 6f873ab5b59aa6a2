"""Notebooks in the widgets, driven from Python (no browser): the read window shows cells, a grep
match in a cell opens that cell with its line marked, a saved grep result links to cells."""

from __future__ import annotations

import base64
import os

import nbformat
from nbformat import v4

from dsh_jupyter.kernel.widgets import GrepView, ReadView, view_for

from .test_widgets import act, shown, widget_calls

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(200)).decode()


def write_nb(root, name="report.ipynb"):
    nb = v4.new_notebook(
        cells=[
            v4.new_markdown_cell("# Report", id="intro"),
            v4.new_code_cell(
                "df = load()\ndf.plot()",
                id="plot",
                execution_count=4,
                outputs=[
                    v4.new_output("stream", name="stdout", text="loaded\n"),
                    v4.new_output("display_data", data={"image/png": PNG}),
                ],
            ),
            v4.new_code_cell("summary = df.describe()\nload()", id="sum"),
        ]
    )
    nbformat.write(nb, os.fspath(root / name))


def test_the_read_window_of_a_notebook_shows_cells(make_ws, root):
    write_nb(root)
    ws = make_ws()
    view = ReadView(ws, ws.session, path="report.ipynb")
    panel = view.panel
    assert panel["unit"] == "cell" and view.status == "cells 1-3 of 3"
    assert panel["lines"] == [
        ["#1", "markdown cell 1 · id intro", "cell"],
        [1, "# Report", "source"],
        ["#2", "code cell 2 · id plot · In [4]", "cell"],
        [1, "df = load()", "source"],
        [2, "df.plot()", "source"],
        ["", "[output 1: stream stdout]", "output"],
        ["", "| loaded", "output"],
        ["", "[output 2: display_data]", "output"],
        ["", "[image/png: 208 bytes, not attached: not a valid PNG, JPEG, GIF or WebP image]", "output"],
        ["#3", "code cell 3 · id sum", "cell"],
        [1, "summary = df.describe()", "source"],
        [2, "load()", "source"],
    ]
    assert panel["hitRow"] is None and view.footer == "(End of notebook - total 3 cells)"
    assert PNG[:20] not in str(panel)


def test_paging_a_notebook_counts_cells(make_ws, root):
    write_nb(root)
    ws = make_ws()
    view = view_for(shown(ws, "read", file_path="report.ipynb", limit=1))
    assert view.status == "cells 1-1 of 3"
    act(view, "window", op="next")
    assert view.status == "cells 2-2 of 3" and view.panel["lines"][0][0] == "#2"
    act(view, "window", op="jump", line=3)
    assert view.status == "cells 3-3 of 3" and not view.panel["next"]
    act(view, "window", op="previous")
    assert view.status == "cells 2-2 of 3"
    assert [a for t, a in widget_calls(ws)] == [
        {"file_path": "report.ipynb", "offset": 2, "limit": 1},
        {"file_path": "report.ipynb", "offset": 3, "limit": 1},
        {"file_path": "report.ipynb", "offset": 2, "limit": 1},
    ]


def test_a_grep_match_in_a_cell_opens_that_cell_with_the_line_marked(make_ws, root):
    write_nb(root)
    (root / "tool.py").write_text("def load():\n    pass\n", encoding="utf-8")
    ws = make_ws()
    view = view_for(shown(ws, "grep", pattern=r"load\(\)"))
    assert isinstance(view, GrepView)
    assert view.files[0]["path"] == "report.ipynb"
    assert [m[0:2] + m[3:] for m in view.files[0]["matches"]] == [[1, "df = load()", 2], [2, "load()", 3]]
    assert view.files[1]["matches"][0][:2] == [1, "def load():"] and len(view.files[1]["matches"][0]) == 3
    act(view, "open_match", group=0, index=1)
    panel = view.panel
    assert panel["anchor"] == "match:0:1" and panel["unit"] == "cell"
    assert view.opened.offset == 3 and panel["lines"][panel["hitRow"]] == [2, "load()", "source"]
    assert widget_calls(ws) == [("read", {"file_path": "report.ipynb", "offset": 3})]
    act(view, "open_match", group=1, index=0)  # a plain file still opens at its line
    assert view.panel["unit"] == "line" and view.panel["highlight"] == 1 and view.panel["hitRow"] is None


def test_a_saved_grep_result_links_cell_rows_to_their_cells(make_ws, root):
    write_nb(root)
    ws = make_ws(grep_max_matches=1)
    view = view_for(shown(ws, "grep", pattern="load|df"))
    act(view, "spill")
    panel = view.panel
    rows = [text for _, text in panel["lines"]]
    row = rows.index('Cell 3 (id="sum"), line 2: load()')
    assert panel["links"][row] == ["report.ipynb", 2, 3]
    act(view, "window", op="link", index=row)
    assert view.opened.path == "report.ipynb" and view.opened.offset == 3
    assert view.panel["lines"][view.panel["hitRow"]] == [2, "load()", "source"]
    assert view.panel["back"] == "saved result"


def test_an_output_read_whole_pages_by_its_lines(make_ws, root):
    text = "".join(f"row {i}\n" for i in range(1, 8))
    out = v4.new_output("stream", name="stdout", text=text)
    nb = v4.new_notebook(
        cells=[v4.new_markdown_cell("# Top", id="h"), v4.new_code_cell("go()", id="go", outputs=[out])]
    )
    nbformat.write(nb, os.fspath(root / "out.ipynb"))
    ws = make_ws()
    view = view_for(shown(ws, "read", file_path="out.ipynb", cell_id="go", output=1, limit=3))
    assert isinstance(view, ReadView) and view.status == "lines 1-3 of 7"
    assert view.panel["lines"] == [[1, "row 1"], [2, "row 2"], [3, "row 3"]]
    act(view, "window", op="next")
    assert view.status == "lines 4-6 of 7" and view.footer == "(Showing lines 4-6 of 7. Use offset=7 to continue.)"
    act(view, "window", op="last")
    assert view.status == "lines 5-7 of 7" and view.footer == "(End of output - total 7 lines)"
    assert [a for t, a in widget_calls(ws)] == [
        {"file_path": "out.ipynb", "offset": 4, "cell_id": "go", "output": 1, "limit": 3},
        {"file_path": "out.ipynb", "offset": -3, "cell_id": "go", "output": 1, "limit": 3},
    ]


def outlined(root):
    cells = [v4.new_markdown_cell("# Load", id="load")]
    cells += [v4.new_code_cell(f"step_{i}()", id=f"s{i}") for i in range(1, 4)]
    cells.append(v4.new_markdown_cell("## Plot\n\nThe figures.", id="plot"))
    text = "".join(f"epoch {i}\n" for i in range(1, 3001))
    cells.append(v4.new_code_cell("train()", id="train", outputs=[v4.new_output("stream", name="stdout", text=text)]))
    nbformat.write(v4.new_notebook(cells=cells), os.fspath(root / "outline.ipynb"))


def test_an_outline_read_is_a_window_of_the_models_rows_each_opening_its_cells(make_ws, root):
    outlined(root)
    ws = make_ws()
    result = shown(ws, "read", file_path="outline.ipynb", outline=True)
    view = view_for(result)
    assert isinstance(view, ReadView) and view.status == "outline of cells 1-6 of 6"
    panel = view.panel
    assert panel["title"] == "outline" and panel["switch"] == "cells" and panel["unit"] == "cell"
    assert panel["lines"] == [
        ["#1", '[cell 1 id="load", section of 6 cells] # Load', "heading"],
        ["#2", '[cell 2 id="s1", code] step_1()', "outline"],
        ["#3", '[cell 3 id="s2", code] step_2()', "outline"],
        ["#4", '[cell 4 id="s3", code] step_3()', "outline"],
        ["#5", '[cell 5 id="plot", section of 2 cells] ## Plot', "heading"],
        ["#6", '[cell 6 id="train", code] train()', "outline"],
    ]
    # every row's text is a line of the model's text
    assert all(row[1] in result.text.splitlines() for row in panel["lines"])
    assert view.footer == "(End of outline - total 6 cells, 2 headings)"
    act(view, "window", op="link", index=4)  # "## Plot": the cells from cell 5, with back to the outline
    assert view.status == "cells 5-6 of 6" and view.panel["back"] == "outline"
    assert view.panel["lines"][0] == ["#5", "markdown cell 5 · id plot", "cell"]
    act(view, "window", op="back")
    assert view.status == "outline of cells 1-6 of 6"
    assert [a for t, a in widget_calls(ws)] == [{"file_path": "outline.ipynb", "offset": 5}]


def test_a_page_of_cells_switches_to_its_outline_and_opens_an_output_whole(make_ws, root):
    outlined(root)
    ws = make_ws()
    view = view_for(shown(ws, "read", file_path="outline.ipynb"))
    panel = view.panel
    assert panel["switch"] == "outline"
    rows = [row[1] for row in panel["lines"]]
    at = rows.index("[output 1: stream stdout]")
    assert panel["links"][at] == {"open": "output", "path": "outline.ipynb", "cell_id": "train", "output": 1}
    assert [link for i, link in enumerate(panel["links"]) if i != at] == [None] * (len(rows) - 1)
    cut = next(row for row in rows if "(output truncated" in row)  # the cut note names the same call
    assert cut.endswith('more characters; read with cell_id="train", output=1 shows all of it)')
    act(view, "window", op="link", index=at)  # the output read whole, paged by its lines
    assert view.status == "lines 1-2,000 of 3,000" and view.panel["back"] == "read"
    assert view.panel["lines"][0] == [1, "epoch 1"]
    act(view, "window", op="next")
    assert view.status == "lines 2,001-3,000 of 3,000"
    act(view, "window", op="back")
    act(view, "window", op="outline")
    assert view.status == "outline of cells 1-6 of 6" and view.panel["back"] == "read"
    act(view, "window", op="cells")
    assert view.status == "cells 1-6 of 6"
    assert [a for t, a in widget_calls(ws)] == [
        {"file_path": "outline.ipynb", "offset": 1, "cell_id": "train", "output": 1},
        {"file_path": "outline.ipynb", "offset": 2001, "cell_id": "train", "output": 1},
        {"file_path": "outline.ipynb", "outline": True, "offset": 1},
        {"file_path": "outline.ipynb", "offset": 1},
    ]


def test_a_notebook_without_ids_links_outputs_by_cell_index(make_ws, root):
    nb = v4.new_notebook(cells=[v4.new_code_cell("go()", outputs=[v4.new_output("stream", name="stdout", text="x\n")])])
    nb.nbformat_minor = 4
    del nb.cells[0]["id"]
    nbformat.write(nb, os.fspath(root / "old.ipynb"), version=4)
    ws = make_ws()
    view = view_for(shown(ws, "read", file_path="old.ipynb"))
    links = [link for link in view.panel["links"] if link]
    assert links == [{"open": "output", "path": "old.ipynb", "cell_id": "1", "output": 1}]
    act(view, "window", op="link", index=view.panel["links"].index(links[0]))
    assert view.panel["lines"] == [[1, "x"]] and view.footer == "(End of output - total 1 line)"


def test_a_grep_match_in_an_output_opens_its_cell_with_nothing_marked(make_ws, root):
    write_nb(root)
    ws = make_ws()
    view = view_for(shown(ws, "grep", pattern="loaded", notebook_scope="outputs"))
    assert view.files[0]["matches"] == [[1, "loaded", [[0, 6]], 2, False, 1]]
    assert view.files[0]["count"] == 1
    act(view, "open_match", group=0, index=0)
    panel = view.panel
    assert panel["unit"] == "cell" and view.opened.offset == 2
    assert panel["lines"][panel["hitRow"]] == ["#2", "code cell 2 · id plot · In [4]", "cell"]  # the cell, no line
    assert widget_calls(ws) == [("read", {"file_path": "report.ipynb", "offset": 2})]
    # the toolbar asks again with the scope kept
    act(view, "refine", ignore_case=True)
    assert view.args["notebook_scope"] == "outputs" and view.files[0]["matches"][0][5] == 1


def test_a_saved_grep_result_links_output_rows_to_their_cells(make_ws, root):
    write_nb(root)
    ws = make_ws(grep_max_matches=1)
    view = view_for(shown(ws, "grep", pattern="load", notebook_scope="all"))
    act(view, "spill")
    panel = view.panel
    rows = [text for _, text in panel["lines"]]
    output_row = rows.index('Cell 2 (id="plot"), output 1, line 1: loaded')
    assert panel["links"][output_row] == ["report.ipynb", 0, 2]
    assert panel["links"][rows.index('Cell 3 (id="sum"), line 2: load()')] == ["report.ipynb", 2, 3]
    assert panel["links"][output_row + 1] == ["report.ipynb", 2, 3]  # the row after is no path
    act(view, "window", op="link", index=output_row)
    assert view.opened.path == "report.ipynb" and view.opened.offset == 2
    assert view.panel["lines"][view.panel["hitRow"]][0] == "#2"
