"""``read``: a line-numbered window of a text file (a notebook's cells, an image's size) that records an observation."""

from __future__ import annotations

import itertools
import os
import time

from ...caches.lines import NO_MARKS
from ...errors import Codes, ToolError
from ...fs.files import file_version
from ...fs.jupytersaves import saving
from ...fs.textwindow import NotText, read_tail, read_window, window_of_text
from ...notebooks.format import is_notebook_name
from ...render.reading import read_next_offset, read_page_footer, render_read
from ...state.gate import record_read
from ...text.quoting import in_message
from ..cells import read_cells
from ..context import CallContext
from ..opened.documents import SHARED, TAB, UNSAVED, presence, shared_text
from ..spec import (
    BOOLEAN,
    INTEGER,
    NAME,
    OPEN,
    PATH,
    STRING,
    Rows,
    ToolSpec,
    nullable,
    object_schema,
    rows,
    value_schema,
)
from .bycell import by_cell, check_by_cell, read_by_cell
from .fitting import fit_lines
from .image import read_image
from .many import read_many

__all__ = ["BOM", "READ", "execute_read"]

BOM = "\ufeff"
# A file Jupyter is saving is read once the save is done (fs.jupytersaves), and read again when it
# changed while it was read: for this long at most, then it is answered as last read.
SAVE_WAIT_S = 2.0


def _line_count(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


def execute_read(ctx: CallContext, args: dict) -> dict:
    if "file_paths" in args:  # several files, each read as it reads alone (many.py)
        return read_many(ctx, args, execute_read)
    if "file_path" not in args:
        raise ToolError(Codes.ARGUMENT_INVALID, "file_path is required")
    s = ctx.settings
    check_by_cell(args)
    mode = by_cell(args)  # cell_id, output or outline: a notebook read by cell (bycell.py)
    offset = args.get("offset", 1)
    limit = args.get("limit", s.read_limit)
    if offset == 0:
        raise ToolError(Codes.ARGUMENT_INVALID, "offset must not be 0: 1 is the first line, -1 the last")
    if limit > s.read_limit:
        raise ToolError(Codes.ARGUMENT_INVALID, f"limit must be less than or equal to {s.read_limit}")
    with ctx.resolve(args["file_path"], "read", spills=True) as target:
        fd, fst = target.open_regular()
        note = None
        try:
            if mode is not None and (target.in_spill or not is_notebook_name(target.lexical)):
                raise ToolError(Codes.ARGUMENT_INVALID, f"{mode} applies to notebooks (.ipynb files) only")
            if not target.in_spill:  # an image answers its size; its bytes travel beside the value
                image = read_image(ctx, target, fd, fst)
                if image is not None:
                    return image
            pres = presence(ctx, target)  # a person has it open in JupyterLab: the answer says so
            requested = offset
            copies = not target.in_spill  # Jupyter's copy beside the file means a save under way
            until = time.monotonic() + SAVE_WAIT_S
            attached = len(ctx.images)  # images an attempt attached are the answer's only if it is
            for attempt in itertools.count():
                # never a file Jupyter is rewriting in place; read again, as it is now, if it changed
                if attempt:
                    os.lseek(fd, 0, os.SEEK_SET)  # the windows read on from where the descriptor is
                    fst = os.fstat(fd)
                    del ctx.images[attached:]  # a notebook page read before the change attached its own
                if copies:
                    fst, copies = _after_saves(target, fd, fst, until)
                offset = requested
                last = time.monotonic() > until
                if mode is not None:  # one cell, one output whole, or the outline
                    try:
                        answer = read_by_cell(ctx, target, fd, fst, offset, limit, args)
                    except ToolError as exc:  # not a notebook now: perhaps a save under way
                        if exc.code == Codes.NOTEBOOK_INVALID and not last and _moved_on(target, fd, fst, copies):
                            continue
                        raise
                    if answer.get("live") or last or not _moved_on(target, fd, fst, copies):
                        return _opened(answer, pres)
                    continue
                if is_notebook_name(target.lexical) and not target.in_spill:  # a notebook reads as cells
                    cells, note = read_cells(ctx, target, fd, fst, offset, limit)
                    if cells is not None:
                        if cells.get("live") or last or not _moved_on(target, fd, fst, copies):
                            return _opened(cells, pres)
                        continue
                shared = shared_text(ctx, target, pres)
                if shared is not None:  # its shared document, unsaved typing included
                    return _opened(_read_shared(ctx, target, shared, offset, limit), pres)
                # A streamed file's known line starts (lineindex): a continuation seeks, never recounts.
                marks = (
                    NO_MARKS
                    if ctx.lines is None or fst.st_size < s.read_stream_min_size
                    else ctx.lines.for_file(fd, file_version(fst))
                )
                # 4 bytes per character at most, plus room for a "\r": enough to cut the line exactly
                keep = 4 * s.read_max_line_length + 8
                known = marks.total()  # counted by an earlier read of this version: footers name it
                if offset < 0 and known is not None:  # and the last lines get their numbers
                    offset = max(1, known + offset + 1)
                try:
                    if offset < 0:
                        tail = read_tail(fd, fst.st_size, -offset, limit, s.read_stream_min_size, keep)
                        window = tail.window
                        offset = tail.first if tail.first is not None else offset
                    else:
                        window = read_window(
                            fd, fst.st_size, offset, limit, s.read_stream_min_size, keep, marks.nearest(offset)
                        )
                except NotText:
                    if not last and _moved_on(target, fd, fst, copies):
                        continue
                    raise ToolError(
                        Codes.FS_NOT_TEXT, f"cannot read {in_message(target.display)}: binary file"
                    ) from None
                except OSError as exc:
                    raise target.error(exc) from None
                if last or not _moved_on(target, fd, fst, copies):
                    break
        finally:
            os.close(fd)
        if not window.lines and offset > 1:
            raise ToolError(
                Codes.ARGUMENT_INVALID,
                f"offset {offset} is out of range for {in_message(target.display)} ({_line_count(window.total or 0)})",
            )
        raw = window.lines
        if offset == 1 and raw and raw[0].startswith(BOM):
            raw = [raw[0][1:], *raw[1:]]  # a byte-order mark is not text; write/edit keep it
        lines, capped = fit_lines(raw, offset, s.read_max_line_length, s.read_max_bytes)
        if offset > 0:  # lines numbered back from the end (offset < 0) teach no line starts
            marks.learn_window(window, offset, len(lines))
        if not target.in_spill:
            record_read(ctx.store, ctx.session_key, target.real, file_version(fst))
        value = {
            "path": target.display,
            "offset": offset,
            "lines": lines,
            "totalLines": window.total if window.total is not None else known,
            "capped": capped,
        }
        if note is not None:
            value["note"] = note
        return _opened(value, pres)


def _after_saves(target, fd: int, fst: os.stat_result, until: float) -> tuple[os.stat_result, bool]:
    """The file's stat once no Jupyter save of it is under way (``fs.jupytersaves``), waiting until
    ``until`` at most; and whether Jupyter's copy still means a save (False when it outlasted the
    wait: a leftover, which is then neither waited for nor looked at again)."""
    if not saving(target.entry.dir_fd, target.entry.name):
        return fst, True
    while saving(target.entry.dir_fd, target.entry.name):
        if time.monotonic() > until:
            return os.fstat(fd), False
        time.sleep(0.01)
    return os.fstat(fd), True


def _moved_on(target, fd: int, fst: os.stat_result, copies: bool) -> bool:
    """The file changed while it was read (a save began, ran or ended): read it again."""
    if target.in_spill:
        return False
    if file_version(os.fstat(fd)) != file_version(fst):
        return True
    return copies and saving(target.entry.dir_fd, target.entry.name)


def _opened(value: dict, pres) -> dict:
    """Say in the value that a person has the file open, and how (``tools.opened``)."""
    if pres is not None:
        value["open"] = SHARED if pres.shared else (UNSAVED if pres.unsaved else TAB)
    return value


def _read_shared(ctx: CallContext, target, shared: tuple[str, str], offset: int, limit: int) -> dict:
    """A window of an open file's shared document, recording the document's version as read."""
    s = ctx.settings
    text, version = shared
    window = window_of_text(text, 1, 0)
    total = window.total or 0
    if offset < 0:
        offset = max(1, total + offset + 1)
    window = window_of_text(text, offset, limit)
    if not window.lines and offset > 1:
        raise ToolError(
            Codes.ARGUMENT_INVALID,
            f"offset {offset} is out of range for {in_message(target.display)} ({_line_count(total)})",
        )
    raw = window.lines
    if offset == 1 and raw and raw[0].startswith(BOM):
        raw = [raw[0][1:], *raw[1:]]
    lines, capped = fit_lines(raw, offset, s.read_max_line_length, s.read_max_bytes)
    record_read(ctx.store, ctx.session_key, target.real, version)
    return {"path": target.display, "offset": offset, "lines": lines, "totalLines": total, "capped": capped}


_LINES = {"type": "array", "items": value_schema({"number": INTEGER, "text": STRING})}

# read answers one of two shapes: numbered lines of a text file, or the cells of a notebook.
_TEXT_READ = value_schema(
    {
        "path": STRING,
        "offset": INTEGER,
        "lines": _LINES,
        "totalLines": nullable(INTEGER),  # null: a streamed window that ended before the end of the file
        "capped": BOOLEAN,
        "note": STRING,
        "open": OPEN,
    },
    ("path", "offset", "lines", "totalLines"),
)

_OUTPUT = value_schema(
    {
        "number": INTEGER,
        "outputType": STRING,
        "text": nullable(STRING),
        "more": INTEGER,
        "name": STRING,
        # an output image the page attaches (image N after the text), or why it does not
        "data": rows(
            {"mime": STRING, "bytes": INTEGER, "attached": INTEGER, "skipped": STRING, "limit": INTEGER},
            ("mime", "bytes"),
        ),
        "ename": STRING,
        "evalue": STRING,
        "omitted": INTEGER,
    },
    ("number", "outputType"),
)

_CELL = value_schema(
    {
        "index": INTEGER,
        "id": nullable(STRING),
        "type": STRING,
        "executionCount": nullable(INTEGER),
        "lines": _LINES,
        "totalLines": INTEGER,
        "attachments": rows({"name": STRING, "mime": STRING, "bytes": INTEGER}, ("name", "mime", "bytes")),
        "outputs": {"type": "array", "items": _OUTPUT},
        "cut": nullable(
            value_schema(
                {"linesShown": INTEGER, "linesTotal": INTEGER, "attachmentsHidden": INTEGER, "outputsHidden": INTEGER}
            )
        ),
    },
    ("index", "type", "lines", "outputs"),
)

_NOTEBOOK_READ = value_schema(
    {
        "path": STRING,
        "type": {"const": "notebook"},
        "offset": INTEGER,
        "cells": {"type": "array", "items": _CELL},
        "totalCells": INTEGER,
        "capped": BOOLEAN,
        "live": BOOLEAN,
        "open": OPEN,
    },
    ("path", "type", "offset", "cells", "totalCells"),
)

# An image file: what it is; its bytes are not in the value (MCP: an image block after the text).
_IMAGE_READ = value_schema(
    {
        "path": STRING,
        "type": {"const": "image"},
        "format": {"enum": ["PNG", "JPEG", "GIF", "WebP"]},
        "mimeType": {"enum": ["image/png", "image/jpeg", "image/gif", "image/webp"]},
        "width": INTEGER,
        "height": INTEGER,
        "bytes": INTEGER,
    }
)

# One output of a notebook cell whole (cell_id and output): numbered lines of its text, its payloads named.
_OUTPUT_READ = value_schema(
    {
        "path": STRING,
        "type": {"const": "output"},
        "cell": INTEGER,
        "cellId": nullable(STRING),
        "output": INTEGER,
        "outputType": STRING,
        "name": STRING,
        "ename": STRING,
        "evalue": STRING,
        "data": rows(
            {
                "mime": STRING,
                "bytes": INTEGER,
                "attached": INTEGER,
                "skipped": STRING,
                "limit": INTEGER,
                "shown": BOOLEAN,
            },
            ("mime", "bytes"),
        ),
        "offset": INTEGER,
        "lines": _LINES,
        "totalLines": INTEGER,
        "capped": BOOLEAN,
        "live": BOOLEAN,
        "open": OPEN,
    },
    ("path", "type", "cell", "cellId", "output", "outputType", "data", "offset", "lines", "totalLines", "capped"),
)

# A notebook's outline (outline=true): headings and code cells' first lines of cells offset..lastCell.
_OUTLINE_READ = value_schema(
    {
        "path": STRING,
        "type": {"const": "outline"},
        "offset": INTEGER,
        "lastCell": INTEGER,
        "entries": rows(
            {
                "cell": INTEGER,
                "id": nullable(STRING),
                "kind": {"enum": ["heading", "code"]},
                "level": INTEGER,
                "cells": INTEGER,
                "text": STRING,
            },
            ("cell", "id", "kind", "text"),
        ),
        "totalCells": INTEGER,
        "totalHeadings": INTEGER,
        "capped": BOOLEAN,
        "live": BOOLEAN,
        "open": OPEN,
    },
    ("path", "type", "offset", "lastCell", "entries", "totalCells", "totalHeadings", "capped"),
)

_ONE_READ = [_TEXT_READ, _NOTEBOOK_READ, _OUTPUT_READ, _OUTLINE_READ, _IMAGE_READ]

# Several files at once (file_paths): each file's read as it answers alone, or its error in its place.
_FILES_READ = value_schema(
    {
        "type": {"const": "files"},
        "files": {
            "type": "array",
            "items": {
                "type": "object",
                "anyOf": [
                    *_ONE_READ,
                    value_schema(
                        {"path": STRING, "error": value_schema({"code": STRING, "message": STRING})},
                        ("path", "error"),
                    ),
                ],
            },
        },
        "totalFiles": INTEGER,
        "notRead": {"type": "array", "items": STRING},  # left unread by the answer's byte bound
        "maxBytes": INTEGER,
    },
    ("type", "files", "totalFiles", "notRead", "maxBytes"),
)

READ_OUTPUT = {"type": "object", "anyOf": [*_ONE_READ, _FILES_READ]}

READ = ToolSpec(
    name="read",
    title="Read file",
    description=(
        "Read a UTF-8 text file as numbered lines. offset is the 1-based first line, limit the "
        "number of lines (default and maximum 2000); a negative offset reads from the end (-200: the "
        "last 200 lines, numbered from the end when the file is too big to count). The footer says "
        "which lines were shown and the offset to continue from. Saved full search results can be read the same way. A "
        "notebook (.ipynb) is shown as cells: each cell's id, type and numbered source lines, and "
        "its outputs summarised; for a notebook offset and limit count cells, not lines. cell_id "
        "reads one cell, and with output=K its K-th output whole as numbered lines (offset and "
        "limit then count its lines); outline=true answers the notebook's headings, with the cell "
        "each starts at, and its code cells' first lines. A PNG, "
        "JPEG, GIF or WebP image (up to 5 MiB) answers its format, pixel size and bytes, and the "
        "image itself where the client takes images; a notebook page attaches its output images "
        "the same way, and its text says which output each one is. SVG is read as text."
    ),
    input_schema=object_schema(
        {
            "file_path": {**PATH, "description": "File to read, relative to the working directory."},
            "file_paths": {
                "type": "array",
                "items": PATH,
                "minItems": 1,
                "description": "Several files to read in one call instead of file_path (at most 20 by "
                "default), each with the same offset and limit, each answered as a read of it alone; a "
                "file that cannot be read answers its error without failing the others; the whole "
                "answer stays within the read byte bound and names any file left unread.",
            },
            "offset": {
                "type": "integer",
                "description": "1-based line to start at (default 1); negative counts from the end: -200 "
                "starts at the 200th line from the end, so the window holds the last 200 lines. For a "
                "notebook, cells.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "Lines to return (default 2000); for a notebook, cells.",
            },
            "cell_id": {
                **NAME,
                "description": "Notebooks only: the cell to read, by its id as read shows it (in a notebook "
                'without ids, its index: "3"). Alone, that cell; with output, one of its outputs.',
            },
            "output": {
                "type": "integer",
                "minimum": 1,
                "description": "Notebooks only, with cell_id: the output to read whole, numbered as read "
                "shows it ([output 2: ...]); offset and limit then count its lines.",
            },
            "outline": {
                "type": "boolean",
                "description": "Notebooks only: the outline (markdown headings with the cell each starts "
                "at and the cells its section holds, code cells' first lines) instead of the cells; "
                "offset and limit count cells.",
            },
        },
    ),
    output_schema=READ_OUTPUT,
    guidance=(
        "Use read to look inside a text file; results carry line numbers. Large files come in "
        "windows: continue with the offset the footer names; for the end of a log, offset=-200 "
        "gives its last 200 lines without reading the rest. In a long notebook, outline=true "
        "shows its headings and the cells they start at; an output the cell view cuts names the "
        "call that reads it whole. Reading a file is also what allows this session to write or "
        "edit it afterwards."
    ),
    execute=execute_read,
    render=render_read,
    rows=(Rows("entries", ("cell", "id", "kind", "level", "cells", "text")), Rows("lines", ("number", "text"))),
    footer=read_page_footer,
    next_offset=read_next_offset,
)
