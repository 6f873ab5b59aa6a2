"""Parsed notebooks kept per file version: a kept parse answers as a fresh one, a change is parsed again.

Real notebooks on disk, read through the tools. A parse is kept only once the file's ctime is
older than the stamp margin (``settle`` waits for that, it asserts nothing about time). Every
answer is compared, as exact text, with the same call in a workspace that keeps nothing.
"""

from __future__ import annotations

import json
import os
import time

import nbformat
import pytest
from conftest import settle
from nbformat import v4

from dsh_jupyter.core.caches.parsed import ParsedNotebooks
from dsh_jupyter.core.caches.stamps import MARGIN_NS
from dsh_jupyter.core.fs.files import file_version


def write_notebook(path, cells: int = 120, long_lines: int = 3000, word: str = "value") -> None:
    made = []
    for i in range(1, cells + 1):
        if i % 20 == 1:
            made.append(v4.new_markdown_cell(f"# Part {i // 20 + 1}\n\nAbout {word} {i}.", id=f"h{i}"))
        else:
            out = v4.new_output("stream", name="stdout", text=f"{word} {i}\n")
            made.append(v4.new_code_cell(f"x_{i} = f({i})\nprint(x_{i})", id=f"c{i}", outputs=[out]))
    long = "".join(f"step {k} of {long_lines}\n" for k in range(1, long_lines + 1))
    made.append(v4.new_code_cell("run()", id="long", outputs=[v4.new_output("stream", name="stdout", text=long)]))
    nbformat.write(v4.new_notebook(cells=made), str(path))


@pytest.fixture
def pair(make_ws, tmp_path):
    """A workspace that keeps parses and one that keeps none (each with its own state)."""
    plain = make_ws(state_path=tmp_path / "plain.sqlite")
    plain.parsed = None
    return make_ws(), plain


CALLS = [
    ("read", {"file_path": "big.ipynb"}),
    ("read", {"file_path": "big.ipynb", "offset": 41, "limit": 5}),
    ("read", {"file_path": "big.ipynb", "offset": -3}),
    ("read", {"file_path": "big.ipynb", "cell_id": "c7"}),
    ("read", {"file_path": "big.ipynb", "cell_id": "long", "output": 1, "offset": 1500, "limit": 40}),
    ("read", {"file_path": "big.ipynb", "cell_id": "long", "output": 1, "offset": -5}),
    ("read", {"file_path": "big.ipynb", "outline": True}),
    ("read", {"file_path": "big.ipynb", "outline": True, "offset": 3}),
    ("grep", {"pattern": "x_1[0-9] ="}),
    ("grep", {"pattern": "^step 29[0-9]{2} ", "notebook_scope": "outputs"}),
    ("grep", {"pattern": "Part|value 3$", "path": "big.ipynb", "notebook_scope": "all"}),
]


def test_a_kept_parse_answers_every_call_as_a_fresh_parse(pair, root):
    ws, plain = pair
    write_notebook(root / "big.ipynb")
    settle(root / "big.ipynb")
    for tool, args in CALLS:
        got, want = ws.run(tool, **args), plain.run(tool, **args)
        assert not want.is_error, want.text
        assert got.text == want.text, (tool, args)
        assert got.value == want.value, (tool, args)
    assert ws.parsed.hits == len(CALLS) - 1
    assert ws.parsed.versions() == [file_version(os.stat(root / "big.ipynb"))]


def test_no_call_changes_what_is_kept(pair, root):
    ws, _plain = pair
    write_notebook(root / "big.ipynb")
    settle(root / "big.ipynb")
    for tool, args in CALLS:
        ws.run(tool, **args)
    dry = ws.run("edit_cells", file_path="big.ipynb", operations=[{"op": "clear_outputs"}], dry_run=True)
    assert not dry.is_error, dry.text
    kept = ws.parsed._kept[file_version(os.stat(root / "big.ipynb"))][0]
    with open(root / "big.ipynb", encoding="utf-8") as f:
        assert kept.data == json.load(f)
    assert [c.source for c in kept.cells][:2] == ["# Part 1\n\nAbout value 1.", "x_2 = f(2)\nprint(x_2)"]


def test_a_text_view_reason_is_kept_and_answers_the_same(pair, root):
    ws, plain = pair
    (root / "bad.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": 3}))
    settle(root / "bad.ipynb")
    for _ in range(2):
        got, want = ws.run("read", file_path="bad.ipynb"), plain.run("read", file_path="bad.ipynb")
        assert got.text == want.text
        assert "(Shown as text, not as notebook cells: it is not a valid notebook: " in got.text
    assert ws.parsed.hits == 1


def changed_the_same(ws, plain, expect: str) -> None:
    hits = ws.parsed.hits
    got, want = ws.run("read", file_path="big.ipynb", offset=-3), plain.run("read", file_path="big.ipynb", offset=-3)
    assert ws.parsed.hits == hits  # the new version was parsed, not answered from the old one
    assert got.text == want.text
    assert expect in got.text


def test_an_appended_notebook_is_parsed_again(pair, root):
    ws, plain = pair
    path = root / "big.ipynb"
    write_notebook(path)
    settle(path)
    ws.run("read", file_path="big.ipynb")
    data = json.loads(path.read_text())
    data["cells"][-2]["source"] = "appended = 1"
    path.write_text(json.dumps(data, indent=1) + "\n" * 5)  # longer, in place: same inode
    settle(path)
    changed_the_same(ws, plain, "appended = 1")


def test_a_notebook_replaced_by_rename_is_parsed_again(pair, root):
    ws, plain = pair
    write_notebook(root / "big.ipynb")
    settle(root / "big.ipynb")
    ws.run("read", file_path="big.ipynb")
    write_notebook(root / "new.ipynb", word="other")
    os.replace(root / "new.ipynb", root / "big.ipynb")
    settle(root / "big.ipynb")
    changed_the_same(ws, plain, "other 120")


def test_a_same_size_rewrite_with_the_mtime_set_back_is_parsed_again(pair, root):
    ws, plain = pair
    path = root / "big.ipynb"
    write_notebook(path)
    settle(path)
    before = os.stat(path)
    ws.run("read", file_path="big.ipynb")
    assert len(ws.parsed) == 1
    raw = path.read_bytes()
    assert raw.count(b"value 119") == 1
    with open(path, "r+b") as f:
        f.write(raw.replace(b"value 119", b"VALUE 119"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_ino, after.st_mtime_ns) == (before.st_size, before.st_ino, before.st_mtime_ns)
    assert after.st_ctime_ns != before.st_ctime_ns
    settle(path)
    changed_the_same(ws, plain, "VALUE 119")


def test_an_edit_through_the_tools_is_read_at_once(pair, root):
    ws, _plain = pair
    write_notebook(root / "big.ipynb")
    settle(root / "big.ipynb")
    assert "x_119 = f(119)" in ws.run("read", file_path="big.ipynb", offset=-3).text
    assert (
        ws.run("read", file_path="big.ipynb", offset=-3).text == ws.run("read", file_path="big.ipynb", offset=-3).text
    )
    edited = ws.run("edit", file_path="big.ipynb", old_string="x_119 = f(119)", new_string="x_119 = g(119)")
    assert not edited.is_error, edited.text
    got = ws.run("read", file_path="big.ipynb", offset=-3)
    assert "x_119 = g(119)" in got.text and "x_119 = f(119)" not in got.text
    cleared = ws.run("edit_cells", file_path="big.ipynb", operations=[{"op": "delete", "cell_id": "long"}])
    assert not cleared.is_error, cleared.text
    assert ws.run("read", file_path="big.ipynb", offset=-1).value["cells"][0]["id"] == "c120"
    assert ws.run("grep", pattern="step 1 of", notebook_scope="outputs").text == "No matches found"
    settle(root / "big.ipynb")
    ws.run("read", file_path="big.ipynb", offset=-1)
    assert ws.run("read", file_path="big.ipynb", offset=-1).value["cells"][0]["id"] == "c120"


def test_a_notebook_changed_within_the_margin_is_not_kept(make_ws, root):
    path = root / "big.ipynb"
    write_notebook(path, cells=10, long_lines=10)
    # Changed just now, its stamp proves nothing. A busy machine may take longer than the margin
    # over the read, so the change is made again, in a fresh workspace, until one read ends within it.
    for _ in range(50):
        fresh = make_ws()
        os.utime(path)  # a change of the inode: its ctime is now
        assert not fresh.run("read", file_path="big.ipynb").is_error
        if time.time_ns() < os.stat(path).st_ctime_ns + MARGIN_NS:
            assert len(fresh.parsed) == 0
            break
    else:
        pytest.fail("no read of the notebook ended within 50 ms of its change in 50 tries")
    settle(path)
    fresh.run("read", file_path="big.ipynb")
    assert len(fresh.parsed) == 1


def test_the_kept_parses_are_bounded_in_count_and_bytes(make_ws, root):
    ws = make_ws()
    for name in ("a", "b", "c"):
        write_notebook(root / f"{name}.ipynb", cells=10, long_lines=10)
    write_notebook(root / "huge.ipynb", cells=10, long_lines=5000)
    sizes = {name: os.stat(root / f"{name}.ipynb").st_size for name in ("a", "b", "c", "huge")}
    ws.parsed = ParsedNotebooks(max_files=2, max_bytes=sizes["a"] + sizes["b"] + sizes["c"])
    for name in ("a", "b", "c", "huge"):
        settle(root / f"{name}.ipynb")
    for name in ("a", "b", "c"):
        ws.run("read", file_path=f"{name}.ipynb")
    version = {name: file_version(os.stat(root / f"{name}.ipynb")) for name in sizes}
    assert ws.parsed.versions() == [version["b"], version["c"]]
    ws.run("read", file_path="huge.ipynb")  # larger than the whole bound: parsed, not kept
    assert ws.parsed.versions() == [version["b"], version["c"]]
    ws.parsed = ParsedNotebooks(max_files=3, max_bytes=sizes["a"] + sizes["b"])
    for name in ("a", "b", "c"):
        ws.run("read", file_path=f"{name}.ipynb")
    assert ws.parsed.versions() == [version["b"], version["c"]]  # three would pass the bytes
