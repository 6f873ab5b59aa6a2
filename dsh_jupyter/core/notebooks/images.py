"""Which images of a notebook page's outputs travel with the page, within the page's bounds.

Why it exists: a chart in a cell's output is often what a cell is for; an agent reading the
notebook over MCP should see it, not only ``[image/png: 20512 bytes]``. One page of cells
attaches the images of its outputs (PNG, JPEG, GIF, WebP), in page order, until
``notebook_page_max_images`` images or ``notebook_page_max_image_bytes`` bytes; an image that
would pass the byte bound is left out and a smaller one after it may still fit. The page's text
says, at each image, ``attached as image N`` (N: its place among the blocks after the text) or
why it is not attached, so the model always knows which output an image is.

The format is read from the decoded bytes, as for an image file: a payload whose bytes are no
valid PNG, JPEG, GIF or WebP is not attached; one whose bytes are another of the four formats
than its MIME key says travels under the type its bytes have.

What it must never do: decode more than the bounds let through (the count and the base64 length
are checked first), or put image bytes in the value.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field

from ..images import MIME_TYPES, Image, ImageInvalid, inspect_image

__all__ = ["ATTACHABLE", "PageImages"]

ATTACHABLE = frozenset(MIME_TYPES.values())  # output MIME keys whose payloads may be attached


@dataclass
class PageImages:
    """The images one page of cells attaches so far, against the page's bounds."""

    max_count: int
    max_bytes: int
    images: list[Image] = field(default_factory=list)  # image N of the page is images[N - 1]
    used: int = 0

    def consider(self, cell: int, output: int, payload: object, estimate: int) -> dict:
        """The fields the data item of one image output gets: ``{"attached": N}`` or
        ``{"skipped": "count" | "bytes", "limit": L}`` or ``{"skipped": "invalid"}``."""
        if len(self.images) >= self.max_count:
            return {"skipped": "count", "limit": self.max_count}
        if self.used + estimate > self.max_bytes:
            return {"skipped": "bytes", "limit": self.max_bytes}
        text = "".join(payload) if isinstance(payload, list) else payload
        if not isinstance(text, str):
            return {"skipped": "invalid"}
        try:
            data = base64.b64decode("".join(text.split()), validate=True)
            info = inspect_image(data)
        except (binascii.Error, ValueError, ImageInvalid):
            return {"skipped": "invalid"}
        if info is None:
            return {"skipped": "invalid"}
        if self.used + len(data) > self.max_bytes:
            return {"skipped": "bytes", "limit": self.max_bytes}
        self.images.append(Image(info.mime, data, cell, output))
        self.used += len(data)
        return {"attached": len(self.images)}

    def shown(self, cells: list[dict]) -> tuple[Image, ...]:
        """The attached images of the cells a page shows (a cut cell's hidden outputs are not)."""
        numbers = {
            item["attached"]
            for cell in cells
            for out in cell.get("outputs", ())
            for item in out.get("data", ())
            if "attached" in item
        }
        return tuple(image for n, image in enumerate(self.images, start=1) if n in numbers)
