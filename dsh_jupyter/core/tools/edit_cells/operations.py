"""``edit_cells``' operations applied to a notebook's cells: the new cells, what each operation
did, and the structural steps that make the same change in a shared document.

Why it exists: the file path, the tab path and the shared-document path of ``edit_cells`` must
change a notebook the same way and refuse the same operations with the same words, so the
operations are applied here once, to plain cell dicts (a parsed file's, or a shared document's
snapshot), in order, each to what the ones before it left. A cell is named by its id in a
notebook that has ids (nbformat 4.5 and later), and by its index as ``read`` showed it before
this call in an older one (those have no ids, and none are added: the format has no place for
them). Besides the new cells, the outcome is a list of steps on the cells array — insert a cell
at a position, delete the cell at a position, clear one cell's outputs — that a shared document
replays as structural changes (``LiveDocuments.change_cells``): a move is a delete and an
insert of the same cell, a change of type the one cell replaced by its retyped copy (JupyterLab
makes a cell's kind when the cell is inserted), so every other cell, and a person's typing in
it, is left alone.

What it must never do: change the caller's dicts (every changed cell is a copy), give a new cell
an id another cell has, put an id into a notebook older than nbformat 4.5, or let a failing
operation leave part of the call applied (the caller gets an error and nothing else).
"""

from __future__ import annotations

import copy
import re
import uuid
from dataclasses import dataclass

from ...errors import Codes, ToolError
from ...text.quoting import in_message

__all__ = ["CONTEXT", "MAX_OPERATIONS", "MAX_ROWS", "Applied", "apply_operations"]

MAX_OPERATIONS = 100  # operations in one call (the schema's maxItems)
CONTEXT = 2  # cells shown on each side of a changed cell in the answer's cell order
MAX_ROWS = 40  # rows of the cell order in one answer

Ref = str | int | None  # how a call names a cell: its id, or (no ids) its index before the call


@dataclass(eq=False)
class _Slot:
    """One cell while the operations run: its dict, how the call names it, what happened to it."""

    cell: dict
    ref: Ref
    was: int | None  # its index before the call; None for a cell this call inserted
    changed: bool = False  # inserted, moved, retyped or cleared by this call
    context: bool = False  # beside a deleted cell: shown in the answer's cell order


@dataclass
class Applied:
    """What the operations did: the new cells, the records of the value, the shared-document steps."""

    cells: list[dict]
    records: list[dict]
    steps: list[dict]
    rows: list[dict]  # the cell order around the changes (at most ``MAX_ROWS``)
    rows_total: int  # how many rows there were before the cut
    ids: bool  # the notebook names cells by id


class _Refused(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _name(ref: Ref) -> str:
    """``cell "load"`` or ``cell 3`` (an index, in a notebook without ids)."""
    return f"cell {in_message(ref)}" if isinstance(ref, str) else f"cell {ref}"


def _source_as_lines(cells: list[dict]) -> bool:
    """Whether new sources go in as lists of lines: as nbformat writes them, unless the notebook
    holds its sources as strings only."""
    if any(isinstance(cell.get("source"), list) for cell in cells):
        return True
    return not any(isinstance(cell.get("source"), str) for cell in cells)


# A UTF-16 surrogate cannot be written as UTF-8: one in the model's text becomes U+FFFD, as in write.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _new_cell(kind: str, source: str, ids: bool, taken: set[str], lines: bool) -> dict:
    """A new cell as ``nbformat.v4.new_code_cell`` (``new_markdown_cell``, ``new_raw_cell``) makes
    it, with an id of the same kind (eight hex digits of a random UUID); built here because
    importing nbformat imports jsonschema, which took 2.6 s here (``notebooks/schema.py`` says
    why), and a kernel's or the stdio server's first inserted cell paid it. The test holds the
    shape to nbformat's own."""
    source = _SURROGATE.sub("\ufffd", source)
    cell: dict = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    if ids:
        cell["id"] = uuid.uuid4().hex[:8]
        while cell["id"] in taken:  # random: never one a cell has
            cell["id"] = uuid.uuid4().hex[:8]
        taken.add(cell["id"])
    if lines:
        cell["source"] = source.splitlines(keepends=True)
    return dict(sorted(cell.items()))  # nbformat writes keys sorted


def _retyped(cell: dict, kind: str) -> tuple[dict, int]:
    """``cell`` made a ``kind`` cell, and how many outputs it lost: a code cell gains ``outputs``
    and ``execution_count``, a cell that stops being code loses them."""
    out = copy.deepcopy(cell)
    was = out.get("cell_type")
    out["cell_type"] = kind
    dropped = 0
    if kind == "code":
        out.pop("attachments", None)  # only an empty one reaches here
        out["outputs"] = []
        out["execution_count"] = None
    elif was == "code":
        dropped = len(out.pop("outputs", None) or [])
        out.pop("execution_count", None)
    if list(cell) == sorted(cell):
        out = dict(sorted(out.items()))
    return out, dropped


class _Cells:
    """The cells while the operations run, with the lookups and refusals they share."""

    def __init__(self, data: dict, shown: str) -> None:
        cells = data.get("cells") or []
        minor = data.get("nbformat_minor")
        self.ids = isinstance(minor, int) and minor >= 5
        self.minor = minor
        self.shown = shown
        self.slots = [_Slot(cell, cell.get("id") if self.ids else i, i) for i, cell in enumerate(cells, start=1)]
        self.before = len(cells)
        self.taken = {s.ref for s in self.slots if isinstance(s.ref, str)}
        self.deleted: dict[Ref, int] = {}
        self.lines = _source_as_lines(cells)
        self.steps: list[dict] = []

    def find(self, ref: Ref) -> int:
        """The position (0-based, now) of the cell the call names ``ref``."""
        if self.ids and isinstance(ref, int):
            raise _Refused(
                Codes.ARGUMENT_INVALID,
                f"the cells of {in_message(self.shown)} have ids: name cell {ref} by its id, as read shows it",
            )
        if not self.ids and isinstance(ref, str):
            raise _Refused(
                Codes.ARGUMENT_INVALID,
                f"the cells of {in_message(self.shown)} have no ids (nbformat 4.{self.minor}): name a cell "
                "by its index, as read shows it",
            )
        for at, slot in enumerate(self.slots):
            if slot.ref == ref:
                return at
        if ref in self.deleted:
            raise _Refused(Codes.EDIT_NOT_FOUND, f"{_name(ref)} was deleted by operation {self.deleted[ref]}")
        if isinstance(ref, int):
            raise _Refused(
                Codes.EDIT_NOT_FOUND,
                f"no cell has the index {ref} in {in_message(self.shown)} (it had {self.before} before this call)",
            )
        raise _Refused(Codes.EDIT_NOT_FOUND, f"no cell has the id {in_message(str(ref))} in {in_message(self.shown)}")

    def place(self, op: dict, moving: _Slot | None) -> tuple[int, str, Ref]:
        """Where ``op`` puts a cell (a 0-based position in the cells as they are without ``moving``),
        and how: ``after``, ``before``, ``start`` or ``end``, with the cell it is placed beside."""
        if op.get("at") is not None:
            return (0 if op["at"] == "start" else len(self.slots)), op["at"], None
        how = "after" if op.get("after") is not None else "before"
        ref = op[how]
        if moving is not None and ref == moving.ref:
            raise _Refused(Codes.ARGUMENT_INVALID, f"{_name(ref)} cannot move {how} itself")
        at = self.find(ref)
        return (at + 1 if how == "after" else at), how, ref

    def step(self, do: str, at: int, slot: _Slot, cell: dict | None = None) -> None:
        """One structural step for a shared document, at position ``at`` (as the cells are then)."""
        step: dict = {"do": do, "at": at, "id": slot.cell.get("id") if self.ids else None}
        if cell is not None:
            step["cell"] = copy.deepcopy(cell)
        self.steps.append(step)


def _insert(cells: _Cells, op: dict, k: int) -> dict:
    at, how, anchor = cells.place(op, None)
    cell = _new_cell(op["cell_type"], op["source"], cells.ids, cells.taken, cells.lines)
    slot = _Slot(cell, cell.get("id"), None, changed=True)
    cells.slots.insert(at, slot)
    cells.step("insert", at, slot, cell)
    return {"op": "insert", "cell": slot.ref, "cellType": op["cell_type"], "place": how, "anchor": anchor}


def _delete(cells: _Cells, op: dict, k: int) -> dict:
    at = cells.find(op["cell_id"])
    slot = cells.slots[at]
    cells.step("delete", at, slot)
    del cells.slots[at]
    cells.deleted[slot.ref] = k
    if cells.slots:  # the cell that took its place (or the one before it, at the end) shows where it was
        cells.slots[min(at, len(cells.slots) - 1)].context = True
    return {"op": "delete", "cell": slot.ref, "cellType": slot.cell.get("cell_type"), "was": slot.was}


def _move(cells: _Cells, op: dict, k: int) -> dict:
    start = cells.find(op["cell_id"])
    slot = cells.slots[start]
    del cells.slots[start]
    try:
        at, how, anchor = cells.place(op, slot)
    except _Refused:
        cells.slots.insert(start, slot)
        raise
    cells.slots.insert(at, slot)
    stayed = at == start
    if not stayed:
        cells.step("delete", start, slot)
        cells.step("insert", at, slot, slot.cell)
        cells.steps[-1]["moved"] = True  # the cell the delete before it took out, as it is
        slot.changed = True
    record = {"op": "move", "cell": slot.ref, "cellType": slot.cell.get("cell_type"), "place": how, "anchor": anchor}
    if stayed:
        record["stayed"] = True
    return record


def _set_type(cells: _Cells, op: dict, k: int) -> dict:
    at = cells.find(op["cell_id"])
    slot = cells.slots[at]
    was, kind = slot.cell.get("cell_type"), op["cell_type"]
    if was == kind:
        raise _Refused(Codes.ARGUMENT_INVALID, f"{_name(slot.ref)} is a {kind} cell already")
    if kind == "code" and slot.cell.get("attachments"):
        raise _Refused(Codes.ARGUMENT_INVALID, f"{_name(slot.ref)} has attachments, which a code cell cannot hold")
    cell, dropped = _retyped(slot.cell, kind)
    cells.step("delete", at, slot)
    cells.step("insert", at, slot, cell)
    slot.cell, slot.changed = cell, True
    return {"op": "set_type", "cell": slot.ref, "cellType": kind, "from": was, "outputsDropped": dropped}


def _clear(cells: _Cells, slot: _Slot, at: int) -> int:
    """Clear one code cell's outputs and execution count; how many outputs it had."""
    outputs = slot.cell.get("outputs") or []
    if outputs or slot.cell.get("execution_count") is not None:
        cell = dict(slot.cell)
        cell["outputs"], cell["execution_count"] = [], None
        cells.step("clear", at, slot)
        slot.cell, slot.changed = cell, True
    return len(outputs)


def _clear_outputs(cells: _Cells, op: dict, k: int) -> dict:
    if op.get("cell_id") is None:
        code = [(at, s) for at, s in enumerate(cells.slots) if s.cell.get("cell_type") == "code"]
        counts = [_clear(cells, s, at) for at, s in code]
        return {
            "op": "clear_outputs",
            "cell": None,
            "outputsCleared": sum(counts),
            "cellsCleared": sum(1 for n in counts if n),
        }
    at = cells.find(op["cell_id"])
    slot = cells.slots[at]
    kind = slot.cell.get("cell_type")
    if kind != "code":
        raise _Refused(Codes.ARGUMENT_INVALID, f"{_name(slot.ref)} is a {kind} cell, which has no outputs")
    n = _clear(cells, slot, at)
    return {"op": "clear_outputs", "cell": slot.ref, "outputsCleared": n, "cellsCleared": 1 if n else 0}


_OPERATIONS = {
    "insert": _insert,
    "delete": _delete,
    "move": _move,
    "set_type": _set_type,
    "clear_outputs": _clear_outputs,
}


def _rows(cells: _Cells) -> tuple[list[dict], int]:
    """The cell order around the changed cells (``CONTEXT`` on each side), at most ``MAX_ROWS`` rows."""
    slots = cells.slots
    near: set[int] = set()
    for at, slot in enumerate(slots):
        if slot.changed or slot.context:
            near.update(range(max(0, at - CONTEXT), min(len(slots), at + CONTEXT + 1)))
    rows = []
    for at in sorted(near):
        slot = slots[at]
        row: dict = {"index": at + 1, "id": slot.cell.get("id") if cells.ids else None}
        row["type"] = slot.cell.get("cell_type")
        row["changed"] = slot.changed
        row["was"] = slot.was
        rows.append(row)
    return rows[:MAX_ROWS], len(rows)


def apply_operations(data: dict, operations: list[dict], shown: str) -> Applied:
    """``operations`` applied in order to the cells of the notebook ``data`` (left as it is).

    The first operation that cannot be applied raises, naming its number; nothing is applied then.
    """
    cells = _Cells(data, shown)
    records = []
    for k, op in enumerate(operations, start=1):
        try:
            records.append(_OPERATIONS[op["op"]](cells, op, k))
        except _Refused as exc:
            raise ToolError(
                exc.code, f"operation {k} of {len(operations)} ({op['op']}): {exc.message}; nothing was changed"
            ) from None
    rows, total = _rows(cells)
    return Applied([s.cell for s in cells.slots], records, cells.steps, rows, total, cells.ids)
