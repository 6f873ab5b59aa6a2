"""Model text for a notebook read as cells.

Why it exists: a notebook's JSON hides its code among escapes and base64; the cell view shows
each cell's numbered source and a summary of its outputs, and its footer counts cells the way a
text read counts lines, so a page of cells never passes for the whole notebook.

Structure is unforgeable by content: every line a cell's text contributes starts with a prefix
(``N: `` for a source line, ``| `` for output text), so only the view's own lines start with
``<`` or ``[``; attribute values are written as JSON strings (``in_message``: quotes, control
characters and ``</`` escaped) and names through ``quote_name``. One more rule holds for every
piece of text a cell contributes (``cell_text``): a character that a reader may take for a line
break (CR, VT, FF, the file/group/record separators, NEL, U+2028, U+2029) and every other control
character but the tab is shown as an escape (``\r``, ``\x0b``, ``\u2028``), and a ``<`` that
opens one of the view's own tags (``<cell``, ``</cell``, ``<content``, ``</content``, ``<path``,
``</path``, ``<type``, ``</type``) is followed by a backslash (``<\\/cell>``), so no text can make
a line that reads as a cell boundary or the end of the view. The value keeps the text as it is;
only the model's view escapes it.

What it must never do: touch the filesystem, print base64, or omit the footer.
"""

from __future__ import annotations

import re

from ..text.quoting import in_message, quote_name
from .common import READ_OPEN_NOTES, count, envelope

__all__ = [
    "OUTPUT_TRUNCATED",
    "TRACEBACK_OMITTED",
    "RenderedCell",
    "cell_address",
    "cell_text",
    "data_line",
    "notebook_footer",
    "notebook_next_offset",
    "notebook_page_footer",
    "opened_note",
    "output_call",
    "render_cell",
    "render_notebook",
    "rendered_cell",
    "traceback_omitted",
]

_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
_OWN_TAG = re.compile(r"<(?=/?(?:cell|content|path|type)\b)")
_ESCAPES = {"\r": "\\r", "\n": "\\n"}


def _escape(match: re.Match) -> str:
    char = match.group()
    if char in _ESCAPES:
        return _ESCAPES[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def cell_text(text: str) -> str:
    """A piece of a cell's text as the view shows it: no line breaks but its own, no tag of the view."""
    if _CONTROL.search(text) is not None:
        text = _CONTROL.sub(_escape, text)
    if "<" in text:
        text = _OWN_TAG.sub("<\\\\", text)
    return text


# A cut output names the call that shows it whole (``read`` with ``cell_id`` and ``output``).
OUTPUT_TRUNCATED = "... (output truncated: {} more characters; {} shows all of it)"
TRACEBACK_OMITTED = "... ({} traceback lines omitted; {} shows them)"


def cell_address(index: int, cell_id: str | None) -> str:
    """The ``cell_id`` argument that names a cell: its id, or its index as the view shows it where
    the notebook has no ids (nbformat 4.4 and earlier: none of its cells has one)."""
    return cell_id if cell_id is not None else str(index)


def output_call(address: str, number: int) -> str:
    """``read with cell_id="plot", output=2``: the call that shows one output whole."""
    return f"read with cell_id={in_message(address)}, output={number}"


def traceback_omitted(omitted: int, address: str, number: int) -> str:
    """The line that stands for the traceback lines the cell view leaves out."""
    return TRACEBACK_OMITTED.format(omitted, output_call(address, number))


LIVE_NOTE = "(This notebook is open in Jupyter: shown as its live document, unsaved changes included.)"


def notebook_footer(first: int, last: int, total: int, capped: bool) -> str:
    if capped:
        rest = f"Use offset={last + 1} to continue." if last < total else "End of notebook."
        return f"(Output capped. Showing cells {first}-{last} of {total}. {rest})"
    if last >= total:
        return f"(End of notebook - total {count(total, 'cell')})"
    return f"(Showing cells {first}-{last} of {total}. Use offset={last + 1} to continue.)"


def _header(cell: dict) -> str:
    attrs = [f'index="{cell["index"]}"']
    if cell.get("id") is not None:
        attrs.append(f"id={in_message(cell['id'])}")
    attrs.append(f"type={in_message(cell['type'])}")
    if cell.get("executionCount") is not None:
        attrs.append(f'execution_count="{cell["executionCount"]}"')
    return f"<cell {' '.join(attrs)}>"


def _size(n: int) -> str:
    return count(n, "byte")


def _image_note(item: dict) -> str:
    """Whether an output's image travels with the page (as image N after the text), and if not, why."""
    if "attached" in item:
        return f", attached as image {item['attached']}"
    skipped = item.get("skipped")
    if skipped == "count":
        return f", not attached: this page attaches at most {count(item['limit'], 'image')}"
    if skipped == "bytes":
        return f", not attached: this page attaches at most {count(item['limit'], 'byte')} of images"
    if skipped == "invalid":
        return ", not attached: not a valid PNG, JPEG, GIF or WebP image"
    return ""


def data_line(item: dict) -> str:
    """``[image/png: 852 bytes, attached as image 1]``: one MIME payload of an output, never its content
    (``, shown below as text`` when an output read whole shows it)."""
    shown = ", shown below as text" if item.get("shown") else ""
    return f"[{quote_name(item['mime'])}: {_size(item['bytes'])}{_image_note(item)}{shown}]"


def _output_lines(out: dict, address: str) -> list[str]:
    kind = out["outputType"]
    head = f"[output {out['number']}: {kind}"
    if kind == "stream":
        head += f" {quote_name(out.get('name') or '')}"
    lines = [head + "]"]
    lines.extend(data_line(item) for item in out.get("data", ()))
    text = out.get("text")
    if text is not None:
        if out.get("more"):
            text += OUTPUT_TRUNCATED.format(out["more"], output_call(address, out["number"]))
        lines.extend(["| " + cell_text(part) if part else "|" for part in text.split("\n")])
    return lines


def _cut_line(cut: dict) -> str:
    parts = []
    if cut["linesShown"] < cut["linesTotal"]:
        parts.append(f"source lines {cut['linesShown'] + 1}-{cut['linesTotal']}")
    if cut.get("attachmentsHidden"):
        parts.append(count(cut["attachmentsHidden"], "attachment"))
    if cut.get("outputsHidden"):
        parts.append(count(cut["outputsHidden"], "output"))
    return f"[cell cut at the size cap: {' and '.join(parts)} not shown]"


class RenderedCell(dict):
    """A cell's value that keeps the lines ``render_cell`` made of it (``rendered_cell``).

    Why: a page of cells is rendered once to fit it under the byte cap and then again for the
    page's text; keeping the first render halves that work. To every reader it is the plain dict
    it holds (JSON, schemas, copies: a copy is a plain dict and renders anew). It is never changed
    once rendered: a page's cells are built, rendered and answered, nothing else.
    """

    __slots__ = ("lines",)
    lines: list[str]


def rendered_cell(cell: dict) -> RenderedCell:
    """``cell`` as a ``RenderedCell`` that holds its lines (``render_cell``)."""
    kept = RenderedCell(cell)
    kept.lines = _render_cell(cell)
    return kept


def render_cell(cell: dict) -> list[str]:
    """One cell's lines: the header, numbered source, attachments, outputs, ``</cell>``."""
    if isinstance(cell, RenderedCell):
        return cell.lines
    return _render_cell(cell)


def _render_cell(cell: dict) -> list[str]:
    lines = [_header(cell)]
    lines.extend([f"{line['number']}: {cell_text(line['text'])}" for line in cell["lines"]])
    for att in cell.get("attachments", ()):
        lines.append(f"[attachment {quote_name(att['name'])}: {quote_name(att['mime'])}, {_size(att['bytes'])}]")
    address = cell_address(cell["index"], cell.get("id"))
    for out in cell.get("outputs", ()):
        lines.extend(_output_lines(out, address))
    if cell.get("cut"):
        lines.append(_cut_line(cell["cut"]))
    lines.append("</cell>")
    return lines


def render_notebook(value: dict) -> str:
    """``value``: path, offset, cells, totalCells, capped (see ``tools.notebooks``)."""
    lines: list[str] = []
    for cell in value["cells"]:
        lines.extend(render_cell(cell))
    return envelope(value["path"], "notebook", lines, notebook_page_footer(value))


def notebook_page_footer(value: dict) -> str:
    """The footer of a notebook page (its ``footer``): the cells', after the note on an open notebook."""
    first = value["offset"]
    last = first + len(value["cells"]) - 1
    return opened_note(value, notebook_footer(first, last, value["totalCells"], value["capped"]))


def opened_note(value: dict, footer: str) -> str:
    """``footer`` after the note on a notebook a person has open (its live document, or a tab)."""
    if value.get("live"):
        return f"{LIVE_NOTE}\n{footer}"
    if value.get("open"):  # open in a tab, without collaboration
        return f"{READ_OPEN_NOTES[value['open']]}\n{footer}"
    return footer


def notebook_next_offset(value: dict) -> int | None:
    """The cell offset the footer names to continue (its ``nextOffset``); None after the last cell."""
    last = value["offset"] + len(value["cells"]) - 1
    return last + 1 if last < value["totalCells"] else None
