"""``Workspace.browse``: the widgets' sorted and filtered listing pages (not a tool, never logged)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_jupyter import Workspace
from dsh_jupyter.core.errors import ToolError


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "d" / "Zeta").mkdir(parents=True)
    (root / "d" / "alpha").mkdir()
    for name, size, mtime in [("b.txt", 30, 3000), ("A.txt", 10, 1000), ("c.log", 20, 2000), ("big.bin", 900, 500)]:
        path = root / "d" / name
        path.write_bytes(b"x" * size)
        os.utime(path, (mtime, mtime))
    os.symlink("b.txt", root / "d" / "link")
    return Workspace(root, state_path=tmp_path / "state.sqlite", list_max_entries=3)


def names(value: dict) -> list[str]:
    return [e["name"] for e in value["entries"]]


def test_model_order_is_the_tools_order_and_nothing_is_logged(ws):
    value = ws.browse("d", limit=100)
    listed = ws.run("list", path="d")
    assert names(value) == names(listed.value)  # capped at one page: list_max_entries
    assert value["entries"] == listed.value["entries"]
    assert (value["totalEntries"], value["matchedEntries"], value["counts"]) == (7, 7, listed.value["counts"])
    assert (value["sort"], value["descending"], value["filter"]) == ("model", False, "")
    assert [c["tool"] for c in ws.calls()["calls"]] == ["list"]  # browse is not a tool call


@pytest.mark.parametrize(
    "sort, descending, expected",
    [
        ("size", True, ["big.bin", "b.txt", "c.log"]),
        ("size", False, ["Zeta", "alpha", "link"]),  # directories and links count as -1, model order among them
        ("modified", False, ["big.bin", "A.txt", "c.log"]),
        ("name", False, ["A.txt", "alpha", "b.txt"]),
        ("model", True, ["link", "c.log", "big.bin"]),
    ],
)
def test_sorted_over_the_whole_listing(ws, sort, descending, expected):
    assert names(ws.browse("d", sort=sort, descending=descending)) == expected


def test_second_page_of_a_sort(ws):
    page = ws.browse("d", offset=4, sort="size", descending=True)
    assert names(page) == ["A.txt", "Zeta", "alpha"] and page["offset"] == 4


def test_filter_is_case_insensitive_and_offsets_count_what_it_leaves(ws):
    value = ws.browse("d", name_filter="TXT")
    assert names(value) == ["A.txt", "b.txt"] and value["matchedEntries"] == 2 and value["totalEntries"] == 7
    assert value["filter"] == "TXT"
    assert ws.browse("d", name_filter="nothing")["entries"] == []
    with pytest.raises(ToolError) as err:
        ws.browse("d", offset=3, name_filter="txt")
    assert err.value.code == "ARGUMENT_INVALID"


def test_stamp_moves_when_the_folder_changes(ws):
    before = ws.browse("d", limit=0)
    assert before == {"path": "d", "stamp": ws.browse("d")["stamp"]} and len(before["stamp"]) == 3
    assert ws.browse("d", limit=0)["stamp"] == before["stamp"]
    (Path(ws.root) / "d" / "new.txt").write_text("new")
    assert ws.browse("d", limit=0)["stamp"] != before["stamp"]
    assert ws.browse("missing", limit=0) == {"path": "missing", "stamp": None}  # gone: no stamp, no scan
    with pytest.raises(ToolError):
        ws.browse("..", limit=0)  # still confined


def test_confined_like_list(ws, tmp_path):
    for path, code in [("..", "FS_OUTSIDE_ROOT"), ("missing", "FS_NOT_FOUND"), ("d/b.txt", "FS_NOT_DIRECTORY")]:
        with pytest.raises(ToolError) as err:
            ws.browse(path)
        assert err.value.code == code
    with pytest.raises(ToolError):
        ws.browse("d", sort="colour")
    assert "browse" not in [t["name"] for t in ws.tools()]
