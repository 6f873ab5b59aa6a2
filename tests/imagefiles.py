"""Small real image files, written byte by byte: PNG, JPEG, GIF and WebP of any pixel size.

No imaging library is needed (none is a dependency): each builder writes a complete file a
decoder accepts (Chromium decodes all four), one flat colour -- a PNG whose rows are stored
uncompressed, so its size is known (68 + h(1 + 3w) bytes up to 64 KiB of rows); a baseline
grayscale JPEG whose Huffman tables have one code each (every 8x8 block is "DC 0, end of
block"); a GIF whose logical screen has the size asked for, with one 1x1 frame in it; a lossless
WebP (VP8L) whose five prefix codes each have a single symbol, so the pixels take no bits at all.
"""

from __future__ import annotations

import base64
import struct
import zlib

__all__ = ["gif", "jpeg", "png", "png_b64", "webp"]


def png(width: int, height: int, rgb: tuple[int, int, int] = (255, 0, 0)) -> bytes:
    raw = b"".join(b"\0" + bytes(rgb) * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 0)) + chunk(b"IEND", b"")


def png_b64(width: int, height: int) -> str:
    """A PNG as a notebook output holds it: base64 text."""
    return base64.b64encode(png(width, height)).decode("ascii")


def _segment(marker: int, body: bytes) -> bytes:
    return bytes([0xFF, marker]) + struct.pack(">H", len(body) + 2) + body


def jpeg(width: int, height: int) -> bytes:
    """A gray baseline JPEG; an APP1 segment before the frame header, as cameras write EXIF."""
    one_code = bytes([1] + [0] * 15) + b"\x00"  # one code of length 1, for symbol 0
    blocks = -(-width // 8) * -(-height // 8)
    bits = "00" * blocks  # per block: DC difference category 0, then end of block
    bits += "1" * (-len(bits) % 8)
    scan = int(bits, 2).to_bytes(len(bits) // 8, "big")
    return (
        b"\xff\xd8"
        + _segment(0xE0, b"JFIF\0\x01\x01\x00\x00\x01\x00\x01\x00\x00")
        + _segment(0xE1, b"Exif\0\0" + b"\0" * 40)
        + _segment(0xDB, b"\x00" + b"\x01" * 64)
        + _segment(0xC0, struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00")
        + _segment(0xC4, b"\x00" + one_code)
        + _segment(0xC4, b"\x10" + one_code)
        + _segment(0xDA, b"\x01\x01\x00\x00\x3f\x00")
        + scan
        + b"\xff\xd9"
    )


def gif(width: int, height: int) -> bytes:
    screen = struct.pack("<HH", width, height) + b"\x80\x00\x00" + b"\xff\x00\x00\x00\x00\xff"
    frame = b"," + struct.pack("<HHHH", 0, 0, 1, 1) + b"\x00" + b"\x02\x02\x44\x01\x00"
    return b"GIF89a" + screen + frame + b";"


class _Bits:
    """Bits written least significant first, as VP8L reads them."""

    def __init__(self) -> None:
        self.value = 0
        self.count = 0

    def put(self, value: int, n: int) -> None:
        self.value |= value << self.count
        self.count += n

    def bytes(self) -> bytes:
        return self.value.to_bytes(-(-self.count // 8), "little")


def webp(width: int, height: int) -> bytes:
    b = _Bits()
    b.put(0x2F, 8)  # the lossless signature
    b.put(width - 1, 14)
    b.put(height - 1, 14)
    b.put(0, 1)  # alpha not used
    b.put(0, 3)  # version 0
    b.put(0, 1)  # no transform
    b.put(0, 1)  # no colour cache
    b.put(0, 1)  # no meta prefix codes
    for symbol in (0x80, 0x20, 0xC0, 0xFF):  # green, red, blue, alpha: one 8-bit symbol each
        b.put(1, 1)  # a simple code
        b.put(0, 1)  # of one symbol
        b.put(1, 1)  # written in 8 bits
        b.put(symbol, 8)
    b.put(1, 1)  # distance: a simple code of one 1-bit symbol, 0
    b.put(0, 1)
    b.put(0, 1)
    b.put(0, 1)
    payload = b.bytes()
    chunk = b"VP8L" + struct.pack("<I", len(payload)) + payload + (b"\0" if len(payload) % 2 else b"")
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk
