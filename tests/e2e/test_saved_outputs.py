"""End to end: a notebook of ``%dsh`` outputs, saved and reopened without its kernel, shows them.

A person runs ``%dsh list``, ``%dsh grep`` and ``%dsh read`` in JupyterLab and saves. Reopened
after a kernel restart, after a server restart (in JupyterLab and in Notebook 7), each output
shows its saved table under the note ``Saved output: run the cell again to browse it.``, never
ipywidgets' "Error displaying widget: model not found"; running the cells again brings the
live widgets back. The saved file holds, per output, the widget view, our own key beside it,
the model's exact text as ``text/plain`` and the table as ``text/html`` (what GitHub shows), and
``jupyter nbconvert --to html`` of it holds the tables. A copy the server never signed
(untrusted) shows the same tables, drawn by JupyterLab itself; with real-time collaboration on,
a notebook reopened after a kernel restart shows them too.
"""

from __future__ import annotations

import re
import subprocess
import sys

import nbformat
import pytest
from nbformat import v4

from .conftest import build_root, start_lab
from .helpers import ACTIVE, expect, open_notebook, output, run_notebook, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
CELLS = [
    "%load_ext dsh_jupyter\n%dsh session e2e-saved",
    "%dsh list src",
    "%dsh grep TODO src --include '*.py'",
    "%dsh read notes.txt",
]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
DSH_VIEW_MIME = "application/vnd.dsh-jupyter.view+json"
NOTE = "Saved output: run the cell again to browse it."
# What each saved output's table holds: a cell of its first row.
IN_TABLE = {1: "lib", 2: "TODO make it useful", 3: "second line"}


def write_notebook(root, name: str) -> None:
    nb = v4.new_notebook(metadata={"kernelspec": KERNELSPEC})
    nb.cells = [v4.new_code_cell(src) for src in CELLS]
    nbformat.write(nb, str(root / name))


def save(page) -> None:
    page.locator(f"{ACTIVE} .jp-Cell").first.click(position={"x": 5, "y": 5})  # command mode
    page.keyboard.press("Control+s")
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget; return !!w && !w.context.model.dirty; }",
        timeout=30_000,
    )


def saved_outputs(path) -> list[dict]:
    """The ``data`` of the one output of each ``%dsh`` cell, as the file holds it."""
    nb = nbformat.read(str(path), as_version=4)  # multi-line strings joined
    datas = []
    for cell in nb.cells[1:]:
        assert len(cell["outputs"]) == 1, cell["outputs"]
        datas.append(cell["outputs"][0]["data"])
    return datas


def expect_saved(page, scope: str = ACTIVE) -> None:
    """Every ``%dsh`` output shows its saved table under the note; no widget, no error."""
    cells = page.locator(f"{scope} .jp-Cell")
    for index, text in IN_TABLE.items():
        out = cells.nth(index).locator(".jp-OutputArea-output")
        saved = out.locator(".dsh-saved-output")
        expect()(saved).to_be_visible(timeout=60_000)
        expect()(saved.locator(".dsh-saved-note")).to_have_text(NOTE)
        expect()(saved.locator("table")).to_contain_text(text)
        expect()(out.locator(".dsh")).to_have_count(0)
    # what a person sees (innerText): ipywidgets' renderer may write its error into its own node,
    # which this extension keeps hidden under the saved form
    expect()(page.locator(scope)).not_to_contain_text("Error displaying widget", use_inner_text=True)
    expect()(page.locator(scope)).not_to_contain_text("Loading widget", use_inner_text=True)


def expect_live(page) -> None:
    for index in IN_TABLE:
        out = output(page, index)
        expect()(out.locator(".dsh").first).to_be_visible(timeout=60_000)
        expect()(out.locator(".dsh-saved-output")).to_be_hidden()


def test_after_a_kernel_restart_the_saved_tables_show_and_a_rerun_brings_the_widgets_back(page, lab, screenshot_dir):
    write_notebook(lab.root, "reopened.ipynb")
    run_notebook(page, lab, "reopened.ipynb")
    expect_live(page)
    save(page)

    datas = saved_outputs(lab.root / "reopened.ipynb")
    for index, data in enumerate(datas, start=1):
        assert data[DSH_VIEW_MIME] == {"live": WIDGET_MIME, "saved": "text/html"}
        assert data[WIDGET_MIME]["model_id"]
        assert "<table>" in data["text/html"] and IN_TABLE[index] in data["text/html"]
        assert "model not found" not in data["text/html"] + data["text/plain"]
    # the model's own text, as the model saw it
    assert datas[0]["text/plain"].startswith("<path>src</path>\n<type>directory</type>\n<content>\napp/\nlib/\n")
    assert datas[1]["text/plain"].startswith(
        "Found 13 matches\n\nsrc/app/main.py\nLine 7: value_5 = 5  # TODO check 5\n"
    )
    assert "\n1: first line\n2: second line\n\n(End of file - total 2 lines)\n" in datas[2]["text/plain"]

    # nbconvert, as a person would run it on the saved file: the tables, no widget error
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--stdout", "reopened.ipynb"],
        cwd=lab.root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    # the three tables (the session cell shows one more when its session is new: not counted)
    assert done.stdout.count("<table>") >= 3 and all(text in done.stdout for text in IN_TABLE.values())
    assert "model not found" not in done.stdout and "Error displaying widget" not in done.stdout

    open_notebook(page, lab, "reopened.ipynb")  # reloaded while the kernel runs: ipywidgets restores the live views
    expect_live(page)

    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.restartKernel()")
    open_notebook(page, lab, "reopened.ipynb")  # the page reloaded: the restarted kernel has no widgets
    expect_saved(page)
    screenshot(page, output(page, 1), screenshot_dir / "saved-output.png")

    # Run All, as a person does (the first cell's input prompt of a reopened notebook can stay
    # blank, so run_all_cells' wait on the prompts is not used here: the widgets are waited for)
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-item", has_text=re.compile(r"^Run All Cells")).click()
    expect_live(page)


def test_after_a_server_restart_jupyterlab_and_notebook7_show_the_saved_tables(page, tmp_path_factory, chromium):
    tmp = tmp_path_factory.mktemp("restarted-lab")
    root = build_root(tmp / "root")
    write_notebook(root, "restarted.ipynb")
    server = start_lab(tmp, root)
    try:
        run_notebook(page, server, "restarted.ipynb")
        expect_live(page)
        save(page)
    finally:
        server.stop()
    assert all(WIDGET_MIME in data for data in saved_outputs(root / "restarted.ipynb"))

    server = start_lab(tmp, root)  # the same server, started again: no kernel holds the widgets
    try:
        open_notebook(page, server, "restarted.ipynb")
        expect_saved(page)

        page.goto(f"{server.url}notebooks/restarted.ipynb?token={server.token}")
        page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(timeout=90_000)
        expect_saved(page, ".jp-NotebookPanel")

        # a colleague's copy, which this server never signed: untrusted, so JupyterLab itself
        # draws the sanitized text/html (the same table, without the note)
        nb = nbformat.read(str(root / "restarted.ipynb"), as_version=4)
        nb.metadata["colleague"] = True
        nbformat.write(nb, str(root / "colleague.ipynb"))
        open_notebook(page, server, "colleague.ipynb")
        for index, text in IN_TABLE.items():
            expect()(output(page, index).locator("table")).to_contain_text(text, timeout=60_000)
        expect()(page.locator(ACTIVE)).not_to_contain_text("Error displaying widget")
        expect()(page.locator(f"{ACTIVE} .dsh-saved-note")).to_have_count(0)
    finally:
        server.stop()


def test_with_collaboration_a_reopened_notebook_shows_the_saved_tables(page, tmp_path_factory, chromium):
    """With jupyter-collaboration the notebook lives in the server's shared document: reopened
    after a kernel restart it shows the saved tables the same way."""
    tmp = tmp_path_factory.mktemp("collab-saved")
    root = build_root(tmp / "root")
    write_notebook(root, "shared.ipynb")
    server = start_lab(tmp, root, collaborative=True)
    try:
        run_notebook(page, server, "shared.ipynb")
        expect_live(page)
        save(page)
        assert all(WIDGET_MIME in data for data in saved_outputs(root / "shared.ipynb"))
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.restartKernel()")
        open_notebook(page, server, "shared.ipynb")
        expect_saved(page)
    finally:
        server.stop()
