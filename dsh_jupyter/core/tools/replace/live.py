"""``replace`` in files open in JupyterLab: found in, and applied to, their live documents.

Why it exists: while a person has a file open, what they see (and what JupyterLab will save) is
its live document, not the file (``core/documents.py``); writing the file under it loses one
side's work. So:

* **shared documents** (real-time collaboration): the preview searches the document, unsaved
  typing included (each occurrence's id tied to the document's version, which the preview records
  as the session's observation, and the server remembers the content of). An apply searches that
  remembered content again (the same ids), finds each chosen occurrence in what the document
  holds now (``text.shifts``: a person typing elsewhere moves it, typing in or against it changes
  it) and changes exactly those ranges (``LiveDocuments.replace_ranges``), never the whole
  document, so the person's typing anywhere else is kept. A chosen occurrence the person changed
  refuses the whole call, naming the file, as a file changed since the preview does;
* **tabs** without collaboration: the file is what the tab shows when it has no unsaved changes
  (else the call is refused, ``FS_OPEN_UNSAVED``); the new version is made from the file and
  handed to the tab, which takes it and saves it (``save_in_tabs``: no "File Changed" dialog).

Every change made here can be undone (``Applied.undo``): the shared document's ranges changed
back, the tab's previous content saved again; ``apply.py`` undoes them when a later step of the
same call is refused, so the call stays all or nothing.

What it must never do: replace a whole document, change a range that does not hold exactly the
occurrence's text, or change a live document before every file of the call was checked.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from ...documents import DocumentChanged, Presence
from ...errors import Codes, ToolError
from ...fs.files import file_version
from ...notebooks.format import NotNotebook, parse_notebook
from ...state.gate import observation_key, record_read
from ...text.quoting import in_message
from ...text.shifts import shifted_ranges
from ..context import CallContext
from ..opened.documents import SHARED, TAB, save_in_tabs
from ..search.root import SearchRoot
from .occurrences import FileHits, Found, Occurrence, occurrence_id, search_sources

__all__ = ["Applied", "apply_live", "how_open", "live_occurrences", "refuse_changed"]

log = logging.getLogger(__name__)

_TRIES = 5  # changes tried again when the person typed between the look at the document and the change

Range = tuple[int | None, int, int, str, str]  # (cell, start, end, old, new): code points


def refuse_changed(displays: list[str]) -> ToolError:
    shown = ", ".join(in_message(p) for p in displays[:10])
    shown += f" and {len(displays) - 10} more" if len(displays) > 10 else ""
    return ToolError(Codes.FS_NOT_OBSERVED, f"cannot replace: {shown} changed since the preview; preview again")


# -- finding -------------------------------------------------------------------------------------------


def _open_files(ctx: CallContext) -> dict[str, Presence]:
    """Every file open in JupyterLab now (one question to the server, however many files hit)."""
    docs = ctx.documents
    if docs is None:
        return {}
    try:
        return dict(docs.open_files())
    except Exception as exc:  # the server cannot say: the files are used, as without one
        log.warning("could not tell which files are open in JupyterLab: %s", exc)
        return {}


def _snapshot(ctx: CallContext, fh: FileHits) -> tuple[str | dict, str] | None:
    docs = ctx.documents
    assert docs is not None
    return docs.snapshot(fh.real) if fh.notebook else docs.text_snapshot(fh.real)


def _from_file(fh: FileHits) -> str | dict | None:
    """The file's content as the preview that searched the file saw it (cell sources by id)."""
    if not fh.notebook:
        return fh.data.decode("utf-8", "surrogateescape")
    try:
        nb = parse_notebook(fh.data)
    except NotNotebook:
        return None
    return {"cells": [{"id": cell.id, "source": cell.source} for cell in nb.cells]}


def _content(ctx: CallContext, fh: FileHits, applying: bool) -> tuple[str | dict, str] | None:
    """What to search: the document now (a preview); for an apply, what it held at the version the
    session's preview (or read) recorded, when the server still remembers it; the file, when the
    preview searched the file (nobody had it open then) and it has not changed since; else now."""
    now = _snapshot(ctx, fh)
    if now is None or not applying or ctx.store is None:
        return now
    try:
        seen = ctx.store.observed_version(ctx.session_key, observation_key(fh.real))
    except Exception:
        return now
    if seen is None or seen == now[1]:
        return now
    if fh.st is not None and seen == file_version(fh.st):
        base = _from_file(fh)
        if base is not None:
            return base, seen
    assert ctx.documents is not None
    then = ctx.documents.remembered(fh.real, seen)
    if isinstance(then, dict if fh.notebook else str):
        return then, seen
    return now


def _sources(content: str | dict) -> list[str]:
    if isinstance(content, str):
        return [content]
    out = []
    for cell in content.get("cells", []):
        source = cell.get("source", "")
        out.append("".join(source) if isinstance(source, list) else str(source))
    return out


def live_occurrences(ctx: CallContext, root: SearchRoot, found: Found, search: list[str], applying: bool) -> Found:
    """``found`` with each file open in JupyterLab marked so, and a shared document's occurrences
    found in the document instead of the file (their ids tied to its version)."""
    if ctx.documents is None:
        return found
    files = []
    opened = _open_files(ctx) if found.files else {}
    for fh in found.files:
        fh.presence = opened.get(fh.real)
        if fh.presence is None or not fh.presence.shared:
            files.append(fh)
            continue
        got = _content(ctx, fh, applying)
        if got is None:  # closed meanwhile: the file is used
            fh.presence = None
            files.append(fh)
            continue
        content, version = got
        sources = _sources(content)
        fh.occurrences, fh.cells = [], {}
        found_in = search_sources(ctx, root, search, [s.encode("utf-8", "surrogatepass") for s in sources])
        for index, occs in enumerate(found_in):
            if not occs:
                continue
            if fh.notebook:
                fh.cells[index + 1] = occs
            else:
                fh.occurrences = occs
        fh.base, fh.version = content, version
        for cell, o in fh.all():
            o.id = occurrence_id(ctx.session_key, fh.real, version, cell, o)
        if fh.all():
            files.append(fh)
    found.files = files
    return found


def how_open(fh: FileHits) -> str | None:
    """``value.changed[].open``: ``shared`` or ``tab`` for a file open in JupyterLab, else None."""
    if fh.presence is None:
        return None
    return SHARED if fh.presence.shared else TAB


# -- applying ------------------------------------------------------------------------------------------


def _points(source: str, chosen: list[Occurrence]) -> list[tuple[int, int, str, str]]:
    """Each occurrence as code points of ``source`` (its offsets are UTF-8 bytes of it)."""
    raw = source.encode("utf-8", "surrogatepass")
    out = []
    for o in chosen:
        start = len(raw[: o.start].decode("utf-8", "surrogatepass"))
        old = raw[o.start : o.end].decode("utf-8", "surrogatepass")
        out.append((start, start + len(old), old, o.replacement.decode("utf-8", "replace")))
    return out


def _cell_map(then: dict, now: dict) -> dict[int, int]:
    """1-based cell of ``then`` -> 1-based cell of ``now``: by id, or by place when neither has ids
    and the count is the same."""
    a = [c.get("id") for c in then.get("cells", [])]
    b = [c.get("id") for c in now.get("cells", [])]
    if all(a) and all(b) and len(set(b)) == len(b):
        where = {cell_id: i for i, cell_id in enumerate(b, 1)}
        return {i: where[cell_id] for i, cell_id in enumerate(a, 1) if cell_id in where}
    return {i: i for i in range(1, len(a) + 1)} if len(a) == len(b) else {}


def _mapped(base: str | dict, now: str | dict, ranges: list[Range]) -> list[Range] | None:
    """``ranges`` of ``base`` where ``now`` holds them; None when one of them changed."""
    then_sources, now_sources = _sources(base), _sources(now)
    cells = _cell_map(base, now) if isinstance(base, dict) and isinstance(now, dict) else {}
    by_cell: dict[int | None, list[Range]] = {}
    for r in ranges:
        by_cell.setdefault(r[0], []).append(r)
    out: list[Range] = []
    for cell, rs in by_cell.items():
        if cell is None:
            before, after, to = then_sources[0], now_sources[0], None
        else:
            to = cells.get(cell)
            if to is None:
                return None  # the cell was deleted
            before, after = then_sources[cell - 1], now_sources[to - 1]
        places = shifted_ranges(before, after, [(r[1], r[2]) for r in rs])
        for r, place in zip(rs, places):
            if place is None or after[place[0] : place[1]] != r[3]:
                return None
            out.append((to, place[0], place[1], r[3], r[4]))
    return out


def _after(now: str | dict, ranges: list[Range]) -> tuple[str | dict, list[Range]]:
    """What the document holds once ``ranges`` are changed in ``now``, and the ranges that undo it."""
    sources = _sources(now)
    undo: list[Range] = []
    by_cell: dict[int | None, list[Range]] = {}
    for r in ranges:
        by_cell.setdefault(r[0], []).append(r)
    for cell, rs in by_cell.items():
        i = 0 if cell is None else cell - 1
        text, parts, at, shift = sources[i], [], 0, 0
        for _c, start, end, old, new in sorted(rs, key=lambda r: r[1]):
            parts += [text[at:start], new]
            undo.append((cell, start + shift, start + shift + len(new), new, old))
            shift += len(new) - (end - start)
            at = end
        parts.append(text[at:])
        sources[i] = "".join(parts)
    if isinstance(now, str):
        return sources[0], undo
    data = {**now, "cells": [{**c, "source": s} for c, s in zip(now["cells"], sources)]}
    return data, undo


@dataclass
class Applied:
    """The live changes made so far by one call, each with what undoes it."""

    shared: list[tuple[FileHits, str | dict, list[Range]]] = field(default_factory=list)  # (file, after, undo)
    tabs: list[tuple[FileHits, bytes, str]] = field(default_factory=list)  # (file, old data, new file version)

    def undo(self, ctx: CallContext) -> list[str]:
        """Every change undone, the last first; the files that could not be (best effort)."""
        failed = []
        docs = ctx.documents
        assert docs is not None
        for fh, old, version in reversed(self.tabs):
            try:
                if not docs.save_in_tabs(fh.real, old.decode("utf-8", "surrogateescape"), fh.notebook, version):
                    failed.append(fh.display)
            except Exception:
                failed.append(fh.display)
        for fh, after, undo in reversed(self.shared):
            try:
                _change(ctx, fh, after, undo)
            except Exception:
                failed.append(fh.display)
        if failed:
            log.warning("replace could not undo its change in the live documents of %s", ", ".join(failed))
        return failed


def _change(ctx: CallContext, fh: FileHits, base: str | dict, ranges: list[Range]) -> tuple[str | dict, list[Range]]:
    """``ranges`` of ``base`` changed in the document as it is now; what it then holds, and the undo."""
    docs = ctx.documents
    assert docs is not None
    for _ in range(_TRIES):
        now = _snapshot(ctx, fh)
        if now is None:
            raise refuse_changed([fh.display])  # closed meanwhile: its last state may not be the file's
        content, version = now
        mapped = _mapped(base, content, ranges)
        if mapped is None:
            raise refuse_changed([fh.display])  # the person changed an occurrence
        try:
            new_version = docs.replace_ranges(fh.real, version, fh.notebook, mapped)
        except DocumentChanged:
            continue  # typed between the look and the change: look again
        after, undo = _after(content, mapped)
        record_read(ctx.store, ctx.session_key, fh.real, new_version)
        return after, undo
    raise refuse_changed([fh.display])


@dataclass(frozen=True)
class _Shown:
    """What ``save_in_tabs`` names and changes: the file's display and real path."""

    display: str
    real: str


def apply_live(
    ctx: CallContext,
    files: list[tuple[FileHits, list[tuple[int | None, Occurrence]], bytes]],
    saved: Callable[[FileHits, bytes], str | None],
) -> Applied:
    """The chosen occurrences changed in every live document of ``files`` (``(file, chosen, new
    version of the file)``): shared documents first, then tabs; on a refusal every change made is
    undone and the refusal raised. ``saved``: the file's version once a tab saved it, when it
    holds exactly what was handed over (else None)."""
    done = Applied()
    try:
        for fh, chosen, _data in files:
            if fh.presence is None or not fh.presence.shared:
                continue
            assert fh.base is not None
            sources = _sources(fh.base)
            ranges: list[Range] = []
            by_cell: dict[int | None, list[Occurrence]] = {}
            for cell, o in chosen:
                by_cell.setdefault(cell, []).append(o)
            for cell, occs in by_cell.items():
                for start, end, old, new in _points(sources[0 if cell is None else cell - 1], occs):
                    ranges.append((cell, start, end, old, new))
            after, undo = _change(ctx, fh, fh.base, ranges)
            done.shared.append((fh, after, undo))
        for fh, _chosen, data in files:
            if fh.presence is None or fh.presence.shared:
                continue
            assert fh.st is not None
            if not save_in_tabs(
                ctx, _Shown(fh.display, fh.real), fh.presence, data, fh.notebook, "replace in", file_version(fh.st)
            ):
                raise refuse_changed([fh.display])  # no tab has it open any more
            version = saved(fh, data)
            done.tabs.append((fh, fh.data, version or ""))
            if version is not None:
                record_read(ctx.store, ctx.session_key, fh.real, version)
    except BaseException:
        done.undo(ctx)
        raise
    return done
