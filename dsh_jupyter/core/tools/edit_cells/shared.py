"""``edit_cells`` of a notebook open with collaboration: the operations made in its shared document.

Why it exists: while a notebook is a shared document, the document is what the person sees and
what Jupyter saves; a change to the file under it would be lost or would reload the document
over the person's typing. So the operations are computed from a snapshot of the document (as
the file path computes them from the file's bytes), validated as the notebook they would make,
and handed to the server as structural steps on the document's cells array
(``LiveDocuments.change_cells``: insert, delete, clear one cell's outputs), never as a new whole
document, so the person's typing in any other cell survives. The gate holds as for ``edit`` of
an open notebook: this session must have read the document's current version; the check, the
change and the recording of the new version happen inside the write gate.

What it must never do: change a document whose version this session did not read, hand the
server steps for a notebook nbformat would not validate, or touch the file.
"""

from __future__ import annotations

from ...documents import DocumentChanged
from ...state.gate import changed_since_read, check_observed_version, state_unavailable
from ..context import CallContext
from ..opened.documents import record_version
from ..writing import check_writable
from .operations import Applied, apply_operations
from .result import checked_result

__all__ = ["change_live"]


def change_live(ctx: CallContext, target, operations: list[dict], dry_run: bool) -> Applied | None:
    """The operations made in the open notebook's shared document (in a dry run, only planned);
    None when the notebook has no shared document (the file, or its tab, is changed instead)."""
    docs = ctx.documents
    if docs is None or target.in_spill or docs.snapshot(target.real) is None:
        return None
    shown = target.display
    st = target.entry.st
    if st is not None:
        check_writable(target, st, "edit")
    if ctx.store is None:
        raise state_unavailable("edit", shown)
    snap = docs.snapshot(target.real)  # again: this is the version the change is computed from
    if snap is None:
        raise changed_since_read("edit", shown)  # closed meanwhile: its last state may not be the file's
    data, version = snap
    check_observed_version(ctx.store, ctx.session_key, target.real, version, "write", shown)  # a first check
    applied = apply_operations(data, operations, shown)
    checked_result({**data, "cells": applied.cells}, shown, ctx.settings.edit_max_bytes)
    if dry_run:
        return applied
    with ctx.changing("edit", shown, lambda: [target.change()]) as gate:
        check_observed_version(gate, ctx.session_key, target.real, version, "write", shown)
        try:
            new_version = docs.change_cells(target.real, version, applied.steps)
        except DocumentChanged:
            raise changed_since_read("edit", shown) from None
        record_version(ctx, gate, target, new_version, "edit")
    return applied
