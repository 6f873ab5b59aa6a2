"""The workspace index through the server: ``/dsh/api/status`` reports it, REST answers say they used it."""

from __future__ import annotations

import asyncio
import time

import pytest


@pytest.mark.dsh_settings(index_min_files=1)
async def test_status_reports_the_workspace_index_and_searches_say_they_used_it(api, jp_root_dir):
    (jp_root_dir / "indexed.py").write_text("needle_from_the_index = 1\n")
    _, first = await api("POST", "tools", "grep", body={"args": {"pattern": "needle_from_the_index"}})
    assert first["value"].get("source") in (None, "rg")
    deadline = time.monotonic() + 30
    while True:
        status, data = await api("GET", "status")
        assert status == 200
        if data["index"]["state"] == "ready":
            break
        assert data["index"]["state"] in ("idle", "counting", "building"), data["index"]
        assert time.monotonic() < deadline, data["index"]
        await asyncio.sleep(0.05)
    assert data["index"]["files"] >= 1 and data["index"]["diskBytes"] > 0
    _, again = await api("POST", "tools", "grep", body={"args": {"pattern": "needle_from_the_index"}})
    assert again["value"]["source"] == "index" and again["value"]["files"] == 1
    assert again["text"] == first["text"]
