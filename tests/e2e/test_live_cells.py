"""End to end: ``edit_cells`` over REST changes the cells of a notebook open in JupyterLab.

The lab runs jupyter-collaboration (the ``collab_lab`` fixture). A person has ``cells.ipynb`` open
and types into its second cell without saving; an agent reads the notebook and inserts, moves and
deletes cells over REST. The open notebook shows the new cell order without a reload and without
a "file changed" dialog, the person's typing is still in their cell, the person goes on typing in
it with real keys after the change, and the file the room saves is a valid notebook holding both.
"""

from __future__ import annotations

import json
import time

import nbformat
import pytest
from nbformat import v4

from .helpers import ACTIVE, expect, wait_for_kernel_idle
from .test_live_notebook import document_has, saved_when

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TYPED = "# typed, not saved"
# The open notebook's cells as the page holds them at each layer: the shared document, the notebook
# model and the cell widgets (ids and the start of each source), when a test finds them out of step.
LAYERS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const model = panel.content.model;
  const brief = c => `${c.id}: ${(c.source ?? c.sharedModel?.getSource() ?? "").slice(0, 30)}`;
  return {
    shared: model.sharedModel.cells.map(c => brief({id: c.id, source: c.getSource()})),
    model: Array.from(model.cells, c => brief({id: c.id, source: c.sharedModel.getSource()})),
    widgets: panel.content.widgets.map(w => brief({id: w.model.id, source: w.model.sharedModel.getSource()})),
    drawn: Array.from(panel.content.node.querySelectorAll(".jp-Cell .cm-content"), n => n.textContent.slice(0, 30)),
  };
}"""
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
TRACKER = "lab/api/settings/@jupyterlab/notebook-extension:tracker"


@pytest.fixture
def every_cell_attached(collab_lab):
    """JupyterLab's notebook attaching every cell to the page (``windowingMode`` "none") for this
    test, and its default again after it (the other tests of the lab keep the default).

    Why: in the default windowing ("contentVisibility") JupyterLab 4.6 attaches cell widgets while
    the browser is idle. In full runs, on a loaded machine, the page drew only part of the
    notebook for a minute after it opened (before any change), and after the change one inserted
    cell stayed undrawn for 45 s, scrolled through once, while the shared document, the notebook
    model and the cell widgets all held the 4 cells in the new order. What this test asserts is
    the cells' order and the person's typing at every layer and on screen, not the windowing."""
    status, _ = collab_lab.request("PUT", TRACKER, {"raw": json.dumps({"windowingMode": "none"})})
    assert status == 204, status
    yield
    status, _ = collab_lab.request("PUT", TRACKER, {"raw": "{}"})
    assert status == 204, status


def test_edit_cells_reorders_the_open_notebook_and_keeps_the_persons_typing(page, collab_lab, every_cell_attached):
    lab = collab_lab
    path = lab.root / "cells.ipynb"
    nbformat.write(
        v4.new_notebook(
            metadata={"kernelspec": KERNELSPEC},
            cells=[
                v4.new_code_cell("first = 1", id="first"),
                v4.new_code_cell("second = 2", id="second"),
                v4.new_code_cell("third = 3", id="third"),
                v4.new_markdown_cell("old notes", id="old"),
            ],
        ),
        str(path),
    )
    cells = page.locator(f"{ACTIVE} .jp-Cell")
    # every cell drawn before the person types and the agent acts. In full runs the page was seen
    # to draw 1, then 2 of the 4 cells and no more for a minute, before any change: opened again
    # (at most twice more), and if it still does not draw them, the failure names the page's layers
    for attempt in range(3):
        page.goto(f"{lab.url}lab/tree/cells.ipynb?reset&token={lab.token}")
        expect()(cells.nth(0).locator(".cm-content")).to_contain_text("first = 1", timeout=90_000)
        try:
            expect()(cells).to_have_count(4, timeout=20_000)
            for i, text in enumerate(["first = 1", "second = 2", "third = 3"]):
                expect()(cells.nth(i).locator(".cm-content")).to_have_text(text, timeout=20_000)
            break
        except AssertionError as exc:
            layers = page.evaluate(LAYERS)
            print(f"opening {attempt + 1} drew part of the notebook: {layers}")
            if attempt == 2:
                raise AssertionError(f"{exc}\nthe page's layers: {layers}") from None
    assert page.evaluate("() => window.jupyterapp.shell.currentWidget.content.notebookConfig.windowingMode") == "none"
    wait_for_kernel_idle(page)
    expect()(page.locator(".jp-Dialog")).to_have_count(0)
    page.evaluate("() => { window.__dshNoReload = true; }")
    cells.nth(1).locator(".cm-content").click()
    page.keyboard.press("End")
    page.keyboard.type("  " + TYPED)
    expect()(cells.nth(1).locator(".cm-content")).to_have_text("second = 2  " + TYPED)
    assert document_has(lab, "cells.ipynb", TYPED)

    assert lab.tool("read", session="cells", file_path="cells.ipynb")["value"]["live"] is True
    changed = lab.tool(
        "edit_cells",
        session="cells",
        file_path="cells.ipynb",
        operations=[
            {"op": "insert", "cell_type": "code", "source": "inserted = 0", "after": "first"},
            {"op": "move", "cell_id": "third", "at": "start"},
            {"op": "delete", "cell_id": "old"},
        ],
    )
    assert not changed["isError"], changed
    new = changed["value"]["operations"][0]["cell"]
    assert changed["text"] == (
        "The notebook cells.ipynb has been updated successfully: 3 operations. The change went to the notebook "
        "open in Jupyter, which saves it.\n"
        f'1. inserted cell "{new}" (code) after "first"\n'
        '2. moved cell "third" (code) to the start\n'
        '3. deleted cell "old" (markdown)\n'
        "Cell order now (4 cells), around the changes:\n"
        '* 1 "third" code\n'
        '  2 "first" code\n'
        f'* 3 "{new}" code\n'
        '  4 "second" code'
    )

    # the page shows the new order without a reload or a dialog, the typing where it was (the
    # shared document's updates reach the page in well under a second; a loaded machine was seen
    # to take longer than the default 5 s)
    want = ["third = 3", "first = 1", "inserted = 0", "second = 2  " + TYPED]
    held = [f"{cell_id}: {text[:30]}" for cell_id, text in zip(["third", "first", new, "second"], want, strict=True)]
    deadline = time.monotonic() + 30
    while (layers := page.evaluate(LAYERS))["widgets"] != held:  # JupyterLab's cells, in order
        assert time.monotonic() < deadline, f"the page's layers: {layers}"
        time.sleep(0.2)
    # JupyterLab attaches its cell widgets to the page itself (while the browser is idle, in its
    # default windowing); under load one inserted cell was seen held back for 30 s while every layer
    # above was right: the notebook is scrolled through once, as a person would, then checked again
    for last_try in (False, True):
        try:
            expect()(cells).to_have_count(4, timeout=15_000 if last_try else 30_000)
            for i, text in enumerate(want):
                expect()(cells.nth(i).locator(".cm-content")).to_have_text(text, timeout=15_000)
            break
        except AssertionError as exc:
            if last_try:
                raise AssertionError(f"{exc}\nthe page's layers: {page.evaluate(LAYERS)}") from None
            print(f"drawn in part after the change: {page.evaluate(LAYERS)}")
            cells.last.scroll_into_view_if_needed()
            cells.first.scroll_into_view_if_needed()
    expect()(page.locator(".jp-Dialog")).to_have_count(0)
    assert page.evaluate("() => window.__dshNoReload === true")

    # the person goes on typing in their cell, which the change never replaced
    cells.nth(3).locator(".cm-content").click()
    page.keyboard.press("End")
    page.keyboard.type("!")
    expect()(cells.nth(3).locator(".cm-content")).to_have_text("second = 2  " + TYPED + "!")
    assert document_has(lab, "cells.ipynb", TYPED + "!")

    def holds_all(nb) -> bool:
        return [c.source for c in nb.cells] == [*want[:3], "second = 2  " + TYPED + "!"]

    nb = saved_when(path, holds_all)
    assert nb is not None and holds_all(nb), nb
    assert [c.id for c in nb.cells] == ["third", "first", new, "second"]
    nbformat.validate(nb)
    time.sleep(0.5)
    expect()(page.locator(".jp-Dialog")).to_have_count(0)
