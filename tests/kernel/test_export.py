"""A notebook run headless in a real kernel, then exported to HTML, still tells the truth.

JupyterLab does not save widget state by default, and nbconvert's HTML exporter skips a widget
view it has no state for: the exported page must then show the ``text/html`` table with the
model's footer, and the notebook must carry the exact model text as ``text/plain``.
"""

from __future__ import annotations

import html

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

from dsh_jupyter import Workspace


@pytest.mark.slow
def test_executed_notebook_exports_the_table_and_footer(env, root, tree):
    tree(root, {"many": {f"f{i:02}.txt": "x\n" for i in range(12)}})
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext dsh_jupyter\n%config DshMagics.list_max_entries = 5"),
        nbformat.v4.new_code_cell("%dsh list many"),
    ]
    NotebookClient(
        nb, timeout=120, kernel_name="python3", store_widget_state=False, resources={"metadata": {"path": str(root)}}
    ).execute()
    output = nb.cells[1].outputs[0]
    expected = Workspace(session="check", list_max_entries=5).run("list", path="many")
    assert output["output_type"] == "execute_result"
    assert "application/vnd.jupyter.widget-view+json" in output["data"]  # a kernel offers the widget
    # and, beside it, the key the JupyterLab extension draws (the saved HTML once the kernel is gone)
    assert output["data"]["application/vnd.dsh-jupyter.view+json"] == {
        "live": "application/vnd.jupyter.widget-view+json",
        "saved": "text/html",
    }
    assert output["data"]["text/plain"] == expected.text
    body, _ = HTMLExporter().from_notebook_node(nb)
    assert "<table>" in body and "f00.txt" in body
    assert html.escape(expected.footer()) in body
    assert "model not found" not in body and "dsh-jupyter.view" not in body
    assert "Showing entries 1-5 of 12" in expected.footer()
