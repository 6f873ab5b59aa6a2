"""What every answer says when a person has the file open in JupyterLab (``value["open"]``), exactly."""

from __future__ import annotations

import pytest

from dsh_jupyter.core.render.reading import render_read
from dsh_jupyter.core.render.writing import render_edit, render_move, render_write

LINES = [{"number": 1, "text": "x = 1"}]


@pytest.mark.parametrize(
    "open_as,note",
    [
        ("shared", "(This file is open in JupyterLab: shown as its live document, unsaved changes included.)"),
        ("tab", "(This file is open in JupyterLab, with no unsaved changes.)"),
        (
            "unsaved",
            "(This file is open in JupyterLab with unsaved changes, which this read does not show; a change to "
            "it is refused until they are saved.)",
        ),
    ],
)
def test_a_read_says_the_file_is_open_in_one_sentence_before_the_footer(open_as, note):
    value = {"path": "a.py", "offset": 1, "lines": LINES, "totalLines": 1, "capped": False, "open": open_as}
    assert render_read(value) == (
        f"<path>a.py</path>\n<type>file</type>\n<content>\n1: x = 1\n\n{note}\n(End of file - total 1 line)\n</content>"
    )


def test_a_notebook_open_in_a_tab_says_so_and_a_shared_one_keeps_its_sentence():
    cells = [
        {"index": 1, "id": "a", "type": "code", "executionCount": None, "lines": LINES, "totalLines": 1, "outputs": []}
    ]
    value = {"path": "n.ipynb", "type": "notebook", "offset": 1, "cells": cells, "totalCells": 1, "capped": False}
    tab = render_read({**value, "open": "tab"})
    assert tab.endswith(
        "\n(This file is open in JupyterLab, with no unsaved changes.)\n(End of notebook - total 1 cell)\n</content>"
    )
    shared = render_read({**value, "live": True, "open": "shared"})
    assert "(This notebook is open in Jupyter: shown as its live document, unsaved changes included.)\n" in shared


def test_a_change_says_where_it_went():
    edit = {"path": "a.py", "replaceAll": False, "replacements": 1, "diff": "@@ -1 +1 @@\n-x\n+y", "diffLines": 3}
    assert render_edit({**edit, "open": "tab"}).split("\n")[0] == (
        "The file a.py has been updated successfully. The change went to the file open in JupyterLab, which saved it."
    )
    assert render_edit({**edit, "open": "shared"}).split("\n")[0] == (
        "The file a.py has been updated successfully. The change went to the file open in JupyterLab, which saves it."
    )
    assert render_edit(edit).split("\n")[0] == "The file a.py has been updated successfully."
    write = {"path": "a.py", "operation": "update", "bytes": 4}
    assert render_write({**write, "open": "tab"}) == (
        "<path>a.py</path>\n<type>file</type>\n<content>\nUpdated file. The change went to the file open in "
        "JupyterLab, which saved it.\n</content>"
    )
    move = {"source": "a.py", "destination": "b.py", "type": "file", "replaced": False, "createdParents": False}
    assert (
        render_move({**move, "open": "tab"})
        == "Moved file a.py to b.py. It was open in JupyterLab, and its tab follows it."
    )
    assert render_move(move) == "Moved file a.py to b.py."
