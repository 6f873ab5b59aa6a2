"""REST and images: ``read`` of an image over ``POST /dsh/api/tools/read``, with and without
``include_images`` (a body field beside ``session`` and ``args``), on a real in-process server."""

from __future__ import annotations

import base64

import nbformat
import pytest
from imagefiles import gif, png

IMAGE_TEXT = "<path>chart.png</path>\n<type>image</type>\n<content>\n(PNG image, 5x3 pixels, 116 bytes)\n</content>"
IMAGE_VALUE = {
    "path": "chart.png",
    "type": "image",
    "format": "PNG",
    "mimeType": "image/png",
    "width": 5,
    "height": 3,
    "bytes": 116,
    "nextOffset": None,
    "footer": "(PNG image, 5x3 pixels, 116 bytes)",
}


async def test_without_the_flag_the_value_holds_no_bytes(api, jp_root_dir):
    (jp_root_dir / "chart.png").write_bytes(png(5, 3))
    status, data = await api("POST", "tools", "read", body={"args": {"file_path": "chart.png"}})
    assert status == 200
    assert (data["isError"], data["text"], data["value"]) == (False, IMAGE_TEXT, IMAGE_VALUE)


async def test_include_images_adds_them_base64(api, jp_root_dir):
    (jp_root_dir / "chart.png").write_bytes(png(5, 3))
    body = {"args": {"file_path": "chart.png"}, "include_images": True}
    status, data = await api("POST", "tools", "read", body=body)
    assert status == 200 and data["text"] == IMAGE_TEXT
    assert data["value"] == {
        **IMAGE_VALUE,
        "images": [{"mimeType": "image/png", "bytes": 116, "data": base64.b64encode(png(5, 3)).decode()}],
    }
    off = await api("POST", "tools", "read", body={**body, "include_images": False})
    assert off[1]["value"] == IMAGE_VALUE


async def test_include_images_on_a_notebook_names_cell_and_output(api, jp_root_dir):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("t()", outputs=[nbformat.v4.new_output("stream", text="hi\n")]),
        nbformat.v4.new_code_cell(
            "plot()",
            outputs=[
                nbformat.v4.new_output("display_data", data={"text/plain": "<fig>"}),
                nbformat.v4.new_output("display_data", data={"image/gif": base64.b64encode(gif(4, 4)).decode()}),
            ],
        ),
    ]
    nbformat.write(nb, str(jp_root_dir / "figs.ipynb"))
    body = {"args": {"file_path": "figs.ipynb"}, "include_images": True}
    status, data = await api("POST", "tools", "read", body=body)
    assert status == 200
    assert "[output 2: display_data]\n[image/gif: 35 bytes, attached as image 1]\n" in data["text"]
    assert data["value"]["images"] == [
        {"mimeType": "image/gif", "bytes": 35, "data": base64.b64encode(gif(4, 4)).decode(), "cell": 2, "output": 2}
    ]


async def test_include_images_on_a_text_read_and_on_an_error(api, jp_root_dir):
    (jp_root_dir / "a.txt").write_text("one\n")
    (jp_root_dir / "fake.png").write_text("text\n")
    _, text = await api("POST", "tools", "read", body={"args": {"file_path": "a.txt"}, "include_images": True})
    assert text["value"]["images"] == []
    _, error = await api("POST", "tools", "read", body={"args": {"file_path": "fake.png"}, "include_images": True})
    assert error["isError"] is True and set(error["value"]) == {"name", "code", "message"}
    assert error["value"]["code"] == "IMAGE_INVALID"


@pytest.mark.parametrize("flag", ["yes", 1, None, [True]])
async def test_include_images_must_be_a_boolean(api, flag):
    status, data = await api("POST", "tools", "read", body={"args": {"file_path": "a.txt"}, "include_images": flag})
    assert status == 400
    assert (data["code"], data["message"]) == ("BODY_INVALID", "include_images must be true or false")


async def test_the_openapi_document_describes_the_flag(api):
    _, doc = await api("GET", "openapi.json")
    body = doc["paths"]["/tools/read"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["include_images"]["type"] == "boolean"
    images = doc["components"]["schemas"]["Value_read"]["properties"]["images"]
    assert images == {"type": "array", "items": {"$ref": "#/components/schemas/ResultImage"}}
    assert doc["components"]["schemas"]["ResultImage"]["required"] == ["mimeType", "bytes", "data"]
