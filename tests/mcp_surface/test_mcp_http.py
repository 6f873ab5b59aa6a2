"""``/dsh/mcp`` on a real ``jupyter server``, driven by the official SDK client (and fastmcp's).

Every MCP answer is compared with the REST answer for the same arguments: the same tools, the
same model text, the same ``isError``, and ``structuredContent`` equal to REST's ``value``.
"""

from __future__ import annotations

import os
import shutil
import sys
import time

import anyio
import httpx2
import pytest
from conftest import build_tree
from mcp import MCPError, types

from dsh_jupyter.core.registry import TOOLS

from .conftest import calls, connect, mcp_url, text_of, value_of

pytestmark = pytest.mark.slow

HANDSHAKE_VERSIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

CMP = {
    "src/app.py": "def main():\n    return 'hello world'\n",
    "src/util/helpers.py": "def helper():\n    return 'hello helper'\n",
    "notes.txt": "first line\nsecond line\nhello notes\n",
    "dup.txt": "x x x\n",
    "many": {f"f{i:02}.txt": f"hello {i}\n" for i in range(12)},
    "empty": {},
}

# Every tool, its paged/capped/sampled forms and its errors, in an order whose effects on the
# files and the session are the same whichever surface runs it.
STEPS = [
    ("list", {"path": "cmp"}),
    ("list", {"path": "cmp/many", "offset": 3}),
    ("list", {"path": "cmp", "offset": 99}),
    ("list", {"path": "cmp/nope"}),
    ("list", {"path": " "}),
    ("list", {"offset": 0}),
    ("list", {"path": 3}),
    ("list", {"bogus": True}),
    ("glob", {"pattern": "*.py", "path": "cmp"}),
    ("glob", {"pattern": "*.txt", "path": "cmp"}),
    ("glob", {"pattern": "!*.py"}),
    ("glob", {}),
    ("grep", {"pattern": "hello", "path": "cmp/src"}),
    ("grep", {"pattern": "hello", "path": "cmp"}),
    ("grep", {"pattern": "hello", "path": "cmp", "include": "*.py"}),
    ("grep", {"pattern": "(", "path": "cmp"}),
    ("grep", {"pattern": "zzz-none", "path": "cmp"}),
    ("grep", {"pattern": "x", "include": "*.py,*.md"}),
    ("read", {"file_path": "cmp/notes.txt"}),
    ("read", {"file_path": "cmp/notes.txt", "offset": 2, "limit": 1}),
    ("read", {"file_path": "cmp/nope.txt"}),
    ("read", {"file_path": "cmp/notes.txt", "limit": 5000}),
    ("read", {"file_path": "cmp/notes.txt", "offset": 50}),
    ("read", {}),
    ("read", {"file_path": "cmp"}),
    ("write", {"file_path": "cmp/dup.txt", "content": "y"}),
    ("write", {"file_path": "cmp/new/created.txt", "content": "c\n"}),
    ("edit", {"file_path": "cmp/dup.txt", "old_string": "x", "new_string": "z"}),
    ("read", {"file_path": "cmp/dup.txt"}),
    ("edit", {"file_path": "cmp/dup.txt", "old_string": "x", "new_string": "z"}),
    ("edit", {"file_path": "cmp/dup.txt", "old_string": "q", "new_string": "z"}),
    ("edit", {"file_path": "cmp/dup.txt", "old_string": "x", "new_string": "x"}),
    ("edit", {"file_path": "cmp/dup.txt", "old_string": "x", "new_string": "z", "replace_all": True}),
    ("write", {"file_path": "cmp/notes.txt", "content": "rewritten\n"}),
    ("edit", {"file_path": "cmp/new/created.txt", "old_string": "c", "new_string": "d"}),
    ("move", {"source": "cmp/new/created.txt", "destination": "cmp/moved/created.txt"}),
    ("edit", {"file_path": "cmp/moved/created.txt", "old_string": "d", "new_string": "e"}),
    ("move", {"source": "cmp/moved", "destination": "cmp/new"}),
    ("move", {"source": "cmp/dup.txt", "destination": "cmp/new"}),
    ("move", {"source": "cmp/dup.txt", "destination": "cmp/notes.txt"}),
    ("move", {"source": "cmp/dup.txt", "destination": "cmp/notes.txt", "overwrite": True}),
    ("move", {"source": "cmp/nope", "destination": "cmp/x"}),
    ("move", {"source": "cmp", "destination": "cmp/in"}),
    ("list_dir", {"path": "cmp"}),
    ("list_dir", {"path": "cmp", "recursive": True}),
    ("list_dir", {"path": "cmp/nope"}),
    ("list_dir", {"path": "cmp/notes.txt"}),
]


def reset_cmp(root) -> None:
    """The ``cmp/`` tree as new, with fixed, distinct modification times (glob orders by them)."""
    shutil.rmtree(root / "cmp", ignore_errors=True)
    build_tree(root / "cmp", CMP)
    paths = sorted((root / "cmp").rglob("*"), key=lambda p: str(p), reverse=True)
    for i, path in enumerate([*paths, root / "cmp"]):
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i), follow_symlinks=False)


def normalized(text: str, value: dict) -> tuple[str, dict]:
    """Spill locators name the call and the session (in the text and the footer); everything else must be equal."""
    spill = value.get("spill") if isinstance(value, dict) else None
    if not spill:
        return text, value
    footer = value["footer"].replace(spill, "<SPILL>")
    return text.replace(spill, "<SPILL>"), {**value, "spill": "<SPILL>", "footer": footer}


def test_initialize_negotiates_a_handshake_version_and_gives_the_guidance(server):
    async def main():
        async with connect(server, "init") as client:
            return client.initialize_result

    init = anyio.run(main)
    assert init.protocol_version in HANDSHAKE_VERSIONS
    assert init.server_info.name == "dsh-jupyter"
    assert init.capabilities.tools is not None
    _, tools = server.request("GET", "dsh/api/tools")
    assert init.instructions == "\n\n".join(f"{t['name']}: {t['guidance']}" for t in tools)


@pytest.mark.parametrize("version", sorted(HANDSHAKE_VERSIONS))
def test_every_handshake_version_is_accepted(server, version):
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    reply = httpx2.post(
        mcp_url(server, "versions"),
        json=init,
        timeout=30,
        headers={"Authorization": f"token {server.token}", "Accept": "application/json, text/event-stream"},
    )
    assert reply.status_code == 200
    assert f'"protocolVersion":"{version}"' in reply.text


def test_tools_list_equals_rest_with_annotations(server):
    async def main():
        async with connect(server, "tools") as client:
            return (await client.list_tools()).tools

    listed = anyio.run(main)
    status, rest = server.request("GET", "dsh/api/tools")
    assert status == 200
    assert [t.name for t in listed] == [t["name"] for t in rest] == [t.name for t in TOOLS]
    for tool, definition in zip(listed, rest):
        dumped = tool.model_dump(by_alias=True, exclude_none=True)
        assert dumped["description"] == definition["description"]
        assert dumped["inputSchema"] == definition["inputSchema"]
        assert dumped["outputSchema"]["type"] == "object"
        hints = dumped["annotations"]
        assert hints["openWorldHint"] is False
        spec = {t.name: t for t in TOOLS}[tool.name]
        assert hints["readOnlyHint"] is (not spec.writes)
        if spec.writes:
            assert hints["destructiveHint"] is spec.destructive
    assert calls(server, "tools") == []  # listing tools is not a tool call


def test_every_tool_call_text_equals_rest(server):
    """The whole STEPS sequence over MCP in one session, then over REST in another, from the same files."""
    reset_cmp(server.root)

    async def main():
        async with connect(server, "cmp-mcp") as client:
            return [await client.call_tool(tool, args) for tool, args in STEPS]

    over_mcp = anyio.run(main)
    reset_cmp(server.root)
    over_rest = [server.tool(tool, "cmp-rest", **args) for tool, args in STEPS]
    for (tool, args), got, want in zip(STEPS, over_mcp, over_rest):
        assert normalized(text_of(got), value_of(got)) == normalized(want["text"], want["value"]), (tool, args)
        assert got.is_error is want["isError"], (tool, args)
    errors = {i for i, r in enumerate(over_rest) if r["isError"]}
    assert len(errors) >= 15 and len(errors) < len(STEPS) - 10  # both kinds are covered
    assert text_of(over_mcp[5]) == "Error: offset must be at least 1"
    assert text_of(over_mcp[6]) == "Error: path must be a string"
    assert text_of(over_mcp[7]) == 'Error: unknown argument "bogus" (this tool takes: path, offset, details)'
    assert text_of(over_mcp[11]) == "Error: pattern is required"
    assert value_of(over_mcp[7])["code"] == "ARGUMENT_INVALID"
    assert "sampled across" in text_of(over_mcp[9]) and "Full sorted result stored at: /" in text_of(over_mcp[9])
    log = calls(server, "cmp-mcp")
    assert [(c["tool"], c["surface"]) for c in log] == [(tool, "mcp") for tool, _ in STEPS]
    assert [c["text"] for c in log] == [text_of(r) for r in over_mcp]


def test_unknown_tool_is_an_error_result(server):
    async def main():
        async with connect(server, "unknown") as client:
            return await client.call_tool("rm", {"path": "."})

    result = anyio.run(main)
    assert result.is_error is True
    assert text_of(result) == (
        'Error: unknown tool "rm"; available tools: list, glob, find, grep, read, write, edit, edit_cells, replace, move, list_dir'
    )
    assert value_of(result)["code"] == "TOOL_UNKNOWN"


def test_default_session_and_the_session_query(server):
    async def main():
        async with connect(server) as client:
            await client.call_tool("list", {"path": "src"})
        async with connect(server, "") as client:
            await client.call_tool("list", {"path": "docs"})

    before = len(calls(server, "default"))
    anyio.run(main)
    log = calls(server, "default")[before:]
    assert [(c["args"], c["surface"]) for c in log] == [({"path": "src"}, "mcp"), ({"path": "docs"}, "mcp")]


def test_gate_is_shared_between_mcp_and_rest(server):
    root = server.root
    (root / "gate").mkdir(exist_ok=True)
    (root / "gate/a.txt").write_text("alpha\n")
    (root / "gate/b.txt").write_text("beta\n")

    async def mcp_read_then_rest_edit():
        async with connect(server, "shared-1") as client:
            refused = await client.call_tool(
                "edit", {"file_path": "gate/a.txt", "old_string": "alpha", "new_string": "x"}
            )
            assert text_of(refused) == 'Error: cannot write "gate/a.txt": read it first in this session'
            await client.call_tool("read", {"file_path": "gate/a.txt"})
        edited = server.tool("edit", "shared-1", file_path="gate/a.txt", old_string="alpha", new_string="ALPHA")
        assert edited["text"].split("\n")[0] == "The file gate/a.txt has been updated successfully.", edited

    async def rest_read_then_mcp_edit():
        server.tool("read", "shared-2", file_path="gate/b.txt")
        other = server.tool("edit", "shared-3", file_path="gate/b.txt", old_string="beta", new_string="x")
        assert other["isError"] is True  # another session has not read it
        async with connect(server, "shared-2") as client:
            return await client.call_tool(
                "edit", {"file_path": "gate/b.txt", "old_string": "beta", "new_string": "BETA"}
            )

    anyio.run(mcp_read_then_rest_edit)
    result = anyio.run(rest_read_then_mcp_edit)
    assert text_of(result).split("\n")[0] == "The file gate/b.txt has been updated successfully."
    assert (root / "gate/a.txt").read_text() == "ALPHA\n" and (root / "gate/b.txt").read_text() == "BETA\n"
    assert [(c["tool"], c["surface"]) for c in calls(server, "shared-1")] == [
        ("edit", "mcp"),
        ("read", "mcp"),
        ("edit", "rest"),
    ]
    assert [(c["tool"], c["surface"]) for c in calls(server, "shared-2")] == [("read", "rest"), ("edit", "mcp")]


def test_spill_locators_are_readable_through_mcp_read(server):
    async def main():
        async with connect(server, "spill-owner") as client:
            grep = await client.call_tool("grep", {"pattern": "hello"})
            locator = grep.structured_content["spill"]
            page = await client.call_tool("read", {"file_path": locator, "offset": 2, "limit": 3})
        async with connect(server, "spill-other") as client:
            other = await client.call_tool("read", {"file_path": locator})
        return locator, page, other

    reset_cmp(server.root)
    locator, page, other = anyio.run(main)
    assert locator.startswith("/") and locator.endswith("-grep-results.txt")
    status, rest_page = server.request("GET", f"dsh/api/spill?session=spill-owner&locator={locator}&offset=2&limit=3")
    assert status == 200
    assert text_of(page) == rest_page["text"]
    assert page.is_error is False and "\n2: " in text_of(page) and "\n4: " in text_of(page)
    # another session's read of the locator is answered as REST answers it
    assert text_of(other) == server.tool("read", "spill-other", file_path=locator)["text"]


def test_a_write_too_large_for_the_body_limit_is_refused_before_it_runs(server):
    async def main():
        async with connect(server, "huge") as client:
            with pytest.raises(MCPError):
                await client.call_tool("write", {"file_path": "huge.txt", "content": "x" * (11 * 2**20)})

    anyio.run(main)
    assert not (server.root / "huge.txt").exists()
    assert calls(server, "huge") == []


def test_raw_protocol_session_id_sse_get_and_delete(server):
    """What the transport answers on the wire, through the tornado bridge."""
    headers = {
        "Authorization": f"token {server.token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    with httpx2.Client(headers=headers, timeout=30) as http:
        reply = http.post(mcp_url(server, "raw"), json=init)
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        session_id = reply.headers["mcp-session-id"]
        assert "event: message" in reply.text and '"protocolVersion":"2025-06-18"' in reply.text
        with_id = {**headers, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-06-18"}
        note = http.post(
            mcp_url(server, "raw"), headers=with_id, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        assert (note.status_code, note.content) == (202, b"")
        call = http.post(
            mcp_url(server, "raw"),
            headers=with_id,
            json={
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "list", "arguments": {"path": "src"}},
            },
        )
        assert call.status_code == 200 and "(2 entries: 1 directory, 1 file)" in call.text
        started = time.monotonic()
        with http.stream("GET", mcp_url(server, "raw"), headers={**with_id, "Accept": "text/event-stream"}) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
        assert time.monotonic() - started < 5  # the headers do not wait for the first event
        unknown = http.post(
            mcp_url(server, "raw"),
            headers={**with_id, "Mcp-Session-Id": "nope"},
            json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
        )
        assert unknown.status_code == 404
        gone = http.delete(mcp_url(server, "raw"), headers=with_id)
        assert gone.status_code == 200
        after = http.post(
            mcp_url(server, "raw"), headers=with_id, json={"jsonrpc": "2.0", "id": 4, "method": "tools/list"}
        )
        assert after.status_code == 404


def test_a_client_without_cookies_keeps_its_session(server):
    """Jupyter names a token-only client anew on each request; its MCP session must still work."""
    headers = {
        "Authorization": f"token {server.token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    reply = httpx2.post(mcp_url(server, "cookieless"), headers=headers, json=init, timeout=30)
    assert reply.cookies  # Jupyter offered a login cookie, which this client never sends back
    with_id = {**headers, "Mcp-Session-Id": reply.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
    note = httpx2.post(
        mcp_url(server, "cookieless"),
        headers=with_id,
        timeout=30,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
    )
    assert note.status_code == 202
    call = httpx2.post(
        mcp_url(server, "cookieless"),
        headers=with_id,
        timeout=30,
        json={
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "list", "arguments": {"path": "src"}},
        },
    )
    assert call.status_code == 200, call.text
    assert "(2 entries: 1 directory, 1 file)" in call.text
    with httpx2.stream("GET", mcp_url(server, "cookieless"), headers=with_id, timeout=30) as stream:
        assert stream.status_code == 200
    assert httpx2.delete(mcp_url(server, "cookieless"), headers=with_id, timeout=30).status_code == 200


def test_a_second_client_fastmcp_smoke(server):
    if sys.version_info < (3, 11):
        pytest.skip("fastmcp needs Python 3.11 or newer (the test extra installs it only there)")
    from fastmcp import Client
    from fastmcp.client.transports import StreamableHttpTransport

    async def main():
        transport = StreamableHttpTransport(
            mcp_url(server, "fastmcp"), headers={"Authorization": f"token {server.token}"}
        )
        async with Client(transport) as client:
            tools = await client.list_tools()
            listed = await client.call_tool("list", {"path": "src"})
            failed = await client.call_tool("read", {"file_path": "nope.txt"}, raise_on_error=False)
            return tools, listed, failed

    tools, listed, failed = anyio.run(main)
    _, rest_tools = server.request("GET", "dsh/api/tools")
    assert [(t.name, t.input_schema) for t in tools] == [(t["name"], t["inputSchema"]) for t in rest_tools]
    want = server.tool("list", "fastmcp-rest", path="src")
    assert listed.content[0].text == want["text"]
    assert listed.structured_content == want["value"]
    assert failed.is_error is True and failed.content[0].text == 'Error: cannot read "nope.txt": not found'


def test_the_sdks_auto_client_speaks_the_newest_protocol_too(server):
    """``mcp.Client`` first tries server/discover (2026-07-28): the same tools and texts there."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def main():
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"token {server.token}"}) as http,
            Client(streamable_http_client(mcp_url(server, "auto"), http_client=http)) as client,
        ):
            tools = await client.list_tools()
            result = await client.call_tool("read", {"file_path": "notes.txt"})
            return tools, result

    tools, result = anyio.run(main)
    assert [t.name for t in tools.tools][:2] == ["list", "glob"]
    assert text_of(result) == server.tool("read", "auto-rest", file_path="notes.txt")["text"]
    assert isinstance(result, types.CallToolResult)
