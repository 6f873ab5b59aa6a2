"""Notebooks over REST on a real ``jupyter server`` that runs jupyter-collaboration.

A notebook nobody has open is read, searched and edited as a file (no room is created for it);
the cell view, ``Cell C, line L`` and ``NOTEBOOK_INVALID`` reach the REST surface unchanged. The
open-notebook path is the browser test's (tests/e2e/test_live_notebook.py).
"""

from __future__ import annotations

import os

import nbformat
import pytest
from nbformat import v4
from servers import JupyterProcess

pytestmark = pytest.mark.slow

TOKEN = "nb-token"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nb-real")
    root = tmp / "tree"
    root.mkdir()
    root = type(root)(os.path.realpath(root))
    nbformat.write(
        v4.new_notebook(cells=[v4.new_code_cell("df = load()\nplot(df)", id="plot")]), str(root / "nb.ipynb")
    )
    srv = JupyterProcess.start(tmp, root, token=TOKEN, timeout=60)
    try:
        yield srv
    finally:
        srv.stop()


def call(server, tool, session="nb", **args):
    return server.tool(tool, session, **args)


def test_the_collaboration_extension_is_running(server):
    status, listing = server.request("GET", "api/collaboration/session/nb.ipynb", None)
    assert status in (404, 405), (status, listing)  # its routes exist (a GET is not how a room is made)
    assert "jupyter_server_ydoc" in server.log.read_text(errors="replace")


def test_a_notebook_not_open_is_read_grepped_and_edited_as_a_file(server):
    read = call(server, "read", file_path="nb.ipynb")
    assert read["text"] == (
        '<path>nb.ipynb</path>\n<type>notebook</type>\n<content>\n<cell index="1" id="plot" type="code">\n'
        "1: df = load()\n2: plot(df)\n</cell>\n\n(End of notebook - total 1 cell)\n</content>"
    )
    assert read["value"]["live"] is False
    grep = call(server, "grep", pattern="plot")
    assert grep["text"] == "Found 1 match\n\nnb.ipynb\nCell 1, line 2: plot(df)"
    assert (grep["value"]["matches"][0]["cell"], grep["value"]["matches"][0]["cellId"]) == (1, "plot")
    edit = call(server, "edit", file_path="nb.ipynb", old_string="plot(df)", new_string="show(df)", cell_id="plot")
    assert edit["text"].split("\n")[0] == "The file nb.ipynb has been updated successfully."
    assert "live" not in edit["value"]
    nb = nbformat.read(str(server.root / "nb.ipynb"), as_version=4)
    assert nb.cells[0].source == "df = load()\nshow(df)"


def test_an_invalid_notebook_is_refused_over_rest(server):
    bad = call(server, "write", file_path="new.ipynb", content='{"cells": []}')
    assert bad["isError"] and bad["value"]["code"] == "NOTEBOOK_INVALID"
    assert (
        bad["text"]
        == 'Error: cannot write "new.ipynb": it is not a valid notebook: it has no nbformat version; nothing was written'
    )
    assert not (server.root / "new.ipynb").exists()


def test_an_output_read_whole_and_the_outline_over_rest(server):
    """The by-cell arguments reach the tool through REST (the schema is the route's)."""
    nbformat.write(
        v4.new_notebook(
            cells=[
                v4.new_markdown_cell("# Run", id="h"),
                v4.new_code_cell(
                    "run()",
                    id="run",
                    execution_count=1,
                    outputs=[
                        v4.new_output("stream", name="stdout", text="".join(f"step {i}\n" for i in range(1, 501)))
                    ],
                ),
            ]
        ),
        str(server.root / "out.ipynb"),
    )
    out = call(server, "read", file_path="out.ipynb", cell_id="run", output=1, offset=499)
    assert out["text"] == (
        "<path>out.ipynb</path>\n<type>output</type>\n<content>\n"
        '[cell 2 id="run", output 1: stream stdout]\n499: step 499\n500: step 500\n\n'
        "(End of output - total 500 lines)\n</content>"
    )
    assert out["value"]["totalLines"] == 500 and out["value"]["live"] is False
    outline = call(server, "read", file_path="out.ipynb", outline=True)
    assert outline["text"] == (
        "<path>out.ipynb</path>\n<type>outline</type>\n<content>\n"
        '[cell 1 id="h", section of 2 cells] # Run\n[cell 2 id="run", code] run()\n\n'
        "(End of outline - total 2 cells, 1 heading)\n</content>"
    )
    bad = call(server, "read", file_path="out.ipynb", cell_id="run", output=2)
    assert bad["isError"] and bad["value"]["code"] == "ARGUMENT_INVALID"
    assert bad["text"] == 'Error: output 2 is out of range: cell "run" of "out.ipynb" has 1 output'
