"""``read`` with ``file_paths``: several files in one call, each answered as a read of it alone."""

from __future__ import annotations

import nbformat
import pytest
from imagefiles import png  # tests/imagefiles.py
from nbformat import v4

TWO = (
    "<path>a.txt</path>\n<type>file</type>\n<content>\n1: hello\n2: world\n\n(End of file - total 2 lines)\n</content>"
)


@pytest.fixture
def mixed(root):
    (root / "a.txt").write_text("hello\nworld\n")
    (root / "b.bin").write_bytes(b"\x00\x01bin")
    (root / "pic.png").write_bytes(png(4, 3))
    nb = v4.new_notebook(cells=[v4.new_markdown_cell("# Top", id="top"), v4.new_code_cell("x = 1", id="x")])
    nbformat.write(nb, str(root / "nb.ipynb"))
    (root / "big.txt").write_text("".join(f"line {i:04d} " + "x" * 80 + "\n" for i in range(1, 2001)))
    return root


def test_each_file_answers_as_it_reads_alone_and_errors_stay_in_their_place(mixed, ws):
    r = ws.run("read", file_paths=["a.txt", "missing.txt", "b.bin", "pic.png", "nb.ipynb"])
    alone = [ws.run("read", file_path=p).text for p in ("a.txt", "pic.png", "nb.ipynb")]
    assert r.text == "\n\n".join(
        [
            TWO,
            '<path>missing.txt</path>\n<error code="FS_NOT_FOUND">cannot read "missing.txt": not found</error>',
            '<path>b.bin</path>\n<error code="FS_NOT_TEXT">cannot read "b.bin": binary file</error>',
            alone[1],
            alone[2],
        ]
    )
    assert alone[0] == TWO
    value = r.value
    assert value["type"] == "files" and value["totalFiles"] == 5 and value["notRead"] == []
    assert value["footer"] == "" and value["nextOffset"] is None
    assert value["files"][1] == {
        "path": "missing.txt",
        "error": {"code": "FS_NOT_FOUND", "message": 'cannot read "missing.txt": not found'},
    }
    assert value["files"][0]["footer"] == "(End of file - total 2 lines)" and value["files"][0]["nextOffset"] is None
    assert value["files"][3]["type"] == "image" and len(r.images) == 1 and r.images[0].mime == "image/png"


def test_every_file_read_counts_as_read_for_the_gate(mixed, ws, expect_error):
    ws.run("read", file_paths=["a.txt", "nb.ipynb"])
    assert not ws.run("edit", file_path="a.txt", old_string="hello", new_string="hi").is_error
    cells = ws.run("edit_cells", file_path="nb.ipynb", operations=[{"op": "delete", "cell_id": "x"}])
    assert not cells.is_error, cells.text


def test_the_window_arguments_apply_to_every_file(mixed, ws):
    r = ws.run("read", file_paths=["a.txt", "big.txt"], offset=2, limit=1)
    assert [f["lines"] for f in r.value["files"]] == [
        [{"number": 2, "text": "world"}],
        [{"number": 2, "text": "line 0002 " + "x" * 80}],
    ]
    assert r.value["files"][1]["footer"] == "(Showing lines 2-2 of 2000. Use offset=3 to continue.)"


def test_the_whole_answer_stays_within_the_byte_bound_and_names_what_it_left_unread(mixed, make_ws, expect_error):
    ws = make_ws(read_max_bytes=4_000)
    (mixed / "z.txt").write_text("last\n")
    r = ws.run("read", file_paths=["a.txt", "big.txt", "nb.ipynb", "z.txt"])
    assert len(r.text.encode()) <= 4_000 + 400  # the bound, and the footer that names the rest
    big = r.value["files"][1]
    assert big["capped"] and big["nextOffset"] == len(big["lines"]) + 1  # cut to what was left, said so
    assert r.value["notRead"] == ["nb.ipynb", "z.txt"]
    assert r.text.endswith(
        "\n\n(2 of 4 files answered above; not read, to stay within read_max_bytes (4000 bytes for the whole answer): "
        '"nb.ipynb", "z.txt". Read them in another call.)'
    )
    assert r.value["footer"] == r.text.rpartition("\n\n")[2]
    # a file left unread was not read: the gate still asks for a read before a change
    expect_error(ws.run("write", file_path="z.txt", content="x"), "FS_NOT_OBSERVED")


def test_a_path_given_twice_is_read_once(mixed, ws):
    r = ws.run("read", file_paths=["a.txt", "a.txt"])
    assert r.text == TWO and r.value["totalFiles"] == 1


@pytest.mark.parametrize(
    "args, message",
    [
        ({"file_paths": ["a.txt"], "file_path": "a.txt"}, "give file_path or file_paths, not both"),
        ({"file_paths": ["nb.ipynb"], "outline": True}, "outline reads one notebook: give file_path, not file_paths"),
        ({"file_paths": ["nb.ipynb"], "cell_id": "x"}, "cell_id reads one notebook: give file_path, not file_paths"),
        ({"file_paths": []}, "file_paths must hold at least 1 item"),
        ({"file_paths": "a.txt"}, None),
        ({"file_paths": [" "]}, None),
        ({}, "file_path is required"),
        (
            {"file_paths": [f"f{i}.txt" for i in range(21)]},
            "file_paths names 21 files; one read takes at most 20 (setting read_max_files)",
        ),
    ],
)
def test_bad_arguments(mixed, ws, expect_error, args, message):
    expect_error(ws.run("read", **args), "ARGUMENT_INVALID", message)


def test_the_images_of_one_answer_hold_read_image_max_bytes_together(root, make_ws):
    """Three 107-byte images with a 250-byte bound: two are attached, the third answers why it
    was not read (and is not recorded as read); a notebook after them attaches what still fits."""
    for name in ("p1.png", "p2.png", "p3.png"):
        (root / name).write_bytes(png(4, 3))
    ws = make_ws(read_image_max_bytes=250)
    r = ws.run("read", file_paths=["p1.png", "p2.png", "p3.png"])
    assert [f.get("type") for f in r.value["files"]] == ["image", "image", None]
    assert r.value["files"][2]["error"] == {
        "code": "IMAGE_TOO_LARGE",
        "message": 'cannot read "p3.png": the images this read attaches already hold 214 bytes of '
        "read_image_max_bytes (250 bytes for the whole answer); read it in another call",
    }
    assert len(r.images) == 2 and sum(len(i.data) for i in r.images) == 214
    over = ws.run("move", source="p1.png", destination="p3.png", overwrite=True)
    assert over.is_error and over.value["code"] == "FS_NOT_OBSERVED", over.text  # p3 was not read
    alone = ws.run("read", file_path="p3.png")  # alone it has the bound to itself
    assert not alone.is_error and len(alone.images) == 1


def test_a_notebook_among_images_attaches_only_what_the_answer_has_left(root, make_ws):
    (root / "p1.png").write_bytes(png(4, 3))
    data = {"image/png": __import__("base64").b64encode(png(5, 3)).decode()}
    nb = v4.new_notebook(cells=[v4.new_code_cell("plot()", id="c", outputs=[v4.new_output("display_data", data=data)])])
    nbformat.write(nb, str(root / "nb.ipynb"))
    ws = make_ws(read_image_max_bytes=200)
    r = ws.run("read", file_paths=["p1.png", "nb.ipynb"])
    assert len(r.images) == 1 and r.images[0].cell is None  # the file's image; the output's did not fit
    assert "[image/png: 116 bytes, not attached: this page attaches at most 93 bytes of images]" in r.text
    wide = make_ws(read_image_max_bytes=300).run("read", file_paths=["p1.png", "nb.ipynb"])
    assert len(wide.images) == 2 and wide.images[1].cell is not None
