"""A running call's progress over REST: the body's ``progress_id`` and ``GET /dsh/api/progress/{id}``."""

from __future__ import annotations

import asyncio
import re

import pytest

from dsh_jupyter.core.tools.grep import tool as grep_tool


@pytest.fixture
def jp_root_dir(jp_root_dir):
    for d in range(40):
        folder = jp_root_dir / f"d{d:02d}"
        folder.mkdir()
        for i in range(250):
            (folder / f"f{i:03d}.txt").write_text("needle\n" * 3 + "hay\n" * 20)
    return jp_root_dir


async def test_a_search_tells_how_far_it_got_while_it_runs(api, monkeypatch):
    monkeypatch.setattr(grep_tool, "PROGRESS_EVERY_S", 0.0)  # tell at every piece rg writes
    body = {"args": {"pattern": "needle", "offset": 1}, "progress_id": "t-1"}
    call = asyncio.ensure_future(api("POST", "tools", "grep", body=body))
    seen = []
    while not call.done():
        status, data = await api("GET", "progress", "t-1")
        assert status == 200
        if data["running"] and data["progress"]:
            seen.append(data["progress"])
        await asyncio.sleep(0.001)
    status, result = await call
    assert status == 200 and result["value"]["totalMatches"] == 30_000
    assert seen, "no progress was seen while the search ran"
    assert all(re.fullmatch(r"[\d,]+ match(es)? in [\d,]+ files? so far", text) for text in seen), seen
    _, after = await api("GET", "progress", "t-1")
    assert after == {"running": False, "progress": None}  # forgotten once the call answered


@pytest.mark.parametrize("bad", ["", "has space", "x" * 65, 7, "a/b"])
async def test_a_bad_progress_id_is_refused(api, bad):
    status, data = await api("POST", "tools", "list", body={"args": {}, "progress_id": bad})
    assert (status, data["code"]) == (400, "BODY_INVALID")
    assert data["message"] == "progress_id must be 1 to 64 letters, digits, - or _"


async def test_an_unknown_progress_id_is_not_running(api):
    assert await api("GET", "progress", "nobody") == (200, {"running": False, "progress": None})


async def test_a_search_shows_its_first_matches_to_its_caller_while_it_runs(api, monkeypatch):
    monkeypatch.setattr(grep_tool, "PROGRESS_EVERY_S", 0.0)
    body = {"args": {"pattern": "needle", "offset": 1}, "progress_id": "t-rows"}
    call = asyncio.ensure_future(api("POST", "tools", "grep", body=body))
    early = []
    while not call.done():
        _, data = await api("GET", "progress", "t-rows")
        if data.get("rows"):
            early = data["rows"]
        await asyncio.sleep(0.001)
    status, result = await call
    assert status == 200 and result["value"]["totalMatches"] == 30_000
    assert early, "no early rows were seen while the search ran"
    assert 0 < len(early) <= 100
    assert all(row["text"] == "needle" and row["line"] in (1, 2, 3) for row in early)
    assert all(re.fullmatch(r"d\d\d/f\d{3}\.txt", row["path"]) for row in early)
    _, after = await api("GET", "progress", "t-rows")
    assert after == {"running": False, "progress": None}
