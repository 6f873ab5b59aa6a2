"""``read`` with ``file_paths``: several files in one call, each read as a read of it alone.

Why it exists: an agent that needs five small files pays five round trips for five reads. Here each
path is read in order with the same window arguments (``offset``, ``limit``), by the one-file read
itself, so every file answers (and records for the gate) exactly what a read of it would. The whole
answer is bounded by ``read_max_bytes``: each file is read with what is left of it as its own
bound (a big file's window stops early and says where to continue), and once too little is left
the remaining files are not read at all (never read and hidden: a file this session did not see
must not count as read) and the footer names them. A file that cannot be read (missing, binary,
outside the root) answers its error in its place; the others are read all the same. The images
the answer attaches (image files, notebook pages' output images) hold at most
``read_image_max_bytes`` together, as one image file read alone may: an image file past what is
left answers ``IMAGE_TOO_LARGE`` in its place (not read), a notebook page attaches what fits.

What it must never do: record a read of a file whose text the answer does not hold, or let one
file's failure fail the call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ...errors import Codes, ToolError
from ...render.reading import read_next_offset, read_page_footer, render_read
from ...render.readmany import render_file_error
from ..context import CallContext

__all__ = ["MIN_SHARE", "read_many"]

MIN_SHARE = 1_000  # bytes of the bound a file needs left to be read at all (a header and a few lines)
_ONE_FILE = ("cell_id", "output", "outline")  # arguments that read one notebook's parts


def read_many(ctx: CallContext, args: dict, read_one: Callable[[CallContext, dict], dict]) -> dict:
    paths: list[str] = list(dict.fromkeys(args["file_paths"]))  # a path given twice is read once
    s = ctx.settings
    if "file_path" in args:
        raise ToolError(Codes.ARGUMENT_INVALID, "give file_path or file_paths, not both")
    for name in _ONE_FILE:
        if name in args:
            raise ToolError(Codes.ARGUMENT_INVALID, f"{name} reads one notebook: give file_path, not file_paths")
    if len(paths) > s.read_max_files:
        raise ToolError(
            Codes.ARGUMENT_INVALID,
            f"file_paths names {len(paths)} files; one read takes at most {s.read_max_files} (setting read_max_files)",
        )
    window = {k: args[k] for k in ("offset", "limit") if k in args}
    left = s.read_max_bytes
    files: list[dict] = []
    unread: list[str] = []
    for i, path in enumerate(paths):
        if left < MIN_SHARE:
            unread = paths[i:]
            break
        images_left = max(s.read_image_max_bytes - sum(len(image.data) for image in ctx.images), 0)
        bounds = dataclasses.replace(
            s,
            read_max_bytes=left,
            notebook_page_max_image_bytes=min(s.notebook_page_max_image_bytes, images_left),
        )
        one = dataclasses.replace(ctx, settings=bounds, image_bytes_left=images_left)
        try:
            value = read_one(one, {**window, "file_path": path})
            value = {**value, "nextOffset": read_next_offset(value), "footer": read_page_footer(value)}
            text = render_read(value)
        except ToolError as exc:
            value = {"path": path, "error": {"code": exc.code, "message": exc.message}}
            text = render_file_error(value)
        files.append(value)
        left -= len(text.encode("utf-8", "surrogatepass")) + 2  # and the blank line after it
    return {
        "type": "files",
        "files": files,
        "totalFiles": len(paths),
        "notRead": unread,
        "maxBytes": s.read_max_bytes,
    }
