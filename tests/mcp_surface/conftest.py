"""Fixtures for the MCP surface: a real ``jupyter server`` subprocess and the SDK's own clients.

The server is started by ``tests/servers.py`` (127.0.0.1, a token, Jupyter's folders and the dsh
state under a temporary folder), over ``TREE`` unless a test brings its own. Clients are the official SDK's
``ClientSession`` over ``streamable_http_client`` (HTTP) and ``stdio_client`` (stdio); each test
drives them with ``anyio.run`` so no event-loop plugin is involved.

(The folder is not called ``mcp``: ``tests/`` is on ``sys.path``, and a ``tests/mcp`` package
would shadow the SDK.)
"""

from __future__ import annotations

import os
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from servers import JupyterProcess, start_server
from trees import TREE

# Small caps, so over-cap pages (sampling, spills) need only a few files.
CAPS = ["--DshJupyter.glob_max_results=5", "--DshJupyter.grep_max_matches=5"]


def start_mcp_server(tmp: Path, extra_args: list[str] = (), tree: dict = TREE) -> JupyterProcess:
    """A real server over ``tree`` with the small caps (``CAPS``) the MCP tests page with."""
    return start_server(tmp, tree, extra_args=[*CAPS, *extra_args])


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """One real server for the MCP tests (each test uses its own dsh sessions and files)."""
    srv = start_mcp_server(tmp_path_factory.mktemp("mcp-server"))
    try:
        yield srv
    finally:
        srv.stop()


def mcp_url(server: JupyterProcess, session: str | None = None) -> str:
    return server.url + "dsh/mcp" + (f"?session={session}" if session is not None else "")


@asynccontextmanager
async def connect(
    server: JupyterProcess,
    session: str | None = None,
    token: str | None = "default",
    initialize: bool = True,
    scheme: str = "token",
):
    """An initialized SDK ``ClientSession`` on ``/dsh/mcp`` (``token=None``: no Authorization header)."""
    token = server.token if token == "default" else token
    headers = {} if token is None else {"Authorization": f"{scheme} {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(mcp_url(server, session), http_client=http) as (read, write),
        ClientSession(read, write) as client,
    ):
        if initialize:
            await client.initialize()
        yield client


def calls(server: JupyterProcess, session: str) -> list[dict]:
    """The session's call log ([] when the session does not exist)."""
    status, data = server.request("GET", f"dsh/api/sessions/{session}/calls?limit=1000")
    if status == 404:
        return []
    assert status == 200, (status, data)
    return data["calls"]


def text_of(result) -> str:
    """The one text item of a CallToolResult (and nothing else is there)."""
    assert [c.type for c in result.content] == ["text"], result.content
    return result.content[0].text


def value_of(result) -> dict:
    """A CallToolResult's dsh value: ``structuredContent`` of a success, ``_meta`` of an error.

    An error carries no ``structuredContent`` (clients on the TypeScript SDK would check it
    against the success schema and raise), and a success no error in ``_meta``.
    """
    meta = (result.meta or {}).get("dsh-jupyter/error")
    if result.is_error:
        assert result.structured_content is None, result.structured_content
        return meta
    assert meta is None, meta
    return result.structured_content


def descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, command name) of every live descendant of ``pid`` (from /proc)."""
    children: dict[int, list[tuple[int, str]]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] == "Z":  # a zombie has already exited
            continue
        children.setdefault(int(fields[1]), []).append((int(entry), comm))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child[0])
    return out


def rg_processes(pid: int) -> list[int]:
    return [p for p, comm in descendants(pid) if comm == "rg"]
