"""``read`` of images through the public API: real PNG, JPEG, GIF and WebP files, exact strings.

The format comes from the bytes (a JPEG named ``.png`` is a JPEG), the pixel size from the
header, the bytes travel on ``Result.images`` and never in the value; too large, not an image,
a cut header, BMP and friends are errors with stable codes; SVG is text; an image read is an
observation like a text read.
"""

from __future__ import annotations

import struct

import pytest
from conftest import assert_error
from imagefiles import gif, jpeg, png, webp

from dsh_jupyter.core.images import ImageInvalid, inspect_image, sniff
from dsh_jupyter.core.settings import Settings, SettingsError


def image_text(path: str, summary: str) -> str:
    return f"<path>{path}</path>\n<type>image</type>\n<content>\n{summary}\n</content>"


@pytest.mark.parametrize(
    ("name", "build", "fmt", "mime"),
    [
        ("chart.png", png, "PNG", "image/png"),
        ("photo.jpg", jpeg, "JPEG", "image/jpeg"),
        ("anim.gif", gif, "GIF", "image/gif"),
        ("pic.webp", webp, "WebP", "image/webp"),
    ],
)
def test_each_format_answers_its_size_and_carries_its_bytes(ws, root, name, build, fmt, mime):
    data = build(37, 19)
    (root / name).write_bytes(data)
    r = ws.run("read", file_path=name)
    assert not r.is_error, r.text
    assert r.text == image_text(name, f"({fmt} image, 37x19 pixels, {len(data)} bytes)")
    assert r.value == {
        "path": name,
        "type": "image",
        "format": fmt,
        "mimeType": mime,
        "width": 37,
        "height": 19,
        "bytes": len(data),
        "nextOffset": None,
        "footer": f"({fmt} image, 37x19 pixels, {len(data)} bytes)",
    }
    assert [(i.mime, i.data, i.cell, i.output) for i in r.images] == [(mime, data, None, None)]
    assert r.footer() == f"({fmt} image, 37x19 pixels, {len(data)} bytes)"
    assert r.rows() == [] and r.to_frame().empty


def test_exact_sizes_of_the_written_files(ws, root):
    (root / "a.png").write_bytes(png(5, 3))
    (root / "one.gif").write_bytes(gif(1, 1))
    assert ws.run("read", file_path="a.png").text == image_text("a.png", "(PNG image, 5x3 pixels, 116 bytes)")
    assert ws.run("read", file_path="one.gif").text == image_text("one.gif", "(GIF image, 1x1 pixels, 35 bytes)")


def test_large_dimensions_from_the_header(ws, root):
    # the header is what is read: sizes up to each format's field width
    (root / "wide.gif").write_bytes(gif(65535, 2))
    (root / "tall.webp").write_bytes(webp(3, 16384))
    (root / "big.jpg").write_bytes(jpeg(4000, 3000))
    assert ws.run("read", file_path="wide.gif").value["width"] == 65535
    assert ws.run("read", file_path="tall.webp").value["height"] == 16384
    assert (
        ws.run("read", file_path="big.jpg").value["width"],
        ws.run("read", file_path="big.jpg").value["height"],
    ) == (
        4000,
        3000,
    )


def test_webp_lossy_and_extended_headers():
    # VP8 (lossy): a key frame's start code, then 14-bit width and height; VP8X: 24-bit sizes minus one
    vp8 = b"VP8 " + struct.pack("<I", 10) + b"\x00\x00\x00" + b"\x9d\x01\x2a" + struct.pack("<HH", 640, 480)
    data = b"RIFF" + struct.pack("<I", 4 + len(vp8)) + b"WEBP" + vp8
    assert (inspect_image(data).width, inspect_image(data).height) == (640, 480)
    vp8x = (
        b"VP8X"
        + struct.pack("<I", 10)
        + b"\x10\x00\x00\x00"
        + (1999).to_bytes(3, "little")
        + (99).to_bytes(3, "little")
    )
    data = b"RIFF" + struct.pack("<I", 4 + len(vp8x)) + b"WEBP" + vp8x
    assert (inspect_image(data).width, inspect_image(data).height) == (2000, 100)
    with pytest.raises(ImageInvalid):
        inspect_image(b"RIFF\x10\x00\x00\x00WEBPVP8 \x0a\x00\x00\x00\x00\x00\x00nope\x00\x00")


def test_sniffing_reads_magic_bytes_only():
    assert sniff(png(1, 1)) == "PNG" and sniff(jpeg(1, 1)) == "JPEG"
    assert sniff(gif(1, 1)) == "GIF" and sniff(webp(1, 1)) == "WebP"
    assert sniff(b"<svg xmlns='http://www.w3.org/2000/svg'/>") is None
    assert sniff(b"RIFF\x00\x00\x00\x00WAVEfmt ") is None  # a RIFF that is no WebP
    assert inspect_image(b"plain text") is None


# -- the content decides, not the name ---------------------------------------------------------


def test_content_type_disagreeing_with_the_extension_follows_the_bytes(ws, root):
    data = jpeg(8, 8)
    (root / "really-a-jpeg.png").write_bytes(data)
    r = ws.run("read", file_path="really-a-jpeg.png")
    assert r.text == image_text("really-a-jpeg.png", f"(JPEG image, 8x8 pixels, {len(data)} bytes)")
    assert r.value["mimeType"] == "image/jpeg" and r.images[0].mime == "image/jpeg"


def test_an_image_without_an_image_name_is_an_image(ws, root):
    (root / "blob.bin").write_bytes(png(2, 2))
    (root / "noext").write_bytes(webp(4, 1))
    assert ws.run("read", file_path="blob.bin").text == image_text("blob.bin", "(PNG image, 2x2 pixels, 82 bytes)")
    assert ws.run("read", file_path="noext").value["format"] == "WebP"


def test_svg_is_text(ws, root):
    (root / "logo.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4">\n<rect/>\n</svg>\n')
    r = ws.run("read", file_path="logo.svg")
    assert r.text == (
        "<path>logo.svg</path>\n<type>file</type>\n<content>\n"
        '1: <svg xmlns="http://www.w3.org/2000/svg" width="4" height="4">\n2: <rect/>\n3: </svg>\n\n'
        "(End of file - total 3 lines)\n</content>"
    )
    assert r.images == ()


# -- errors ---------------------------------------------------------------------------------------


def test_image_larger_than_the_setting(make_ws, root):
    data = png(5, 3)  # 116 bytes
    (root / "big.png").write_bytes(data)
    r = make_ws(read_image_max_bytes=115).run("read", file_path="big.png")
    assert_error(
        r,
        "IMAGE_TOO_LARGE",
        'cannot read "big.png": the PNG image is 116 bytes, more than read_image_max_bytes (115 bytes)',
    )
    assert r.value["name"] == "ImageError" and r.images == ()
    at_limit = make_ws(read_image_max_bytes=116).run("read", file_path="big.png")
    assert not at_limit.is_error and at_limit.images[0].data == data


def test_default_limit_is_5_mib():
    assert Settings().read_image_max_bytes == 5 * 1024 * 1024
    with pytest.raises(SettingsError, match="setting read_image_max_bytes must be at least 1, got 0"):
        Settings(read_image_max_bytes=0)


def test_image_name_with_other_content(ws, root):
    (root / "notes.png").write_text("just some text\n")
    (root / "empty.jpg").write_bytes(b"")
    assert_error(
        ws.run("read", file_path="notes.png"),
        "IMAGE_INVALID",
        'cannot read "notes.png": its name says PNG image, but its content is not a PNG, JPEG, GIF or WebP image',
    )
    assert_error(
        ws.run("read", file_path="empty.jpg"),
        "IMAGE_INVALID",
        'cannot read "empty.jpg": its name says JPEG image, but its content is not a PNG, JPEG, GIF or WebP image',
    )


@pytest.mark.parametrize(
    ("name", "data", "fmt"),
    [
        ("cut.png", png(5, 3)[:20], "PNG"),  # the signature, then IHDR cut short
        ("cut.gif", b"GIF89a\x05", "GIF"),
        ("cut.jpg", jpeg(5, 3)[:40], "JPEG"),  # ends inside the segments before the frame header
        ("noframe.jpg", b"\xff\xd8\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00", "JPEG"),  # scan before any frame
        ("cut.webp", webp(5, 3)[:22], "WebP"),
        ("zero.png", png(5, 3)[:16] + b"\0\0\0\0\0\0\0\3" + png(5, 3)[24:], "PNG"),  # width 0
    ],
)
def test_truncated_or_damaged_header(ws, root, name, data, fmt):
    (root / name).write_bytes(data)
    r = ws.run("read", file_path=name)
    assert_error(
        r, "IMAGE_INVALID", f'cannot read "{name}": not a valid {fmt} image (its header is cut short or damaged)'
    )


@pytest.mark.parametrize(
    ("name", "data", "fmt"),
    [
        ("old.bmp", b"BM" + struct.pack("<I", 58) + b"\0\0\0\0" + struct.pack("<I", 54) + b"\x28" + b"\0" * 47, "BMP"),
        ("scan.tiff", b"II*\0\x08\0\0\0" + b"\0" * 16, "TIFF"),
        ("favicon.ico", b"\0\0\1\0\1\0" + b"\0" * 16, "ICO"),
        ("photo.avif", b"\0\0\0\x1cftypavif" + b"\0" * 16, "AVIF"),
        ("named.bmp", b"not really a bitmap", "BMP"),  # no magic: the name says an unsupported format
        ("tiff-in-disguise.png", b"MM\0*\0\0\0\x08" + b"\0" * 8, "TIFF"),  # the bytes win over the name
    ],
)
def test_unsupported_formats(ws, root, name, data, fmt):
    (root / name).write_bytes(data)
    assert_error(
        ws.run("read", file_path=name),
        "IMAGE_UNSUPPORTED",
        f'cannot read "{name}": {fmt} images are not supported (read shows PNG, JPEG, GIF and WebP images)',
    )


def test_other_binary_files_stay_binary(ws, root):
    (root / "data.bin").write_bytes(b"\0\1\2\3")
    assert_error(ws.run("read", file_path="data.bin"), "FS_NOT_TEXT", 'cannot read "data.bin": binary file')


# -- the observation ------------------------------------------------------------------------------


def test_an_image_read_is_an_observation(ws, root):
    # recorded like a text read: the session has seen this version. write still replaces text
    # files only, so the observation never lets an image be overwritten with text.
    (root / "pic.png").write_bytes(png(2, 2))
    assert not ws.run("read", file_path="pic.png").is_error
    assert ws.session_info()["observations"] == 1
    assert_error(
        ws.run("write", file_path="pic.png", content="x"),
        "FS_NOT_TEXT",
        'cannot write "pic.png": binary file; write replaces text files only',
    )


def test_a_refused_image_is_not_an_observation(make_ws, root):
    (root / "big.png").write_bytes(png(5, 3))
    (root / "fake.png").write_text("text")
    ws = make_ws(read_image_max_bytes=10)
    assert ws.run("read", file_path="big.png").is_error
    assert ws.run("read", file_path="fake.png").is_error
    assert ws.session_info()["observations"] == 0


def test_offset_and_limit_do_not_apply_to_an_image(ws, root):
    (root / "pic.gif").write_bytes(gif(3, 3))
    r = ws.run("read", file_path="pic.gif", offset=5, limit=10)
    assert r.text == image_text("pic.gif", "(GIF image, 3x3 pixels, 35 bytes)")
