"""The call policy on every surface, run against a real server whose authorizer refuses writing.

The server (a real ``jupyter server`` subprocess) lets its token read but not write ``contents``;
its REST routes and its MCP endpoint must refuse the same things with the same words. Beside it,
the stdio MCP server runs on the same root and the same state file with hidden files shown, as a
local agent would: what it read must not reach the server's read-only caller through the shared
call log or saved results. Every case asserts what the reader received and what is on disk.
"""

from __future__ import annotations

import json
import subprocess
import sys

import httpx2
import pytest
from servers import start_server

from dsh_jupyter import Workspace
from dsh_jupyter.core.policy import ANONYMOUS

pytestmark = pytest.mark.slow

AUTHORIZER = """
from jupyter_server.auth.authorizer import Authorizer

class ReadOnly(Authorizer):
    def is_authorized(self, handler, user, action, resource):
        return not (resource == "contents" and action == "write")

c.ServerApp.authorizer_class = ReadOnly
"""
SECRET = "ssh-ed25519-PRIVATE-hunter2"
TREE = {
    "notes.txt": "hello notes\n",
    ".ssh": {"id_ed25519": SECRET + "\n"},
    "many": {f"f{i:02}.txt": f"hello {i}\n" for i in range(30)},
}
WRITE_REFUSED = "User is not authorized to write on resource: contents."
SESSION_REFUSED = "a caller without contents:write cannot create sessions; use an existing session or default"
QUOTA = 2000
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def reader_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("policy")
    (tmp / "jupyter-config").mkdir()
    (tmp / "jupyter-config" / "jupyter_server_config.py").write_text(AUTHORIZER)
    srv = start_server(
        tmp,
        TREE,
        extra_args=[
            "--DshJupyter.glob_max_results=3",
            "--DshJupyter.grep_max_matches=3",
            f"--DshJupyter.spill_max_bytes_read_only={QUOTA}",
            "--DshJupyter.call_log_max_bytes_read_only=20000",
            "--DshJupyter.mcp_json_response=True",
        ],
    )
    try:
        yield srv
    finally:
        srv.stop()


def owner(server) -> Workspace:
    """The server's owner, as a notebook of that server would be: same root, state and spill root."""
    return Workspace(
        server.root,
        state_path=server.state_path,
        spill_root=str(server.tmp / "dsh-spills"),
        allow_hidden=False,
        glob_max_results=3,
        grep_max_matches=3,
    )


def rest(server, tool: str, args: dict, session: str | None = None) -> tuple[int, dict]:
    body = {"args": args} if session is None else {"session": session, "args": args}
    return server.request("POST", f"dsh/api/tools/{tool}", body)


def mcp(server, method: str, params: dict, session: str | None = None) -> httpx2.Response:
    url = server.url + "dsh/mcp" + (f"?session={session}" if session else "")
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx2.post(url, headers={**ACCEPT, "Authorization": f"token {server.token}"}, json=body, timeout=60)


def mcp_call(server, tool: str, args: dict, session: str | None = None) -> httpx2.Response:
    return mcp(server, "tools/call", {"name": tool, "arguments": args}, session)


INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}


def mcp_session_call(server, tool: str, args: dict) -> dict:
    """A whole MCP exchange, as a client makes it: initialize, initialized, one tools/call; its result."""
    url = server.url + "dsh/mcp"
    headers = {**ACCEPT, "Authorization": f"token {server.token}"}
    init = httpx2.post(
        url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}, timeout=60
    )
    assert init.status_code == 200, init.text
    headers["Mcp-Session-Id"] = init.headers["mcp-session-id"]
    headers["MCP-Protocol-Version"] = "2025-06-18"
    httpx2.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, timeout=60)
    reply = httpx2.post(
        url,
        headers=headers,
        timeout=60,
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": args}},
    )
    assert reply.status_code == 200, reply.text
    return reply.json()["result"]


def refused(surface: str, server, tool: str, args: dict, session: str | None = None) -> str:
    """The refusal's message on ``surface`` (asserting it is a 403 with the FORBIDDEN code)."""
    if surface == "rest":
        status, data = rest(server, tool, args, session)
        assert status == 403, (status, data)
        assert data["code"] == "FORBIDDEN"
        return data["message"]
    reply = mcp_call(server, tool, args, session) if session is None else mcp(server, "initialize", INIT, session)
    assert reply.status_code == 403, reply.text
    error = reply.json()["error"]
    assert error["code"] == -32003 and error["data"] == {"code": "FORBIDDEN"}
    return error["message"]


@pytest.mark.parametrize("surface", ["rest", "mcp"])
def test_a_reader_may_not_write_on_any_surface(reader_server, surface):
    server = reader_server
    for tool, args in [
        ("write", {"file_path": "planted.txt", "content": "x"}),
        ("edit", {"file_path": "notes.txt", "old_string": "hello", "new_string": "bye"}),
        ("move", {"source": "notes.txt", "destination": "planted.txt"}),
    ]:
        assert refused(surface, server, tool, args) == WRITE_REFUSED
    assert not (server.root / "planted.txt").exists()
    assert (server.root / "notes.txt").read_text() == "hello notes\n"


@pytest.mark.parametrize("surface", ["rest", "mcp"])
def test_a_reader_may_not_create_sessions_on_any_surface(reader_server, surface):
    server = reader_server
    name = f"made-by-reader-{surface}"
    assert refused(surface, server, "list", {}, session=name) == SESSION_REFUSED
    assert Workspace(server.root, state_path=server.state_path).session_info(name) is None
    # default, and a session its owner made, are the reader's to use
    owner(server).create_session(f"shared-{surface}")
    for session in ("default", f"shared-{surface}"):
        if surface == "rest":
            status, data = rest(server, "list", {}, session)
            assert status == 200 and not data["isError"], data
        else:
            assert mcp(server, "initialize", INIT, session).status_code == 200


def test_token_only_readers_share_one_quota_and_never_push_out_the_owners_result(reader_server):
    server = reader_server
    mine = owner(server).run("grep", pattern="hello")
    assert mine.value["spill"]
    for i in range(17):  # each request is a new anonymous Jupyter user
        if i % 2:
            status, data = rest(server, "glob", {"pattern": "*.txt"})
            assert status == 200 and not data["isError"], data
        else:
            assert mcp_session_call(server, "glob", {"pattern": "*.txt"})["isError"] is False
    ws = owner(server)
    spills = ws.spill_list()
    readers = [s for s in spills if s["user"] == ANONYMOUS]
    users = {c["user"] for c in ws.calls(limit=1000)["calls"] if c["surface"] in ("rest", "mcp")}
    assert len(users) > 1  # Jupyter named them all differently ...
    assert readers and sum(s["size"] for s in readers) <= QUOTA  # ... and they shared one quota
    assert mine.value["spill"] in [s["locator"] for s in spills]


def _stdio(server, *calls: tuple[str, dict]) -> list[dict]:
    """Calls through the stdio server on the server's root and state file, hidden files shown."""
    messages = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}]
    messages += [
        {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": t, "arguments": a}}
        for i, (t, a) in enumerate(calls, start=1)
    ]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dsh_jupyter.mcp",
            "--root",
            str(server.root),
            "--state-path",
            str(server.state_path),
            f"--spill_root={server.tmp / 'dsh-spills'}",
            "--grep_max_matches=1",
            "--session=agent",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=server.env,
    )
    try:
        replies = []
        for message in messages:  # one at a time: closing stdin early would cancel a running search
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            replies.append(json.loads(proc.stdout.readline()))
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert [r["id"] for r in replies] == list(range(len(messages)))
    return [r["result"] for r in replies[1:]]


def test_what_a_wider_surface_read_never_reaches_a_reader_through_the_shared_state(reader_server):
    server = reader_server
    owner(server).create_session("agent")  # the reader may use it: its owner made it
    read, grep = _stdio(server, ("read", {"file_path": ".ssh/id_ed25519"}), ("grep", {"pattern": "hunter2|hello 1"}))
    assert SECRET in read["content"][0]["text"] and "hunter2" in grep["content"][0]["text"]
    locator = grep["structuredContent"]["spill"]
    assert locator
    status, log = server.request("GET", "dsh/api/sessions/agent/calls")
    assert status == 200
    assert "hunter2" not in json.dumps(log)
    assert [(c["tool"], c["withheld"]) for c in log["calls"]] == [
        ("read", "it was made where hidden files are shown, and this surface hides them"),
        ("grep", "it was made where hidden files are shown, and this surface hides them"),
    ]
    assert all(c["args"] == {} and c["text"] == "" for c in log["calls"])
    status, spills = server.request("GET", "dsh/api/sessions/agent/spills")
    assert status == 200 and "hunter2" not in json.dumps(spills)
    assert [s.get("withheld") for s in spills] == [
        "it was made where hidden files are shown, and this surface hides them"
    ]
    status, page = server.request("GET", f"dsh/api/spill?session=agent&locator={locator}")
    assert status == 200 and page["isError"] and "hunter2" not in json.dumps(page)
    status, data = rest(server, "read", {"file_path": locator}, "agent")
    assert status == 200 and data["value"]["code"] == "FS_HIDDEN" and "hunter2" not in json.dumps(data)


def test_a_reader_sees_how_the_tools_are_confined_but_not_where_the_state_is(reader_server):
    server = reader_server
    status, data = server.request("GET", "dsh/api/status")
    assert status == 200
    assert "path" not in data["state"] and data["state"]["available"] is True
    text = json.dumps(data)
    assert str(server.tmp) not in text and str(server.root) not in text
    assert owner(server).status()["state"]["path"] == str(server.state_path)  # its owner may know
