"""``edit``: replace literal text in a file (or in a notebook's cell sources), through ``write``'s gated write.

``old_string`` must occur once unless ``replace_all``; the new text goes in literally. Line
endings are kept: an ``old_string`` built from what ``read`` showed (``\\n`` between lines)
matches CRLF lines too, and only the edited region changes.
"""

from __future__ import annotations

import os
import re

from ..errors import Codes, ToolError
from ..fs.files import read_all
from ..fs.textwindow import BINARY_SNIFF_BYTES
from ..notebooks.format import is_notebook_name
from ..render.writing import render_edit
from ..state.gate import check_observed, gated
from ..text.diffs import bounded, unified
from ..text.quoting import in_message, quote_name
from .cells import check_written, notebook_edit
from .context import CallContext
from .editsteps import MAX_EDITS, Step, edit_steps, step_error
from .live_notebooks import edit_live
from .spec import BOOLEAN, INTEGER, NAME, PATH, STRING, TEXT, ToolSpec, object_schema, value_schema
from .write import BOM, check_writable, current_stat, encode_text, open_existing, refuse_path, replace_gated

__all__ = ["EDIT", "execute_edit"]


def _matcher(old: str) -> re.Pattern:
    """``old`` as a literal pattern in which each line break matches ``\\n`` or ``\\r\\n``."""
    return re.compile(r"\r?\n".join(re.escape(part) for part in old.replace("\r\n", "\n").split("\n")))


def _line_ending(text: str, start: int, end: int) -> str:
    """The line ending to write for new text replacing ``text[start:end]``."""
    region = text[start:end]
    if "\n" in region:
        return "\r\n" if "\r\n" in region else "\n"
    nl = text.find("\n", end)
    if nl >= 0:
        return "\r\n" if nl > 0 and text[nl - 1] == "\r" else "\n"
    return "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"


def _apply(text: str, old: str, new: str, replace_all: bool, shown: str) -> tuple[str, int]:
    spans = [m.span() for m in _matcher(old).finditer(text)]
    if not spans:
        raise ToolError(Codes.EDIT_NOT_FOUND, f"old_string not found in {in_message(shown)}")
    if len(spans) > 1 and not replace_all:
        raise ToolError(
            Codes.EDIT_AMBIGUOUS,
            f"old_string appears {len(spans)} times in {in_message(shown)}; add context or set replace_all",
        )
    new = new.replace("\r\n", "\n")
    out, pos = [], 0
    for start, end in spans:
        ending = _line_ending(text, start, end)
        out.append(text[pos:start])
        # Sliced in literally: no $&, \\1 or \\g<0> expansion can happen.
        out.append(new.replace("\n", ending) if ending != "\n" else new)
        pos = end
    out.append(text[pos:])
    return "".join(out), len(spans)


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
        live = edit_live(ctx, target, steps, args.get("cell_id"), batch, dry_run) if notebook else None
        if live is not None:
            return _value(shown, steps, batch, dry_run, live.replacements, live.diff, sorted(live.sources), True)
        with gated(ctx.store, "edit", shown) as gate:
            st = current_stat(target)
            if st is None:
                raise ToolError(Codes.FS_NOT_FOUND, f"cannot edit {in_message(shown)}: not found")
            fd, fst = open_existing(target, st, "edit")
            try:
                # Everything that can refuse the edit is checked before the file is loaded: a
                # session that never read a huge file must not make this process hold it.
                try:
                    head = os.pread(fd, BINARY_SNIFF_BYTES, 0)
                except OSError as exc:
                    raise target.error(exc) from None
                # Before the gate check: "read it first" would send the model to a read that must fail.
                if b"\0" in head:
                    raise ToolError(Codes.FS_NOT_TEXT, f"cannot edit {in_message(shown)}: binary file")
                check_writable(target, fst, "edit")
                # The gate speaks of writing for both tools: an edit is a write of the whole file.
                check_observed(gate, ctx.session_key, target.real, fst, "write", shown)
                limit = ctx.settings.edit_max_bytes
                if fst.st_size > limit:
                    raise ToolError(
                        Codes.FS_TOO_LARGE,
                        f"cannot edit {in_message(shown)}: it is {fst.st_size} bytes, more than the {limit} "
                        "an edit loads (setting edit_max_bytes)",
                    )
                try:
                    raw = read_all(fd)
                except OSError as exc:
                    raise target.error(exc) from None
            finally:
                os.close(fd)
            cells = notebook_edit(raw, steps, args.get("cell_id"), shown, batch) if notebook else None
            if cells is not None:  # a notebook: the change is made in cell sources, then validated
                data, done = cells
                found, diff, changed = done.replacements, done.diff, sorted(done.sources)
            else:
                bom = raw.startswith(BOM)
                text = raw[len(BOM) if bom else 0 :].decode("utf-8", "surrogateescape")
                result, found = _apply_steps(text, steps, batch, shown)
                data = (BOM if bom else b"") + encode_text(result)
                if notebook:
                    check_written(data, shown, "edit")
                diff, changed = unified(text, result, quote_name(shown)), None
            if not dry_run:  # a dry run changes nothing and records nothing: the gate stays as it was
                replace_gated(ctx, gate, target, data, fst, "edit")
    return _value(shown, steps, batch, dry_run, found, diff, changed, False)


def _apply_steps(text: str, steps: list[Step], batch: bool, shown: str) -> tuple[str, int]:
    """The steps applied in order, each to what the ones before it left; all or nothing."""
    found = 0
    for k, step in enumerate(steps, 1):
        try:
            text, n = _apply(text, step.old, step.new, step.replace_all, shown)
        except ToolError as exc:
            raise step_error(exc, k, steps, batch) from None
        found += n
    return text, found


def _value(
    shown: str,
    steps: list[Step],
    batch: bool,
    dry_run: bool,
    found: int,
    diff: list[str],
    cells: list[int] | None,
    live: bool,
) -> dict:
    cut = bounded(diff)
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
