"""``edit`` of a notebook that is open in Jupyter: through its shared document, cell by cell.

Why it exists: when the server has a live-document source (``core.documents``) and the notebook is
open, the document, not the file, is what the person sees and what Jupyter will save. Changing
the document keeps the person's unsaved typing and shows the change at once; changing the file
would be overwritten or reload the document. The read-before-write gate holds as for files, with
the document's version in place of the file's: an edit is computed from a snapshot before the
cross-process write gate is taken; the check of that version, the change and the recording of
the new version happen inside it. (A ``write`` of an open notebook merges into the document:
``tools/write/tool.py`` with ``tools/opened/documents.py``.)

What it must never do: change a document whose version this session did not read, save a
notebook nbformat does not validate, or touch the file (Jupyter saves the document).
"""

from __future__ import annotations

from ...documents import DocumentChanged
from ...errors import Codes, ToolError
from ...fs.files import can_write
from ...notebooks.format import notebook_from_dict, notebook_problem, with_sources
from ...state.gate import changed_since_read, check_observed_version, observation_key, state_unavailable
from ...text.quoting import in_message
from ..cells import CellsEdit, edit_sources
from ..context import CallContext
from .steps import Step

__all__ = ["edit_live"]


def _writable(target, verb: str) -> None:
    st = target.entry.st
    if st is not None and not can_write(target.entry.dir_fd, target.entry.name, st):
        raise ToolError(Codes.FS_PERMISSION_DENIED, f"cannot {verb} {in_message(target.display)}: permission denied")


def _record(ctx: CallContext, gate, target, version: str, verb: str) -> None:
    try:
        gate.record_observation(ctx.session_key, observation_key(target.real), version)
    except Exception:
        raise ToolError(
            Codes.STATE_UNAVAILABLE,
            f"cannot {verb} {in_message(target.display)}: the notebook was "
            "changed but the session state could not record it",
        ) from None


def edit_live(
    ctx: CallContext, target, steps: list[Step], cell_id: str | None, batch: bool, dry_run: bool
) -> CellsEdit | None:
    """The edit made in the open document (in a dry run, only planned); None when the notebook is
    not open (edit the file).

    The edit is computed from a snapshot before the write gate is taken (a dry run never takes
    it); inside the gate the session's observation is checked against the snapshot's version,
    and the document takes the new sources only if it is still at that version.
    """
    docs = ctx.documents
    if docs is None or target.in_spill or docs.snapshot(target.real) is None:
        return None
    shown = target.display
    _writable(target, "edit")
    if ctx.store is None:
        raise state_unavailable("edit", shown)
    snap = docs.snapshot(target.real)  # again: this is the version the edit is computed from
    if snap is None:
        raise changed_since_read("edit", shown)  # closed meanwhile: its last state may not be the file's
    data, version = snap
    check_observed_version(ctx.store, ctx.session_key, target.real, version, "write", shown)  # a first check
    nb = notebook_from_dict(data)
    done = edit_sources(nb, steps, cell_id, shown, batch, ctx.settings.edit_max_bytes)
    problem = notebook_problem(with_sources(data, done.sources))
    if problem is not None:
        raise ToolError(
            Codes.NOTEBOOK_INVALID,
            f"cannot edit {in_message(shown)}: the result would not be a "
            f"valid notebook: {problem}; nothing was written",
        )
    if dry_run:
        return done
    with ctx.changing("edit", shown, lambda: [target.change()]) as gate:
        check_observed_version(gate, ctx.session_key, target.real, version, "write", shown)
        try:
            new_version = docs.replace_sources(
                target.real, version, {i: (nb.cells[i - 1].source, text) for i, text in done.sources.items()}
            )
        except DocumentChanged:
            raise changed_since_read("edit", shown) from None
        _record(ctx, gate, target, new_version, "edit")
    return done
