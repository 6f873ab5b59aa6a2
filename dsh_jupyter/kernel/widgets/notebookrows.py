"""The rows a read window draws for a page of notebook cells, and where a grep hit in a cell is.

Why it exists: ``read`` of a notebook returns cells, not lines; the window still draws one page of
``[number, text]`` rows in the code font. Each cell becomes a header row (its index, type, id and
execution count), its numbered source lines, and its outputs summarised exactly as the model sees
them (``[output 1: stream stdout]``, ``| text``, ``[image/png: 1032 bytes]``), from the core's own
cell renderer, so the widget never shows more (or other) than the model text.

What it must never do: load anything (it only reshapes a value), or show base64.
"""

from __future__ import annotations

import re

from ...core.render.notebook import render_cell

__all__ = ["notebook_rows", "notebook_rows_and_outputs"]

_SOURCE = re.compile(r"(\d+): ")
_OUTPUT_HEAD = re.compile(r"\[output (\d+)[:\]]")  # the header row of a cell's output K


def _head(cell: dict) -> str:
    parts = [f"{cell['type']} cell {cell['index']}"]
    if cell.get("id") is not None:
        parts.append(f"id {cell['id']}")
    if cell.get("executionCount") is not None:
        parts.append(f"In [{cell['executionCount']}]")
    return " · ".join(parts)


def notebook_rows(cells: list[dict], hit_cell: int = 0, hit_line: int = 0) -> tuple[list[list], int | None]:
    """``([number, text, kind], ...)`` for ``cells`` and the row of line ``hit_line`` of cell ``hit_cell``.

    ``kind`` is ``cell`` (a header: number ``#N``), ``source`` (number: the line in the cell) or
    ``output`` (no number). The hit row is the cell's header when the line is not shown.
    """
    rows, hit, _ = notebook_rows_and_outputs(cells, hit_cell, hit_line)
    return rows, hit


def notebook_rows_and_outputs(
    cells: list[dict], hit_cell: int = 0, hit_line: int = 0
) -> tuple[list[list], int | None, list]:
    """``notebook_rows`` and, per row, the output it heads: ``(cell_id, K)`` on an output's
    ``[output K: ...]`` row (``cell_id`` is the cell's id, or its index in a notebook without ids,
    as ``read`` takes it), None on every other row."""
    rows: list[list] = []
    outputs: list = []
    hit: int | None = None
    for cell in cells:
        lines = render_cell(cell)
        here = cell["index"] == hit_cell
        if here:
            hit = len(rows)
        rows.append([f"#{cell['index']}", _head(cell), "cell"])
        outputs.append(None)
        ref = cell["id"] if cell.get("id") is not None else str(cell["index"])
        for line in lines[1:-1]:  # the model's <cell …> header and </cell> are drawn as the row above
            m = _SOURCE.match(line)
            if m and not line.startswith(("[", "|")):
                number = int(m.group(1))
                if here and number == hit_line:
                    hit = len(rows)
                rows.append([number, line[m.end() :], "source"])
                outputs.append(None)
            else:
                rows.append(["", line, "output"])
                head = _OUTPUT_HEAD.match(line)
                outputs.append((ref, int(head.group(1))) if head else None)
    return rows, hit, outputs
