"""The read window shows an image: ``%dsh read chart.png`` and an image opened from a listing get
the picture's bytes (base64) and size in the panel the front end draws, beside the model's text."""

from __future__ import annotations

import base64

from imagefiles import jpeg, png

from dsh_jupyter.kernel.results import KernelResult
from dsh_jupyter.kernel.widgets import ListingView, ReadView, view_for

TEXT = "<path>pics/chart.png</path>\n<type>image</type>\n<content>\n(PNG image, 5x3 pixels, 116 bytes)\n</content>"


def act(view, action, **args):
    view._on_msg(view, {"action": action, "seq": 1, **args}, [])


def test_the_read_view_of_an_image_carries_the_picture(make_ws, root):
    (root / "pics").mkdir()
    (root / "pics" / "chart.png").write_bytes(png(5, 3))
    ws = make_ws()
    result = KernelResult.wrap(ws.run("read", file_path="pics/chart.png"), ws, {"file_path": "pics/chart.png"})
    assert result.images and result.images[0].data == png(5, 3)  # the magic's result keeps the bytes
    view = view_for(result)
    assert isinstance(view, ReadView)
    assert view.panel["image"] == {
        "mimeType": "image/png",
        "data": base64.b64encode(png(5, 3)).decode(),
        "width": 5,
        "height": 3,
        "summary": "PNG image, 5x3 pixels",
    }
    assert view.panel["lines"] == [] and view.panel["status"] == "PNG image, 5x3 pixels"
    assert (view.panel["prev"], view.panel["next"]) == (False, False)
    assert view.footer == "(PNG image, 5x3 pixels, 116 bytes)"
    assert view.model_text == TEXT
    act(view, "model_view", on=True)
    assert view.model_shown == TEXT


def test_an_image_opened_from_a_listing(make_ws, root):
    (root / "photo.jpg").write_bytes(jpeg(12, 9))
    (root / "notes.txt").write_text("a\n")
    ws = make_ws()
    view = ListingView(ws, ws.session)
    act(view, "open", index=[r["name"] for r in view.rows].index("photo.jpg"))
    image = view.panel["image"]
    assert (image["mimeType"], image["width"], image["height"]) == ("image/jpeg", 12, 9)
    assert base64.b64decode(image["data"]) == jpeg(12, 9)
    act(view, "open", index=[r["name"] for r in view.rows].index("notes.txt"))
    assert view.panel["image"] is None and [row[1] for row in view.panel["lines"]] == ["a"]


def test_a_refused_image_shows_the_error(make_ws, root):
    (root / "big.png").write_bytes(png(5, 3))
    ws = make_ws(read_image_max_bytes=100)
    view = ReadView(ws, ws.session, path="big.png")
    assert view.error == (
        'Error: cannot read "big.png": the PNG image is 116 bytes, more than read_image_max_bytes (100 bytes)'
    )
    assert view.panel.get("image") is None
