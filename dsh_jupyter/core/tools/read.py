"""Executor for ``read``: a line-numbered window that records an observation."""

from __future__ import annotations

import os

from .context import CallContext
from ..errors import Codes, ToolError
from ..fs.files import file_version
from ..caches.lines import NO_MARKS
from ..state.gate import record_read
from ..text.quoting import in_message
from ..notebooks.format import is_notebook_name
from ..fs.textwindow import NotText, read_window
from .cells import read_cells

__all__ = ["execute_read", "BOM"]

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
            if is_notebook_name(target.lexical) and not target.in_spill:  # a notebook reads as cells
                cells, note = read_cells(ctx, target, fd, fst, offset, limit)
                if cells is not None:
                    return cells
            # A streamed file's known line starts (lineindex): a continuation seeks, never recounts.
            marks = NO_MARKS if ctx.lines is None or fst.st_size < s.read_stream_min_size else \
                ctx.lines.for_file(fd, file_version(fst))
            try:
                # 4 bytes per character at most, plus room for a "\r": enough to cut the line exactly
                keep = 4 * s.read_max_line_length + 8
                window = read_window(fd, fst.st_size, offset, limit, s.read_stream_min_size, keep,
                                     marks.nearest(offset))
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
