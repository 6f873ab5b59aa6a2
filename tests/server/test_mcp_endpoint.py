"""``/dsh/mcp`` in an in-process server: decorated like every REST handler, XSRF for browser POSTs.

The MCP protocol itself is tested with the SDK's clients against a real server in
``tests/mcp_surface/``; these are the Jupyter-side rules that need the pytest-jupyter server.
"""

from __future__ import annotations

import json
import warnings

import pytest

from dsh_jupyter import Workspace
from dsh_jupyter.server.mcp_bridge import McpHandler, called_tools, route_table

from .test_server_auth import LOCKED, _browser_login

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def _post(jp_fetch, body, headers):
    response = await jp_fetch(
        "dsh",
        "mcp",
        method="POST",
        body=json.dumps(body),
        headers=headers,
        raise_error=False,
        params={"session": "browser"},
    )
    return response.code, response.body.decode("utf-8", "replace"), response.headers


def test_every_mcp_method_is_authenticated_and_authorized():
    assert route_table() == [("/dsh/mcp", McpHandler)]
    for method in ("get", "post", "delete"):
        fn = getattr(McpHandler, method)
        assert fn.__wrapped__.__qualname__ == f"McpHandler.{method}"  # @web.authenticated
        assert fn.__wrapped__.__wrapped__.__qualname__ == f"McpHandler.{method}"  # @authorized


async def test_a_locked_down_server_warns_about_no_mcp_route(jp_configurable_serverapp, jp_server_config):
    jp_server_config["ServerApp"]["allow_unauthenticated_access"] = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jp_configurable_serverapp(config=jp_server_config)
    assert not [w for w in caught if "without @allow_unauthenticated" in str(w.message)]


@pytest.mark.server_config(LOCKED)
async def test_browser_post_needs_the_xsrf_token(jp_fetch, jp_root_dir, state_path, spill_root):
    jar = await _browser_login(jp_fetch)
    browser = {"Authorization": "", "Cookie": "; ".join(f"{k}={v}" for k, v in jar.items()), **MCP_HEADERS}
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "write", "arguments": {"file_path": "csrf.txt", "content": "x"}},
    }
    for body in (INIT, call):
        status, text, _ = await _post(jp_fetch, body, browser)
        assert status == 403 and "_xsrf" in text, text
    assert not (jp_root_dir / "csrf.txt").exists()
    ws = Workspace(jp_root_dir, state_path=state_path, spill_root=str(spill_root))
    assert ws.session_info("browser") is None
    status, text, headers = await _post(jp_fetch, INIT, {**browser, "X-XSRFToken": jar["_xsrf"]})
    assert status == 200, text
    assert headers["Content-Type"].startswith("text/event-stream") and headers["Mcp-Session-Id"]


async def test_body_over_the_limit_is_413_before_the_sdk_sees_it(jp_fetch):
    big = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "list", "arguments": {"path": "x" * (11 * 2**20)}},
    }
    status, text, _ = await _post(jp_fetch, big, MCP_HEADERS)
    assert status == 413, text
    assert json.loads(text)["error"]["data"]["code"] == "BODY_TOO_LARGE"


def test_called_tools_reads_single_messages_and_batches():
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "write", "arguments": {}}}
    assert called_tools(json.dumps(call).encode()) == ["write"]
    assert called_tools(json.dumps([call, {**call, "params": {"name": "edit"}}]).encode()) == ["write", "edit"]
    assert called_tools(json.dumps(INIT).encode()) == []
    assert called_tools(b"{not json") == []
    assert called_tools(json.dumps({"method": "tools/call", "params": {"name": 3}}).encode()) == []
