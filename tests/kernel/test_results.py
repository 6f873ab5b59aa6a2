"""Result objects: ``to_frame()`` columns for every tool and answer, the footer, the mime bundle."""

from __future__ import annotations

import html
import os

import pandas as pd
import pytest

from dsh_jupyter.core.registry import TOOLS
from dsh_jupyter.kernel import display
from dsh_jupyter.kernel.results import INFO_COLUMNS, InfoResult, KernelResult
from dsh_jupyter.kernel.widgets import GlobView, ListingView

FRAME_CASES = [
    ("list", {"path": "src"}, ["name", "type", "size", "mtime", "target"], 2),
    ("glob", {"pattern": "*.py"}, ["path"], 2),
    ("find", {"query": "py"}, ["path"], 2),
    ("grep", {"pattern": "hello"}, ["path", "line", "text"], 4),
    ("replace", {"pattern": "hello", "replacement": "bye"}, ["path", "line", "before", "after"], 4),
    ("read", {"file_path": "notes.txt"}, ["number", "text"], 3),
    ("list_dir", {"path": "src", "recursive": True}, ["entry"], 3),
    ("write", {"file_path": "w.txt", "content": "x"}, [], 0),
]


@pytest.mark.parametrize("tool,args,columns,rows", FRAME_CASES)
def test_frame_columns_per_tool(shell, tool, args, columns, rows):
    line = {
        "list": "list src",
        "glob": "glob *.py",
        "find": "find py",
        "grep": "grep hello",
        "replace": "replace hello bye",
        "read": "read notes.txt",
        "list_dir": "list_dir src --recursive",
    }.get(tool)
    r = shell.run_line_magic("dsh", line) if line else shell.run_cell_magic("dsh", "write w.txt", "x")
    frame = r.to_frame()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == columns
    assert len(frame) == rows


def test_every_tool_that_has_rows_is_in_the_frame_cases():
    assert {t.name for t in TOOLS if t.rows} <= {case[0] for case in FRAME_CASES}


def test_edit_and_error_frames(shell):
    shell.run_line_magic("dsh", "read notes.txt")
    r = shell.run_cell_magic("dsh", "edit notes.txt", "first\n=======\n1st\n")
    assert r.to_frame().empty and list(r.to_frame().columns) == []
    err = shell.run_line_magic("dsh", "list nowhere")
    assert err.to_frame().empty and list(err.to_frame().columns) == FRAME_CASES[0][2]


@pytest.mark.parametrize("line", ["calls", "spills", "tools", "session"])
def test_frame_columns_of_the_other_answers(shell, line):
    shell.run_line_magic("dsh", "list")
    r = shell.run_line_magic("dsh", line)
    assert isinstance(r, InfoResult)
    assert list(r.to_frame().columns) == INFO_COLUMNS[line]


def test_grep_frame_values(shell):
    frame = shell.run_line_magic("dsh", "grep hello src").to_frame()
    assert frame.to_dict("records") == [
        {"path": "src/app.py", "line": 2, "text": "    return 'hello world'"},
        {"path": "src/util/helpers.py", "line": 2, "text": "    return 'hello helper'"},
    ]


# -- footers -----------------------------------------------------------------------------------


def test_footer_is_the_models_footer(shell, root, tree):
    tree(root, {"many": {f"f{i:03}.txt": f"match {i}\n" for i in range(30)}})
    shell.run_line_magic("config", "DshMagics.list_max_entries = 10")
    shell.run_line_magic("config", "DshMagics.glob_max_results = 5")
    shell.run_line_magic("config", "DshMagics.grep_max_matches = 5")
    r = shell.run_line_magic("dsh", "list many --offset 11")
    assert r.footer() == (
        "(Showing entries 11-20 of 30: 0 directories, 30 files. Directories first, then files, then other, "
        "each alphabetical. Use offset=21 to continue.)"
    )
    assert shell.run_line_magic("dsh", "list empty").footer() == "(Empty directory)"
    assert shell.run_line_magic("dsh", "read notes.txt --limit 2").footer() == (
        "(Showing lines 1-2 of 3. Use offset=3 to continue.)"
    )
    g = shell.run_line_magic("dsh", "glob *.txt many")
    assert g.footer().startswith("(Showing 5 of 30 paths. Full sorted result stored at: ")
    assert g.text.endswith("\n\n" + g.footer())
    assert shell.run_line_magic("dsh", "glob *.py").footer() == ""
    m = shell.run_line_magic("dsh", "grep match many")
    assert m.header() == "Found 5 of 30 matches"
    assert m.footer().startswith("(Full grep result stored at: ") and m.text.endswith(m.footer())
    assert shell.run_line_magic("dsh", "grep nothing-matches-this").footer() == ""
    assert shell.run_line_magic("dsh", "read missing").footer() == ""


# -- the mime bundle ---------------------------------------------------------------------------


@pytest.mark.parametrize("line", ["list", "glob *.py", "grep hello", "read notes.txt", "list_dir src", "calls"])
def test_bundle_without_widgets_is_text_and_a_table(shell, line):
    shell.run_line_magic("dsh", "list")
    r = shell.run_line_magic("dsh", line)
    data = r._repr_mimebundle_()
    assert set(data) == {"text/plain", "text/html"}
    assert data["text/plain"] == r.text
    assert "<table>" in data["text/html"]


def test_bundle_html_repeats_the_footer(shell):
    shell.run_line_magic("config", "DshMagics.list_max_entries = 2")
    r = shell.run_line_magic("dsh", "list")
    assert html.escape(r.footer()) in r._repr_mimebundle_()["text/html"]
    assert r.footer().startswith("(Showing entries 1-2 of")


def test_bundle_html_writes_a_listing_time_as_the_model_text_does(shell, root):
    os.utime(root / "notes.txt", (0, 1_796_459_813.5))
    r = shell.run_line_magic("dsh", "list")
    page = r._repr_mimebundle_()["text/html"]
    assert "<td>notes.txt</td><td>file</td><td>" in page
    assert "<td>2026-12-05 08:36:53 UTC</td>" in page and "1796459813" not in page
    assert r.value["entries"][[e["name"] for e in r.value["entries"]].index("notes.txt")]["mtime"] == 1_796_459_813.5


def test_bundle_of_an_error_or_a_write_is_preformatted_text(shell):
    r = shell.run_line_magic("dsh", "read missing.txt")
    assert r._repr_mimebundle_() == {"text/plain": r.text, "text/html": f"<pre>{html.escape(r.text)}</pre>"}


def test_an_edit_shows_its_diff_coloured(shell, root):
    shell.run_line_magic("dsh", "read notes.txt")
    r = shell.run_cell_magic("dsh", "edit notes.txt", "second line\n=======\nline <2>\n")
    page = r._repr_mimebundle_()["text/html"]
    assert page == (
        '<pre class="dsh-diff">The file notes.txt has been updated successfully.\n--- notes.txt\n+++ notes.txt\n'
        '<span style="color:#0550ae">@@ -1,3 +1,3 @@</span>\n first line\n'
        '<span style="color:#82071e;background:#ffebe9">-second line</span>\n'
        '<span style="color:#116329;background:#dafbe1">+line &lt;2&gt;</span>\n third line</pre>'
    )


def test_bundle_in_a_kernel_carries_the_widget(shell, monkeypatch):
    monkeypatch.setattr(display, "frontend_has_widgets", lambda: True)
    r = shell.run_line_magic("dsh", "list")
    data = r._repr_mimebundle_()
    assert data["text/plain"] == r.text and "<table>" in data["text/html"]
    view = r.widget()
    assert isinstance(view, ListingView)
    assert data[display.WIDGET_MIME]["model_id"] == view.model_id
    # beside the view, the key the JupyterLab extension draws: the view while it lives, else the HTML
    assert data[display.DSH_VIEW_MIME] == {"live": display.WIDGET_MIME, "saved": "text/html"}
    assert list(data) == [display.DSH_VIEW_MIME, display.WIDGET_MIME, "text/plain", "text/html"]
    assert r._repr_mimebundle_()[display.WIDGET_MIME]["model_id"] == view.model_id  # built once
    assert isinstance(shell.run_line_magic("dsh", "glob *.py").widget(), GlobView)
    # a frontend that asks for text only gets no widget built
    fresh = shell.run_line_magic("dsh", "read notes.txt")
    assert set(fresh._repr_mimebundle_(include=["text/plain"])) == {"text/plain"}
    assert getattr(fresh, "_view", None) is None
    no_view = shell.run_line_magic("dsh", "list")._repr_mimebundle_(exclude=[display.WIDGET_MIME])
    assert set(no_view) == {"text/plain", "text/html"}  # no key of ours without the view it stands beside
    no_key = shell.run_line_magic("dsh", "list")._repr_mimebundle_(exclude=[display.DSH_VIEW_MIME])
    assert set(no_key) == {display.WIDGET_MIME, "text/plain", "text/html"}


def test_no_widget_for_errors_and_writes(shell, monkeypatch):
    monkeypatch.setattr(display, "frontend_has_widgets", lambda: True)
    r = shell.run_line_magic("dsh", "read missing.txt")
    assert r.widget() is None and set(r._repr_mimebundle_()) == {"text/plain", "text/html"}


def test_plain_shell_builds_no_widget(shell):
    assert display.frontend_has_widgets() is False
    r = shell.run_line_magic("dsh", "list")
    r._repr_mimebundle_()
    assert getattr(r, "_view", None) is None


def test_kernel_result_keeps_the_core_fields(shell):
    r = shell.run_line_magic("dsh", "read notes.txt --limit 1")
    assert isinstance(r, KernelResult)
    assert r.args == {"file_path": "notes.txt", "limit": 1}
    assert str(r) == r.text and r.call_id and r.session == "default"


def test_call_log_html_is_a_summary_without_the_calls_text(shell):
    for _ in range(3):
        shell.run_line_magic("dsh", "read notes.txt")
    shell.run_cell("%%dsh write big.txt\n" + "w" * 3000 + "\n")
    r = shell.run_line_magic("dsh", "calls")
    body = r._repr_mimebundle_()["text/html"]
    assert "<table>" in body and "read" in body and "second line" not in body
    assert "&lt;3001 characters&gt;" in body and "w" * 100 not in body
    assert len(body) < 3000


def test_calls_info_shows_a_withheld_call_and_the_dropped_count_never_its_text():
    from dsh_jupyter.kernel.results import calls_info

    reason = "it was made where hidden files are shown, and this surface hides them"
    page = {
        "session": "s",
        "offset": 0,
        "total": 2,
        "dropped": 3,
        "calls": [
            {
                "callId": "a",
                "tool": "read",
                "args": {},
                "text": "",
                "isError": False,
                "surface": "mcp",
                "started": 1e9,
                "durationMs": 1.0,
                "withheld": reason,
            },
            {
                "callId": "b",
                "tool": "list",
                "args": {"path": "x"},
                "text": "t",
                "isError": False,
                "surface": "rest",
                "started": 1e9,
                "durationMs": 2.0,
            },
        ],
    }
    info = calls_info(page)
    lines = info.text.split("\n")
    assert lines[1].endswith(f"  mcp  read(withheld: {reason})  1.0 ms")
    assert lines[-1] == "(2 calls. 3 older calls were dropped by the call log's bounds.)"
    assert info.rows_[0]["text"] == f"(withheld: {reason})"


def test_a_structure_edit_shows_its_sentences_and_the_cells_before_and_after(shell, root):
    import nbformat
    from nbformat import v4

    cells = [v4.new_markdown_cell("# Intro", id="intro"), v4.new_code_cell("load()", id="load")]
    cells += [v4.new_code_cell("plot()", id="plot"), v4.new_markdown_cell("notes", id="notes")]
    cells += [v4.new_code_cell(f"c{i}", id=f"c{i}") for i in range(5, 13)]
    nbformat.write(v4.new_notebook(cells=cells), str(root / "nb.ipynb"))
    shell.run_line_magic("dsh", "read nb.ipynb")
    ops = (
        '[{"op": "delete", "cell_id": "plot"}, {"op": "set_type", "cell_id": "notes", "cell_type": "raw"},'
        ' {"op": "move", "cell_id": "load", "after": "c12"}]'
    )
    r = shell.run_line_magic("dsh", f"edit_cells nb.ipynb '{ops}'")
    assert r.text.startswith("The notebook nb.ipynb has been updated successfully: 3 operations.\n")
    assert r.value["operations"][0] == {"op": "delete", "cell": "plot", "cellType": "code", "was": 3}
    gone = "color:#82071e;background:#ffebe9;text-decoration:line-through"
    new, was = "color:#116329;background:#dafbe1", "color:#6e7781"
    assert r._repr_mimebundle_()["text/html"] == (
        '<pre class="dsh-cells-change">The notebook nb.ipynb has been updated successfully: 3 operations.\n'
        "1. deleted cell &quot;plot&quot; (code)\n"
        "2. changed cell &quot;notes&quot; from markdown to raw\n"
        "3. moved cell &quot;load&quot; (code) after &quot;c12&quot;</pre>"
        "<table><thead><tr><th>before</th><th>after</th></tr></thead><tbody><tr>"
        '<td style="vertical-align:top"><pre>   1 &quot;intro&quot; markdown\n'
        f'<span style="{was}">   2 &quot;load&quot; code</span>\n'
        f'<span style="{gone}">   3 &quot;plot&quot; code</span>\n'
        f'<span style="{was}">   4 &quot;notes&quot; markdown</span>\n'
        "   5 &quot;c5&quot; code\n"
        "   6 &quot;c6&quot; code\n"
        f'<span style="{was}">  …</span>\n'
        "  11 &quot;c11&quot; code\n"
        "  12 &quot;c12&quot; code</pre></td>"
        '<td style="vertical-align:top"><pre>   1 &quot;intro&quot; markdown\n'
        f'<span style="{new}">   2 &quot;notes&quot; raw</span>\n'
        "   3 &quot;c5&quot; code\n"
        "   4 &quot;c6&quot; code\n"
        f'<span style="{was}">  …</span>\n'
        "   9 &quot;c11&quot; code\n"
        "  10 &quot;c12&quot; code\n"
        f'<span style="{new}">  11 &quot;load&quot; code</span></pre></td>'
        "</tr></tbody></table>"
    )
