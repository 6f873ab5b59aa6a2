"""Fixtures for the MCP surface: a real ``jupyter server`` subprocess and the SDK's own clients.

The server is started by ``tests/servers.py`` (127.0.0.1, a token, Jupyter's folders and the dsh
state under a temporary folder), over ``TREE`` unless a test brings its own. Clients are the official SDK's
``ClientSession`` over ``streamable_http_client`` (HTTP) and ``stdio_client`` (stdio); each test
drives them with ``anyio.run`` so no event-loop plugin is involved.

(The folder is not called ``mcp``: ``tests/`` is on ``sys.path``, and a ``tests/mcp`` package
would shadow the SDK.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
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
    """The text item of a CallToolResult; after it comes nothing but, in a capped answer, the link to
    its saved result (named as the text names it)."""
    spill = None if result.is_error else (result.structured_content or {}).get("spill")
    assert [c.type for c in result.content] == (["text", "resource_link"] if spill else ["text"]), result.content
    if spill:
        assert result.content[1].name == spill.rsplit("/", 1)[1] and result.content[1].uri.endswith(
            result.content[1].name
        )
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


def make_slow_file(root) -> None:
    with open(root / "slow.txt", "wb") as f:
        f.write(b"text, so grep does not skip it as binary\n" * 400)
        f.truncate(50 * 2**30)  # sparse: no disk, and minutes to read through


class Lines:
    """The stdio server as a child process; every line it writes is kept, in order, by a reader thread."""

    def __init__(self, root, state_file, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dsh_jupyter.mcp", "--root", str(root), "--state-path", str(state_file), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.lines: list[dict] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(json.loads(line))

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self, request_id, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines:
                if line.get("id") == request_id:
                    return line
            time.sleep(0.05)
        raise AssertionError(f"no answer to {request_id}: {self.lines}")

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)

    def initialize(self, version: str = "2025-11-25") -> dict:
        client = {"name": "lines", "version": "0"}
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
        self.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": params})
        return self.answer("init")

    def ask(self, request_id, method: str, params: dict | None = None) -> dict:
        message: dict = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.answer(request_id)
