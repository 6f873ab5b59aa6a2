"""The image part of ``read``: a PNG, JPEG, GIF or WebP file answers its format, pixel size and
bytes, and carries the image itself for the surfaces that can show it.

Why it exists: before, an image was ``binary file``, so an agent could not look at the chart a
notebook saved. The format is decided by the file's first bytes (``core.images``); the whole
file is loaded only when it is an image within ``read_image_max_bytes``. Like a text read, an
image read records an observation of the version shown: the caller has seen the file as it is
now, so a later ``write`` may replace it.

What it must never do: put image bytes in the value (they travel on ``CallContext.images``, and
from there on ``Result.images``), load a file larger than the setting, or treat a file whose
bytes are no image as one because of its name.
"""

from __future__ import annotations

import os

from ...errors import Codes, ToolError
from ...fs.files import file_version, pread_all
from ...images import SNIFF_BYTES, Image, ImageInvalid, inspect_image, named_format, sniff, unsupported_format
from ...state.gate import record_read
from ...text.quoting import in_message
from ..context import CallContext

__all__ = ["read_image"]


def read_image(ctx: CallContext, target, fd: int, fst: os.stat_result) -> dict | None:
    """The image view of the open file ``fd``; None when the file is to be read as text."""
    try:
        head = os.pread(fd, SNIFF_BYTES, 0)
    except OSError as exc:
        raise target.error(exc) from None
    shown = in_message(target.display)
    fmt = sniff(head)
    if fmt is None:
        other = unsupported_format(head, target.lexical)
        if other is not None:
            raise ToolError(
                Codes.IMAGE_UNSUPPORTED,
                f"cannot read {shown}: {other} images are not supported (read shows PNG, JPEG, GIF and WebP images)",
            )
        claimed = named_format(target.lexical)
        if claimed is not None:
            raise ToolError(
                Codes.IMAGE_INVALID,
                f"cannot read {shown}: its name says {claimed} image, but its content is not a PNG, JPEG, "
                "GIF or WebP image",
            )
        return None
    limit = ctx.settings.read_image_max_bytes
    if fst.st_size > limit:
        raise _too_large(shown, fmt, fst.st_size, limit)
    left = ctx.image_bytes_left
    if left is not None and fst.st_size > left:  # one answer of several files: its images are full
        raise ToolError(
            Codes.IMAGE_TOO_LARGE,
            f"cannot read {shown}: the images this read attaches already hold {limit - left} bytes of "
            f"read_image_max_bytes ({limit} bytes for the whole answer); read it in another call",
        )
    try:
        data = pread_all(fd, fst.st_size)
    except OSError as exc:
        raise target.error(exc) from None
    if len(data) > limit:  # it grew since the stat
        raise _too_large(shown, fmt, len(data), limit)
    try:
        info = inspect_image(data)
    except ImageInvalid:
        info = None
    if info is None:
        raise ToolError(
            Codes.IMAGE_INVALID, f"cannot read {shown}: not a valid {fmt} image (its header is cut short or damaged)"
        )
    record_read(ctx.store, ctx.session_key, target.real, file_version(fst))
    ctx.images.append(Image(info.mime, data))
    return {
        "path": target.display,
        "type": "image",
        "format": info.format,
        "mimeType": info.mime,
        "width": info.width,
        "height": info.height,
        "bytes": len(data),
    }


def _too_large(shown: str, fmt: str, size: int, limit: int) -> ToolError:
    return ToolError(
        Codes.IMAGE_TOO_LARGE,
        f"cannot read {shown}: the {fmt} image is {size} bytes, more than read_image_max_bytes ({limit} bytes)",
    )
