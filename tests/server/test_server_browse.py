"""``GET /dsh/api/browse``: the sidebar explorer's sorted, filtered listing pages (not tool calls)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def jp_root_dir(jp_root_dir):
    folder = jp_root_dir / "box"
    folder.mkdir()
    for i, (name, size) in enumerate([("b.txt", 300), ("a.txt", 10), ("c.txt", 2000)]):
        (folder / name).write_bytes(b"x" * size)
        os.utime(folder / name, (1_000_000 + i, 1_000_000 + i))
    (folder / "sub").mkdir()
    (folder / ".env").write_text("SECRET=1\n")
    return jp_root_dir


def names(value: dict) -> list[str]:
    return [e["name"] for e in value["entries"]]


async def test_browse_sorts_over_the_whole_folder(api):
    status, value = await api("GET", "browse", params={"path": "box"})
    assert status == 200
    assert names(value) == ["sub", "a.txt", "b.txt", "c.txt"]  # list's order: folders first
    assert value["matchedEntries"] == 4 and value["sort"] == "model" and len(value["stamp"]) == 3
    _, by_size = await api("GET", "browse", params={"path": "box", "sort": "size", "descending": "true"})
    assert names(by_size)[:3] == ["c.txt", "b.txt", "a.txt"]
    _, by_time = await api("GET", "browse", params={"path": "box", "sort": "modified", "limit": "2"})
    assert names(by_time) == ["b.txt", "a.txt"], names(by_time)  # oldest first; the folder after them
    _, filtered = await api("GET", "browse", params={"path": "box", "filter": "A.T"})
    assert names(filtered) == ["a.txt"] and filtered["matchedEntries"] == 1


async def test_browse_with_limit_zero_is_the_stamp_only(api, jp_root_dir):
    _, first = await api("GET", "browse", params={"path": "box", "limit": "0"})
    assert set(first) == {"path", "stamp"}
    (jp_root_dir / "box" / "new.txt").write_text("n\n")
    _, after = await api("GET", "browse", params={"path": "box", "limit": "0"})
    assert after["stamp"] != first["stamp"]


async def test_browse_shows_no_more_than_list(api, tool):
    _, value = await api("GET", "browse", params={"path": "box"})
    listed = await tool("list", path="box")
    assert ".env" not in names(value)
    assert value["hiddenEntries"] == listed["value"]["hiddenEntries"] == 1
    _, log = await api("GET", "sessions", "default", "calls")
    assert [c["tool"] for c in log["calls"]] == ["list"]  # browsing is not a call


async def test_browse_refusals(api):
    status, data = await api("GET", "browse", params={"path": "box", "sort": "colour"})
    assert (status, data["code"]) == (400, "ARGUMENT_INVALID")
    assert data["message"] == "sort must be one of model, name, size, modified"
    status, data = await api("GET", "browse", params={"path": "../outside"})
    assert (status, data["code"]) == (400, "FS_OUTSIDE_ROOT"), (status, data)
    status, data = await api("GET", "browse", params={"path": "box/a.txt"})
    assert (status, data["code"]) == (404, "FS_NOT_DIRECTORY"), (status, data)
    status, data = await api("GET", "browse", params={"offset": "x"})
    assert (status, data["code"]) == (400, "ARGUMENT_INVALID")
