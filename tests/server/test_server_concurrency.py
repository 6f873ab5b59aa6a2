"""Tool calls run off the event loop, and a client that goes away cancels its search.

``rg_path`` points at a stand-in that never finishes (``exec sleep 60.<unique>``), so the test
can see the "search" in /proc, hang it, and check nothing of it survives the disconnect.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from servers import hanging_rg_settings, processes_with, wait_for
from tornado.httpclient import HTTPClientError

# every search hangs, the notebook listing beside a grep too
dsh_settings = hanging_rg_settings()


@pytest.mark.dsh_settings(index_min_files=0)  # no index build: its listing would run the stand-in rg too
async def test_disconnect_kills_the_search_and_others_are_served(jp_fetch, api, marker):
    grep = asyncio.ensure_future(
        jp_fetch("dsh", "api", "tools", "grep", method="POST", body='{"args": {"pattern": "hello"}}', request_timeout=3)
    )
    assert await wait_for(lambda: processes_with(marker), 3), "the stand-in rg never started"

    started = time.monotonic()
    results = await asyncio.gather(*(api("POST", "tools", "list", body={"args": {"path": "src"}}) for _ in range(20)))
    elapsed = time.monotonic() - started
    assert [status for status, _ in results] == [200] * 20
    assert all(not data["isError"] for _, data in results)
    assert elapsed < 5, f"20 list calls took {elapsed:.2f} s while a grep hung"
    assert processes_with(marker), "the grep should still be hanging while the lists ran"

    with pytest.raises(HTTPClientError) as info:  # the client gives up and closes its connection
        await grep
    assert info.value.code == 599
    gone = await wait_for(lambda: not processes_with(marker), 5)
    assert gone, f"rg stand-in still running after the client left: {processes_with(marker)}"


@pytest.mark.dsh_settings(search_timeout_ms=300)
async def test_search_timeout_is_a_tool_result(tool, marker):
    data = await tool("grep", pattern="hello")
    assert data["isError"] is True
    assert data["value"]["code"] == "SEARCH_ABORTED"
    assert await wait_for(lambda: not processes_with(marker), 5)
