"""``read``: a line-numbered window of a text file (a notebook's cells, an image's size) that records an observation."""

from __future__ import annotations

import os

from ..caches.lines import NO_MARKS
from ..errors import Codes, ToolError
from ..fs.files import file_version
from ..fs.textwindow import NotText, read_window
from ..notebooks.format import is_notebook_name
from ..render.reading import render_read
from ..state.gate import record_read
from ..text.quoting import in_message
from .cells import read_cells
from .context import CallContext
from .image_read import read_image
from .spec import BOOLEAN, INTEGER, OFFSET, PATH, STRING, ToolSpec, nullable, object_schema, rows, value_schema

__all__ = ["BOM", "READ", "execute_read"]

BOM = "\ufeff"


def _line_count(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


def execute_read(ctx: CallContext, args: dict) -> dict:
    s = ctx.settings
    offset = args.get("offset", 1)
    limit = args.get("limit", s.read_limit)
    if limit > s.read_limit:
        raise ToolError(Codes.ARGUMENT_INVALID, f"limit must be less than or equal to {s.read_limit}")
    with ctx.resolve(args["file_path"], "read", spills=True) as target:
        fd, fst = target.open_regular()
        note = None
        try:
            if not target.in_spill:  # an image answers its size; its bytes travel beside the value
                image = read_image(ctx, target, fd, fst)
                if image is not None:
                    return image
            if is_notebook_name(target.lexical) and not target.in_spill:  # a notebook reads as cells
                cells, note = read_cells(ctx, target, fd, fst, offset, limit)
                if cells is not None:
                    return cells
            # A streamed file's known line starts (lineindex): a continuation seeks, never recounts.
            marks = (
                NO_MARKS
                if ctx.lines is None or fst.st_size < s.read_stream_min_size
                else ctx.lines.for_file(fd, file_version(fst))
            )
            try:
                # 4 bytes per character at most, plus room for a "\r": enough to cut the line exactly
                keep = 4 * s.read_max_line_length + 8
                window = read_window(
                    fd, fst.st_size, offset, limit, s.read_stream_min_size, keep, marks.nearest(offset)
                )
            except NotText:
                raise ToolError(Codes.FS_NOT_TEXT, f"cannot read {in_message(target.display)}: binary file") from None
            except OSError as exc:
                raise target.error(exc) from None
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
        lines, capped = _fit(raw, offset, s.read_max_line_length, s.read_max_bytes)
        marks.learn_window(window, offset, len(lines))
        if not target.in_spill:
            record_read(ctx.store, ctx.session_key, target.real, file_version(fst))
        value = {
            "path": target.display,
            "offset": offset,
            "lines": lines,
            "totalLines": window.total,
            "capped": capped,
        }
        if note is not None:
            value["note"] = note
        return value


def _fit(raw: list[str], offset: int, max_chars: int, max_bytes: int) -> tuple[list[dict], bool]:
    """Number the lines, cut long ones, and stop before the text would pass ``max_bytes``."""
    out: list[dict] = []
    used = 0
    suffix = f"... (line truncated to {max_chars} chars)"
    for i, text in enumerate(raw):
        if len(text) > max_chars:
            text = text[:max_chars] + suffix
        number = offset + i
        cost = len(f"{number}: {text}\n".encode("utf-8", "replace"))
        if out and used + cost > max_bytes:
            return out, True
        used += cost
        out.append({"number": number, "text": text})
    return out, False


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

READ_OUTPUT = {"type": "object", "anyOf": [_TEXT_READ, _NOTEBOOK_READ, _IMAGE_READ]}

READ = ToolSpec(
    name="read",
    title="Read file",
    description=(
        "Read a UTF-8 text file as numbered lines. offset is the 1-based first line, limit the "
        "number of lines (default and maximum 2000). The footer says which lines were shown and "
        "the offset to continue from. Saved full search results can be read the same way. A "
        "notebook (.ipynb) is shown as cells: each cell's id, type and numbered source lines, and "
        "its outputs summarised; for a notebook offset and limit count cells, not lines. A PNG, "
        "JPEG, GIF or WebP image (up to 5 MiB) answers its format, pixel size and bytes, and the "
        "image itself where the client takes images; a notebook page attaches its output images "
        "the same way, and its text says which output each one is. SVG is read as text."
    ),
    input_schema=object_schema(
        {
            "file_path": {**PATH, "description": "File to read, relative to the working directory."},
            "offset": {**OFFSET, "description": "1-based line to start at (default 1); for a notebook, 1-based cell."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "Lines to return (default 2000); for a notebook, cells.",
            },
        },
        ("file_path",),
    ),
    output_schema=READ_OUTPUT,
    guidance=(
        "Use read to look inside a text file; results carry line numbers. Large files come in "
        "windows: continue with the offset the footer names. Reading a file is also what allows "
        "this session to write or edit it afterwards."
    ),
    execute=execute_read,
    render=render_read,
    rows_key="lines",
)
