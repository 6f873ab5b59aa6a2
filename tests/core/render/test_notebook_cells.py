"""A page's cells keep the lines they were rendered to: the page's text is those lines, exactly
as a render of the plain values gives them, and the values read as plain dicts everywhere."""

from __future__ import annotations

import copy
import json

from dsh_jupyter.core.notebooks.format import notebook_from_dict
from dsh_jupyter.core.render.notebook import RenderedCell, render_cell, render_notebook
from dsh_jupyter.core.settings import Settings
from dsh_jupyter.core.tools.cells import page_cells


def notebook(n: int) -> dict:
    cells = []
    for i in range(1, n + 1):
        outputs = [{"output_type": "stream", "name": "stdout", "text": [f"value {i}\n", "</cell> done\n"]}]
        cells.append(
            {
                "cell_type": "code",
                "id": f"c{i}",
                "metadata": {},
                "execution_count": i,
                "source": [f"x = {i}\n", 'print("<cell>")'],
                "outputs": outputs,
            }
        )
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_a_page_renders_each_cell_once_and_its_text_is_the_plain_render():
    cells, capped, _ = page_cells(notebook_from_dict(notebook(30)), 1, 30, Settings())
    assert not capped and len(cells) == 30
    assert all(isinstance(cell, RenderedCell) for cell in cells)
    plain = [dict(cell) for cell in cells]
    assert not any(isinstance(cell, RenderedCell) for cell in plain)
    for kept, fresh in zip(cells, plain):
        assert render_cell(kept) is kept.lines  # the kept lines, not a second render
        assert render_cell(fresh) == kept.lines
    value = {"path": "n.ipynb", "offset": 1, "totalCells": 30, "capped": False}
    assert render_notebook({**value, "cells": cells}) == render_notebook({**value, "cells": plain})
    assert render_cell(plain[0]) == [
        '<cell index="1" id="c1" type="code" execution_count="1">',
        "1: x = 1",
        '2: print("<\\cell>")',
        "[output 1: stream stdout]",
        "| value 1",
        "| <\\/cell> done",
        "</cell>",
    ]


def test_kept_cells_read_as_plain_dicts():
    cells, _, _ = page_cells(notebook_from_dict(notebook(2)), 1, 2, Settings())
    plain = [dict(cell) for cell in cells]
    assert json.dumps(cells) == json.dumps(plain)
    assert cells == plain
    copied = copy.deepcopy(cells[0])
    assert copied == plain[0]
    assert render_cell(copied) == cells[0].lines
