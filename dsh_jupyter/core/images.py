"""Images ``read`` shows: PNG, JPEG, GIF and WebP, known by their bytes, measured from their header.

Why it exists: an agent that reads a chart or a screenshot should see it (an MCP image block)
instead of ``binary file``; the model text says what the image is (format, pixel size, bytes),
so the size is read from the header here, by hand: a few fixed offsets per format, no imaging
library. The format is decided by the file's first bytes (its magic number), never by its name:
a JPEG saved as ``chart.png`` is a JPEG. The name only matters when the bytes are no image at all
(``chart.png`` holding text is an error, not a text file), and for the formats no MCP client
takes (BMP, TIFF, ICO, AVIF, HEIC), which are refused by name or bytes. SVG is text (XML): it is
read as numbered lines like any other text file.

``Image`` is what a result carries besides its text and value: the bytes of one image, kept out
of the JSON value so that the value stays small; surfaces decide how (and whether) to send them.

What it must never do: decode pixels, open a file (callers hand it bytes), or trust a name over
the bytes.
"""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass

__all__ = [
    "MIME_TYPES",
    "SNIFF_BYTES",
    "Image",
    "ImageInfo",
    "ImageInvalid",
    "inspect_image",
    "named_format",
    "sniff",
    "unsupported_format",
]

# Bytes from the start of a file that decide its format.
SNIFF_BYTES = 32

# The formats shown, by the name the model text uses, with their MIME type.
MIME_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WebP": "image/webp"}

_SUFFIXES = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".jpe": "JPEG", ".gif": "GIF", ".webp": "WebP"}
_UNSUPPORTED_SUFFIXES = {
    ".bmp": "BMP",
    ".dib": "BMP",
    ".tif": "TIFF",
    ".tiff": "TIFF",
    ".ico": "ICO",
    ".avif": "AVIF",
    ".heic": "HEIC",
    ".heif": "HEIC",
}
_PNG = b"\x89PNG\r\n\x1a\n"
# JPEG start-of-frame markers (baseline, extended, progressive, lossless, arithmetic): their
# segment holds the height and width. C4 (DHT), C8 (JPG) and CC (DAC) are not frames.
_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})
_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})  # TEM and RST0-7 carry no length


class ImageInvalid(Exception):
    """Bytes that start like an image of ``format`` but whose header gives no pixel size."""

    def __init__(self, format: str) -> None:
        super().__init__(format)
        self.format = format


@dataclass(frozen=True)
class ImageInfo:
    format: str  # PNG, JPEG, GIF or WebP
    width: int
    height: int

    @property
    def mime(self) -> str:
        return MIME_TYPES[self.format]


@dataclass(frozen=True)
class Image:
    """One image a result carries: its MIME type (from its bytes) and bytes, and where it is from
    (a notebook's cell index and output number; None for an image file)."""

    mime: str
    data: bytes = b""
    cell: int | None = None
    output: int | None = None

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")


def sniff(head: bytes) -> str | None:
    """The shown format whose magic number ``head`` starts with, or None."""
    if head.startswith(_PNG):
        return "PNG"
    if head.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "GIF"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WebP"
    return None


def unsupported_format(head: bytes, name: str) -> str | None:
    """The name of an image format ``read`` does not show, by its bytes or else by ``name``; or None."""
    if head[:2] == b"BM" and len(head) >= 14 and head[6:10] == b"\0\0\0\0":
        return "BMP"
    if head[:4] in (b"II*\0", b"MM\0*"):
        return "TIFF"
    if head[:4] == b"\0\0\1\0":
        return "ICO"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in (b"avif", b"avis"):
            return "AVIF"
        if brand in (b"heic", b"heix", b"hevc", b"hevx", b"mif1", b"msf1"):
            return "HEIC"
    return _UNSUPPORTED_SUFFIXES.get(_suffix(name))


def named_format(name: str) -> str | None:
    """The shown format a file name's extension claims (``.png`` -> PNG), or None."""
    return _SUFFIXES.get(_suffix(name))


def _suffix(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    dot = base.rfind(".")
    return base[dot:].lower() if dot > 0 else ""


def inspect_image(data: bytes) -> ImageInfo | None:
    """Format and pixel size of an image in ``data``; None when the bytes are no shown format.

    Raises ``ImageInvalid`` when the magic number is there but the header is cut short or damaged
    (no pixel size, or a zero one).
    """
    fmt = sniff(data[:SNIFF_BYTES])
    if fmt is None:
        return None
    size = _SIZES[fmt](data)
    if size is None or size[0] <= 0 or size[1] <= 0:
        raise ImageInvalid(fmt)
    return ImageInfo(fmt, size[0], size[1])


def _png(data: bytes) -> tuple[int, int] | None:
    # signature, then the IHDR chunk first: length 13, "IHDR", width, height (big-endian)
    if len(data) < 24 or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _gif(data: bytes) -> tuple[int, int] | None:
    # the logical screen: width and height, little-endian, after the 6-byte signature
    if len(data) < 10:
        return None
    width, height = struct.unpack("<HH", data[6:10])
    return width, height


def _jpeg(data: bytes) -> tuple[int, int] | None:
    # segments after SOI: FF marker, a big-endian length that counts itself; the first frame
    # header (SOFn) holds precision, height, width. Scan data or the end before it: no size.
    i = 2
    n = len(data)
    while i + 4 <= n:
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in _STANDALONE:
            i += 2
            continue
        if marker in (0xD9, 0xDA):
            return None
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if length < 2:
            return None
        if marker in _SOF:
            if i + 9 > n or length < 7:
                return None
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return width, height
        i += 2 + length
    return None


def _webp(data: bytes) -> tuple[int, int] | None:
    # RIFF container; the first chunk is VP8 (lossy), VP8L (lossless) or VP8X (extended)
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        if data[23:26] != b"\x9d\x01\x2a":  # the key frame's start code
            return None
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        if data[20] != 0x2F:  # the lossless signature byte
            return None
        (bits,) = struct.unpack("<I", data[21:25])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    return None


_SIZES = {"PNG": _png, "GIF": _gif, "JPEG": _jpeg, "WebP": _webp}
