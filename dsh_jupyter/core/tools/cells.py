"""The notebook parts of ``read``, ``write`` and ``edit``: a page of cells, edits of cell sources.

Why it exists: ``read`` of a ``.ipynb`` shows cells (numbered source, outputs summarised: no
base64, long text cut with a count of what was cut and the call that shows it whole), pages by
cells and keeps the byte cap; ``output_whole`` is one output uncut, for ``read`` with ``output``;
``edit`` changes text inside cell sources only and ``write`` saves only valid notebooks. When
the server has put a live-document source into the workspace (``core.documents``) and the notebook is
open in Jupyter, reads and edits go through that shared document instead of the file, so the
person's unsaved typing is neither missed nor overwritten.

What it must never do: open a file by name (the executors hand over descriptors and bytes),
write a notebook that nbformat does not validate, or record an observation of anything but what
was shown (the file's version, or the open document's).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..caches.parsed import parse_open
from ..errors import Codes, ToolError
from ..fs.files import file_version, pread_all
from ..images import Image
from ..notebooks.format import (
    Cell,
    Notebook,
    NotNotebook,
    notebook_from_dict,
    notebook_problem,
    parse_notebook,
    serialize_like,
    source_text,
    with_sources,
)
from ..notebooks.images import ATTACHABLE, PageImages
from ..notebooks.outputs import clean_output, traceback_lines
from ..render.notebook import cell_address, render_cell, rendered_cell, traceback_omitted
from ..settings import Settings
from ..state.gate import record_read
from ..text.diffs import Diff, diff_page
from ..text.quoting import in_message, quote_name
from .context import CallContext
from .edit.steps import Step, step_error, too_large

__all__ = [
    "Loaded",
    "cell_value",
    "cells_page",
    "check_written",
    "edit_sources",
    "edited_bytes",
    "load_cells",
    "notebook_edit",
    "output_whole",
    "page_cells",
    "plan_edit",
    "read_cells",
    "text_view_note",
]

_TEXTUAL = re.compile(r"^text/|json$|javascript$|xml$|^application/x-latex$")


def text_view_note(reason: str) -> str:
    """The line a notebook read as text carries instead of cells."""
    return f"(Shown as text, not as notebook cells: {reason}. A write or edit must leave a valid notebook.)"


# --------------------------------------------------------------------------------- summaries


def _cap(text: str, max_chars: int) -> dict:
    if len(text) <= max_chars:
        return {"text": text, "more": 0}
    return {"text": text[:max_chars], "more": len(text) - max_chars}


def _mime_size(mime: str, value: object) -> int:
    """Bytes of one MIME payload: text as UTF-8, binary as decoded from its base64."""
    if not isinstance(value, (str, list)):
        import json

        return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    text = source_text(value)
    if _TEXTUAL.search(mime) or mime == "image/svg+xml":
        return len(text.encode("utf-8", "surrogatepass"))
    b64 = "".join(text.split())
    return max(0, len(b64) * 3 // 4 - len(b64) + len(b64.rstrip("=")))


def _traceback(lines: list, keep: int, address: str, number: int) -> tuple[str, int]:
    """The ANSI-free traceback, at most ``keep`` lines: its head and tail, and how many were left
    out (the line that says so names the call that shows them: output ``number`` of ``address``)."""
    flat = traceback_lines(lines if isinstance(lines, list) else [])
    if len(flat) <= keep:
        return "\n".join(flat), 0
    head = (keep + 1) // 2
    tail = keep - head
    omitted = len(flat) - keep
    shown = flat[:head] + [traceback_omitted(omitted, address, number)] + (flat[-tail:] if tail else [])
    return "\n".join(shown), omitted


def _data_item(mime: str, payload: object, where: tuple[int, int], page: PageImages | None) -> dict:
    size = _mime_size(mime, payload)
    item: dict = {"mime": mime, "bytes": size}
    if page is not None and mime in ATTACHABLE:
        item.update(page.consider(where[0], where[1], payload, size))
    return item


def _output_value(
    number: int, out: dict, s: Settings, cell: int = 0, page: PageImages | None = None, address: str = ""
) -> dict:
    kind = out.get("output_type", "")
    value: dict = {"number": number, "outputType": kind, "data": [], "text": None, "more": 0}
    if kind == "stream":
        value["name"] = out.get("name", "")
        text = clean_output(source_text(out.get("text", "")), stream=True)
        if len(text) <= s.notebook_output_max_chars:  # most streams: whole, nothing cut
            value["text"] = text
        else:
            value.update(_cap(text, s.notebook_output_max_chars))
    elif kind in ("execute_result", "display_data"):
        data: dict = out["data"] if isinstance(out.get("data"), dict) else {}
        value["data"] = [_data_item(m, v, (cell, number), page) for m, v in data.items() if m != "text/plain"]
        if "text/plain" in data:
            value.update(_cap(clean_output(source_text(data["text/plain"])), s.notebook_output_max_chars))
    elif kind == "error":
        ename, evalue = str(out.get("ename", "")), str(out.get("evalue", ""))
        trace, omitted = _traceback(out.get("traceback") or [], s.notebook_traceback_lines, address, number)
        head = clean_output(f"{ename}: {evalue}")
        value["ename"], value["evalue"], value["omitted"] = ename, evalue, omitted
        value.update(_cap(head + ("\n" + trace if trace else ""), s.notebook_output_max_chars))
    return value


# The text an output read whole shows of a rich output: the first of these it has (the rest are named).
TEXT_MIMES = ("text/plain", "text/markdown", "text/latex", "text/html")


def output_whole(number: int, out: dict, cell: int = 0, page: PageImages | None = None) -> dict:
    """Output ``number`` of a cell whole, as ``read`` with ``output`` shows it: its kind (a stream's
    name), its data items but text/plain (images attached while ``page`` allows; the item shown as
    text marked ``shown``) and all of its text — ANSI removed and progress bars collapsed as in the
    cell view, an error's ``ename: evalue`` and whole traceback (``text`` None when it has none)."""
    kind = out.get("output_type", "")
    value: dict = {"outputType": kind, "data": [], "text": None}
    if kind == "stream":
        value["name"] = out.get("name", "")
        value["text"] = clean_output(source_text(out.get("text", "")), stream=True)
    elif kind in ("execute_result", "display_data"):
        data: dict = out["data"] if isinstance(out.get("data"), dict) else {}
        shown = next((m for m in TEXT_MIMES if isinstance(data.get(m), (str, list))), None)
        for mime, payload in data.items():
            if mime != "text/plain":
                item = _data_item(mime, payload, (cell, number), page)
                value["data"].append({**item, "shown": True} if mime == shown else item)
        if shown is not None:
            value["text"] = clean_output(source_text(data[shown]))
    elif kind == "error":
        ename, evalue = str(out.get("ename", "")), str(out.get("evalue", ""))
        value["ename"], value["evalue"] = ename, evalue
        lines = out.get("traceback")
        trace = traceback_lines(lines if isinstance(lines, list) else [])
        value["text"] = "\n".join([clean_output(f"{ename}: {evalue}"), *(trace if trace != [""] else [])])
    return value


def _source_lines(source: str, max_chars: int) -> list[dict]:
    if not source:
        return []
    raw = source.split("\n")
    if raw[-1] == "":
        raw.pop()
    suffix = f"... (line truncated to {max_chars} chars)"
    return [
        {"number": i, "text": t if len(t) <= max_chars else t[:max_chars] + suffix} for i, t in enumerate(raw, start=1)
    ]


def cell_value(cell: Cell, s: Settings, page: PageImages | None = None) -> dict:
    """One cell as the read value holds it: numbered source, attachments and outputs summarised;
    with ``page``, its output images attached while the page's bounds allow."""
    attachments = []
    for name, bundle in (cell.attachments or {}).items():
        for mime, payload in (bundle or {}).items() if isinstance(bundle, dict) else ():
            attachments.append({"name": name, "mime": mime, "bytes": _mime_size(mime, payload)})
    lines = _source_lines(cell.source, s.read_max_line_length)
    address = cell_address(cell.index, cell.id)
    return {
        "index": cell.index,
        "id": cell.id,
        "type": cell.type,
        "executionCount": cell.execution_count,
        "lines": lines,
        "totalLines": len(lines),
        "attachments": attachments,
        "outputs": [
            _output_value(i, o, s, cell.index, page, address)
            for i, o in enumerate(cell.outputs, start=1)
            if isinstance(o, dict)
        ],
        "cut": None,
    }


def _cost(lines: list[str]) -> int:
    """The bytes of ``lines`` in the page's text, each with its line break."""
    text = "\n".join(lines)
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return size + 1 if lines else 0


def _cut_to_fit(cell: dict, room: int) -> dict:
    """The first cell of a page when it alone is over the byte cap: as much as fits, and what was cut."""
    total_outputs, total_att = len(cell["outputs"]), len(cell["attachments"])
    cut = {
        "linesShown": 0,
        "linesTotal": cell["totalLines"],
        "attachmentsHidden": total_att,
        "outputsHidden": total_outputs,
    }
    shown = {**cell, "lines": [], "attachments": [], "outputs": [], "cut": cut}
    used = _cost(render_cell(shown))
    for line in cell["lines"]:
        step = len(f"{line['number']}: {line['text']}".encode("utf-8", "surrogatepass")) + 1
        if used + step > room and shown["lines"]:
            break
        shown["lines"].append(line)
        used += step
        cut["linesShown"] += 1
    if cut["linesShown"] == cell["totalLines"]:
        for key, hidden in (("attachments", "attachmentsHidden"), ("outputs", "outputsHidden")):
            for item in cell[key]:
                trial = {**shown, key: [*shown[key], item], "cut": {**cut, hidden: cut[hidden] - 1}}
                step = _cost(render_cell(trial)) - used
                if used + step > room:
                    return shown
                shown, cut, used = trial, trial["cut"], used + step
    return shown


def page_cells(nb: Notebook, offset: int, limit: int, s: Settings) -> tuple[list[dict], bool, tuple[Image, ...]]:
    """Cells ``offset`` .. ``offset + limit - 1`` that fit in ``read_max_bytes``; whether the cap
    cut; and the output images the page attaches (``notebooks.images``), in the text's order."""
    out: list[dict] = []
    used = 0
    page = PageImages(s.notebook_page_max_images, s.notebook_page_max_image_bytes)
    for index in range(offset - 1, min(offset - 1 + limit, len(nb.cells))):
        # built as reached (a page stops at the cap), rendered once: the page's text reuses it
        value = rendered_cell(cell_value(nb.cells[index], s, page))
        cost = _cost(value.lines)
        if used + cost > s.read_max_bytes:
            if not out:
                out.append(_cut_to_fit(value, s.read_max_bytes))
            return out, True, page.shown(out)
        used += cost
        out.append(value)
    return out, False, page.shown(out)


# --------------------------------------------------------------------------------------- read


def _live(ctx: CallContext, target) -> tuple[dict, str] | None:
    docs = ctx.documents
    if docs is None or target.in_spill:
        return None
    return docs.snapshot(target.real)


@dataclass(frozen=True)
class Loaded:
    """A notebook as ``read`` shows it: its cells, the version a read of it records, and whether
    they came from its live document (``core.documents``) rather than the file."""

    nb: Notebook
    version: str
    live: bool


def load_cells(ctx: CallContext, target, fd: int, fst) -> Loaded | str:
    """The cells of an open notebook file (its live document when there is one); or why it is read
    as text instead (not valid JSON or nbformat, or too large to parse), in a few words."""
    s = ctx.settings
    live = _live(ctx, target)
    if live is not None:
        data, version = live
        return Loaded(notebook_from_dict(data), version, True)
    if fst.st_size > s.notebook_max_bytes:
        return f"it is larger than {s.notebook_max_bytes} bytes, the most parsed as a notebook"

    def read() -> bytes:
        try:
            return pread_all(fd, fst.st_size)
        except OSError as exc:
            raise target.error(exc) from None

    try:
        nb = parse_open(ctx.parsed, fd, fst, read)  # kept per file version: callers only read it
    except NotNotebook as exc:
        return exc.reason
    return Loaded(nb, file_version(fst), False)


def read_cells(ctx: CallContext, target, fd: int, fst, offset: int, limit: int) -> tuple[dict | None, str | None]:
    """The cell view of an open notebook file, recording what it showed; or ``(None, note)`` when
    the file is to be read as text (not valid JSON or nbformat, or too large to parse)."""
    loaded = load_cells(ctx, target, fd, fst)
    if isinstance(loaded, str):
        return None, text_view_note(loaded)
    return cells_page(ctx, target, loaded, offset, limit), None


def cells_page(ctx: CallContext, target, loaded: Loaded, offset: int, limit: int) -> dict:
    """A page of a loaded notebook's cells (``offset`` may count back from the end), recording the read."""
    total = len(loaded.nb.cells)
    if offset < 0:  # the last cells: -3 starts at the third cell from the end
        offset = max(1, total + offset + 1)
    if offset > 1 and offset > total:
        unit = "cell" if total == 1 else "cells"
        raise ToolError(
            Codes.ARGUMENT_INVALID,
            f"offset {offset} is out of range for {in_message(target.display)} ({total} {unit})",
        )
    cells, capped, images = page_cells(loaded.nb, offset, limit, ctx.settings)
    record_read(ctx.store, ctx.session_key, target.real, loaded.version)
    ctx.images.extend(images)
    return {
        "path": target.display,
        "type": "notebook",
        "offset": offset,
        "cells": cells,
        "totalCells": total,
        "capped": capped,
        "live": loaded.live,
    }


# ----------------------------------------------------------------------------------- edit/write


def plan_edit(
    cells: Sequence,
    sources: dict[int, str],
    old: str,
    new: str,
    replace_all: bool,
    cell_id: str | None,
    shown: str,
    room: int | None = None,
) -> tuple[int, int]:
    """Replace ``old`` with ``new`` in the cell sources ``sources`` (1-based index -> text, changed
    in place) of ``cells``; the number of replacements and the bytes the sources grew by, or the
    edit's error.

    With ``room``, the bytes the sources may grow by: a step that would grow them more raises
    ``SourcesTooLarge`` (with that growth) before anything is replaced.
    """
    old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    where = f"the cell sources of {in_message(shown)}"
    if cell_id is not None:
        cells = [c for c in cells if c.id == cell_id]
        if not cells:
            raise ToolError(Codes.EDIT_NOT_FOUND, f"no cell has the id {in_message(cell_id)} in {in_message(shown)}")
        where = f"cell {in_message(cell_id)} of {in_message(shown)}"
    hits = [(c, sources[c.index].count(old)) for c in cells]
    total = sum(n for _c, n in hits)
    if total == 0:
        raise ToolError(Codes.EDIT_NOT_FOUND, f"old_string not found in {where}")
    if total > 1 and not replace_all:
        numbers = ", ".join(str(c.index) for c, n in hits if n)
        hint = (
            "add context or set replace_all" if cell_id is not None else "add context, give cell_id or set replace_all"
        )
        raise ToolError(Codes.EDIT_AMBIGUOUS, f"old_string appears {total} times in {where} (cells {numbers}); {hint}")
    growth = total * (_source_bytes(new) - _source_bytes(old))
    if room is not None and growth > room:
        raise SourcesTooLarge(growth)
    for c, n in hits:
        if n:
            sources[c.index] = sources[c.index].replace(old, new)
    return total, growth


class SourcesTooLarge(Exception):
    """A step would grow the cell sources by ``growth`` bytes, more than the edit may."""

    def __init__(self, growth: int) -> None:
        self.growth = growth


def _source_bytes(text: str) -> int:
    """Bytes of cell source text in UTF-8 (a lone surrogate counted as its three)."""
    return len(text.encode("utf-8", "surrogatepass"))


def _invalid(verb: str, shown: str, reason: str) -> ToolError:
    return ToolError(Codes.NOTEBOOK_INVALID, f"cannot {verb} {in_message(shown)}: {reason}; nothing was written")


def edited_bytes(nb: Notebook, raw: bytes, sources: dict[int, str], shown: str) -> bytes:
    """The notebook file with new cell sources, in its own layout, validated before it is written."""
    data = with_sources(nb.data, sources)
    problem = notebook_problem(data)
    if problem is not None:
        raise _invalid("edit", shown, f"the result would not be a valid notebook: {problem}")
    return serialize_like(data, raw)


def check_written(data: bytes, shown: str, verb: str = "write") -> None:
    """Refuse content for a ``.ipynb`` that is not a valid notebook (``NOTEBOOK_INVALID``)."""
    try:
        parse_notebook(data)
    except NotNotebook as exc:
        raise _invalid(verb, shown, exc.reason) from None


@dataclass(frozen=True)
class CellsEdit:
    """What an edit of a notebook's cell sources changes."""

    sources: dict[int, str]  # the new source of each changed cell (1-based index -> text)
    replacements: int
    diff: Diff  # the unified diff of each changed cell's source, in cell order, as one page


def edit_sources(
    nb: Notebook, steps: list[Step], cell_id: str | None, shown: str, batch: bool, limit: int | None = None
) -> CellsEdit:
    """``steps`` applied one after another to the cell sources: each sees what the ones before it
    left; the first that fails raises, named as that step of a ``batch``.

    With ``limit`` (``edit_max_bytes``), a step after which the cell sources alone would pass it
    is refused before it is made (``FS_TOO_LARGE``): the notebook would be larger still.
    """
    sources = {c.index: c.source for c in nb.cells}
    size = sum(_source_bytes(text) for text in sources.values())
    found = 0
    for k, step in enumerate(steps, 1):
        room = None if limit is None else limit - size
        try:
            n, growth = plan_edit(nb.cells, sources, step.old, step.new, step.replace_all, cell_id, shown, room)
        except SourcesTooLarge as exc:
            assert limit is not None  # only a step with room can be too large
            raise too_large(size + exc.growth, limit, "the cell sources", shown, k, steps, batch) from None
        except ToolError as exc:
            raise step_error(exc, k, steps, batch) from None
        found += n
        size += growth
    changed = {c.index: sources[c.index] for c in nb.cells if sources[c.index] != c.source}
    diff = diff_page((c.source, changed[c.index], _cell_label(shown, c)) for c in nb.cells if c.index in changed)
    return CellsEdit(changed, found, diff)


def _cell_label(shown: str, cell: Cell) -> str:
    return f"{quote_name(shown)} cell {cell.index}" + (f" (id={json.dumps(cell.id)})" if cell.id else "")


def notebook_edit(
    raw: bytes, steps: list[Step], cell_id: str | None, shown: str, batch: bool, limit: int
) -> tuple[bytes, CellsEdit] | None:
    """``edit`` of a notebook file's bytes: the new bytes and what changed; None when the file is
    not a valid notebook (it is then edited as text, and the result checked). The new bytes are at
    most ``limit`` (``edit_max_bytes``), or the edit is refused."""
    try:
        nb = parse_notebook(raw)
    except NotNotebook as exc:
        if cell_id is not None:
            raise ToolError(Codes.NOTEBOOK_INVALID, f"cannot edit {in_message(shown)} by cell: {exc.reason}") from None
        return None
    done = edit_sources(nb, steps, cell_id, shown, batch, limit)
    data = edited_bytes(nb, raw, done.sources, shown)
    if len(data) > limit:  # the sources fit, the notebook around them does not: the whole edit's result
        raise too_large(len(data), limit, "the result", shown, len(steps), steps, False)
    return data, done
