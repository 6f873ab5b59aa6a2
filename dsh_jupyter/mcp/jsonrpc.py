"""MCP over stdio: newline-delimited JSON-RPC 2.0 messages answered from a ``Workspace``.

Why it exists: an MCP client starts a stdio server when it launches, and some give up on a
handshake that takes seconds. Importing the official SDK takes over a second here (its protocol
models are built at import), which alone is twice the half-second budget from process start to
the first answered ``tools/call``. The stdio side of the protocol is small and stable — a
handshake that agrees on a version, ``ping``, ``tools/list``, ``tools/call`` (with progress
notifications when asked), ``resources/list``, ``resources/templates/list``, ``resources/read``
and the cancel notification — so this module speaks it directly, with the same tool list,
results, progress and resources as the SDK-based HTTP endpoint (from ``tools``, ``progress`` and
``resources``). The SDK's own clients (Python and
TypeScript), fastmcp and the Inspector drive it in the tests.

What it must never do: write anything but one JSON-RPC message per line to its output, run a tool
or read a file on the reading thread (a long grep would stop cancellation from being read),
answer a request the client cancelled, send a progress notification after its call's answer, or
let one bad message end the session.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import BinaryIO

import orjson

from .. import __version__
from ..core.policy import Caller
from ..core.result import json_bytes
from ..core.workspace import Workspace
from .progress import ThreadPump, Ticker, progress_token
from .resources import LINK_VERSIONS, ResourceError, list_resources, list_templates, read_resource
from .tools import call_result, instructions, tool_definitions

__all__ = ["HANDSHAKE_VERSIONS", "LATEST_VERSION", "StdioSession"]

log = logging.getLogger("dsh_jupyter.mcp")

SURFACE = "mcp"
SERVER_NAME = "dsh-jupyter"
# The protocol revisions reached through ``initialize``, oldest first (as the SDK lists them).
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = HANDSHAKE_VERSIONS[-1]

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603


def _error(request_id: object, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _valid_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class StdioSession:
    """One client's session: read messages, answer them, run tool calls on a small pool."""

    def __init__(self, workspace: Workspace, session: str, out: BinaryIO, max_workers: int = 4) -> None:
        self.workspace = workspace
        self.session = session
        self.out = out
        self._write_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="dsh-mcp-tool")
        self._running: dict[object, threading.Event] = {}  # request id -> cancel event
        self._cancelled: set[object] = set()
        self._lock = threading.Lock()
        self._tools: list[dict] | None = None
        self._version = LATEST_VERSION  # the protocol revision agreed at initialize
        self._caller = Caller(SURFACE)

    # -- the loop ----------------------------------------------------------------------------

    def serve(self, source: BinaryIO) -> None:
        """Answer every line of ``source`` until it ends, then cancel what still runs."""
        try:
            for line in source:
                if line.strip():
                    self.receive(line)
        finally:
            self.close()

    def close(self) -> None:
        """Stdin ended: stop running searches (rg is killed), let the rest answer, and wait for them."""
        with self._lock:
            for event in self._running.values():
                event.set()
        self._pool.shutdown(wait=True)

    def receive(self, line: bytes) -> None:
        """One line from the client: a message, or a batch of them (answered one by one)."""
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            self.send(_error(None, PARSE_ERROR, "Parse error: a line is not valid JSON"))
            return
        for item in message if isinstance(message, list) and message else [message]:
            self.dispatch(item)

    def dispatch(self, message: object) -> None:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.send(_error(None, INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message"))
            return
        method = message.get("method")
        if "id" not in message:  # a notification, or the client's answer to nothing we asked
            if method == "notifications/cancelled":
                self._cancel(message.get("params"))
            return
        request_id = message["id"]
        if not _valid_id(request_id) or not isinstance(method, str):
            if method is None and ("result" in message or "error" in message):
                return  # a response: this server sends no requests, so there is nothing to match
            self.send(
                _error(None, INVALID_REQUEST, "Invalid request: id must be a string or an integer and method a string")
            )
            return
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            self.send(_error(request_id, INVALID_PARAMS, "Invalid params: params must be an object"))
            return
        params = params or {}
        if method == "tools/call":
            self._call(request_id, params)
        elif method == "initialize":
            self.reply(request_id, self._initialize(params))
        elif method == "ping":
            self.reply(request_id, {})
        elif method == "tools/list":
            self.reply(request_id, {"tools": self.tools()})
        elif method == "resources/list":
            self._resources(
                request_id, lambda: {"resources": list_resources(self.workspace, self.session, self._caller)}
            )
        elif method == "resources/templates/list":
            self.reply(request_id, {"resourceTemplates": list_templates()})
        elif method == "resources/read":
            uri = params.get("uri")
            if not isinstance(uri, str):
                self.send(_error(request_id, INVALID_PARAMS, "Invalid params: uri must be a string"))
                return
            self._resources(request_id, lambda: read_resource(self.workspace, uri, self.session, self._caller))
        else:
            self.send(_error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}"))

    # -- methods -----------------------------------------------------------------------------

    def _initialize(self, params: dict) -> dict:
        asked = params.get("protocolVersion")
        version = asked if asked in HANDSHAKE_VERSIONS else LATEST_VERSION
        self._version = version
        client: dict = params["clientInfo"] if isinstance(params.get("clientInfo"), dict) else {}
        log.info("client %s %s, protocol %s", client.get("name", "?"), client.get("version", "?"), version)
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}, "resources": {"listChanged": False, "subscribe": False}},
            "serverInfo": {"name": SERVER_NAME, "version": __version__},
            "instructions": instructions(self.workspace.registry),
        }

    def tools(self) -> list[dict]:
        if self._tools is None:
            self._tools = tool_definitions(self.workspace.registry)
        return self._tools

    def _call(self, request_id: object, params: dict) -> None:
        name = params.get("name")
        if not isinstance(name, str):
            self.send(_error(request_id, INVALID_PARAMS, "Invalid params: name must be a string"))
            return
        arguments = params.get("arguments")
        cancel = threading.Event()
        with self._lock:
            self._running[request_id] = cancel
            self._cancelled.discard(request_id)
        admission = self.workspace.admit(name, self.session, self._caller)  # the wait starts now
        token = progress_token(params)
        ticker = Ticker(name if name in self.workspace.registry else "call") if token is not None else None

        def run() -> None:
            pump = None if ticker is None else ThreadPump(ticker, self._progress_sender(token), cancel)
            try:
                result = self.workspace.call(
                    name,
                    {} if arguments is None else arguments,
                    cancel=cancel,
                    admission=admission,
                    progress=None if ticker is None else ticker.report,
                )
            finally:
                if pump is not None:
                    pump.stop()  # joined: no notification after the answer
                with self._lock:
                    self._running.pop(request_id, None)
                    cancelled = request_id in self._cancelled
                    self._cancelled.discard(request_id)
            if not cancelled:
                self.reply(request_id, call_result(result, links=self._version in LINK_VERSIONS))

        self._pool.submit(run)

    def _progress_sender(self, token: object):
        def send(progress: float, message: str) -> None:
            params = {"progressToken": token, "progress": progress, "message": message}
            self.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

        return send

    def _resources(self, request_id: object, answer) -> None:
        """Answer a resources request on the pool (it reads the state and files)."""

        def run() -> None:
            try:
                self.reply(request_id, answer())
            except ResourceError as exc:
                self.send({"jsonrpc": "2.0", "id": request_id, "error": exc.error()})
            except Exception:  # a bug: the log has it, the client a one-line error
                log.exception("a resources request failed")
                self.send(_error(request_id, INTERNAL_ERROR, "Internal error"))

        self._pool.submit(run)

    def _cancel(self, params: object) -> None:
        if not isinstance(params, dict):
            return
        request_id = params.get("requestId")
        with self._lock:
            event = self._running.get(request_id) if _valid_id(request_id) else None
            if event is not None:
                self._cancelled.add(request_id)
                event.set()  # the core kills ripgrep's process group

    # -- output ------------------------------------------------------------------------------

    def reply(self, request_id: object, result: dict) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def send(self, message: dict) -> None:
        data = json_bytes(message) + b"\n"
        with self._write_lock:
            try:
                self.out.write(data)
                self.out.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass  # the client stopped reading; its next read or our stdin's end closes us
