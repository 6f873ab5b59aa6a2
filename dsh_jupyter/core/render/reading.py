"""Model text for ``read``.

A read window's footer tells which lines were shown and how to continue; a window that stops at
the byte cap says so rather than passing for the end of the file.
"""

from __future__ import annotations

from .common import count, envelope
from .notebook import render_notebook

__all__ = ["read_footer", "render_read"]


def read_footer(first: int, last: int, total: int | None, capped: bool) -> str:
    if total is not None and last >= total:
        return f"(End of file - total {count(total, 'line')})"
    if capped:
        return f"(Output capped. Showing lines {first}-{last}. Use offset={last + 1} to continue.)"
    if total is None:
        return f"(Showing lines {first}-{last}. Use offset={last + 1} to continue.)"
    return f"(Showing lines {first}-{last} of {total}. Use offset={last + 1} to continue.)"


def render_read(value: dict) -> str:
    """``value``: path, offset, lines [{number, text}], totalLines (int|None), capped; or a notebook's cells."""
    if value.get("type") == "notebook":
        return render_notebook(value)
    lines = [f"{line['number']}: {line['text']}" for line in value["lines"]]
    first = value["offset"]
    last = first + len(lines) - 1
    footer = read_footer(first, last, value["totalLines"], value["capped"])
    if value.get("note"):  # a .ipynb shown as text says why it is not shown as cells
        footer = f"{value['note']}\n{footer}"
    return envelope(value["path"], "file", lines, footer)
