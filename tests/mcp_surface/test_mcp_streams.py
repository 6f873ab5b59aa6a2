"""SSE and JSON responses on ``/dsh/mcp``, and a client that gives up or goes away killing its search.

A slow search is a grep over a large sparse file named explicitly (ripgrep reads every byte of an
explicit target). The server's ripgrep processes are found among its descendants in /proc:
ripgrep runs in its own process group, so a group would not find them.
"""

from __future__ import annotations

import time

import anyio
import httpx2
import pytest

from .conftest import calls, connect, mcp_url, rg_processes, start_mcp_server, text_of

pytestmark = pytest.mark.slow

SLOW = {"pattern": "needle-that-is-not-there", "path": "slow.txt"}
ABORTED = "Error: grep was cancelled before it finished"


@pytest.fixture(scope="module", params=["sse", "json"])
def any_server(request, tmp_path_factory):
    extra = ["--DshJupyter.mcp_json_response=True"] if request.param == "json" else []
    srv = start_mcp_server(tmp_path_factory.mktemp(f"mcp-{request.param}"), extra)
    srv.mode = request.param
    try:
        yield srv
    finally:
        srv.stop()
    log = srv.log_of_our_own()
    assert "Traceback" not in log and "Task was destroyed" not in log, log[-3000:]  # a clean stop


@pytest.fixture
def slow_file(any_server):
    path = any_server.root / "slow.txt"
    with open(path, "wb") as f:
        f.write(b"text, so grep does not skip it as binary\n" * 400)
        f.truncate(50 * 2**30)  # then sparse: no disk, and minutes to read through
    try:
        yield path
    finally:
        path.unlink()


async def eventually(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await anyio.sleep(0.1)
    return bool(predicate())


def _headers(server, extra: dict | None = None) -> dict:
    return {
        "Authorization": f"token {server.token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        **(extra or {}),
    }


def test_responses_are_sse_or_json_as_configured(any_server):
    server = any_server
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    reply = httpx2.post(mcp_url(server, "mode"), headers=_headers(server), json=init, timeout=30)
    assert reply.status_code == 200
    expected = "text/event-stream" if server.mode == "sse" else "application/json"
    assert reply.headers["content-type"].startswith(expected)
    assert reply.headers["mcp-session-id"]

    async def main():
        async with connect(server, "mode") as client:
            return await client.call_tool("list", {"path": "src"})

    assert text_of(anyio.run(main)).endswith("(2 entries: 1 directory, 1 file)\n</content>")


def test_a_cancelled_call_kills_rg(any_server, slow_file):
    """The SDK client gives up on the call (it sends notifications/cancelled); rg dies at once."""
    server = any_server
    session = f"cancel-{server.mode}"

    async def main():
        async with connect(server, session) as client:
            scope = anyio.CancelScope()

            async def slow_call():
                with scope:
                    await client.call_tool("grep", SLOW)

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow_call)
                assert await eventually(lambda: rg_processes(server.proc.pid)), "rg never started"
                started = time.monotonic()  # the search runs off the event loop: others are served
                status, other = server.request("POST", "dsh/api/tools/list", {"args": {"path": "src"}})
                assert status == 200 and not other["isError"] and time.monotonic() - started < 5
                scope.cancel()
            assert await eventually(lambda: not rg_processes(server.proc.pid)), rg_processes(server.proc.pid)
            return await client.call_tool("list", {"path": "src"})  # the session still serves

    after = anyio.run(main)
    assert after.is_error is False
    assert anyio.run(_logged, server, session) == ("grep", ABORTED)


def test_a_client_that_goes_away_kills_rg(any_server, slow_file):
    """The connection carrying the call closes: tornado sees it and the call's cancel event is set."""
    server = any_server
    session = f"gone-{server.mode}"

    async def main():
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
        async with httpx2.AsyncClient(headers=_headers(server), timeout=60) as http:
            reply = await http.post(mcp_url(server, session), json=init)
            with_id = {"Mcp-Session-Id": reply.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-06-18"}
            await http.post(
                mcp_url(server, session),
                headers=with_id,
                json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            )
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "grep", "arguments": SLOW}}
            async with anyio.create_task_group() as tg:
                scope = anyio.CancelScope()

                async def post():
                    with scope:
                        await http.post(mcp_url(server, session), headers=with_id, json=call)

                tg.start_soon(post)
                assert await eventually(lambda: rg_processes(server.proc.pid)), "rg never started"
                scope.cancel()  # httpx drops the half-read connection
        assert await eventually(lambda: not rg_processes(server.proc.pid)), rg_processes(server.proc.pid)

    anyio.run(main)
    assert anyio.run(_logged, server, session) == ("grep", ABORTED)


async def _logged(server, session: str) -> tuple[str, str]:
    """The session's first call as (tool, text), once the call log has it."""
    await eventually(lambda: calls(server, session), timeout=10)
    first = calls(server, session)[0]
    return first["tool"], first["text"]
