"""A ``replace`` applied: the chosen occurrences changed in every file at once, or in none.

How, in order:

1. Outside the gate: the occurrences are found again (``occurrences``), the ids chosen are looked
   up in them, and each file's session observation is checked (the preview recorded it) -- a
   file never previewed or read, or changed since, refuses the whole call with the files named.
   Every new version is made and checked (a notebook parsed and validated).
2. Inside the write gate, held briefly: each file is looked at again beneath the search root; its
   version must still be the one the new version was made from and the one the session
   observed, and a rename must be able to replace it. The renames are recorded in the state file
   as one journal (``state.journal``), not ready yet, and committed.
3. Outside the gate (other writers go on): every new version is written whole and synced beside
   its file, under the temporary name the journal holds (``fs.files.write_beside``).
4. Inside the gate again: the files are checked as in 2; the journal is marked ready and
   committed (``Gate.checkpoint`` takes the gate again at once); the files are compared once
   more and only then renamed into place, one after the other; the new versions are recorded as
   this session's observations and the journal is dropped.

Files open in JupyterLab (``live.py``) are not renamed: between 3 and 4 (every check of 1 passed,
the temporary files written) their live documents are changed, shared documents range by range,
tabs by a save of their own; a refusal there undoes the live changes made and abandons the rest,
and a refusal in 4 undoes every live change too. 4 cannot be undone, so nothing live comes after.

A refusal at any step removes the temporary files and the journal. A process killed before the
journal is ready leaves it not ready: the next ``Workspace`` to start removes its temporary
files. Killed after: the next start completes it (every file renamed whose temporary file is
still there and which is still the old version).

What it must never do: write a file before every new version is made and checked, rename a file
that is not the version the session observed, leave a file half-written, rename a file open in
JupyterLab, or change a live document after the journal is made ready.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import dataclass
from typing import cast

from ...errors import Codes, ToolError
from ...fs.files import can_write, file_version, fsync_folder, pread_upto, temp_name, write_beside
from ...fs.rewrite import needs_in_place
from ...notebooks.format import notebook_problem, parse_notebook, serialize_like, with_sources
from ...state.gate import observation_key, state_unavailable
from ...state.journal import identity, open_folder, process_mark
from ...state.store import Gate
from ...text.quoting import in_message
from ..context import CallContext
from ..opened.documents import unsaved
from ..search.root import SearchRoot
from .live import Applied, apply_live, refuse_changed
from .occurrences import FileHits, Found, Occurrence, path_tag

__all__ = ["Planned", "apply_planned", "chosen_occurrences", "plan_files"]


@dataclass
class Planned:
    fh: FileHits
    chosen: list[tuple[int | None, Occurrence]]
    data: bytes  # the new version, whole
    folder: str = ""  # relative to the search root
    name: str = ""


def _names(paths: list[str]) -> str:
    shown = ", ".join(in_message(p) for p in paths[:10])
    return shown + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")


def chosen_occurrences(
    ctx: CallContext, found: Found, wanted: list[str] | str, expected: int | None, root_real: str
) -> dict[str, list[tuple[int | None, Occurrence]]]:
    """The occurrences to change, file by file (``rel`` -> occurrences), or the refusal."""
    if wanted == "all":
        total = found.total
        if expected is None:
            raise ToolError(
                Codes.ARGUMENT_INVALID,
                'occurrences "all" needs expected_count: the total the preview showed',
            )
        if total != expected:
            raise ToolError(
                Codes.REPLACE_COUNT_CHANGED,
                f"cannot replace: {total} occurrences match now, not the expected_count {expected}; preview again",
            )
        return {fh.rel: fh.all() for fh in found.files}
    by_id = {o.id: (fh, cell, o) for fh in found.files for cell, o in fh.all()}
    unknown = [i for i in dict.fromkeys(wanted) if i not in by_id]
    if unknown:
        tags = {i[:4] for i in unknown}
        changed = [fh.display for fh in found.files if path_tag(fh.real) in tags]
        changed += _observed_by_tag(ctx, root_real, tags, {fh.real for fh in found.files})
        if changed:
            raise ToolError(
                Codes.FS_NOT_OBSERVED,
                f"cannot replace: {_names(sorted(set(changed)))} changed since the preview; preview again",
            )
        raise ToolError(
            Codes.ARGUMENT_INVALID,
            f"cannot replace: no occurrence has the id {_names(unknown)}; preview again",
        )
    out: dict[str, list[tuple[int | None, Occurrence]]] = {}
    for i in dict.fromkeys(wanted):
        fh, cell, o = by_id[i]
        out.setdefault(fh.rel, []).append((cell, o))
    return out


def _observed_by_tag(ctx: CallContext, root_real: str, tags: set[str], current: set[str]) -> list[str]:
    """Files this session observed below the root, no longer holding an occurrence, whose tag is asked."""
    if ctx.store is None:
        return []
    try:
        paths = ctx.store.observed_below(ctx.session_key, root_real)
    except Exception:
        return []
    out = []
    for real in paths:
        if real not in current and path_tag(real) in tags:
            shown = os.path.relpath(real, ctx.cwd)
            out.append(shown)
    return out


def _new_bytes(fh: FileHits, chosen: list[tuple[int | None, Occurrence]]) -> bytes:
    def splice(data: bytes, occs: list[Occurrence]) -> bytes:
        parts, at = [], 0
        for o in sorted(occs, key=lambda o: o.start):
            parts += [data[at : o.start], o.replacement]
            at = o.end
        parts.append(data[at:])
        return b"".join(parts)

    if not fh.notebook:
        return splice(fh.data, [o for _, o in chosen])
    nb = parse_notebook(fh.data)
    by_cell: dict[int, list[Occurrence]] = {}
    for cell, o in chosen:
        assert cell is not None
        by_cell.setdefault(cell, []).append(o)
    sources = {}
    for cell, occs in by_cell.items():
        source = nb.cells[cell - 1].source.encode("utf-8", "surrogatepass")
        sources[cell] = splice(source, occs).decode("utf-8", "surrogatepass")
    data = with_sources(nb.data, sources)
    problem = notebook_problem(data)
    if problem is not None:
        raise ToolError(
            Codes.NOTEBOOK_INVALID,
            f"cannot replace in {in_message(fh.display)}: the result would not be a valid notebook: {problem}",
        )
    return serialize_like(data, fh.data)


def plan_files(
    ctx: CallContext, root: SearchRoot, found: Found, chosen: dict[str, list[tuple[int | None, Occurrence]]]
) -> list[Planned]:
    """Every check that can refuse the call, then every new version made; nothing written."""
    s = ctx.settings
    files = [fh for fh in found.files if fh.rel in chosen]
    count = sum(len(chosen[fh.rel]) for fh in files)
    if len(files) > s.replace_max_files:
        raise ToolError(
            Codes.REPLACE_TOO_MANY,
            f"cannot replace: the change touches {len(files)} files, more than the {s.replace_max_files} "
            "one call may change (setting replace_max_files); narrow it with path, include or occurrences",
        )
    if count > s.replace_max_occurrences:
        raise ToolError(
            Codes.REPLACE_TOO_MANY,
            f"cannot replace: the change makes {count} replacements, more than the "
            f"{s.replace_max_occurrences} one call may make (setting replace_max_occurrences); narrow it "
            "with path, include or occurrences",
        )
    if ctx.store is None:
        raise state_unavailable("replace in", root.target.display)
    unread, changed, unsaved_tabs = [], [], []
    for fh in files:
        assert fh.st is not None
        try:
            seen = ctx.store.observed_version(ctx.session_key, observation_key(fh.real))
        except Exception:
            raise state_unavailable("replace in", fh.display) from None
        if seen is None:
            unread.append(fh.display)
        elif seen != fh.version:  # the file's version, or its shared document's (``live``)
            changed.append(fh.display)
        if fh.presence is not None and not fh.presence.shared and fh.presence.unsaved:
            unsaved_tabs.append(fh.display)
    if changed:
        raise refuse_changed(changed)
    if unread:
        raise ToolError(
            Codes.FS_NOT_OBSERVED,
            f"cannot replace in {_names(unread)}: this session has not previewed or read it; preview first",
        )
    if unsaved_tabs:
        raise unsaved("replace in", unsaved_tabs[0])
    planned = []
    for fh in files:
        folder, _, name = fh.rel.rpartition("/") if root.is_dir else ("", "", "")
        shared = fh.presence is not None and fh.presence.shared  # changed in its document, not the file
        data = b"" if shared else _new_bytes(fh, chosen[fh.rel])
        planned.append(Planned(fh, chosen[fh.rel], data, folder, name))
    return planned


@contextlib.contextmanager
def _folders(root: SearchRoot, planned: list[Planned]):
    """Each planned file's folder opened beneath the search root (no symlink followed); the names."""
    fds: dict[str, int] = {}
    try:
        for p in planned:
            if not root.is_dir:
                if "" not in fds:
                    entry = root.target.entry
                    fds[""] = os.dup(entry.dir_fd)
                    p.name = entry.name
                else:
                    p.name = root.target.entry.name
            elif p.folder not in fds:
                fds[p.folder] = open_folder(root.fd, p.folder)
        yield fds
    finally:
        for fd in fds.values():
            os.close(fd)


def _remove(fds: dict[str, int], planned: list[Planned], tmps: list[str]) -> None:
    for p, tmp in zip(planned, tmps):
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=fds[p.folder])


def _current(fds: dict[str, int], p: Planned) -> os.stat_result | None:
    try:
        return os.stat(p.name, dir_fd=fds[p.folder], follow_symlinks=False)
    except FileNotFoundError:
        return None


def _check_gated(gate: Gate, ctx: CallContext, fds: dict[str, int], planned: list[Planned]) -> None:
    """Inside the gate: every file still the version planned from and observed, and writable by a rename."""
    stale = []
    for p in planned:
        st = _current(fds, p)
        old = p.fh.st
        assert old is not None
        if st is None or file_version(st) != file_version(old):
            stale.append(p.fh.display)
            continue
        if gate.observed_version(ctx.session_key, observation_key(p.fh.real)) != file_version(old):
            stale.append(p.fh.display)
        elif not can_write(fds[p.folder], p.name, st):
            raise ToolError(
                Codes.FS_PERMISSION_DENIED, f"cannot replace in {in_message(p.fh.display)}: permission denied"
            )
        elif needs_in_place(fds[p.folder], st):
            raise ToolError(
                Codes.FS_NOT_REGULAR_FILE,
                f"cannot replace in {in_message(p.fh.display)}: it has other hard links or another owner; "
                "change it with edit",
            )
    if stale:
        raise refuse_changed(stale)


def _check_live_writable(fds: dict[str, int], live: list[Planned]) -> None:
    """A file open in JupyterLab is changed only where its owner could save it (as ``edit``)."""
    for p in live:
        st = _current(fds, p)
        if st is not None and not can_write(fds[p.folder], p.name, st):
            raise ToolError(
                Codes.FS_PERMISSION_DENIED, f"cannot replace in {in_message(p.fh.display)}: permission denied"
            )


def _abandon(ctx: CallContext, shown: str, fds: dict[str, int], planned: list[Planned], tmps: list[str], journal: str):
    """Remove the temporary files and drop the journal (best effort: the next start would)."""
    _remove(fds, planned, tmps)
    with contextlib.suppress(Exception), ctx.changing("replace in", shown, lambda: []) as held:
        cast(Gate, held).drop_journal(journal)


def _saved(fds: dict[str, int], by_file: dict[str, Planned]):
    """The file's version once a tab saved it (``live.apply_live``), when it holds exactly ``data``."""

    def saved(fh: FileHits, data: bytes) -> str | None:
        p = by_file[fh.real]
        try:
            fd = os.open(p.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fds[p.folder])
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            return file_version(st) if st.st_size == len(data) and pread_upto(fd, st.st_size) == data else None
        except OSError:
            return None
        finally:
            os.close(fd)

    return saved


def apply_planned(ctx: CallContext, root: SearchRoot, planned: list[Planned]) -> None:
    """Write the planned versions, all or none (see the module's docstring): the files through the
    journal, the files open in JupyterLab through their live documents (``live.py``), between the
    temporary files written and the journal made ready, so a refusal of either undoes the other."""
    shown = root.target.display
    disk = [p for p in planned if p.fh.presence is None]
    live = [(p.fh, p.chosen, p.data) for p in planned if p.fh.presence is not None]
    by_file = {p.fh.real: p for p in planned}
    if not disk:
        with _folders(root, planned) as fds:
            _check_live_writable(fds, [p for p in planned if p.fh.presence is not None])
            apply_live(ctx, live, _saved(fds, by_file))
        return
    journal_root = ctx.resolver.tree.real
    root_rel = ctx.resolver.tree.relative(root.real if root.is_dir else os.path.dirname(root.real)) or ""
    journal = secrets.token_hex(8)
    tmps = [temp_name(p.name) for p in disk]
    with _folders(root, planned) as fds:
        _check_live_writable(fds, [p for p in planned if p.fh.presence is not None])
        # 1. checked, and the journal recorded (not ready), in one short hold of the gate
        with ctx.changing("replace in", shown, lambda: []) as held:
            gate = cast(Gate, held)
            _check_gated(gate, ctx, fds, disk)
            entries = []
            for p, tmp in zip(disk, tmps):
                assert p.fh.st is not None
                folder = "/".join(x for x in (root_rel, p.folder) if x)
                entries.append((folder, p.name, tmp, identity(p.fh.st)))
            gate.add_journal(journal, journal_root, entries, os.getpid(), process_mark(os.getpid()))
        # 2. every new version written whole and synced, outside the gate (other writers go on);
        #    then the live documents changed (each undone again if a later step refuses)
        try:
            for p, tmp in zip(disk, tmps):
                assert p.fh.st is not None
                write_beside(fds[p.folder], p.name, tmp, p.data, p.fh.st)
            applied = apply_live(ctx, live, _saved(fds, by_file)) if live else Applied()
        except BaseException:
            _abandon(ctx, shown, fds, disk, tmps, journal)
            raise
        # 3. checked again, the journal made ready and committed, then the renames
        try:
            with ctx.changing("replace in", shown, lambda: []) as held:
                gate = cast(Gate, held)
                _check_gated(gate, ctx, fds, disk)
                gate.journal_ready(journal)
                gate.checkpoint()  # every new version is whole and synced before the first rename
                stale = []
                for p in disk:
                    st = _current(fds, p)
                    assert p.fh.st is not None
                    if st is None or identity(st) != identity(p.fh.st):
                        stale.append(p.fh.display)
                if stale:
                    gate.drop_journal(journal)
                    gate.checkpoint()
                    raise refuse_changed(stale)
                for p, tmp in zip(disk, tmps):
                    os.rename(tmp, p.name, src_dir_fd=fds[p.folder], dst_dir_fd=fds[p.folder])
                for fd in fds.values():
                    fsync_folder(fd)
                for p in disk:
                    st = _current(fds, p)
                    if st is not None:
                        gate.record_observation(ctx.session_key, observation_key(p.fh.real), file_version(st))
                gate.drop_journal(journal)
        except ToolError:
            _abandon(ctx, shown, fds, disk, tmps, journal)
            applied.undo(ctx)
            raise
