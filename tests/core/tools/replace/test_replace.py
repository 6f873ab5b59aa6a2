"""``replace``: a preview with an id per occurrence, then applied all or nothing (real rg, real files,
a real second process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_jupyter.core.notebooks.format import parse_notebook

APPLY = '(Nothing was changed. To apply, call replace again with the same arguments and occurrences: a list of ids, or "all" with expected_count={n}.)'


def notebook(*cells: dict) -> str:
    return (
        json.dumps({"cells": list(cells), "metadata": {"note": "load"}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
        + "\n"
    )


def code(source: str, cid: str, outputs: list | None = None) -> dict:
    lines = source.splitlines(keepends=True)
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": cid,
        "metadata": {},
        "outputs": outputs or [],
        "source": lines,
    }


@pytest.fixture
def files(root: Path) -> Path:
    (root / "pkg").mkdir()
    (root / "pkg" / "a.py").write_text("df = load()\nprint(df)\n")
    (root / "b.txt").write_text("nothing here\n")
    (root / "c.md").write_text("use load() twice: load()\n")
    return root


def ids(r) -> list[str]:
    return [o["id"] for o in r.value["occurrences"]]


def test_a_preview_shows_every_occurrence_with_its_id_place_and_lines_and_changes_nothing(files, ws):
    before = {p: p.read_bytes() for p in files.rglob("*") if p.is_file()}
    r = ws.run("replace", pattern="load", replacement="read")
    c1, c2, a = ids(r)
    assert r.text == (
        'Found 3 occurrences of "load" in 2 files\n\n'
        "c.md:\n"
        f"  Line 1 [{c1}]\n  - use load() twice: load()\n  + use read() twice: load()\n"
        f"  Line 1 [{c2}]\n  - use load() twice: load()\n  + use load() twice: read()\n"
        "pkg/a.py:\n"
        f"  Line 1 [{a}]\n  - df = load()\n  + df = read()\n\n" + APPLY.format(n=3)
    )
    assert r.value["totalOccurrences"] == 3 and r.value["files"] == 2 and r.value["nextOffset"] is None
    assert len(set(ids(r))) == 3 and all(len(i) == 12 for i in ids(r))
    assert {p: p.read_bytes() for p in files.rglob("*") if p.is_file()} == before
    assert ids(ws.run("replace", pattern="load", replacement="read")) == ids(r)  # stable


def test_nothing_matching_says_so(files, ws):
    r = ws.run("replace", pattern="zzz", replacement="y")
    assert r.text == 'No occurrences of "zzz" found' and r.value["occurrences"] == [] and r.value["footer"] == ""


def test_applying_chosen_ids_changes_only_those(files, ws):
    r = ws.run("replace", pattern="load", replacement="read")
    chosen = [o["id"] for o in r.value["occurrences"] if o["path"] == "pkg/a.py"]
    done = ws.run("replace", pattern="load", replacement="read", occurrences=chosen)
    assert done.text == 'Replaced 1 occurrence of "load" in 1 file:\npkg/a.py: 1'
    assert done.value["changed"] == [{"path": "pkg/a.py", "replacements": 1}]
    assert (files / "pkg" / "a.py").read_text() == "df = read()\nprint(df)\n"
    assert (files / "c.md").read_text() == "use load() twice: load()\n"


def test_applying_all_with_the_expected_count(files, ws):
    ws.run("replace", pattern="load", replacement="read")
    done = ws.run("replace", pattern="load", replacement="read", occurrences="all", expected_count=3)
    assert done.text == 'Replaced 3 occurrences of "load" in 2 files:\nc.md: 2\npkg/a.py: 1'
    assert (files / "c.md").read_text() == "use read() twice: read()\n"
    assert not [p for p in files.rglob("*") if p.name.endswith(".dsh-tmp")]
    # the written versions are this session's observations: an edit needs no new read
    assert not ws.run("edit", file_path="c.md", old_string="twice", new_string="2x").is_error


def test_all_as_a_list_of_one_is_all(files, ws):
    ws.run("replace", pattern="load", replacement="read")
    done = ws.run("replace", pattern="load", replacement="read", occurrences=["all"], expected_count=3)
    assert done.text == 'Replaced 3 occurrences of "load" in 2 files:\nc.md: 2\npkg/a.py: 1'


def test_a_wrong_expected_count_refuses_and_writes_nothing(files, ws):
    ws.run("replace", pattern="load", replacement="read")
    r = ws.run("replace", pattern="load", replacement="read", occurrences="all", expected_count=2)
    assert r.is_error and r.value["code"] == "REPLACE_COUNT_CHANGED"
    assert r.text == "Error: cannot replace: 3 occurrences match now, not the expected_count 2; preview again"
    assert (files / "c.md").read_text() == "use load() twice: load()\n"
    r = ws.run("replace", pattern="load", replacement="read", occurrences="all")
    assert r.text == 'Error: occurrences "all" needs expected_count: the total the preview showed'


def test_regex_groups_numbered_and_named(root, ws):
    (root / "m.py").write_text("user_id = 1\norder_id = user_id\n")
    r = ws.run("replace", pattern=r"(\w+)_id\b", replacement="${1}Id")
    assert [(o["line"], o["after"]) for o in r.value["occurrences"]] == [
        (1, "userId = 1"),
        (2, "orderId = user_id"),
        (2, "order_id = userId"),
    ]
    ws.run("replace", pattern=r"(?P<name>\w+)_id\b", replacement="$name.id")
    done = ws.run("replace", pattern=r"(?P<name>\w+)_id\b", replacement="$name.id", occurrences="all", expected_count=3)
    assert not done.is_error
    assert (root / "m.py").read_text() == "user.id = 1\norder.id = user.id\n"


def test_literal_and_ignore_case(root, ws):
    (root / "t.txt").write_text("a.b axb A.B\n")
    assert len(ws.run("replace", pattern="a.b", replacement="X").value["occurrences"]) == 2  # a regex
    lit = ws.run("replace", pattern="a.b", replacement="$1X", literal=True)
    assert [o["after"] for o in lit.value["occurrences"]] == ["$1X axb A.B"]  # plain text both ways
    both = ws.run("replace", pattern="a.b", replacement="X", literal=True, ignore_case=True)
    assert [o["after"] for o in both.value["occurrences"]] == ["X axb A.B", "a.b axb X"]
    assert both.value["literal"] is True and both.value["ignoreCase"] is True


def test_notebooks_change_in_cell_sources_only_and_stay_valid(root, ws):
    out = [{"output_type": "stream", "name": "stdout", "text": ["load done\n"]}]
    (root / "nb.ipynb").write_text(notebook(code("import x\n", "c1"), code("df = load()\nload()", "c2", out)))
    r = ws.run("replace", pattern="load", replacement="read")
    first, second = ids(r)
    assert r.text == (
        'Found 2 occurrences of "load" in 1 file\n\n'
        "nb.ipynb:\n"
        f"  Cell 2, line 1 [{first}]\n  - df = load()\n  + df = read()\n"
        f"  Cell 2, line 2 [{second}]\n  - load()\n  + read()\n\n" + APPLY.format(n=2)
    )
    assert r.value["occurrences"][0]["cell"] == 2
    done = ws.run("replace", pattern="load", replacement="read", occurrences=[second])
    assert done.text == 'Replaced 1 occurrence of "load" in 1 file:\nnb.ipynb: 1'
    raw = (root / "nb.ipynb").read_bytes()
    nb = parse_notebook(raw)
    assert nb.cells[1].source == "df = load()\nread()"
    data = json.loads(raw)
    assert data["metadata"] == {"note": "load"} and data["cells"][1]["outputs"] == out
    assert data["cells"][1]["source"] == ["df = load()\n", "read()"]  # still a list of lines
    assert raw.decode().startswith('{\n "cells"')  # the file's own layout


def test_a_file_changed_by_another_process_refuses_the_whole_call(files, ws):
    r = ws.run("replace", pattern="load", replacement="read")
    subprocess.run(
        [sys.executable, "-c", "import sys; open(sys.argv[1], 'a').write('more\\n')", str(files / "c.md")], check=True
    )
    before_a = (files / "pkg" / "a.py").read_bytes()
    for occurrences in (ids(r), "all"):
        args = {"expected_count": 3} if occurrences == "all" else {}
        bad = ws.run("replace", pattern="load", replacement="read", occurrences=occurrences, **args)
        assert bad.is_error and bad.value["code"] == "FS_NOT_OBSERVED"
        assert bad.text == 'Error: cannot replace: "c.md" changed since the preview; preview again'
        assert (files / "pkg" / "a.py").read_bytes() == before_a  # nothing written anywhere
        assert (files / "c.md").read_text() == "use load() twice: load()\nmore\n"
    assert not [p for p in files.rglob("*") if p.name.endswith(".dsh-tmp")]


def test_a_file_the_session_never_previewed_or_read_is_refused(files, make_ws):
    make_ws(session="s1").run("replace", pattern="load", replacement="read")
    other = make_ws(session="s2")
    bad = other.run("replace", pattern="load", replacement="read", occurrences="all", expected_count=3)
    assert bad.is_error and bad.value["code"] == "FS_NOT_OBSERVED"
    assert bad.text == (
        'Error: cannot replace in "c.md", "pkg/a.py": this session has not previewed or read it; preview first'
    )
    assert (files / "c.md").read_text() == "use load() twice: load()\n"
    unknown = other.run("replace", pattern="load", replacement="read", occurrences=["0000abcdef12"])
    assert unknown.text == 'Error: cannot replace: no occurrence has the id "0000abcdef12"; preview again'


def test_the_bounds_refuse_naming_their_setting(files, make_ws):
    ws = make_ws(replace_max_files=1)
    ws.run("replace", pattern="load", replacement="read")
    bad = ws.run("replace", pattern="load", replacement="read", occurrences="all", expected_count=3)
    assert bad.value["code"] == "REPLACE_TOO_MANY"
    assert bad.text == (
        "Error: cannot replace: the change touches 2 files, more than the 1 one call may change (setting "
        "replace_max_files); narrow it with path, include or occurrences"
    )
    ws = make_ws(replace_max_occurrences=2)
    ws.run("replace", pattern="load", replacement="read")
    bad = ws.run("replace", pattern="load", replacement="read", occurrences="all", expected_count=3)
    assert bad.text == (
        "Error: cannot replace: the change makes 3 replacements, more than the 2 one call may make (setting "
        "replace_max_occurrences); narrow it with path, include or occurrences"
    )
    assert (files / "c.md").read_text() == "use load() twice: load()\n"


def test_a_capped_preview_pages_and_saves_the_whole(files, make_ws):
    ws = make_ws(replace_max_results=2)
    r = ws.run("replace", pattern="load", replacement="read")
    spill = r.value["spill"]
    assert spill and r.value["nextOffset"] == 3
    assert r.value["footer"] == (
        "(Showing occurrences 1-2 of 3 in path order. Use offset=3 to continue.)\n\n"
        f"(The whole preview is saved in {spill}: read it with offset/limit or grep it.)\n\n" + APPLY.format(n=3)
    )
    rest = ws.run("replace", pattern="load", replacement="read", offset=3)
    assert [o["path"] for o in rest.value["occurrences"]] == ["pkg/a.py"] and rest.value["nextOffset"] is None
    saved = ws.run("read", file_path=spill).text
    assert "pkg/a.py:" in saved and ids(r)[0] in saved and ids(rest)[0] in saved


def test_mode_and_line_endings_are_kept(root, ws):
    p = root / "w.sh"
    p.write_bytes(b"echo load\r\nload\r\n")
    os.chmod(p, 0o751)
    ws.run("replace", pattern="load", replacement="read")
    assert not ws.run("replace", pattern="load", replacement="read", occurrences="all", expected_count=2).is_error
    assert p.read_bytes() == b"echo read\r\nread\r\n" and (p.stat().st_mode & 0o777) == 0o751


def test_include_exclude_and_path_narrow_it(files, ws):
    assert [
        o["path"] for o in ws.run("replace", pattern="load", replacement="r", include="*.py").value["occurrences"]
    ] == ["pkg/a.py"]
    assert {
        o["path"] for o in ws.run("replace", pattern="load", replacement="r", exclude="pkg").value["occurrences"]
    } == {"c.md"}
    assert [o["path"] for o in ws.run("replace", pattern="load", replacement="r", path="pkg").value["occurrences"]] == [
        "pkg/a.py"
    ]


def test_an_invalid_pattern_is_an_error(files, ws):
    r = ws.run("replace", pattern="(", replacement="x")
    assert r.is_error and r.value["code"] == "SEARCH_INVALID_PATTERN"


def test_a_file_read_in_this_session_may_be_changed_without_a_preview(root, ws):
    (root / "r.txt").write_text("alpha beta\n")
    refused = ws.run("replace", pattern="alpha", replacement="gamma", occurrences="all", expected_count=1)
    assert refused.text == 'Error: cannot replace in "r.txt": this session has not previewed or read it; preview first'
    ws.run("read", file_path="r.txt")
    done = ws.run("replace", pattern="alpha", replacement="gamma", occurrences="all", expected_count=1)
    assert done.text == 'Replaced 1 occurrence of "alpha" in 1 file:\nr.txt: 1'
    assert (root / "r.txt").read_text() == "gamma beta\n"


def test_a_path_naming_one_file_changes_that_file(files, ws):
    r = ws.run("replace", pattern="load", replacement="read", path="c.md")
    assert r.value["totalOccurrences"] == 2 and {o["path"] for o in r.value["occurrences"]} == {"c.md"}
    done = ws.run("replace", pattern="load", replacement="read", path="c.md", occurrences=[ids(r)[1]])
    assert done.text == 'Replaced 1 occurrence of "load" in 1 file:\nc.md: 1'
    assert (files / "c.md").read_text() == "use load() twice: read()\n"


def test_a_file_larger_than_edit_max_bytes_is_left_out_and_said(files, make_ws):
    (files / "big.log").write_text("load\n" * 100)
    ws = make_ws(edit_max_bytes=100)
    r = ws.run("replace", pattern="load", replacement="read")
    assert r.value["tooLarge"] == 1 and r.value["totalOccurrences"] == 3
    assert r.value["footer"].startswith(
        "(1 file larger than edit_max_bytes was left out (setting edit_max_bytes).)\n\n(Nothing was changed."
    )
    ws.run("replace", pattern="load", replacement="read", occurrences="all", expected_count=3)
    assert (files / "big.log").read_text() == "load\n" * 100 and (files / "c.md").read_text().count("read") == 2
