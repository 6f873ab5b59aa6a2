"""Model text for ``edit_cells``: what each operation did, then the cell order around the changes.

Why it exists: after a structural change a model needs two things to go on without reading the
notebook again: a line per operation saying what it did (``inserted cell "a1b2" (code) after
"load"``), and where the changed cells now stand among their neighbours (a few cells on each side
of each change, the rest counted, never listed whole). Cells are named by their ids, quoted as
JSON strings so no id can forge a line; in a notebook without ids (before nbformat 4.5) by their
index as ``read`` showed it before the call.

What it must never do: touch anything but the value, or list a whole long notebook.
"""

from __future__ import annotations

from ..text.quoting import in_message, quote_name
from .common import count
from .writing import where_changed

__all__ = ["render_edit_cells"]


def _cell(ref) -> str:
    if ref is None:
        return "a new cell"
    return f"cell {in_message(ref)}" if isinstance(ref, str) else f"cell {ref}"


def _anchor(ref) -> str:
    return in_message(ref) if isinstance(ref, str) else f"cell {ref}"


def _place(record: dict, moving: bool) -> str:
    place = record["place"]
    if place in ("after", "before"):
        return f"{place} {_anchor(record['anchor'])}"
    return f"{'to' if moving else 'at'} the {place}"


def operation_line(record: dict) -> str:
    """One operation as done: ``inserted cell "a1b2" (code) after "load"``."""
    op, name = record["op"], _cell(record["cell"])
    if op == "insert":
        return f"inserted {name} ({record['cellType']}) {_place(record, False)}"
    if op == "move":
        stayed = " (it was there already)" if record.get("stayed") else ""
        return f"moved {name} ({record['cellType']}) {_place(record, True)}{stayed}"
    if op == "delete":
        return f"deleted {name} ({record['cellType']})"
    if op == "set_type":
        dropped = record["outputsDropped"]
        lost = f", dropping its {count(dropped, 'output')}" if dropped else ""
        return f"changed {name} from {record['from']} to {record['cellType']}{lost}"
    outputs = count(record["outputsCleared"], "output")
    if record["cell"] is None:
        return f"cleared the outputs of every code cell: {outputs} in {count(record['cellsCleared'], 'cell')}"
    return f"cleared the outputs of {name}: {outputs}"


def _row(row: dict) -> str:
    mark = "*" if row["changed"] else " "
    if row["id"] is not None:
        return f"{mark} {row['index']} {in_message(row['id'])} {row['type']}"
    note = " (new)" if row["was"] is None else f" (was {row['was']})" if row["was"] != row["index"] else ""
    return f"{mark} {row['index']} {row['type']}{note}"


def _gap(n: int) -> str:
    return f"  ... {count(n, 'cell')}"


def order_lines(value: dict) -> list[str]:
    """The cell order around the changes: changed cells marked ``*``, the cells between counted."""
    total, rows = value["totalCells"], value["order"]
    dry = value.get("dryRun")
    if total == 0:
        return ["The notebook would have no cells." if dry else "The notebook has no cells now."]
    head = "Cell order it would leave" if dry else "Cell order now"
    lines = [f"{head} ({count(total, 'cell')}), around the changes:"]
    last = 0
    for row in rows:
        if row["index"] > last + 1:
            lines.append(_gap(row["index"] - last - 1))
        lines.append(_row(row))
        last = row["index"]
    if len(rows) < value["orderRows"]:
        lines.append(f"(Showing {len(rows)} of {value['orderRows']} rows around the changes.)")
    elif last < total:
        lines.append(_gap(total - last))
    return lines


def render_edit_cells(value: dict) -> str:
    """What the call changed (in a dry run, would change), operation by operation, then the order."""
    path = quote_name(value["path"])
    n = len(value["operations"])
    if value.get("dryRun"):
        what = f"The {n} operations would make these changes:" if n > 1 else "The operation would make this change:"
        head = f"Dry run: {path} was not changed. {what}"
    else:
        head = f"The notebook {path} has been updated successfully: {count(n, 'operation')}.{where_changed(value)}"
    lines = [head, *(f"{k}. {operation_line(r)}" for k, r in enumerate(value["operations"], start=1))]
    return "\n".join([*lines, *order_lines(value)])
