"""Model text for one notebook output read whole (``read`` with ``cell_id`` and ``output``).

Why it exists: the cell view cuts a long output and says which call shows the rest; this is that
call's answer: the output's text as numbered lines, windowed like a text file, under a line that
names the cell and the output, and with the footers of a text read (the total always named, as an
output is counted whole). Its MIME payloads are named with their sizes as in the cell view, never
printed; the one shown as text says so.

Structure is unforgeable by content: every line of the output's text starts ``N: `` and is
escaped as the cell view escapes it (``cell_text``), so only the view's own lines start with ``[``.

What it must never do: touch the filesystem, print base64, or omit the footer.
"""

from __future__ import annotations

from ..text.quoting import in_message, quote_name
from .common import count, envelope
from .notebook import cell_text, data_line, opened_note

__all__ = ["output_footer", "output_head", "output_next_offset", "output_page_footer", "render_output"]


def output_head(value: dict) -> str:
    """``[cell 4 id="boom", output 1: error]``: which output of which cell the lines are."""
    where = f"cell {value['cell']}" + (f" id={in_message(value['cellId'])}" if value.get("cellId") is not None else "")
    kind = value["outputType"]
    if kind == "stream":
        kind += f" {quote_name(value.get('name') or '')}"
    return f"[{where}, output {value['output']}: {kind}]"


def output_footer(first: int, last: int, total: int, capped: bool) -> str:
    if last >= total:
        return f"(End of output - total {count(total, 'line')})"
    if capped:
        return f"(Output capped. Showing lines {first}-{last} of {total}. Use offset={last + 1} to continue.)"
    return f"(Showing lines {first}-{last} of {total}. Use offset={last + 1} to continue.)"


def output_page_footer(value: dict) -> str:
    """The footer of an output's window (its ``footer``), after the note on a notebook open in Jupyter."""
    first = value["offset"]
    last = first + len(value["lines"]) - 1
    return opened_note(value, output_footer(first, last, value["totalLines"], value["capped"]))


def output_next_offset(value: dict) -> int | None:
    """The line offset the footer names to continue; None at the output's end."""
    last = value["offset"] + len(value["lines"]) - 1
    return last + 1 if last < value["totalLines"] else None


def render_output(value: dict) -> str:
    """``value``: path, cell, cellId, output, outputType, data, offset, lines, totalLines, capped."""
    rows = [output_head(value), *(data_line(item) for item in value["data"])]
    rows.extend(f"{line['number']}: {cell_text(line['text'])}" for line in value["lines"])
    return envelope(value["path"], "output", rows, output_page_footer(value))
