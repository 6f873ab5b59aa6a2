"""Progress and saved results as resources through the clients people run, on both transports.

The TypeScript SDK's client (``node/drive.mjs``: Claude Code, Cursor, VS Code, the Inspector and
mcp-remote are built on it) and fastmcp's: a capped glob's ``resource_link`` is followed to its
content (whole, and one page), the session's resources and the page template are listed, an
address that names nothing is refused with MCP's "resource not found", and a grep that runs for
three seconds (a large sparse file, stopped by ``search_timeout_ms``) reports progress before its
answer and nothing after it (a late notification would reach the TypeScript client's ``onerror``:
it knows no handler for the token any more).
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from conftest import build_tree  # tests/conftest.py

from .clients import drive, installed
from .conftest import CAPS, make_slow_file, mcp_url, start_mcp_server

pytestmark = pytest.mark.slow

TREE = {"many": {f"f{i:02}.txt": f"hello {i}\n" for i in range(12)}}
TIMEOUT = "--DshJupyter.search_timeout_ms=3000"
SLOW_GREP = {"pattern": "text", "path": "slow.txt"}
STOPPED = "Error: grep was stopped after 3000 ms; narrow the pattern or path"
WHOLE_END = "12: many/f11.txt\n\n(End of file - total 12 lines)\n</content>"
PAGE_END = "(Showing lines 3-6 of 12. Use offset=7 to continue.)\n</content>"
PAGE_LINES = "3: many/f02.txt\n4: many/f03.txt\n5: many/f04.txt\n6: many/f05.txt\n"
STEPS = [
    {"op": "call", "name": "glob", "arguments": {"pattern": "*.txt", "path": "many"}},
    {"op": "readLink", "step": 0},
    {"op": "readLink", "step": 0, "query": "?offset=3&limit=4"},
    {"op": "listResources"},
    {"op": "listTemplates"},
    {"op": "readResource", "uri": "dsh-jupyter://spill/nope.txt"},
    {"op": "call", "name": "grep", "arguments": SLOW_GREP, "progress": True},
    {"op": "wait", "ms": 2500},  # a notification the server still owed would come in here
]


@pytest.fixture(scope="module")
def clients(tmp_path_factory):
    return installed(tmp_path_factory.mktemp("mcp-clients"))


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    srv = start_mcp_server(tmp_path_factory.mktemp("extras-server"), [TIMEOUT], tree=TREE)
    make_slow_file(srv.root)
    try:
        yield srv
    finally:
        srv.stop()


def stdio_command(tmp: Path) -> tuple[str, list[str]]:
    root = build_tree(tmp / "root", TREE)
    make_slow_file(root)
    args = ["--root", str(root), "--state-path", str(tmp / "state.sqlite"), TIMEOUT.replace("--DshJupyter.", "--")]
    return str(Path(sys.executable).with_name("dsh-jupyter-mcp")), [
        *args,
        *(a.replace("--DshJupyter.", "--") for a in CAPS),
    ]


def _check_drive(report: dict) -> None:
    steps = report["steps"]
    assert all(s["ok"] for i, s in enumerate(steps) if i != 5), steps
    glob = steps[0]["result"]
    link = glob["content"][1]
    name = glob["structuredContent"]["spill"].rsplit("/", 1)[1]
    assert link == {
        "type": "resource_link",
        "uri": f"dsh-jupyter://spill/{name}",
        "name": name,
        "title": "glob *.txt",
        "mimeType": "text/plain",
    }
    whole, page = steps[1]["result"]["contents"][0], steps[2]["result"]["contents"][0]
    assert whole["uri"] == link["uri"] and whole["mimeType"] == "text/plain" and whole["text"].endswith(WHOLE_END)
    assert page["uri"] == link["uri"] + "?offset=3&limit=4"
    assert PAGE_LINES in page["text"] and page["text"].endswith(PAGE_END)
    assert steps[2]["result"]["_meta"] == {"dsh-jupyter/page": {"offset": 3, "nextOffset": 7}}
    listed = steps[3]["result"]["resources"]
    assert [(r["uri"], r["title"], r["mimeType"]) for r in listed] == [(link["uri"], "glob *.txt", "text/plain")]
    assert listed[0]["size"] == len("".join(f"many/f{i:02}.txt\n" for i in range(12)))  # the bytes on disk
    assert steps[4]["result"]["resourceTemplates"][0]["uriTemplate"] == "dsh-jupyter://spill/{name}{?offset,limit}"
    refused = steps[5]
    assert not refused["ok"] and refused["code"] == -32002 and refused["error"].endswith('nope.txt": not found')
    grep = steps[6]
    assert grep["result"]["content"][0]["text"] == STOPPED
    assert grep["progress"] and all(p["message"].startswith("grep running for ") for p in grep["progress"])
    assert [p["progress"] for p in grep["progress"]] == sorted({p["progress"] for p in grep["progress"]})
    events = report["events"]
    assert events[0] == "result 0" and events[-1] == "result 6" and set(events[1:-1]) == {"progress 6"}, events


def test_typescript_sdk_over_stdio(clients, tmp_path):
    command, args = stdio_command(tmp_path)
    _check_drive(drive(clients, {"transport": "stdio", "command": command, "args": args, "steps": STEPS}, tmp_path))


def test_typescript_sdk_over_http(clients, http_server, tmp_path):
    spec = {
        "transport": "http",
        "url": mcp_url(http_server, "ts-extras"),
        "headers": {"Authorization": f"token {http_server.token}"},
        "steps": STEPS,
    }
    _check_drive(drive(clients, spec, tmp_path))


def _fastmcp(transport) -> dict:
    from fastmcp import Client

    heard: list = []
    out: dict = {"heard": heard}

    async def on_progress(progress, total, message):
        heard.append((progress, total, message))

    async def main():
        async with Client(transport) as client:
            glob = await client.call_tool("glob", {"pattern": "*.txt", "path": "many"})
            out["glob"] = glob
            link = glob.content[1]
            out["page"] = await client.read_resource(f"{link.uri}?offset=3&limit=4")
            out["listed"] = await client.list_resources()
            try:
                await client.read_resource("dsh-jupyter://spill/nope.txt")
            except Exception as exc:  # the refusal, as fastmcp raises it
                out["refused"] = exc
            out["grep"] = await client.call_tool("grep", SLOW_GREP, raise_on_error=False, progress_handler=on_progress)
            out["heard_at_answer"] = len(heard)
            await anyio.sleep(2.5)

    anyio.run(main)
    return out


def _check_fastmcp(out: dict) -> None:
    link = out["glob"].content[1]
    assert link.type == "resource_link" and str(link.uri).startswith("dsh-jupyter://spill/")
    assert PAGE_LINES in out["page"][0].text and out["page"][0].text.endswith(PAGE_END)
    assert [str(r.uri) for r in out["listed"]] == [str(link.uri)]
    assert 'nope.txt": not found' in str(out["refused"])
    assert out["grep"].content[0].text == STOPPED
    heard = out["heard"]
    assert heard and len(heard) == out["heard_at_answer"], heard
    assert all(m.startswith("grep running for ") for _, _, m in heard)


def test_fastmcp_over_stdio(tmp_path):
    from fastmcp.client.transports import StdioTransport

    command, args = stdio_command(tmp_path)
    _check_fastmcp(_fastmcp(StdioTransport(command, args)))


def test_fastmcp_over_http(http_server):
    from fastmcp.client.transports import StreamableHttpTransport

    transport = StreamableHttpTransport(
        mcp_url(http_server, "fastmcp-extras"), headers={"Authorization": f"token {http_server.token}"}
    )
    _check_fastmcp(_fastmcp(transport))
