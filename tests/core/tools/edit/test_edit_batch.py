"""``edit``'s diff, ``dry_run`` and ``edits`` (several replacements in one call, all or nothing)."""

from __future__ import annotations

import os

import nbformat
import pytest
from conftest import assert_error


@pytest.fixture
def f(root):
    p = root / "f.txt"
    p.write_bytes(b"alpha\nbeta\ngamma\n")
    return p


def read_ok(ws, path="f.txt"):
    r = ws.run("read", file_path=path)
    assert not r.is_error, r.text
    return r


# -- dry_run ----------------------------------------------------------------------------------


def test_dry_run_answers_the_diff_and_changes_nothing(ws, f):
    read_ok(ws)
    before = os.stat(f)
    r = ws.run("edit", file_path="f.txt", old_string="beta", new_string="BETA", dry_run=True)
    assert r.text == (
        "Dry run: f.txt was not changed. The edit would make 1 replacement:\n"
        "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma"
    )
    assert r.value["dryRun"] is True and r.value["replacements"] == 1
    after = os.stat(f)
    assert f.read_bytes() == b"alpha\nbeta\ngamma\n"
    assert (after.st_ino, after.st_mtime_ns, after.st_ctime_ns) == (
        before.st_ino,
        before.st_mtime_ns,
        before.st_ctime_ns,
    )
    # the real edit after it: the session's observation is still the read's
    assert not ws.run("edit", file_path="f.txt", old_string="beta", new_string="BETA").is_error
    assert f.read_bytes() == b"alpha\nBETA\ngamma\n"


def test_dry_run_keeps_the_gate(ws, f):
    # unread: refused as the edit would be
    assert_error(
        ws.run("edit", file_path="f.txt", old_string="beta", new_string="x", dry_run=True),
        "FS_NOT_OBSERVED",
        'cannot write "f.txt": read it first in this session',
    )
    read_ok(ws)
    f.write_bytes(b"alpha\nbeta\ngamma\ndelta\n")  # changed by someone else since the read
    assert_error(
        ws.run("edit", file_path="f.txt", old_string="beta", new_string="x", dry_run=True),
        "FS_NOT_OBSERVED",
        'cannot write "f.txt": it changed since this session last read it; read it again',
    )


def test_a_dry_run_records_no_write(ws, f, root):
    # after a dry run the file still counts as read, not as written by this session: a change made
    # on disk afterwards is still noticed by the next edit
    read_ok(ws)
    assert not ws.run("edit", file_path="f.txt", old_string="beta", new_string="B", dry_run=True).is_error
    f.write_bytes(b"alpha\nBETA\ngamma\n")
    assert_error(
        ws.run("edit", file_path="f.txt", old_string="alpha", new_string="A"),
        "FS_NOT_OBSERVED",
        'cannot write "f.txt": it changed since this session last read it; read it again',
    )
    assert not [
        c
        for c in ws.calls(limit=50)["calls"]
        if c["tool"] == "edit" and c["args"].get("dry_run") is None and not c["isError"]
    ]


def test_dry_run_of_a_failing_edit_is_that_error(ws, f):
    read_ok(ws)
    assert_error(
        ws.run("edit", file_path="f.txt", old_string="delta", new_string="x", dry_run=True),
        "EDIT_NOT_FOUND",
        'old_string not found in "f.txt"',
    )


def test_dry_run_of_a_notebook_shows_cell_diffs(ws, root):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1\ny = 2", id="a"), nbformat.v4.new_markdown_cell("# Title", id="b")]
    nbformat.write(nb, root / "n.ipynb")
    before = (root / "n.ipynb").read_bytes()
    read_ok(ws, "n.ipynb")
    r = ws.run(
        "edit",
        file_path="n.ipynb",
        edits=[
            {"old_string": "y = 2", "new_string": "y = 3"},
            {"old_string": "# Title", "new_string": "# Result"},
        ],
        dry_run=True,
    )
    assert r.text == (
        "Dry run: n.ipynb was not changed. The 2 edits would make 2 replacements:\n"
        '--- n.ipynb cell 1 (id="a")\n+++ n.ipynb cell 1 (id="a")\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n'
        '--- n.ipynb cell 2 (id="b")\n+++ n.ipynb cell 2 (id="b")\n@@ -1 +1 @@\n-# Title\n+# Result'
    )
    assert r.value["cells"] == [1, 2]
    assert (root / "n.ipynb").read_bytes() == before


# -- edits: a batch ---------------------------------------------------------------------------


def test_each_edit_sees_what_the_ones_before_it_left(ws, f):
    read_ok(ws)
    r = ws.run(
        "edit",
        file_path="f.txt",
        edits=[
            {"old_string": "beta", "new_string": "BETA"},
            {"old_string": "BETA\ngamma", "new_string": "BETA\nGAMMA"},  # only after the first one
            {"old_string": "a", "new_string": "4", "replace_all": True},
        ],
    )
    assert f.read_bytes() == b"4lph4\nBETA\nGAMMA\n"
    assert r.text == (
        "The file f.txt has been updated successfully: 3 edits, 4 replacements.\n"
        "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n-alpha\n-beta\n-gamma\n+4lph4\n+BETA\n+GAMMA"
    )
    assert r.value == {
        "path": "f.txt",
        "replaceAll": False,
        "replacements": 4,
        "edits": 3,
        "diff": "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n-alpha\n-beta\n-gamma\n+4lph4\n+BETA\n+GAMMA",
        "diffLines": 9,
        "nextOffset": None,
        "footer": "",
    }


def test_a_missing_third_edit_leaves_the_file_untouched(ws, f):
    read_ok(ws)
    before = os.stat(f)
    r = ws.run(
        "edit",
        file_path="f.txt",
        edits=[
            {"old_string": "alpha", "new_string": "A"},
            {"old_string": "beta", "new_string": "B"},
            {"old_string": "delta", "new_string": "D"},
        ],
    )
    assert_error(r, "EDIT_NOT_FOUND", 'edit 3 of 3: old_string not found in "f.txt"; nothing was changed')
    assert f.read_bytes() == b"alpha\nbeta\ngamma\n"
    assert os.stat(f).st_mtime_ns == before.st_mtime_ns


def test_an_edit_made_ambiguous_by_an_earlier_one_is_named(ws, f):
    read_ok(ws)
    r = ws.run(
        "edit",
        file_path="f.txt",
        edits=[
            {"old_string": "gamma", "new_string": "beta"},
            {"old_string": "beta", "new_string": "x"},
        ],
    )
    assert_error(
        r,
        "EDIT_AMBIGUOUS",
        'edit 2 of 2: old_string appears 2 times in "f.txt"; add context or set replace_all; nothing was changed',
    )
    assert f.read_bytes() == b"alpha\nbeta\ngamma\n"


def test_a_batch_in_notebook_cells_is_all_or_nothing(ws, root):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("a = 1", id="one"), nbformat.v4.new_code_cell("b = 2", id="two")]
    nbformat.write(nb, root / "n.ipynb")
    before = (root / "n.ipynb").read_bytes()
    read_ok(ws, "n.ipynb")
    r = ws.run(
        "edit",
        file_path="n.ipynb",
        edits=[
            {"old_string": "a = 1", "new_string": "a = 10"},
            {"old_string": "c = 3", "new_string": "c = 30"},
        ],
    )
    assert_error(
        r, "EDIT_NOT_FOUND", 'edit 2 of 2: old_string not found in the cell sources of "n.ipynb"; nothing was changed'
    )
    assert (root / "n.ipynb").read_bytes() == before
    ok = ws.run(
        "edit",
        file_path="n.ipynb",
        edits=[
            {"old_string": "a = 1", "new_string": "a = 10"},
            {"old_string": "a = 10", "new_string": "a = 100"},
            {"old_string": "b = 2", "new_string": "b = 20"},
        ],
    )
    assert not ok.is_error, ok.text
    assert [c.source for c in nbformat.read(root / "n.ipynb", as_version=4).cells] == ["a = 100", "b = 20"]
    assert ok.value["cells"] == [1, 2] and ok.value["replacements"] == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"edits": [], "old_string": "a", "new_string": "b"}, "edits must hold at least 1 item"),
        ({"edits": []}, "edits must hold at least 1 item"),
        (
            {"edits": [{"old_string": "a", "new_string": "b"}], "old_string": "a"},
            "give either edits or old_string and new_string, not both (old_string given)",
        ),
        (
            {"edits": [{"old_string": "a", "new_string": "b"}], "replace_all": True},
            "give either edits or old_string and new_string, not both (replace_all given)",
        ),
        ({"edits": "a"}, "edits must be a list"),
        ({"edits": ["a"]}, "edits[0] must be an object"),
        ({"edits": [{"old_string": "a"}]}, "edits[0].new_string is required"),
        ({"edits": [{"old_string": "", "new_string": "b"}]}, "edits[0].old_string must be a non-empty string"),
        (
            {"edits": [{"old_string": "a", "new_string": "b", "count": 2}]},
            'edits[0] has an unknown key "count" (it takes: old_string, new_string, replace_all)',
        ),
        (
            {"edits": [{"old_string": "a", "new_string": "b", "replace_all": "yes"}]},
            "edits[0].replace_all must be true or false",
        ),
        (
            {"edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "c"}]},
            "edit 2 of 2: old_string and new_string must differ",
        ),
        ({"edits": [{"old_string": "a", "new_string": "b"}] * 101}, "edits may hold at most 100 items"),
        ({"old_string": "a", "new_string": "b", "dry_run": "no"}, "dry_run must be true or false"),
    ],
)
def test_batch_argument_errors(ws, f, args, message):
    read_ok(ws)
    assert_error(ws.run("edit", file_path="f.txt", **args), "ARGUMENT_INVALID", message)
    assert f.read_bytes() == b"alpha\nbeta\ngamma\n"


# -- the diff ---------------------------------------------------------------------------------


def test_a_long_diff_is_cut_and_says_how_long_it_was(ws, root):
    (root / "many.txt").write_text("".join(f"row {i} old\n" for i in range(300)))
    read_ok(ws, "many.txt")
    r = ws.run("edit", file_path="many.txt", old_string="old", new_string="new", replace_all=True)
    lines = r.text.split("\n")
    assert lines[0] == "The file many.txt has been updated. All occurrences were successfully replaced."
    assert lines[-1] == "(Showing 200 of 603 diff lines.)"
    assert len(lines) == 1 + 200 + 1
    assert r.value["diffLines"] == 603


def test_diff_lines_of_a_minified_file_are_cut(ws, root):
    (root / "min.js").write_text("var a=" + "1," * 5000 + "0;\n")
    read_ok(ws, "min.js")
    r = ws.run("edit", file_path="min.js", old_string="var a=", new_string="let a=")
    rows = r.text.split("\n")
    assert rows[4].startswith("-var a=1,1,") and rows[4].endswith("... (line cut)") and len(rows[4]) == 400 + 14
    assert rows[5].startswith("+let a=1,1,") and rows[5].endswith("... (line cut)")


def test_a_diff_in_the_middle_of_a_big_file_names_its_lines(ws, root):
    (root / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 50_001)))
    read_ok(ws, "big.txt")
    r = ws.run("edit", file_path="big.txt", old_string="line 30000\n", new_string="line thirty thousand\n")
    assert r.value["diff"] == (
        "--- big.txt\n+++ big.txt\n@@ -29997,7 +29997,7 @@\n line 29997\n line 29998\n line 29999\n"
        "-line 30000\n+line thirty thousand\n line 30001\n line 30002\n line 30003"
    )


def test_a_name_cannot_add_lines_to_the_diff(ws, root):
    name = "evil\n+++ fake.txt"
    (root / name).write_text("one\n")
    read_ok(ws, name)
    r = ws.run("edit", file_path=name, old_string="one", new_string="two")
    assert r.text.split("\n")[1:3] == ['--- "evil\\u000a+++ fake.txt"', '+++ "evil\\u000a+++ fake.txt"']


def test_edits_that_undo_each_other_say_the_text_is_the_same(ws, f):
    read_ok(ws)
    r = ws.run(
        "edit",
        file_path="f.txt",
        edits=[
            {"old_string": "beta", "new_string": "B"},
            {"old_string": "B", "new_string": "beta"},
        ],
    )
    assert r.text == (
        "The file f.txt has been updated successfully: 2 edits, 2 replacements.\n"
        "(The text is the same as before: the diff is empty.)"
    )
