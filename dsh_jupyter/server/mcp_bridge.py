"""The Streamable HTTP MCP endpoint at ``<base_url>dsh/mcp``: the SDK's transport behind Jupyter auth.

Why it exists: MCP clients (Claude Code, Codex, Jupyter AI, ...) should reach the tools inside
the Jupyter server they already authenticate against, with no glue. The protocol is the official
SDK's: its low-level ``Server`` (built in ``dsh_jupyter.mcp.server``) and its
``StreamableHTTPSessionManager``, which speaks ASGI. Jupyter is tornado, so a thin bridge hands
each request to the manager after tornado and Jupyter have done what they do for every API
route: ``@web.authenticated`` + ``@authorized`` (token header, or cookie + XSRF), the origin check,
and here also the body limit and, for ``write``/``edit``, ``contents:write``. The SDK's answers
(a JSON body, an SSE stream, 202, its own 4xx) are relayed as they are, streamed chunk by chunk.

Why a bridge and not a mount: jupyter-server has no way to mount an ASGI app under its own
authentication; running the SDK's Starlette app on a second port would leave Jupyter's token,
cookies, authorizer and ``base_url`` behind.

What it must never do: reach the SDK before authentication and authorization have passed (a
refused request runs nothing), run a tool on the event loop (calls go to the extension's thread
pool), leave a search running after its client went away (the connection's close sets the
call's cancel event), or answer with a traceback, the token or the absolute root.
"""

from __future__ import annotations

import asyncio
import logging

import orjson
from jupyter_server.auth.decorator import authorized
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from tornado import web
from tornado.iostream import StreamClosedError

from ..core.errors import ToolError
from ..core.policy import Caller, CallRefused
from ..core.workspace import check_session_id
from ..mcp.server import FORBIDDEN, SURFACE, CallScope, build_server
from .handlers import ApiError, DshHandler, dumps

__all__ = ["PATH", "McpEndpoint", "McpHandler", "route_table"]

PATH = "/dsh/mcp"
log = logging.getLogger(__name__)

# Keys this module adds to the ASGI scope; the tool handler reads them back from ``ctx.request``.
_CANCEL, _CALLER = "dsh_jupyter.cancel", "dsh_jupyter.caller"
# JSON-RPC error codes (the server-defined range) for requests refused before the SDK sees them.
UNAUTHENTICATED, BAD_SESSION = -32001, -32602
# What a client that sent no token, or a wrong one, is told (never Jupyter's XSRF message: such a
# client is not a browser, and "'_xsrf' argument missing" sends its user looking in the wrong place).
TOKEN_REQUIRED = (
    'missing or invalid Jupyter token: send the server\'s token in the header "Authorization: token <TOKEN>"'
)
# Hop-by-hop and length headers are tornado's to write.
_SKIP_HEADERS = frozenset({"content-length", "transfer-encoding", "connection"})


def _scope_of(ctx: ServerRequestContext) -> CallScope:
    """The dsh session (``?session=``), cancel event and caller of the HTTP request behind ``ctx``."""
    request = ctx.request
    caller = request.scope.get(_CALLER) if request is not None else None
    if request is None or caller is None:  # not over HTTP, or not through the bridge: nothing was cleared
        return CallScope(caller=Caller(SURFACE, may_write=False))
    return CallScope(
        session=request.query_params.get("session") or None, cancel=request.scope.get(_CANCEL), caller=caller
    )


def called_tools(body: bytes) -> list[str]:
    """The tool names a request body asks to call (a JSON-RPC message or a batch of them)."""
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return []  # the SDK answers the parse error
    names = []
    for item in message if isinstance(message, list) else [message]:
        if isinstance(item, dict) and item.get("method") == "tools/call":
            params = item.get("params")
            if isinstance(params, dict) and isinstance(params.get("name"), str):
                names.append(params["name"])
    return names


class McpEndpoint:
    """The SDK server and session manager, run on the Jupyter server's event loop while it is up."""

    def __init__(self, workspace, executor, *, max_body_bytes: int, json_response: bool, search_executor=None) -> None:
        self.workspace = workspace

        async def submit(call, search: bool = False):
            # Searches on their own pool, as over REST: hung searches never delay list or read.
            pool = search_executor if search and search_executor is not None else executor
            return await asyncio.get_running_loop().run_in_executor(pool, call)

        self.server = build_server(workspace, submit, _scope_of)
        self.manager = StreamableHTTPSessionManager(
            app=self.server,
            json_response=json_response,
            max_request_body_size=max_body_bytes,
            # Host and Origin are checked by Jupyter (allow_remote_access, allow_origin) first.
            security_settings=None,
        )
        self._task: asyncio.Task | None = None
        self._ready: asyncio.Future | None = None
        self._stop: asyncio.Event | None = None

    async def handle(self, scope: dict, receive, send) -> None:
        await self._started()
        await self.manager.handle_request(scope, receive, send)

    async def _started(self) -> None:
        """Start the manager's task group on first use (the loop is not running at initialize)."""
        if self._task is None:
            loop = asyncio.get_running_loop()
            self._ready, self._stop = loop.create_future(), asyncio.Event()
            self._task = loop.create_task(self._run(self._ready, self._stop))
        assert self._ready is not None
        await asyncio.shield(self._ready)

    async def _run(self, ready: asyncio.Future, stop: asyncio.Event) -> None:
        try:
            async with self.manager.run():
                ready.set_result(None)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError("MCP stopped"))
            raise

    async def stop(self) -> None:
        """End every MCP session (the extension is stopping)."""
        if self._task is not None and self._stop is not None:
            self._stop.set()
            try:
                await asyncio.wait_for(self._task, 10)
            except Exception as exc:  # shutting down: log, never raise
                log.warning("dsh_jupyter: the MCP session manager did not stop cleanly: %r", exc)
        # sse-starlette leaves one shutdown watcher per event loop (it polls for uvicorn's exit,
        # which never comes here); end it, or the loop's close reports it as a pending task.
        for task in asyncio.all_tasks():
            if getattr(task.get_coro(), "__qualname__", "") == "_shutdown_watcher":
                task.cancel()


class McpHandler(DshHandler):
    """POST (JSON-RPC messages), GET (the server's SSE stream), DELETE (end a session)."""

    def initialize(self, name: str, **kwargs) -> None:
        super().initialize(name, **kwargs)
        self.gone = asyncio.Event()
        self.content_type = "application/json"  # until the SDK's response says otherwise

    def on_connection_close(self) -> None:
        super().on_connection_close()  # sets self.cancel: a running search is killed
        self.gone.set()

    def check_xsrf_cookie(self) -> None:
        """Nobody authenticated: say which header is missing. A cookie's request keeps Jupyter's XSRF rule.

        Jupyter checks XSRF before ``@web.authenticated`` runs, so a request with no token or a
        wrong one would otherwise be told that an ``_xsrf`` argument is missing.
        """
        if hasattr(self, "_jupyter_current_user") and not self.current_user:
            raise ApiError(403, "TOKEN_REQUIRED", TOKEN_REQUIRED)
        super().check_xsrf_cookie()

    def get_login_url(self) -> str:
        """``@web.authenticated`` found nobody (a GET or DELETE): the same answer as a POST."""
        raise ApiError(403, "TOKEN_REQUIRED", TOKEN_REQUIRED)

    def write_error(self, status_code: int, **kwargs) -> None:
        """Refusals as JSON-RPC error bodies, so an MCP client shows the reason, not only a status."""
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, ApiError):
            code, message = exc.code, exc.message
        elif isinstance(exc, web.HTTPError):
            code, message = "HTTP_ERROR", exc.reason or self._reason
            if exc.log_message:
                code, message = "HTTP_ERROR", exc.log_message % exc.args if exc.args else exc.log_message
        else:  # a bug: the server log has the traceback, the client never does
            code, message = "INTERNAL_ERROR", "internal server error"
        rpc = {"TOKEN_REQUIRED": UNAUTHENTICATED, "SESSION_INVALID": BAD_SESSION}.get(code, FORBIDDEN)
        self.finish(
            dumps(
                {
                    "jsonrpc": "2.0",
                    "id": self.request_id(),
                    "error": {"code": rpc, "message": message, "data": {"code": code}},
                }
            )
        )

    def request_id(self) -> object:
        """The id of the JSON-RPC request in the body (None for a batch, a notification or no JSON)."""
        try:
            message = orjson.loads(self.request.body or b"null")
        except orjson.JSONDecodeError:
            return None
        return message.get("id") if isinstance(message, dict) else None

    @web.authenticated
    @authorized("read")  # every MCP request reads; tools/call of write or edit also needs "write"
    async def post(self) -> None:
        await self.relay()

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        await self.relay()

    @web.authenticated
    @authorized("read")
    async def delete(self) -> None:
        await self.relay()

    async def relay(self) -> None:
        body = self.request.body or b""
        limit = self.settings["dsh_jupyter_max_body_bytes"]
        if len(body) > limit:
            raise ApiError(413, "BODY_TOO_LARGE", f"request body is larger than {limit} bytes")
        session = self.get_query_argument("session", "")
        if session:  # a name that can never work is refused at initialize, not at every later call
            try:
                check_session_id(session)
            except ToolError as exc:
                raise ApiError(400, "SESSION_INVALID", f"invalid ?session= in the MCP URL: {exc.message}") from None
        caller = await self.caller(SURFACE)
        # The call policy, before the SDK sees anything: a session this caller may not create is
        # refused at the first request (initialize), a write at its tools/call; 403 with a JSON-RPC
        # error for that request. The SDK's tool handler admits each call again (``mcp.server``).
        await self.run(self.workspace.admit_session, session or None, caller)
        for name in called_tools(body) if self.request.method == "POST" else ():
            try:
                self.workspace.admit(name, session or None, caller)
            except CallRefused as exc:
                raise ApiError(403, exc.code, exc.message) from None
        endpoint: McpEndpoint = self.settings["dsh_jupyter_mcp"]
        await endpoint.handle(self.asgi_scope(caller), self.receiver(body), self.sender())
        self.done()

    def asgi_scope(self, caller: Caller) -> dict:
        req = self.request
        host, _, port = (req.host or "").rpartition(":")
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": req.method,
            "scheme": req.protocol,
            "path": req.path,
            "raw_path": req.path.encode("latin-1", "replace"),
            "query_string": req.query.encode("latin-1", "replace"),
            "root_path": "",
            "headers": [
                (k.lower().encode("latin-1"), v.encode("latin-1", "replace")) for k, v in req.headers.get_all()
            ],
            "client": (req.remote_ip or "", 0),
            "server": (host or req.host, int(port) if port.isdigit() else 0),
            # No "user": the SDK would bind a session to it, but Jupyter names a token-only client
            # anew on every request that carries no cookie. Each request is authorized on its own.
            _CANCEL: self.cancel,
            _CALLER: caller,
        }

    def receiver(self, body: bytes):
        sent = False

        async def receive() -> dict:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await self.gone.wait()
            return {"type": "http.disconnect"}

        return receive

    def sender(self):
        async def send(message: dict) -> None:
            if message["type"] == "http.response.start":
                self.set_status(message["status"])
                seen = set()
                for raw_name, raw_value in message.get("headers", []):
                    name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
                    if name in _SKIP_HEADERS:
                        continue
                    (self.add_header if name in seen else self.set_header)(name, value)
                    seen.add(name)
                    if name == "content-type":
                        self.content_type = value
                if self.content_type.startswith("text/event-stream"):
                    await self.push()  # a stream's headers go now, not with its first event
            elif message["type"] == "http.response.body" and not self.gone.is_set():
                chunk = message.get("body", b"")
                if chunk:
                    self.write(chunk)
                if message.get("more_body"):
                    await self.push()  # SSE: every event leaves as soon as it is written
                else:
                    self.done()

        return send

    async def push(self) -> None:
        try:
            await self.flush()
        except StreamClosedError:
            self.gone.set()

    def done(self) -> None:
        """Finish the response once, keeping the SDK's Content-Type (APIHandler would force JSON)."""
        if self._finished:
            return
        try:
            self.finish(set_content_type=self.content_type)
        except StreamClosedError:
            pass  # the client is gone; nothing left to tell it

    def on_finish(self) -> None:
        self.gone.set()  # a receive() still waiting for a disconnect can return now
        super().on_finish()


def route_table() -> list[tuple]:
    return [(PATH, McpHandler)]
