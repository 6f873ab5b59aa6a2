"""End to end: an edit over REST reaches a notebook open in JupyterLab through its shared document.

The lab runs jupyter-collaboration with real-time collaboration on (the ``[collab]`` extra,
installed with the test extra; the ``collab_lab`` fixture). A person
has ``live.ipynb`` open and has typed into its second cell without saving; an agent reads the
notebook and edits its first cell over REST. The open notebook shows the edit without a reload
and without a "file changed" dialog, the person's typing is still there, and the file the room
saves is a valid notebook holding both.
"""

from __future__ import annotations

import json
import time

import nbformat
import pytest
from nbformat import v4

from .helpers import ACTIVE, expect, wait_for_kernel_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TYPED = "# typed, not saved"


def saved_when(path, predicate, timeout: float = 60.0):
    """The notebook on disk once ``predicate(nb)`` holds (the room saves a second after a change)."""
    deadline = time.monotonic() + timeout
    nb = None
    while time.monotonic() < deadline:
        try:
            nb = nbformat.read(str(path), as_version=nbformat.NO_CONVERT)
        except (ValueError, OSError):
            nb = None
        if nb is not None and predicate(nb):
            return nb
        time.sleep(0.2)
    return nb


def document_has(lab, path: str, text: str, timeout: float = 30.0) -> bool:
    """The open notebook's shared document on the server holds ``text`` (read in a session of its own)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in lab.tool("read", session="live-sync", file_path=path)["text"]:
            return True
        time.sleep(0.2)
    return False


def test_a_rest_edit_shows_in_the_open_notebook_and_keeps_unsaved_typing(page, collab_lab):
    lab = collab_lab
    path = lab.root / "live.ipynb"
    kernelspec = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(
        v4.new_notebook(
            metadata={"kernelspec": kernelspec},
            cells=[
                v4.new_code_cell("threshold = 1\nprint(threshold)", id="first"),
                v4.new_code_cell("", id="second"),
            ],
        ),
        str(path),
    )
    page.goto(f"{lab.url}lab/tree/live.ipynb?reset&token={lab.token}")
    cells = page.locator(f"{ACTIVE} .jp-Cell")
    expect()(cells.nth(0).locator(".cm-content")).to_contain_text("threshold = 1", timeout=90_000)
    wait_for_kernel_idle(page)
    expect()(page.locator(".jp-Dialog")).to_have_count(0)
    page.evaluate("() => { window.__dshNoReload = true; }")
    cells.nth(1).locator(".cm-content").click()
    page.keyboard.type(TYPED)
    expect()(cells.nth(1).locator(".cm-content")).to_have_text(TYPED)

    # the page shows the typing before its update has reached the server's document: wait for it there
    assert document_has(lab, "live.ipynb", TYPED)
    read = lab.tool("read", session="live", file_path="live.ipynb")
    assert read["value"]["live"] is True, read
    # the person's typing is in the document the agent reads
    assert (
        read["text"]
        == f"""<path>live.ipynb</path>
<type>notebook</type>
<content>
<cell index="1" id="first" type="code">
1: threshold = 1
2: print(threshold)
</cell>
<cell index="2" id="second" type="code">
1: {TYPED}
</cell>

(This notebook is open in Jupyter: shown as its live document, unsaved changes included.)
(End of notebook - total 2 cells)
</content>"""
    )

    diff = (
        '--- live.ipynb cell 1 (id="first")\n+++ live.ipynb cell 1 (id="first")\n@@ -1,2 +1,2 @@\n'
        "-threshold = 1\n+threshold = 42\n print(threshold)"
    )
    preview = lab.tool(
        "edit",
        session="live",
        file_path="live.ipynb",
        old_string="threshold = 1",
        new_string="threshold = 42",
        dry_run=True,
    )
    assert preview["text"] == "Dry run: live.ipynb was not changed. The edit would make 1 replacement:\n" + diff
    expect()(cells.nth(0).locator(".cm-content")).to_contain_text("threshold = 1")  # the document as it was
    edit = lab.tool(
        "edit", session="live", file_path="live.ipynb", old_string="threshold = 1", new_string="threshold = 42"
    )
    assert edit["text"] == (
        "The file live.ipynb has been updated successfully. The change went to the notebook "
        "open in Jupyter, which saves it.\n" + diff
    ), edit
    assert edit["value"]["live"] is True and edit["value"]["cells"] == [1]

    expect()(cells.nth(0).locator(".cm-content")).to_contain_text("threshold = 42")
    expect()(cells.nth(1).locator(".cm-content")).to_have_text(TYPED)
    assert page.evaluate("() => window.__dshNoReload === true")  # no reload
    expect()(page.locator(".jp-Dialog")).to_have_count(0)  # no "file changed" dialog

    nb = saved_when(path, lambda nb: "threshold = 42" in nb.cells[0].source and nb.cells[1].source == TYPED)
    assert nb is not None and nb.cells[0].source == "threshold = 42\nprint(threshold)", nb
    assert nb.cells[1].source == TYPED and [c.id for c in nb.cells] == ["first", "second"]
    nbformat.validate(nb)
    json.loads(path.read_text(encoding="utf-8"))

    # the gate holds with the document's version: the person types again, the agent must read again
    cells.nth(1).locator(".cm-content").click()
    page.keyboard.press("End")
    page.keyboard.type("!")
    expect()(cells.nth(1).locator(".cm-content")).to_have_text(TYPED + "!")
    assert document_has(lab, "live.ipynb", TYPED + "!")
    again = lab.request(
        "POST",
        "dsh/api/tools/edit",
        {
            "session": "live",
            "args": {"file_path": "live.ipynb", "old_string": "threshold = 42", "new_string": "threshold = 7"},
        },
    )[1]
    assert again["value"]["code"] == "FS_NOT_OBSERVED", again
    assert again["text"] == (
        'Error: cannot write "live.ipynb": it changed since this session last read it; read it again'
    )
    expect()(cells.nth(0).locator(".cm-content")).to_contain_text("threshold = 42")

    # a whole-notebook write of the open notebook replaces the document, again without a dialog
    assert lab.tool("read", session="live", file_path="live.ipynb")["value"]["live"] is True
    content = nbformat.writes(
        v4.new_notebook(
            metadata={"kernelspec": kernelspec},
            cells=[v4.new_markdown_cell("# Rewritten", id="title"), v4.new_code_cell("threshold = 3", id="first")],
        )
    )
    wrote = lab.tool("write", session="live", file_path="live.ipynb", content=content)
    assert wrote["text"] == (
        "<path>live.ipynb</path>\n<type>file</type>\n<content>\nUpdated file. The change went "
        "to the notebook open in Jupyter, which saves it.\n</content>"
    ), wrote
    expect()(cells).to_have_count(2)
    expect()(cells.nth(1).locator(".cm-content")).to_have_text("threshold = 3")
    expect()(page.locator(".jp-Dialog")).to_have_count(0)
    assert page.evaluate("() => window.__dshNoReload === true")
    nb = saved_when(path, lambda nb: [c.source for c in nb.cells] == ["# Rewritten", "threshold = 3"])
    assert [c.source for c in nb.cells] == ["# Rewritten", "threshold = 3"]
    nbformat.validate(nb)
