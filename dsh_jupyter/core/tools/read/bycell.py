"""``read`` of a notebook by cell: one cell's page, one output whole and paged, or the outline.

Why it exists: the cell view summarises outputs (a text cut at ``notebook_output_max_chars``, a
traceback at ``notebook_traceback_lines``) so a page of cells stays small; the rest must still be
reachable. ``cell_id`` names a cell (its id, or its index where the notebook has no ids), and with
``output=K`` its K-th output is read whole as numbered lines, windowed by ``offset``/``limit`` as a
text file is; ``outline=true`` answers the notebook's headings and code cells' first lines
instead of its cells (``outline.py``). Each answers from the same cells the cell view uses — the
live document of a notebook open in Jupyter, else the file — and records the read as it does.

What it must never do: print an image's or other binary payload (it is named, and attached as
the cell view attaches it), answer a file that is not a notebook (``ARGUMENT_INVALID``) or one
that does not parse as one (``NOTEBOOK_INVALID``: it is read as text without these arguments),
or record a read it did not answer.
"""

from __future__ import annotations

from ...errors import Codes, ToolError
from ...notebooks.format import Cell, Notebook
from ...notebooks.images import PageImages
from ...state.gate import record_read
from ...text.quoting import in_message
from ..cells import Loaded, cells_page, load_cells, output_whole
from ..context import CallContext
from .fitting import fit_lines
from .outline import outline_page

__all__ = ["BY_CELL", "by_cell", "check_by_cell", "find_cell", "read_by_cell"]

BY_CELL = ("cell_id", "output", "outline")  # the arguments that read a notebook by cell


def check_by_cell(args: dict) -> None:
    """Refuse a combination of the by-cell arguments that asks for two things, or for nothing."""
    if args.get("outline") and args.get("cell_id") is not None:
        raise ToolError(
            Codes.ARGUMENT_INVALID, "outline and cell_id cannot be given together: the outline is of the whole notebook"
        )
    if args.get("output") is not None and args.get("cell_id") is None:
        raise ToolError(Codes.ARGUMENT_INVALID, "output needs cell_id: the cell whose output to read")
    alone = args.get("cell_id") is not None and args.get("output") is None
    if alone and (args.get("offset") is not None or args.get("limit") is not None):
        raise ToolError(
            Codes.ARGUMENT_INVALID,
            "offset and limit do not apply to one cell: give output=K to page one of its outputs, or "
            "leave cell_id out to page the cells",
        )


def by_cell(args: dict) -> str | None:
    """The first by-cell argument given, if any (``outline=false`` is not one)."""
    for name in BY_CELL:
        if args.get(name) is not None and args.get(name) is not False:
            return name
    return None


def find_cell(nb: Notebook, cell_id: str, shown: str) -> Cell:
    """The cell ``cell_id`` names: the one with that id; in a notebook without ids (nbformat 4.4 and
    earlier, where no cell has one), the cell at that index as the view shows it (``"3"``)."""
    for cell in nb.cells:
        if cell.id == cell_id:
            return cell
    if nb.cells and all(cell.id is None for cell in nb.cells):
        if cell_id.isascii() and cell_id.isdigit() and 1 <= int(cell_id) <= len(nb.cells):
            return nb.cells[int(cell_id) - 1]
        raise ToolError(
            Codes.ARGUMENT_INVALID,
            f"no cell is {in_message(cell_id)} in {in_message(shown)}: its cells have no ids, so cell_id is "
            f"the cell's index as read shows it (1 to {len(nb.cells)})",
        )
    raise ToolError(Codes.ARGUMENT_INVALID, f"no cell has the id {in_message(cell_id)} in {in_message(shown)}")


def read_by_cell(ctx: CallContext, target, fd: int, fst, offset: int, limit: int, args: dict) -> dict:
    """The answer of a by-cell read of an open notebook file (``check_by_cell`` passed)."""
    loaded = load_cells(ctx, target, fd, fst)
    if isinstance(loaded, str):  # why it is read as text without these arguments
        raise ToolError(Codes.NOTEBOOK_INVALID, f"cannot read {in_message(target.display)} by cell: {loaded}")
    if args.get("outline"):
        value = outline_page(loaded.nb, offset, limit, ctx.settings, target.display)
        record_read(ctx.store, ctx.session_key, target.real, loaded.version)
        return {**value, "live": loaded.live}
    cell = find_cell(loaded.nb, args["cell_id"], target.display)
    if args.get("output") is None:  # the cell alone: the page of cells it is
        return cells_page(ctx, target, loaded, cell.index, 1)
    return _output_page(ctx, target, loaded, cell, args["output"], offset, limit)


def _output_page(ctx: CallContext, target, loaded: Loaded, cell: Cell, number: int, offset: int, limit: int) -> dict:
    s = ctx.settings
    shown = in_message(target.display)
    named = f"cell {in_message(cell.id)}" if cell.id is not None else f"cell {cell.index}"
    outputs = cell.outputs
    if number > len(outputs):
        has = "no outputs" if not outputs else ("1 output" if len(outputs) == 1 else f"{len(outputs)} outputs")
        raise ToolError(Codes.ARGUMENT_INVALID, f"output {number} is out of range: {named} of {shown} has {has}")
    out = outputs[number - 1] if isinstance(outputs[number - 1], dict) else {}
    page = PageImages(s.notebook_page_max_images, s.notebook_page_max_image_bytes)
    whole = output_whole(number, out, cell.index, page)
    raw = whole["text"].split("\n") if whole["text"] else []
    total = len(raw)
    if offset < 0:  # the last lines: the output is counted, so they keep their numbers
        offset = max(1, total + offset + 1)
    if offset > 1 and offset > total:
        lines_ = "1 line" if total == 1 else f"{total} lines"
        raise ToolError(
            Codes.ARGUMENT_INVALID,
            f"offset {offset} is out of range for output {number} of {named} in {shown} ({lines_})",
        )
    lines, capped = fit_lines(raw[offset - 1 : offset - 1 + limit], offset, s.read_max_line_length, s.read_max_bytes)
    record_read(ctx.store, ctx.session_key, target.real, loaded.version)
    ctx.images.extend(page.images)
    value = {
        "path": target.display,
        "type": "output",
        "cell": cell.index,
        "cellId": cell.id,
        "output": number,
        "outputType": whole["outputType"],
        "data": whole["data"],
        "offset": offset,
        "lines": lines,
        "totalLines": total,
        "capped": capped,
        "live": loaded.live,
    }
    for key in ("name", "ename", "evalue"):
        if key in whole:
            value[key] = whole[key]
    return value
