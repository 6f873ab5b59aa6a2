"""Model text for a notebook's outline (``read`` with ``outline=true``).

Why it exists: a long notebook is found by its headings, as a person finds it by the table of
contents; the outline shows each markdown heading with the cell it starts at and the cells its
section holds, and each code cell's first line, so the model can then read the cells it wants
(``offset`` = the cell index a row names). Its footer counts cells as the cell view's does, so a
page of the outline never passes for the whole.

Structure is unforgeable by content: every row starts with the view's own ``[cell N ...]`` and
ends with the cell's text, escaped as the cell view escapes it (``cell_text``: no line break of
its own, no tag of the view).

What it must never do: touch the filesystem, or omit the footer.
"""

from __future__ import annotations

from ..text.quoting import in_message
from .common import count, envelope
from .notebook import cell_text, opened_note

__all__ = ["outline_footer", "outline_next_offset", "outline_page_footer", "outline_row", "render_outline"]


def outline_row(entry: dict) -> str:
    """``[cell 3 id="load", section of 4 cells] ## Loading`` or ``[cell 4 id="read", code] df = load()``."""
    where = f"cell {entry['cell']}" + (f" id={in_message(entry['id'])}" if entry.get("id") is not None else "")
    if entry["kind"] == "heading":
        return (
            f"[{where}, section of {count(entry['cells'], 'cell')}] {'#' * entry['level']} {cell_text(entry['text'])}"
        )
    text = cell_text(entry["text"])
    return f"[{where}, code] {text}" if text else f"[{where}, code]"


def outline_footer(first: int, last: int, total: int, headings: int, capped: bool) -> str:
    if capped:
        rest = f"Use offset={last + 1} with outline=true to continue." if last < total else "End of notebook."
        return f"(Output capped. Outline of cells {first}-{last} of {total}. {rest})"
    if last < total:
        return f"(Outline of cells {first}-{last} of {total}. Use offset={last + 1} with outline=true to continue.)"
    if first > 1:
        return f"(End of outline - cells {first}-{last} of {total})"
    return f"(End of outline - total {count(total, 'cell')}, {count(headings, 'heading')})"


def outline_page_footer(value: dict) -> str:
    """The footer of an outline page (its ``footer``), after the note on a notebook open in Jupyter."""
    footer = outline_footer(
        value["offset"], value["lastCell"], value["totalCells"], value["totalHeadings"], value["capped"]
    )
    return opened_note(value, footer)


def outline_next_offset(value: dict) -> int | None:
    """The cell offset the footer names to continue; None after the last cell."""
    return value["lastCell"] + 1 if value["lastCell"] < value["totalCells"] else None


def render_outline(value: dict) -> str:
    """``value``: path, offset, lastCell, entries, totalCells, totalHeadings, capped (``tools.read.outline``)."""
    rows = [outline_row(entry) for entry in value["entries"]]
    return envelope(value["path"], "outline", rows, outline_page_footer(value))
