"""``edit_cells``: change a notebook's cell structure — insert, delete, move, retype cells, clear outputs.

Several operations per call, applied in order (``operations.py``), all or nothing: the first that
cannot be applied names itself and nothing is written. The result is validated with nbformat and
bounded by ``edit_max_bytes`` before anything is written (``result.py``). Like ``edit``, it needs
this session's read of the notebook's current version, computes everything before the
cross-process write gate is taken, and inside it only compares versions and replaces the file
(``writing.replace_gated``). A notebook a person has open goes where ``edit`` sends its changes:
its shared document with collaboration (``shared.py``: structural steps, never a whole new
document), else the tab that has it open (which takes and saves it, or refuses with unsaved
changes: ``FS_OPEN_UNSAVED``).

What it must never do: write a notebook nbformat does not validate, write part of a call, take
the gate for a dry run, or write over a version other than the one it computed from.
"""

from __future__ import annotations

import os

from ...errors import Codes, ToolError
from ...fs.files import file_version
from ...notebooks.format import NotNotebook, is_notebook_name, parse_notebook
from ...render.cells import render_edit_cells
from ...state.gate import changed_since_read, check_observed, state_unavailable
from ...text.quoting import in_message
from ..context import CallContext
from ..opened.documents import SHARED, TAB, UNSAVED, presence, record_if_saved, save_in_tabs, unsaved
from ..spec import BOOLEAN, INTEGER, NAME, OPEN, PATH, STRING, TEXT, ToolSpec, nullable, object_schema, value_schema
from ..writing import current_stat, load_for_edit, refuse_path, replace_gated
from .operations import MAX_OPERATIONS, Applied, apply_operations
from .result import checked_result
from .shared import change_live

__all__ = ["EDIT_CELLS", "execute_edit_cells"]


def execute_edit_cells(ctx: CallContext, args: dict) -> dict:
    operations = args["operations"]
    dry_run = bool(args.get("dry_run", False))
    refuse_path(ctx, args["file_path"], "edit")
    with ctx.resolve(args["file_path"], "edit") as target:
        shown = target.display
        if not is_notebook_name(target.lexical):
            raise ToolError(
                Codes.ARGUMENT_INVALID,
                f"cannot edit {in_message(shown)} by cells: edit_cells changes notebooks (.ipynb files) only",
            )
        pres = presence(ctx, target)  # a person has it open in JupyterLab (tools.opened)
        live = change_live(ctx, target, operations, dry_run)
        if live is not None:
            return {**_value(shown, live, dry_run), "live": True, "open": SHARED}
        if ctx.store is None:
            raise state_unavailable("edit", shown)
        tabs = pres if pres is not None and not pres.shared else None  # open in a tab, no collaboration
        if tabs is not None and tabs.unsaved and not dry_run:
            raise unsaved("edit", shown)
        # Computed before the write gate is taken, as edit is: the gate only sees versions compared
        # and the file replaced.
        data, version, applied = _plan(ctx, target, operations)
        if (
            not dry_run
            and tabs is not None
            and save_in_tabs(ctx, target, tabs, data, True, "edit", file_version(version))
        ):
            record_if_saved(ctx, target, data, "edit")  # the tab that has it open saved it
        elif not dry_run:  # a dry run changes nothing and records nothing: it never takes the gate
            with ctx.changing("edit", shown, lambda: [target.change()]) as gate:
                st = current_stat(target)
                if st is None:
                    raise ToolError(Codes.FS_NOT_FOUND, f"cannot edit {in_message(shown)}: not found")
                check_observed(gate, ctx.session_key, target.real, st, "write", shown)
                if file_version(st) != file_version(version):  # changed since the change was computed
                    raise changed_since_read("write", shown)
                replace_gated(ctx, gate, target, data, version, "edit")
    value = _value(shown, applied, dry_run)
    if pres is not None:
        value["open"] = UNSAVED if pres.unsaved else TAB
    return value


def _plan(ctx: CallContext, target, operations: list[dict]) -> tuple[bytes, os.stat_result, Applied]:
    """Open, check and load the notebook, and apply the operations: everything but the write."""
    shown = target.display
    raw, fst = load_for_edit(ctx, target)
    try:
        nb = parse_notebook(raw)
    except NotNotebook as exc:
        raise ToolError(Codes.NOTEBOOK_INVALID, f"cannot edit {in_message(shown)} by cells: {exc.reason}") from None
    applied = apply_operations(nb.data, operations, shown)
    data = checked_result({**nb.data, "cells": applied.cells}, shown, ctx.settings.edit_max_bytes, raw)
    return data, fst, applied


def _value(shown: str, applied: Applied, dry_run: bool) -> dict:
    value: dict = {
        "path": shown,
        "operations": applied.records,
        "totalCells": len(applied.cells),
        "order": applied.rows,
        "orderRows": applied.rows_total,
    }
    if dry_run:
        value["dryRun"] = True
    return value


# -- the schema ----------------------------------------------------------------------------------

_REF = {"anyOf": [NAME, {"type": "integer", "minimum": 1}]}
_CELL = {
    **_REF,
    "description": "The cell's id as read shows it (in a notebook older than nbformat 4.5, which has no ids: its "
    "index as read showed it before this call).",
}
_TYPE = {"type": "string", "enum": ["code", "markdown", "raw"], "description": "The cell type."}
_PLACES = {
    "after": {**_REF, "description": "Put it right after this cell (named as cell_id is)."},
    "before": {**_REF, "description": "Put it right before this cell (named as cell_id is)."},
    "at": {"type": "string", "enum": ["start", "end"], "description": "Put it first or last."},
}


def _op(name: str, props: dict, required: tuple[str, ...]) -> dict:
    return object_schema({"op": {"type": "string", "enum": [name]}, **props}, ("op", *required))


def _placed(name: str, props: dict, required: tuple[str, ...]) -> list[dict]:
    """One schema per placement (after, before or at): exactly one of them is given."""
    return [_op(name, {**props, key: place}, (*required, key)) for key, place in _PLACES.items()]


_SOURCE = {**TEXT, "description": "The new cell's source text."}
OPERATION = {
    "oneOf": [
        *_placed("insert", {"cell_type": _TYPE, "source": _SOURCE}, ("cell_type", "source")),
        _op("delete", {"cell_id": _CELL}, ("cell_id",)),
        *_placed("move", {"cell_id": _CELL}, ("cell_id",)),
        _op("set_type", {"cell_id": _CELL, "cell_type": _TYPE}, ("cell_id", "cell_type")),
        _op(
            "clear_outputs",
            {"cell_id": {**_CELL, "description": "The code cell to clear (default: every code cell)."}},
            (),
        ),
    ]
}

_REF_VALUE = nullable({"anyOf": [STRING, INTEGER]})
EDIT_CELLS_OUTPUT = value_schema(
    {
        "path": STRING,
        "operations": {
            "type": "array",
            "items": value_schema(
                {
                    "op": STRING,
                    "cell": _REF_VALUE,  # the cell's id, or its index before the call; null: a new cell without id
                    "cellType": STRING,
                    "place": STRING,  # after, before, start or end
                    "anchor": _REF_VALUE,
                    "stayed": BOOLEAN,  # a move that left the cell where it was
                    "from": STRING,  # set_type: the type it had
                    "outputsDropped": INTEGER,
                    "outputsCleared": INTEGER,
                    "cellsCleared": INTEGER,
                    "was": nullable(INTEGER),  # delete: the cell's index before the call; null for a new cell
                },
                ("op", "cell"),
            ),
        },
        "totalCells": INTEGER,
        "order": {
            "type": "array",
            "items": value_schema(
                {
                    "index": INTEGER,
                    "id": nullable(STRING),
                    "type": STRING,
                    "changed": BOOLEAN,
                    "was": nullable(INTEGER),  # its index before the call; null for a new cell
                }
            ),
        },
        "orderRows": INTEGER,
        "dryRun": BOOLEAN,
        "live": BOOLEAN,
        "open": OPEN,
    },
    ("path", "operations", "totalCells", "order", "orderRows"),
)

EDIT_CELLS = ToolSpec(
    name="edit_cells",
    title="Edit notebook cells",
    description=(
        "Change the cell structure of a notebook (.ipynb): insert, delete and move cells, change a "
        "cell's type, clear outputs. operations is a list applied in order, each to the notebook the "
        "ones before it left, all or nothing: {op: insert, cell_type, source, after|before|at}, "
        "{op: delete, cell_id}, {op: move, cell_id, after|before|at}, {op: set_type, cell_id, "
        "cell_type}, {op: clear_outputs, cell_id?} (no cell_id: every code cell). Cells are named by "
        "their id as read shows it (after and before too; at is start or end). The answer says what "
        "each operation did and shows the new cell order around the changes; with dry_run true "
        "nothing is written. Requires that this session has read the notebook's current version. "
        "To change text inside cells use edit."
    ),
    input_schema=object_schema(
        {
            "file_path": {**PATH, "description": "Notebook to change, relative to the working directory."},
            "operations": {
                "type": "array",
                "items": OPERATION,
                "minItems": 1,
                "maxItems": MAX_OPERATIONS,
                "description": "The operations, applied in order, all or nothing.",
            },
            "dry_run": {
                "type": "boolean",
                "description": "Answer what the operations would do and change nothing (default false).",
            },
        },
        ("file_path", "operations"),
    ),
    output_schema=EDIT_CELLS_OUTPUT,
    guidance=(
        "Use edit_cells to add, remove, reorder or retype notebook cells, or clear outputs; use edit "
        "for text inside cells. Name cells by the ids read shows. Read the notebook first in this "
        "session; after your own change no new read is needed."
    ),
    execute=execute_edit_cells,
    render=render_edit_cells,
    writes=True,
    destructive=True,  # a deleted cell, a retyped cell's outputs, cleared outputs are gone
    idempotent=False,  # the same insert twice makes two cells
)
