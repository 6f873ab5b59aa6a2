"""``edit``: replace literal text in a file (or in a notebook's cell sources), through ``write``'s gated write.

``old_string`` must occur once unless ``replace_all``; the new text goes in literally. Line
endings are kept: an ``old_string`` built from what ``read`` showed (``\\n`` between lines)
matches CRLF lines too, and only the edited region changes (``text``).

Why it is shaped so: the cross-process write gate is shared by every writer of every process, so
an edit is opened, checked (binary, permission, this session's observation, ``edit_max_bytes``),
loaded and computed -- new text and diff -- before the gate is taken. Inside the gate the file is
looked at again and only its version is compared (with the one the edit was computed from and
with the session's observation) before the rename.

What it must never do: compute inside the gate, take the gate for a dry run, or write over a
version other than the one it computed from.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ...documents import DocumentChanged
from ...errors import Codes, ToolError
from ...fs.files import file_version
from ...notebooks.format import is_notebook_name
from ...render.writing import render_edit
from ...state.gate import changed_since_read, check_observed, state_unavailable
from ...text.diffs import Diff, diff_page
from ...text.quoting import in_message, quote_name
from ..cells import check_written, notebook_edit
from ..context import CallContext
from ..opened.documents import (
    SHARED,
    TAB,
    UNSAVED,
    check_shared_observed,
    presence,
    record_if_saved,
    record_version,
    save_in_tabs,
    shared_text,
    unsaved,
)
from ..spec import BOOLEAN, INTEGER, NAME, OPEN, PATH, STRING, TEXT, ToolSpec, object_schema, value_schema
from ..writing import BOM, check_writable, current_stat, encode_text, load_for_edit, refuse_path, replace_gated
from .open_notebook import edit_live
from .steps import MAX_EDITS, Step, edit_steps
from .text import apply_steps, byte_size

__all__ = ["EDIT", "execute_edit"]


@dataclass(frozen=True)
class _Planned:
    """An edit computed before the write gate: what to write over which version of the file."""

    data: bytes
    version: os.stat_result  # the file the edit was computed from
    found: int
    diff: Diff
    cells: list[int] | None


def execute_edit(ctx: CallContext, args: dict) -> dict:
    steps = edit_steps(args)
    batch = "edits" in args
    dry_run = bool(args.get("dry_run", False))
    refuse_path(ctx, args["file_path"], "edit")
    with ctx.resolve(args["file_path"], "edit") as target:
        shown = target.display
        notebook = is_notebook_name(target.lexical)
        if args.get("cell_id") is not None and not notebook:
            raise ToolError(Codes.ARGUMENT_INVALID, "cell_id applies to notebooks (.ipynb files) only")
        pres = presence(ctx, target)  # a person has it open in JupyterLab (tools.opened)
        live = edit_live(ctx, target, steps, args.get("cell_id"), batch, dry_run) if notebook else None
        if live is not None:
            value = _value(shown, steps, batch, dry_run, live.replacements, live.diff, sorted(live.sources), True)
            return {**value, "open": SHARED}
        shared = None if notebook else shared_text(ctx, target, pres)
        if shared is not None:  # its shared document, not the file under it
            return _edit_shared(ctx, target, shared, steps, batch, dry_run)
        if ctx.store is None:
            raise state_unavailable("edit", shown)
        tabs = pres if pres is not None and not pres.shared else None  # open in a tab, no collaboration
        if tabs is not None and tabs.unsaved and not dry_run:
            raise unsaved("edit", shown)
        # The whole edit is computed before the write gate is taken: the gate, which every writer
        # in every process waits for, only sees the version compared and the file replaced.
        plan = _plan(ctx, target, steps, args.get("cell_id"), batch, notebook)
        if (
            not dry_run
            and tabs is not None
            and save_in_tabs(ctx, target, tabs, plan.data, notebook, "edit", file_version(plan.version))
        ):
            record_if_saved(ctx, target, plan.data, "edit")  # the tab that has it open saved it
        elif not dry_run:  # a dry run changes nothing and records nothing: it never takes the gate
            with ctx.changing("edit", shown, lambda: [target.change()]) as gate:
                st = current_stat(target)
                if st is None:
                    raise ToolError(Codes.FS_NOT_FOUND, f"cannot edit {in_message(shown)}: not found")
                # The gate speaks of writing for both tools: an edit is a write of the whole file.
                check_observed(gate, ctx.session_key, target.real, st, "write", shown)
                if file_version(st) != file_version(plan.version):  # changed since the edit was computed
                    raise changed_since_read("write", shown)
                replace_gated(ctx, gate, target, plan.data, plan.version, "edit")
    value = _value(shown, steps, batch, dry_run, plan.found, plan.diff, plan.cells, False)
    if pres is not None:
        value["open"] = UNSAVED if pres.unsaved else TAB
    return value


def _edit_shared(ctx: CallContext, target, shared: tuple[str, str], steps: list[Step], batch: bool, dry_run: bool):
    """The edit made in the shared document of a text file open with collaboration.

    Computed from a snapshot before the gate, as on a file; inside the gate the session's
    observation is checked again, and the document takes the new text only if it is still at the
    snapshot's version (a person typing meanwhile: ``changed since this session last read it``).
    """
    shown = target.display
    docs = ctx.documents
    assert docs is not None
    if ctx.store is None:
        raise state_unavailable("edit", shown)
    st = target.entry.st
    if st is not None:
        check_writable(target, st, "edit")
    text, version = shared
    check_shared_observed(ctx.store, ctx, target, version, text, "write")  # a first check
    result, found, _size = apply_steps(text, byte_size(text), 0, ctx.settings.edit_max_bytes, steps, batch, shown)
    diff = diff_page([(text, result, quote_name(shown))])
    if not dry_run:
        with ctx.changing("edit", shown, lambda: [target.change()]) as gate:
            check_shared_observed(gate, ctx, target, version, text, "write")
            try:
                new_version = docs.replace_text(target.real, version, result)
            except DocumentChanged:
                raise changed_since_read("edit", shown) from None
            record_version(ctx, gate, target, new_version, "edit")
    return {**_value(shown, steps, batch, dry_run, found, diff, None, False), "open": SHARED}


def _plan(ctx: CallContext, target, steps: list[Step], cell_id: str | None, batch: bool, notebook: bool) -> _Planned:
    """Open, check and load the file, and compute the edit: everything but the write, without the gate."""
    shown = target.display
    raw, fst = load_for_edit(ctx, target)
    limit = ctx.settings.edit_max_bytes
    cells = notebook_edit(raw, steps, cell_id, shown, batch, limit) if notebook else None
    if cells is not None:  # a notebook: the change is made in cell sources, then validated
        data, done = cells
        return _Planned(data, fst, done.replacements, done.diff, sorted(done.sources))
    bom = len(BOM) if raw.startswith(BOM) else 0
    text = raw[bom:].decode("utf-8", "surrogateescape")
    result, found, _size = apply_steps(text, len(raw) - bom, bom, limit, steps, batch, shown)
    data = raw[:bom] + encode_text(result)
    if notebook:
        check_written(data, shown, "edit")
    return _Planned(data, fst, found, diff_page([(text, result, quote_name(shown))]), None)


def _value(
    shown: str,
    steps: list[Step],
    batch: bool,
    dry_run: bool,
    found: int,
    cut: Diff,
    cells: list[int] | None,
    live: bool,
) -> dict:
    value: dict = {
        "path": shown,
        "replaceAll": not batch and steps[0].replace_all,
        "replacements": found,
        "diff": "\n".join(cut.lines),
        "diffLines": cut.total,
    }
    if batch:
        value["edits"] = len(steps)
    if dry_run:
        value["dryRun"] = True
    if cells is not None:
        value["cells"] = cells
    if live:
        value["live"] = True
    return value


EDIT_OUTPUT = value_schema(
    {
        "path": STRING,
        "replaceAll": BOOLEAN,
        "replacements": INTEGER,
        "diff": STRING,  # the unified diff, cut to its first lines (text.diffs.MAX_LINES)
        "diffLines": INTEGER,  # the whole diff's length in lines
        "edits": INTEGER,  # a batch: how many steps
        "dryRun": BOOLEAN,
        "cells": {"type": "array", "items": INTEGER},
        "live": BOOLEAN,
        "open": OPEN,
    },
    ("path", "replacements", "diff", "diffLines"),
)

_STEP = object_schema(
    {
        "old_string": {**TEXT, "minLength": 1, "description": "Exact text to replace."},
        "new_string": {**TEXT, "description": "Replacement text, inserted literally."},
        "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
    },
    ("old_string", "new_string"),
)

EDIT = ToolSpec(
    name="edit",
    title="Edit file",
    description=(
        "Replace the literal text old_string with new_string in a file. old_string must occur "
        "exactly once unless replace_all is true. For several changes to one file give edits, a "
        "list of {old_string, new_string, replace_all?} applied in order, each to the text the ones "
        "before it left, all or nothing. The answer shows the change as a unified diff; with "
        "dry_run true nothing is written and the answer is the diff the edit would make. Requires "
        "that this session has read the file's current version. In a notebook (.ipynb) the text is "
        "replaced inside cell sources only (outputs, metadata and ids are kept) and cell_id narrows "
        "the edit to one cell."
    ),
    input_schema=object_schema(
        {
            "file_path": {**PATH, "description": "File to edit, relative to the working directory."},
            "old_string": {**TEXT, "minLength": 1, "description": "Exact text to replace (or give edits)."},
            "new_string": {**TEXT, "description": "Replacement text, inserted literally."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
            "edits": {
                "type": "array",
                "items": _STEP,
                "minItems": 1,
                "maxItems": MAX_EDITS,
                "description": "Several edits to this file, applied in order, all or nothing (instead of "
                "old_string and new_string).",
            },
            "dry_run": {
                "type": "boolean",
                "description": "Answer the diff the edit would make and change nothing (default false).",
            },
            "cell_id": {**NAME, "description": "Notebooks only: the id of the one cell to edit, as read shows it."},
        },
        ("file_path",),
    ),
    output_schema=EDIT_OUTPUT,
    guidance=(
        "Use edit for targeted changes: give enough surrounding text in old_string to make it "
        "unique, or set replace_all; several changes to one file go in one call as edits. "
        "dry_run shows the diff first without writing. Read the file first in this session; after "
        "your own write or edit no new read is needed."
    ),
    execute=execute_edit,
    render=render_edit,
    writes=True,
    idempotent=False,  # the same edit again may change the file again ("a" -> "aa")
)
