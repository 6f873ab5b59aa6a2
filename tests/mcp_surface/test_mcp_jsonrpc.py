"""The stdio server's own JSON-RPC (``dsh_jupyter.mcp.jsonrpc``), spoken to line by line.

The SDK's clients drive it in test_mcp_stdio.py and test_mcp_clients.py; here the protocol's
edges: version agreement, malformed lines, batches, unknown methods, answers the client never
asked for, cancellation, and names that are not UTF-8.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import anyio
import pytest

from dsh_jupyter.core.registry import TOOLS
from dsh_jupyter.mcp.jsonrpc import HANDSHAKE_VERSIONS, LATEST_VERSION

from .conftest import TREE, rg_processes

PROG = [sys.executable, "-m", "dsh_jupyter.mcp"]


class Raw:
    """The stdio server as a child process, spoken to one JSON line at a time."""

    def __init__(self, root, state_file) -> None:
        self.proc = subprocess.Popen(
            [*PROG, "--root", str(root), "--state-path", str(state_file)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def send(self, message) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def read(self) -> dict:
        line = self.proc.stdout.readline()
        assert line, "the server closed its output"
        return json.loads(line)

    def ask(self, message) -> dict:
        self.send(message)
        return self.read()

    def close(self) -> bytes:
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        assert self.proc.wait(timeout=30) == 0
        return rest


@pytest.fixture
def raw(root, tree, state_file):
    tree(root, TREE)
    server = Raw(root, state_file)
    try:
        yield server
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()


def init(version: str = "2025-06-18", request_id=1) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }


def call(request_id, name: str, arguments=None) -> dict:
    params = {"name": name} if arguments is None else {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_the_versions_are_the_sdks_handshake_versions():
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    assert tuple(HANDSHAKE_PROTOCOL_VERSIONS) == HANDSHAKE_VERSIONS
    assert LATEST_VERSION == "2025-11-25"


@pytest.mark.parametrize(
    "asked, agreed", [(v, v) for v in HANDSHAKE_VERSIONS] + [("1999-01-01", "2025-11-25"), ("2026-07-28", "2025-11-25")]
)
def test_initialize_agrees_on_a_version(raw, asked, agreed):
    reply = raw.ask(init(asked))
    assert reply["id"] == 1
    result = reply["result"]
    assert result["protocolVersion"] == agreed
    assert result["capabilities"] == {
        "tools": {"listChanged": False},
        "resources": {"listChanged": False, "subscribe": False},
    }
    assert result["serverInfo"]["name"] == "dsh-jupyter"
    assert result["instructions"].startswith("list: Start here")


def test_malformed_messages_get_json_rpc_errors_and_the_session_goes_on(raw):
    raw.ask(init())
    assert raw.ask(b"{not json") == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: a line is not valid JSON"},
    }
    assert raw.ask([])["error"]["code"] == -32600
    assert raw.ask({"id": 2, "method": "ping"})["error"]["code"] == -32600  # no "jsonrpc": "2.0"
    assert raw.ask({"jsonrpc": "2.0", "id": None, "method": "ping"})["error"]["code"] == -32600
    assert raw.ask({"jsonrpc": "2.0", "id": 3, "method": "prompts/list"}) == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32601, "message": "Method not found: prompts/list"},
    }
    assert raw.ask({"jsonrpc": "2.0", "id": 4, "method": "server/discover"})["error"]["code"] == -32601
    assert raw.ask({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": [1]})["error"] == {
        "code": -32602,
        "message": "Invalid params: params must be an object",
    }
    assert raw.ask({"jsonrpc": "2.0", "id": "six", "method": "tools/call", "params": {}})["error"] == {
        "code": -32602,
        "message": "Invalid params: name must be a string",
    }
    raw.send({"jsonrpc": "2.0", "id": 99, "result": {}})  # an answer to nothing: ignored
    raw.send({"jsonrpc": "2.0", "method": "notifications/whatever"})  # an unknown notification: ignored
    assert raw.ask({"jsonrpc": "2.0", "id": 7, "method": "ping"}) == {"jsonrpc": "2.0", "id": 7, "result": {}}
    assert raw.close() == b""


def test_argument_problems_are_tool_results(raw):
    raw.ask(init())
    reply = raw.ask(call(2, "read", [1, 2]))
    assert reply["result"] == {
        "content": [{"type": "text", "text": "Error: arguments must be an object"}],
        "isError": True,
        "_meta": {
            "dsh-jupyter/error": {
                "name": "ArgumentError",
                "code": "ARGUMENT_INVALID",
                "message": "arguments must be an object",
            }
        },
    }
    listed = raw.ask(call(3, "list"))["result"]  # no arguments at all: {}
    assert listed["isError"] is False and listed["structuredContent"]["path"] == "."


def test_a_batch_is_answered_message_by_message(raw):
    raw.ask(init())
    raw.send([{"jsonrpc": "2.0", "id": 2, "method": "ping"}, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}])
    replies = {r["id"]: r for r in (raw.read(), raw.read())}
    assert replies[2]["result"] == {}
    assert [t["name"] for t in replies[3]["result"]["tools"]] == [t.name for t in TOOLS]


def test_names_that_are_not_utf8_still_make_valid_json(raw, root):
    name = os.fsencode(root) + b"/caf\xe9.txt"
    with open(name, "wb") as f:
        f.write(b"x\n")
    raw.ask(init())
    reply = raw.ask(call(2, "list"))
    assert reply["result"]["isError"] is False
    assert "caf\udce9.txt" in [e["name"] for e in reply["result"]["structuredContent"]["entries"]]


def test_stdin_closing_answers_what_was_asked_then_exits(raw):
    raw.send(init())
    raw.send(call(2, "list", {"path": "src"}))
    rest = raw.close()
    replies = [json.loads(line) for line in rest.splitlines()]
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[1]["result"]["content"][0]["text"].startswith("<path>src</path>")


@pytest.mark.slow
def test_a_cancelled_request_gets_no_answer_and_rg_dies(raw, root):
    slow = root / "slow.txt"
    with open(slow, "wb") as f:
        f.write(b"text, so grep does not skip it as binary\n" * 400)
        f.truncate(50 * 2**30)  # sparse: slow to read, no disk
    try:
        raw.ask(init())
        raw.send(call(2, "grep", {"pattern": "needle", "path": "slow.txt"}))
        deadline = time.monotonic() + 10
        while not rg_processes(raw.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert rg_processes(raw.proc.pid), "rg never started"
        raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
        deadline = time.monotonic() + 10
        while rg_processes(raw.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not rg_processes(raw.proc.pid)
        assert raw.ask({"jsonrpc": "2.0", "id": 3, "method": "ping"}) == {"jsonrpc": "2.0", "id": 3, "result": {}}
        assert raw.close() == b""  # request 2 was never answered
    finally:
        slow.unlink()


def test_the_sdks_auto_client_falls_back_to_initialize(root, tree, state_file, tmp_path):
    """``mcp.Client`` first asks server/discover (2026-07-28); -32601 sends it to initialize."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    tree(root, TREE)
    params = StdioServerParameters(
        command=PROG[0], args=[*PROG[1:], "--root", str(root), "--state-path", str(state_file)]
    )

    async def main():
        with open(tmp_path / "err.log", "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                return await client.call_tool("read", {"file_path": "notes.txt"})

    result = anyio.run(main)
    assert result.content[0].text.startswith("<path>notes.txt</path>")
