"""Progress notifications (``notifications/progress``) for a call that runs past a second, on both transports.

A long call is a grep over a large sparse file named explicitly (ripgrep reads every byte of an
explicit target) stopped by ``search_timeout_ms``: it runs a few seconds, then answers
``SEARCH_ABORTED``, so the test is bounded whatever the machine's speed. The stdio server is
spoken to line by line (so the order of what it writes is seen as written); the HTTP endpoint
through its SSE stream, raw and through the SDK's client.
"""

from __future__ import annotations

import json
import time

import anyio
import httpx2
import pytest

from dsh_jupyter.core.render.progress import render_progress
from dsh_jupyter.mcp.progress import Ticker, progress_token

from .conftest import Lines, connect, make_slow_file, mcp_url, rg_processes, start_mcp_server

SLOW_GREP = {"pattern": "text", "path": "slow.txt"}
STOPPED = "Error: grep was stopped after 3000 ms; narrow the pattern or path"


def test_the_progress_line_says_how_long_and_what_the_core_reported():
    assert render_progress("grep", 3.9) == "grep running for 3 s"
    assert render_progress("grep", 1.0, "1,204 matches in 310 files so far") == (
        "grep running for 1 s: 1,204 matches in 310 files so far"
    )
    assert render_progress("glob", 12.2, "") == "glob running for 12 s"


def test_the_progress_value_always_grows():
    now = [100.0]
    ticker = Ticker("grep", clock=lambda: now[0])
    now[0] = 101.0
    assert ticker.next() == (1.0, "grep running for 1 s")
    ticker.report("3 matches in 2 files so far")
    assert ticker.next() == (1.1, "grep running for 1 s: 3 matches in 2 files so far")  # same instant: still grows
    now[0] = 102.5
    assert ticker.next() == (2.5, "grep running for 2 s: 3 matches in 2 files so far")


def test_the_http_pump_stops_quietly_when_its_client_is_gone(monkeypatch):
    import dsh_jupyter.mcp.progress as progress

    monkeypatch.setattr(progress, "FIRST_AFTER_S", 0.01)
    monkeypatch.setattr(progress, "EVERY_S", 0.01)
    sent: list = []

    async def send(value, message):
        sent.append(message)
        if len(sent) == 2:
            raise anyio.ClosedResourceError

    async def main():
        await progress.pump(Ticker("glob"), send)  # returns: no exception left for the loop to report

    anyio.run(main)
    assert sent == ["glob running for 0 s", "glob running for 0 s"]


@pytest.mark.parametrize(
    "params, token",
    [
        ({"_meta": {"progressToken": "abc"}}, "abc"),
        ({"_meta": {"progressToken": 7}}, 7),
        ({"_meta": {"progressToken": True}}, None),  # a bool is not a token
        ({"_meta": {"progressToken": 1.5}}, None),
        ({"_meta": {}}, None),
        ({"name": "grep"}, None),
        (None, None),
    ],
)
def test_the_token_is_a_string_or_an_integer(params, token):
    assert progress_token(params) == token


@pytest.fixture
def lines(root, state_file):
    make_slow_file(root)
    (root / "notes.txt").write_text("first line\n")
    server = Lines(root, state_file, "--search_timeout_ms=3000")
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        }
    )
    server.answer(0)
    try:
        yield server
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()


def tools_call(request_id, name, arguments, token=None) -> dict:
    params: dict = {"name": name, "arguments": arguments}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


@pytest.mark.slow
def test_stdio_sends_progress_while_a_long_grep_runs_and_none_after_its_answer(lines):
    lines.send(tools_call(1, "grep", SLOW_GREP, token="tok-1"))
    answer = lines.answer(1)
    assert answer["result"]["content"][0]["text"] == STOPPED
    time.sleep(2.5)  # more than two periods: a notification the pump still owed would be here by now
    progress = [m for m in lines.lines if m.get("method") == "notifications/progress"]
    assert progress, lines.lines
    assert lines.lines.index(answer) == len(lines.lines) - 1  # the answer is the last thing written
    values = [m["params"]["progress"] for m in progress]
    assert values == sorted(set(values)) and values[0] >= 1.0
    for m in progress:
        assert m["params"]["progressToken"] == "tok-1" and "total" not in m["params"]
        assert m["params"]["message"].startswith("grep running for ")


@pytest.mark.slow
def test_stdio_sends_no_progress_without_a_token_nor_for_a_quick_call(lines):
    lines.send(tools_call(1, "grep", SLOW_GREP))
    lines.send(tools_call(2, "read", {"file_path": "notes.txt"}, token=5))
    assert lines.answer(1)["result"]["isError"] is True
    assert lines.answer(2)["result"]["isError"] is False
    time.sleep(1.5)
    assert [m.get("id") for m in lines.lines] == [0, 2, 1]  # answers only


@pytest.mark.slow
def test_stdio_cancel_still_kills_rg_and_ends_the_progress(root, state_file):
    make_slow_file(root)
    server = Lines(root, state_file)  # no timeout: the grep would run for minutes
    try:
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            }
        )
        server.answer(0)
        server.send(tools_call(1, "grep", SLOW_GREP, token="c"))
        deadline = time.monotonic() + 30
        while not any(m.get("method") == "notifications/progress" for m in server.lines):
            assert time.monotonic() < deadline, server.lines
            time.sleep(0.05)
        assert rg_processes(server.proc.pid)
        server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
        deadline = time.monotonic() + 10
        while rg_processes(server.proc.pid):
            assert time.monotonic() < deadline, "rg outlived the cancel"
            time.sleep(0.05)
        time.sleep(0.2)  # the pump stops at its next tick at the latest
        seen = len(server.lines)
        time.sleep(2.5)
        assert len(server.lines) == seen and all(m.get("id") != 1 for m in server.lines)
    finally:
        server.close()


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory):
    srv = start_mcp_server(tmp_path_factory.mktemp("mcp-progress"), ["--DshJupyter.search_timeout_ms=3000"])
    make_slow_file(srv.root)
    try:
        yield srv
    finally:
        srv.stop()


def sse_messages(body: str) -> list[dict]:
    return [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:") and line[5:].strip()]


@pytest.mark.slow
def test_http_streams_the_progress_before_the_answer(slow_server):
    """A call with a token is answered as an SSE stream: notifications first, the result last."""
    headers = {
        "Authorization": f"token {slow_server.token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    url = mcp_url(slow_server, "progress-raw")
    with httpx2.Client(timeout=60) as http:
        reply = http.post(url, headers=headers, json=init)
        headers["Mcp-Session-Id"] = reply.headers["mcp-session-id"]
        headers["Mcp-Protocol-Version"] = "2025-11-25"
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert http.post(url, headers=headers, json=initialized).status_code == 202
        reply = http.post(url, headers=headers, json=tools_call(2, "grep", SLOW_GREP, token="http-1"))
    assert reply.headers["content-type"].startswith("text/event-stream")
    messages = sse_messages(reply.text)
    assert messages[-1]["id"] == 2 and messages[-1]["result"]["content"][0]["text"] == STOPPED
    progress = messages[:-1]
    assert progress and all(m["method"] == "notifications/progress" for m in progress), messages
    assert all(m["params"]["progressToken"] == "http-1" for m in progress)
    assert all(m["params"]["message"].startswith("grep running for ") for m in progress)


@pytest.mark.slow
def test_the_sdk_client_hears_progress_over_http_and_none_without_asking(slow_server):
    heard: list[tuple] = []

    async def on_progress(progress, total, message):
        heard.append((progress, total, message))

    async def main():
        async with connect(slow_server, "progress-sdk") as client:
            with_token = await client.call_tool("grep", SLOW_GREP, progress_callback=on_progress)
            count = len(heard)
            without = await client.call_tool("grep", SLOW_GREP)
            return with_token, count, without

    with_token, count, without = anyio.run(main)
    assert with_token.content[0].text == without.content[0].text == STOPPED
    assert count >= 1 and len(heard) == count  # none for the call that did not ask
    assert heard[0][0] >= 1.0 and heard[0][1] is None and heard[0][2].startswith("grep running for ")


@pytest.mark.slow
def test_json_mode_answers_a_call_that_asked_for_progress_without_any(tmp_path_factory):
    """One JSON body per request carries no notification: the call still answers, none is sent after."""
    srv = start_mcp_server(
        tmp_path_factory.mktemp("mcp-progress-json"),
        ["--DshJupyter.search_timeout_ms=3000", "--DshJupyter.mcp_json_response=True"],
    )
    make_slow_file(srv.root)
    heard: list = []

    async def on_progress(progress, total, message):
        heard.append(message)

    async def main():
        async with connect(srv, "progress-json") as client:
            result = await client.call_tool("grep", SLOW_GREP, progress_callback=on_progress)
            listed = await client.call_tool("list", {})
            return result, listed

    try:
        result, listed = anyio.run(main)
    finally:
        srv.stop()
    assert result.content[0].text == STOPPED and heard == []
    assert listed.content[0].text.startswith("<path>.</path>")  # the session goes on
    assert "Traceback" not in srv.log_of_our_own()


@pytest.mark.slow
def test_http_cancel_with_progress_still_kills_rg_and_ends_the_progress(tmp_path_factory):
    """No timeout here: the grep would run for minutes; the client gives up after its first progress."""
    srv = start_mcp_server(tmp_path_factory.mktemp("mcp-progress-cancel"))
    make_slow_file(srv.root)
    heard: list = []

    async def on_progress(progress, total, message):
        heard.append(message)

    async def main():
        async with connect(srv, "progress-cancel") as client:
            scope = anyio.CancelScope()

            async def slow_call():
                with scope:
                    await client.call_tool("grep", SLOW_GREP, progress_callback=on_progress)

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow_call)
                deadline = time.monotonic() + 60
                while not heard:
                    assert time.monotonic() < deadline, "no progress"
                    await anyio.sleep(0.05)
                assert rg_processes(srv.proc.pid)
                scope.cancel()
            deadline = time.monotonic() + 10
            while rg_processes(srv.proc.pid):
                assert time.monotonic() < deadline, "rg outlived the cancel"
                await anyio.sleep(0.05)
            count = len(heard)
            await anyio.sleep(2.5)
            after = await client.call_tool("list", {})  # the session still serves
            return count, after

    try:
        count, after = anyio.run(main)
    finally:
        srv.stop()
    assert len(heard) == count and after.is_error is False
    log = srv.log_of_our_own()
    assert "Traceback" not in log and "Task exception was never retrieved" not in log, log[-3000:]
