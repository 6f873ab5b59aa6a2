"""``read`` of a notebook attaches the images of the shown cells' outputs, within the page's bounds.

Real notebooks written with nbformat, real PNG/GIF/JPEG payloads; the text says at each image
output whether it is attached (as image N, N counting the page's images in order) and why not.
"""

from __future__ import annotations

import base64
import os

import nbformat
from imagefiles import gif, jpeg, png
from nbformat import v4


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def figure_cells():
    return [
        v4.new_code_cell(
            "plot(a)",
            id="a",
            execution_count=1,
            outputs=[v4.new_output("display_data", data={"image/png": b64(png(5, 3)), "text/plain": "<Figure a>"})],
        ),
        v4.new_code_cell(
            "plot(b); plot(c)",
            id="b",
            execution_count=2,
            outputs=[
                v4.new_output("display_data", data={"image/png": b64(png(16, 16))}),
                v4.new_output("display_data", data={"image/gif": b64(gif(2, 2))}),
            ],
        ),
        v4.new_code_cell(
            "broken()",
            id="c",
            execution_count=3,
            outputs=[
                v4.new_output("display_data", data={"image/png": b64(b"\x89PNG\r\n\x1a\nnot really")}),
                v4.new_output("display_data", data={"image/jpeg": b64(jpeg(3, 3))}),
            ],
        ),
    ]


def write_nb(path, cells) -> None:
    nbformat.write(v4.new_notebook(cells=cells), os.fspath(path))


VIEW = """<path>figs.ipynb</path>
<type>notebook</type>
<content>
<cell index="1" id="a" type="code" execution_count="1">
1: plot(a)
[output 1: display_data]
[image/png: 116 bytes, attached as image 1]
| <Figure a>
</cell>
<cell index="2" id="b" type="code" execution_count="2">
1: plot(b); plot(c)
[output 1: display_data]
[image/png: 852 bytes, {b1}]
[output 2: display_data]
[image/gif: 35 bytes, {b2}]
</cell>
<cell index="3" id="c" type="code" execution_count="3">
1: broken()
[output 1: display_data]
[image/png: 18 bytes, {c1}]
[output 2: display_data]
[image/jpeg: {jpeg_size} bytes, {c2}]
</cell>

(End of notebook - total 3 cells)
</content>"""


INVALID = "not attached: not a valid PNG, JPEG, GIF or WebP image"


def view(c1: str = INVALID, **notes) -> str:
    return VIEW.format(jpeg_size=len(jpeg(3, 3)), c1=c1, **notes)


def test_every_image_attached_in_page_order(ws, root):
    write_nb(root / "figs.ipynb", figure_cells())
    r = ws.run("read", file_path="figs.ipynb")
    assert r.text == view(b1="attached as image 2", b2="attached as image 3", c2="attached as image 4")
    assert [(i.mime, i.cell, i.output) for i in r.images] == [
        ("image/png", 1, 1),
        ("image/png", 2, 1),
        ("image/gif", 2, 2),
        ("image/jpeg", 3, 2),
    ]
    assert r.images[1].data == png(16, 16) and r.images[3].data == jpeg(3, 3)
    items = [item for cell in r.value["cells"] for out in cell["outputs"] for item in out["data"]]
    assert [item.get("attached") for item in items] == [1, 2, 3, None, 4]
    assert items[3] == {"mime": "image/png", "bytes": 18, "skipped": "invalid"}
    assert "iVBOR" not in r.text and "iVBOR" not in str(r.value)  # no base64 in the text or the value


def test_count_bound(make_ws, root):
    write_nb(root / "figs.ipynb", figure_cells())
    r = make_ws(notebook_page_max_images=2).run("read", file_path="figs.ipynb")
    at_most = "not attached: this page attaches at most 2 images"
    # past the bound nothing is decoded: the damaged PNG is counted out before it is looked at
    assert r.text == view(b1="attached as image 2", b2=at_most, c1=at_most, c2=at_most)
    assert [(i.cell, i.output) for i in r.images] == [(1, 1), (2, 1)]
    one = make_ws(notebook_page_max_images=1).run("read", file_path="figs.ipynb")
    assert "[image/png: 852 bytes, not attached: this page attaches at most 1 image]" in one.text
    none = make_ws(notebook_page_max_images=0).run("read", file_path="figs.ipynb")
    assert "[image/png: 116 bytes, not attached: this page attaches at most 0 images]" in none.text
    assert none.images == ()


def test_byte_bound_skips_what_does_not_fit_and_keeps_going(make_ws, root):
    write_nb(root / "figs.ipynb", figure_cells())
    # 116 (a) fits; 852 (b1) would pass 400; the 35-byte GIF and the 209-byte JPEG still fit after it
    r = make_ws(notebook_page_max_image_bytes=400).run("read", file_path="figs.ipynb")
    assert r.text == view(
        b1="not attached: this page attaches at most 400 bytes of images",
        b2="attached as image 2",
        c2="attached as image 3",
    )
    assert [(i.mime, i.cell, i.output) for i in r.images] == [
        ("image/png", 1, 1),
        ("image/gif", 2, 2),
        ("image/jpeg", 3, 2),
    ]
    assert sum(len(i.data) for i in r.images) == 360


def test_numbering_restarts_on_each_page(ws, root):
    write_nb(root / "figs.ipynb", figure_cells())
    r = ws.run("read", file_path="figs.ipynb", offset=2, limit=1)
    assert "[image/png: 852 bytes, attached as image 1]\n" in r.text
    assert "[image/gif: 35 bytes, attached as image 2]\n" in r.text
    assert r.text.endswith("(Showing cells 2-2 of 3. Use offset=3 to continue.)\n</content>")
    assert [(i.cell, i.output) for i in r.images] == [(2, 1), (2, 2)]


def test_cells_left_off_the_page_attach_nothing(make_ws, root):
    write_nb(root / "figs.ipynb", figure_cells())
    full = make_ws().run("read", file_path="figs.ipynb").text
    first_cell = full[: full.index("</cell>") + len("</cell>\n")]
    r = make_ws(read_max_bytes=len(first_cell.encode()) - 20).run("read", file_path="figs.ipynb")
    assert r.value["capped"] and len(r.value["cells"]) == 1
    assert [(i.cell, i.output) for i in r.images] == [(1, 1)]


def test_a_cut_cell_attaches_only_its_shown_outputs(make_ws, root):
    write_nb(root / "figs.ipynb", figure_cells()[1:2])
    ws = make_ws(read_max_bytes=210)
    r = ws.run("read", file_path="figs.ipynb")
    cell = r.value["cells"][0]
    assert cell["cut"] is not None and cell["cut"]["outputsHidden"] == 1, r.text
    assert "[image/png: 852 bytes, attached as image 1]" in r.text and "image/gif" not in r.text
    assert [(i.cell, i.output) for i in r.images] == [(1, 1)]


def test_svg_and_markdown_attachments_are_not_attached(ws, root):
    svg = '<svg xmlns="http://www.w3.org/2000/svg"/>'
    cells = [
        v4.new_code_cell("svg()", id="s", outputs=[v4.new_output("display_data", data={"image/svg+xml": svg})]),
        v4.new_markdown_cell("![x](attachment:x.png)", id="m", attachments={"x.png": {"image/png": b64(png(1, 1))}}),
    ]
    write_nb(root / "s.ipynb", cells)
    r = ws.run("read", file_path="s.ipynb")
    assert f"[image/svg+xml: {len(svg)} bytes]\n" in r.text
    assert "[attachment x.png: image/png, 72 bytes]\n" in r.text
    assert r.images == ()
