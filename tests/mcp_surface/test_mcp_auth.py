"""``/dsh/mcp`` refuses what Jupyter refuses: no token, a wrong token, and writes a user may not make.

Real servers: one with the default authorizer, one whose authorizer (a config file in the
server's Jupyter config dir) allows everything but writing contents, one that allows nothing on
contents. A refused request runs nothing: the files and the call log show it.
"""

from __future__ import annotations

import json
import sys

import anyio
import httpx2
import pytest
from mcp import MCPError

from dsh_jupyter import Workspace

from .conftest import calls, connect, mcp_url, start_mcp_server, text_of

if sys.version_info < (3, 11):  # anyio brings the backport there
    from exceptiongroup import BaseExceptionGroup

pytestmark = pytest.mark.slow

AUTHORIZER_CONFIG = """
from jupyter_server.auth.authorizer import Authorizer

class DshTestAuthorizer(Authorizer):
    def is_authorized(self, handler, user, action, resource):
        return {refuse}

c.ServerApp.authorizer_class = DshTestAuthorizer
"""
READ_ONLY = 'not (resource == "contents" and action == "write")'
NO_CONTENTS = 'resource != "contents"'


def _with_authorizer(tmp_path_factory, name: str, rule: str):
    tmp = tmp_path_factory.mktemp(name)
    config = tmp / "jupyter-config"
    config.mkdir()
    (config / "jupyter_server_config.py").write_text(AUTHORIZER_CONFIG.format(refuse=rule))
    return start_mcp_server(tmp)


@pytest.fixture(scope="module")
def read_only_server(tmp_path_factory):
    srv = _with_authorizer(tmp_path_factory, "read-only", READ_ONLY)
    try:
        yield srv
    finally:
        srv.stop()


def _raw_call(server, token, tool: str, args: dict, session: str) -> httpx2.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"token {token}"
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": args}}
    return httpx2.post(mcp_url(server, session), headers=headers, json=body, timeout=30)


@pytest.mark.parametrize("token", [None, "wrong-token"], ids=["no-token", "wrong-token"])
def test_no_valid_token_is_refused_and_nothing_runs(server, token):
    session = f"intruder-{token}"

    async def main():
        with pytest.raises(Exception) as caught:
            async with connect(server, session, token=token) as client:
                await client.call_tool("write", {"file_path": "planted.txt", "content": "x"})
        return caught.value

    error = anyio.run(main)
    assert server.token not in repr(error)
    for tool, args in [("write", {"file_path": "planted.txt", "content": "x"}), ("list", {})]:
        reply = _raw_call(server, token, tool, args, session)
        assert reply.status_code == 403, reply.text
        assert server.token not in reply.text and str(server.root) not in reply.text
    for method in ("GET", "DELETE"):
        headers = {} if token is None else {"Authorization": f"token {token}"}
        assert httpx2.request(method, mcp_url(server, session), headers=headers).status_code == 403
    assert not (server.root / "planted.txt").exists()
    assert calls(server, session) == []
    _, sessions = server.request("GET", "dsh/api/sessions")
    assert session not in [s["id"] for s in sessions]


def _leaf(error: BaseException) -> BaseException:
    """The one exception inside the task groups' ``ExceptionGroup`` wrappers."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


TOKEN_MESSAGE = (
    'missing or invalid Jupyter token: send the server\'s token in the header "Authorization: token <TOKEN>"'
)


@pytest.mark.parametrize("token", [None, "wrong-token"], ids=["no-token", "wrong-token"])
def test_a_refused_token_is_told_which_header_to_send(server, token):
    """Not Jupyter's "'_xsrf' argument missing from POST": a client with a bad token is not a browser."""
    headers = {} if token is None else {"Authorization": f"token {token}"}
    reply = _raw_call(server, token, "list", {}, "default")
    assert reply.status_code == 403
    assert reply.json() == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32001, "message": TOKEN_MESSAGE, "data": {"code": "TOKEN_REQUIRED"}},
    }
    assert "_xsrf" not in reply.text
    for method in ("GET", "DELETE"):
        reply = httpx2.request(method, mcp_url(server), headers=headers, timeout=30)
        assert reply.status_code == 403
        assert reply.json()["error"]["message"] == TOKEN_MESSAGE

    async def main():
        with pytest.raises(Exception) as caught:
            async with connect(server, token=token):
                pass
        return caught.value

    error = _leaf(anyio.run(main))
    assert isinstance(error, MCPError) and error.error.message == TOKEN_MESSAGE  # the SDK client passes it on


def test_a_browser_cookie_without_xsrf_keeps_jupyters_rule(server):
    """A logged-in browser (cookie) that leaves out the XSRF token gets Jupyter's own refusal."""
    with httpx2.Client(base_url=server.url, timeout=30) as browser:
        assert browser.get(f"?token={server.token}").status_code in (200, 302)  # sets the login cookie
        assert browser.cookies, "the token URL set no cookie"
        reply = browser.post(
            "dsh/mcp",
            headers={"Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        )
    assert reply.status_code == 403
    assert "_xsrf" in reply.text and TOKEN_MESSAGE not in reply.text


@pytest.mark.parametrize(
    "session, rule",
    [
        ("x" * 201, "session must be a non-empty string of at most 200 characters"),
        ("bad%0Aname", "session must not contain control characters"),
    ],
    ids=["too-long", "control-character"],
)
def test_a_session_name_that_can_never_work_is_refused_at_initialize(server, session, rule):
    async def main():
        with pytest.raises(Exception) as caught:
            async with connect(server, session):
                pass
        return caught.value

    error = _leaf(anyio.run(main))
    assert error.error.message == f"invalid ?session= in the MCP URL: {rule}"
    assert error.error.code == -32602
    status, sessions = server.request("GET", "dsh/api/sessions")
    assert status == 200 and not [s for s in sessions if s["id"].startswith(("xxx", "bad"))]


def test_a_bearer_token_works_as_well(server):
    """Clients that only know "Authorization: Bearer ..." (Codex's bearer_token_env_var) get in too."""

    async def main():
        async with connect(server, "bearer", scheme="Bearer") as client:
            return await client.call_tool("list", {"path": "src"})

    assert anyio.run(main).is_error is False
    assert [c["tool"] for c in calls(server, "bearer")] == ["list"]


def test_read_only_user_reads_but_cannot_write_or_edit(read_only_server):
    """The reader uses a session its owner made (a reader may not create one) and cannot write in it."""
    server = read_only_server
    Workspace(server.root, state_path=server.state_path, spill_root=str(server.tmp / "dsh-spills")).create_session("ro")

    async def main():
        async with connect(server, "ro") as client:
            listed = await client.call_tool("list", {"path": "src"})
            read = await client.call_tool("read", {"file_path": "notes.txt"})
            refused = []
            for tool, args in [
                ("write", {"file_path": "notes.txt", "content": "gone"}),
                ("edit", {"file_path": "notes.txt", "old_string": "first", "new_string": "x"}),
                ("write", {"file_path": "fresh.txt", "content": "new"}),
                ("move", {"source": "notes.txt", "destination": "moved.txt"}),
            ]:
                with pytest.raises(MCPError) as caught:
                    await client.call_tool(tool, args)
                refused.append(caught.value)
            after = await client.call_tool("grep", {"pattern": "hello", "path": "src"})
            return listed, read, refused, after

    listed, read, refused, after = anyio.run(main)
    assert not listed.is_error and not read.is_error and not after.is_error
    assert text_of(listed).endswith("(2 entries: 1 directory, 1 file)\n</content>")
    assert [e.message for e in refused] == ["User is not authorized to write on resource: contents."] * 4
    assert (server.root / "notes.txt").read_text() == "first line\nsecond line\n"
    assert not (server.root / "fresh.txt").exists() and not (server.root / "moved.txt").exists()
    assert [c["tool"] for c in calls(server, "ro")] == ["list", "read", "grep"]
    reply = _raw_call(
        server, server.token, "edit", {"file_path": "notes.txt", "old_string": "first", "new_string": "x"}, "ro"
    )
    assert reply.status_code == 403
    assert json.loads(reply.text) == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {
            "code": -32003,
            "message": "User is not authorized to write on resource: contents.",
            "data": {"code": "FORBIDDEN"},
        },
    }


def test_user_without_contents_read_cannot_even_initialize(tmp_path_factory):
    server = _with_authorizer(tmp_path_factory, "no-contents", NO_CONTENTS)
    try:

        async def main():
            with pytest.raises(Exception) as caught:
                async with connect(server, "none"):
                    pass
            return caught.value

        error = _leaf(anyio.run(main))
        assert isinstance(error, MCPError), repr(error)
        assert error.error.message == "User is not authorized to read on resource: contents."
        assert _raw_call(server, server.token, "list", {}, "none").status_code == 403
        status, _ = server.request("GET", "dsh/api/tools")
        assert status == 403
        # the REST routes are refused too, so look in the state file itself
        assert Workspace(server.root, state_path=server.state_path).session_info("none") is None
    finally:
        server.stop()
