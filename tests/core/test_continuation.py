"""Every success value says how its page continues: ``nextOffset`` and ``footer``, so no surface parses text.

Each case is a real call on a real tree. The footer must be the text's own footer, verbatim, and
``nextOffset`` the offset that footer names (``Use offset=N to continue``), or None when it names
none; following ``nextOffset`` must reach every row exactly once.
"""

from __future__ import annotations

import re

import nbformat
from imagefiles import png

from dsh_jupyter.core.registry import TOOLS

CONTINUE = re.compile(r"Use offset=(-?\d+) to continue")


def check_page(result) -> dict:
    """The value's footer ends the text (before ``</content>``) and its nextOffset is the one it names."""
    assert not result.is_error, result.text
    value = result.value
    body = result.text.removesuffix("\n</content>")
    assert body.endswith(value["footer"])
    named = CONTINUE.search(value["footer"])
    assert value["nextOffset"] == (int(named[1]) if named else None)
    assert result.footer() == value["footer"] and result.next_offset() == value["nextOffset"]
    return value


def follow(ws, tool: str, rows: str, **args) -> list:
    """Every row of a paged call, got by following nextOffset from the first page."""
    got, offset = [], args.pop("offset", None)
    for _ in range(100):
        value = check_page(ws.run(tool, **args, **({} if offset is None else {"offset": offset})))
        got += value[rows]
        offset = value["nextOffset"]
        if offset is None:
            return got
    raise AssertionError("nextOffset never ended")


def test_list_pages_follow_next_offset_to_the_end(make_ws, root, tree):
    tree(root, {"big": {f"f{i:02d}.txt": "" for i in range(7)}, "empty": {}})
    ws = make_ws(list_max_entries=3)
    first = ws.run("list", path="big")
    assert first.value["nextOffset"] == 4
    assert first.value["footer"] == (
        "(Showing entries 1-3 of 7: 0 directories, 7 files. Directories first, then files, then other, "
        "each alphabetical. Use offset=4 to continue.)"
    )
    assert [e["name"] for e in follow(ws, "list", "entries", path="big")] == [f"f{i:02d}.txt" for i in range(7)]
    last = ws.run("list", path="big", offset=7).value
    assert last["nextOffset"] is None and last["footer"].endswith("End of listing.)")
    empty = check_page(ws.run("list", path="empty"))
    assert (empty["nextOffset"], empty["footer"]) == (None, "(Empty directory)")


def test_read_windows_follow_next_offset_to_the_end(ws, root):
    (root / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 6)))
    first = check_page(ws.run("read", file_path="f.txt", limit=2))
    assert (first["nextOffset"], first["footer"]) == (3, "(Showing lines 1-2 of 5. Use offset=3 to continue.)")
    lines = follow(ws, "read", "lines", file_path="f.txt", limit=2)
    assert [line["number"] for line in lines] == [1, 2, 3, 4, 5]
    end = check_page(ws.run("read", file_path="f.txt", offset=5))
    assert (end["nextOffset"], end["footer"]) == (None, "(End of file - total 5 lines)")
    tail = check_page(ws.run("read", file_path="f.txt", offset=-2))
    assert tail["nextOffset"] is None and [line["text"] for line in tail["lines"]] == ["line 4", "line 5"]


def test_read_of_a_notebook_and_of_an_image(ws, root):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"x = {i}") for i in range(3)]
    (root / "n.ipynb").write_text(nbformat.writes(nb))
    page = check_page(ws.run("read", file_path="n.ipynb", limit=1))
    assert (page["nextOffset"], page["footer"]) == (2, "(Showing cells 1-1 of 3. Use offset=2 to continue.)")
    assert len(follow(ws, "read", "cells", file_path="n.ipynb", limit=1)) == 3
    (root / "dot.png").write_bytes(png(2, 2))
    image = check_page(ws.run("read", file_path="dot.png"))
    assert image["nextOffset"] is None and image["footer"].startswith("(PNG image, 2x2 pixels, ")


def test_grep_offset_pages_and_file_pages_name_their_next_offset(make_ws, root, tree):
    tree(root, {f"d{i}/f.txt": "hit\nhit\n" for i in range(4)})
    ws = make_ws(grep_max_matches=3)
    matches = follow(ws, "grep", "matches", pattern="hit", offset=1)
    assert [(m["path"], m["line"]) for m in matches] == [(f"d{i}/f.txt", n) for i in range(4) for n in (1, 2)]
    first = ws.run("grep", pattern="hit", offset=1).value
    assert first["nextOffset"] == 4
    assert first["footer"] == "(Showing matches 1-3 of 8 in path order. Use offset=4 to continue.)"
    sampled = check_page(ws.run("grep", pattern="hit"))  # a sampled page is not in path order: no offset
    assert sampled["nextOffset"] is None and sampled["footer"].startswith("(Showing 3 of 8 matches")
    files = check_page(make_ws(grep_max_matches=2).run("grep", pattern="hit", output_mode="files_with_matches"))
    assert files["nextOffset"] == 3 and files["footer"].startswith("(Showing files 1-2 of 4 in path order.")
    none = check_page(ws.run("grep", pattern="nothing here"))
    assert (none["nextOffset"], none["footer"]) == (None, "")


def test_glob_never_pages_by_offset_and_its_footer_is_the_texts(make_ws, root, tree):
    tree(root, {f"d{i}/f{j}.py": "" for i in range(3) for j in range(3)})
    capped = check_page(make_ws(glob_max_results=4).run("glob", pattern="*.py"))
    assert capped["nextOffset"] is None and capped["footer"].startswith("(Showing 4 of 9 paths, sampled across")
    whole = check_page(make_ws().run("glob", pattern="*.py"))
    assert (whole["nextOffset"], whole["footer"]) == (None, "")


def test_changes_are_whole_answers(ws, root):
    (root / "a.txt").write_text("one\n")
    ws.run("read", file_path="a.txt")
    for result in (
        ws.run("edit", file_path="a.txt", old_string="one", new_string="two"),
        ws.run("write", file_path="b.txt", content="x"),
        ws.run("move", source="b.txt", destination="c.txt"),
        ws.run("list_dir", path="."),
    ):
        assert (check_page(result)["nextOffset"], result.value["footer"]) == (None, "")
    assert ws.run("list_dir", path=".").text == '{"entries": ["a.txt", "c.txt"]}'  # the JSON text is as before


def test_every_tool_declares_the_page_fields_in_its_output_schema():
    for spec in TOOLS:
        schema = spec.output_schema
        objects = schema["anyOf"] if "properties" not in schema else [schema]
        for branch in objects:
            assert {"nextOffset", "footer"} <= set(branch["required"]), spec.name
            assert branch["properties"]["footer"]["type"] == "string", spec.name
