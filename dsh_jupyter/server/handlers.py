"""The ``/dsh/api`` REST handlers: parse the request, make one ``Workspace`` call, send JSON.

Why it exists: HTTP is a surface over the core, nothing more. Each method is decorated with
``@web.authenticated`` and ``@authorized`` (resource ``contents``; reads need ``read``, the tools
that write need ``write`` too), parses its input (400/413 on protocol problems), describes the
caller (``caller``), runs the one core call on the extension's thread pool, and finishes. The
core's call policy (``core/policy.py``) admits every route before it touches state: which
sessions a caller may use, that no GET changes anything, whose progress a caller sees. A tool's
own failure is a normal result (HTTP 200, ``isError: true``); HTTP errors are for protocol
problems only.

What it must never do: decide a rule of the call policy itself (a handler passes the caller to
the core, which refuses), change state on a GET (Jupyter does not check GETs for XSRF), run a
tool or a state query on the event loop (a long grep would stall every other request), reach the
Workspace through a module global (it comes from ``self.settings``), or answer with a traceback,
the token or the absolute root. A client that disconnects sets its call's cancel event, so the
core kills ripgrep's process group.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import re
import threading
import uuid

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado import web

from ..core.errors import Codes, ToolError
from ..core.policy import Caller, CallRefused
from ..core.result import json_bytes
from ..core.state.store import StateError
from ..core.tools.listing.browse import BROWSE_SORTS
from .openapi import build_document

__all__ = ["PREFIX", "route_table"]

PREFIX = "/dsh/api"
CALLS_MAX_LIMIT = 1000
_STATUS_CODES = {
    400: "BAD_REQUEST",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "CONFLICT",
    413: "BODY_TOO_LARGE",
    503: "STATE_UNAVAILABLE",
}


class ApiError(web.HTTPError):
    """A protocol problem with a stable ``code``; its message is safe to show to the client."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(status, log_message=message.replace("%", "%%"))
        self.code = code
        self.message = message


def _tool_error_status(exc: ToolError) -> int:
    if exc.code == Codes.STATE_UNAVAILABLE:
        return 503
    # A cwd that names no directory is a missing resource; other refusals are bad requests.
    return 404 if exc.code in (Codes.FS_NOT_FOUND, Codes.FS_NOT_DIRECTORY) else 400


dumps = json_bytes  # JSON bytes; a lone surrogate (an undecodable name) falls back to escaped ASCII


def result_json(result, include_images: bool = False) -> dict:
    """A call's JSON; with ``include_images`` a success's value also holds ``images``: the images
    the result shows, in the order its text numbers them, base64 (``[]`` when there are none)."""
    value = result.value
    if include_images and not result.is_error:
        value = {**value, "images": [image_json(image) for image in result.images]}
    return {
        "tool": result.tool,
        "session": result.session,
        "callId": result.call_id,
        "isError": result.is_error,
        "text": result.text,
        "value": value,
    }


def image_json(image) -> dict:
    """One image of a result: MIME type, bytes, base64 data, and for a notebook output its cell and output."""
    out = {"mimeType": image.mime, "bytes": len(image.data), "data": image.base64()}
    if image.cell is not None:
        out.update(cell=image.cell, output=image.output)
    return out


class DshHandler(ExtensionHandlerMixin, APIHandler):
    """Base: JSON errors with a code, the body limit, and off-loop calls that a disconnect cancels."""

    auth_resource = "contents"

    def initialize(self, name: str, **kwargs) -> None:
        super().initialize(name, **kwargs)
        self.cancel = threading.Event()

    @property
    def workspace(self):
        return self.settings["dsh_jupyter_workspace"]

    def set_cors_headers(self) -> None:
        """Jupyter's own CORS answer, but never credentials for an origin nobody allowed.

        Jupyter echoes the Origin of a token-authenticated request; with ``allow_credentials``
        set it would also allow credentials for that foreign origin. Credentials are kept only
        for an origin the server's ``allow_origin``/``allow_origin_pat`` names.
        """
        super().set_cors_headers()
        if self._headers.get("Access-Control-Allow-Credentials") and not self._origin_allowed():
            self.clear_header("Access-Control-Allow-Credentials")

    def _origin_allowed(self) -> bool:
        from jupyter_server.utils import origin_matches_pat

        origin = self.request.headers.get("Origin")
        if not origin:
            return True
        if self.allow_origin and self.allow_origin != "*":
            return origin == self.allow_origin
        return bool(self.allow_origin_pat and origin_matches_pat(self.allow_origin_pat, origin))

    def on_connection_close(self) -> None:
        self.cancel.set()  # the core's rg runner sees it and kills ripgrep's process group
        super().on_connection_close()

    @property
    def user_name(self) -> str:
        """Who is calling, as Jupyter's identity provider names them (recorded in the call log)."""
        user = self.current_user
        return getattr(user, "username", None) or getattr(user, "name", None) or str(user or "")

    async def run(self, fn, *args, pool: str = "dsh_jupyter_executor", **kwargs):
        """Run one blocking core call on one of the extension's pools; map core errors to HTTP.

        Searches run on a pool of their own (``dsh_jupyter_search_executor``), so hung searches
        can fill only that one and never delay a ``list`` or a ``read``.
        """
        loop = asyncio.get_running_loop()
        call = functools.partial(fn, *args, **kwargs)
        try:
            return await loop.run_in_executor(self.settings[pool], call)
        except ToolError as exc:
            raise ApiError(_tool_error_status(exc), exc.code, exc.message) from None
        except CallRefused as exc:
            raise ApiError(403, exc.code, exc.message) from None
        except StateError as exc:
            self.log.warning("dsh_jupyter: session state unavailable: %s", exc)
            raise ApiError(503, Codes.STATE_UNAVAILABLE, "the session state is unavailable") from None

    def anonymous(self) -> bool:
        """Whether the caller's name was made up for this one request (a token, no login cookie).

        Jupyter names such a caller anew on every request ("Anonymous Io", then "Anonymous
        Europa"), so the name identifies nobody across requests; the call policy counts all of
        them as one caller for quotas.
        """
        if not self.token_authenticated:
            return False
        provider = self.identity_provider
        name = provider.get_cookie_name(self) if hasattr(provider, "get_cookie_name") else None
        return not name or self.get_cookie(name) is None

    async def caller(self, surface: str) -> Caller:
        """Who calls and what they may do, for the core's call policy (``core/policy.py``).

        A token-only caller is told apart from others by a digest of the token it sent (never
        the token): the one thing that identifies it across requests (``Caller.identity``).
        """
        anonymous = self.anonymous()
        credential = None
        if anonymous:
            provider = self.identity_provider
            token = provider.get_token(self) if hasattr(provider, "get_token") else None
            credential = hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest() if token else None
        return Caller(surface, self.user_name, await self.allowed("write"), anonymous, credential)

    async def allowed(self, action: str) -> bool:
        """Whether the current user may ``action`` on ``contents``, as the server's Authorizer says."""
        allowed = self.authorizer.is_authorized(self, self.current_user, action, self.auth_resource)
        if asyncio.iscoroutine(allowed):
            allowed = await allowed
        return bool(allowed)

    def json_body(self) -> dict:
        """The request body as a JSON object, or 413/400."""
        limit = self.settings["dsh_jupyter_max_body_bytes"]
        if len(self.request.body) > limit:
            raise ApiError(413, "BODY_TOO_LARGE", f"request body is larger than {limit} bytes")
        if not self.request.body.strip():
            return {}
        try:
            body = json.loads(self.request.body)
        except (ValueError, UnicodeDecodeError):
            raise ApiError(400, "BODY_INVALID", "request body is not valid JSON") from None
        except RecursionError:
            raise ApiError(400, "BODY_INVALID", "request body is nested too deeply") from None
        if not isinstance(body, dict):
            raise ApiError(400, "BODY_INVALID", "request body must be a JSON object")
        return body

    def query_int(
        self, name: str, default: int | None, minimum: int | None = None, maximum: int | None = None
    ) -> int | None:
        """An integer query parameter (empty or absent: ``default``), or 400."""
        raw = self.get_query_argument(name, None)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw, 10)
        except ValueError:
            raise ApiError(400, "ARGUMENT_INVALID", f"{name} must be an integer") from None
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            raise ApiError(400, "ARGUMENT_INVALID", f"{name} must be between {minimum} and {maximum}")
        return value

    def user_filter(self) -> str | None:
        """The optional ``?user=`` query filter of the listing routes."""
        return self.get_query_argument("user", None) or None

    def allowed_methods(self) -> list[str]:
        """The methods this route implements (for the ``Allow`` header of a 405)."""
        unimplemented = web.RequestHandler.get  # tornado's shared "405" placeholder
        return [m for m in ("GET", "POST", "PATCH", "DELETE") if getattr(type(self), m.lower()) is not unimplemented]

    def send(self, obj: object, status: int = 200) -> None:
        self.set_status(status)
        self.finish(dumps(obj))  # APIHandler.finish sets Content-Type: application/json

    def write_error(self, status_code: int, **kwargs) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, ApiError):
            code, message = exc.code, exc.message
        elif isinstance(exc, web.HTTPError):
            code = _STATUS_CODES.get(status_code, "HTTP_ERROR")
            message = (exc.log_message % exc.args if exc.args else exc.log_message) if exc.log_message else ""
            message = message or self._reason
        else:  # a bug: the server log has the traceback, the client never does
            code, message = "INTERNAL_ERROR", "internal server error"
        if status_code == 405:
            self.set_header("Allow", ", ".join(self.allowed_methods()))
        self.finish(dumps({"code": code, "message": message, "reason": self._reason}))


class ToolsHandler(DshHandler):
    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        self.send(self.workspace.tools())


class ToolCallHandler(DshHandler):
    @web.authenticated
    @authorized("read")  # every tool reads; the writing tools also need "write", checked below
    async def post(self, name: str) -> None:
        spec = self.workspace.registry.get(name)
        if spec is None:
            raise ApiError(
                404,
                Codes.TOOL_UNKNOWN,
                f'unknown tool "{name}"; available tools: ' + ", ".join(self.workspace.registry),
            )
        body = self.json_body()
        session, args, include_images, progress_id = parse_tool_body(body)
        ignore_files = body.get("respect_ignore_files")
        caller = await self.caller("rest")
        try:  # no I/O: the wait starts; the progress id is kept for this caller from now on
            admission = self.workspace.admit(name, session, caller, progress_id)
        except CallRefused as exc:
            raise ApiError(403, exc.code, exc.message) from None
        try:
            result = await self.run(
                self.workspace.call,
                name,
                args,
                cancel=self.cancel,
                admission=admission,
                respect_ignore_files=ignore_files,
                pool="dsh_jupyter_search_executor" if admission.searches else "dsh_jupyter_executor",
            )
        finally:
            if admission.progress is not None:
                admission.progress.end()  # the call ends it too; this covers a call that never ran
        self.send(result_json(result, include_images))


# A progress id is the client's own name for its call; it is kept under the caller who gave it.
_PROGRESS_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ProgressHandler(DshHandler):
    """How far this caller's call posted with ``progress_id`` got (in memory: on the loop)."""

    @web.authenticated
    @authorized("read")
    async def get(self, progress_id: str) -> None:
        self.send(self.workspace.call_progress(progress_id, await self.caller("rest")))


def parse_tool_body(body: dict) -> tuple[str | None, dict, bool, str | None]:
    extra = sorted(set(body) - {"session", "args", "include_images", "progress_id", "respect_ignore_files"})
    if extra:
        raise ApiError(
            400,
            "BODY_INVALID",
            f'unknown field "{extra[0]}" (expected session, args, include_images, progress_id, respect_ignore_files)',
        )
    if not isinstance(body.get("respect_ignore_files", False), bool):
        raise ApiError(400, "BODY_INVALID", "respect_ignore_files must be true or false")
    session, args, include_images = body.get("session"), body.get("args", {}), body.get("include_images", False)
    progress_id = body.get("progress_id")
    if progress_id is not None and not (isinstance(progress_id, str) and _PROGRESS_ID.match(progress_id)):
        raise ApiError(400, "BODY_INVALID", "progress_id must be 1 to 64 letters, digits, - or _")
    if session is not None and not isinstance(session, str):
        raise ApiError(400, "BODY_INVALID", "session must be a string")
    if not isinstance(args, dict):
        raise ApiError(400, "BODY_INVALID", "args must be a JSON object")
    if not isinstance(include_images, bool):
        raise ApiError(400, "BODY_INVALID", "include_images must be true or false")
    return session, args, include_images, progress_id


class SessionsHandler(DshHandler):
    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        self.send(await self.run(self.workspace.sessions, self.user_filter()))

    @web.authenticated
    @authorized("write")  # a read-only token must not fill the state with sessions
    async def post(self) -> None:
        body = self.json_body()
        extra = sorted(set(body) - {"id", "cwd"})
        if extra:
            raise ApiError(400, "BODY_INVALID", f'unknown field "{extra[0]}" (expected id, cwd)')
        session, cwd = body.get("id") or uuid.uuid4().hex[:12], body.get("cwd")
        if not isinstance(session, str) or (cwd is not None and not isinstance(cwd, str)):
            raise ApiError(400, "BODY_INVALID", "id and cwd must be strings")
        info, created = await self.run(self.workspace.create_session, session, cwd, caller=await self.caller("rest"))
        if not created and cwd is not None and not _same_cwd(info["cwd"], cwd):
            # Creating is a read-level right; moving an existing session is not (PATCH, write).
            raise ApiError(
                409,
                "SESSION_EXISTS",
                f'session "{session}" exists with another cwd; move it with PATCH {PREFIX}/sessions/{{id}}',
            )
        self.send(info, 201 if created else 200)


def _same_cwd(current: str, asked: str) -> bool:
    import posixpath

    return posixpath.normpath(asked.strip("/") or ".") == current


class SessionHandler(DshHandler):
    @web.authenticated
    @authorized("read")
    async def get(self, session: str) -> None:
        self.send(_found(await self.run(self.workspace.session_info, session, await self.caller("rest")), session))

    @web.authenticated
    @authorized("write")  # moves where every later relative path of the session lands
    async def patch(self, session: str) -> None:
        body = self.json_body()
        extra = sorted(set(body) - {"cwd"})
        if extra:
            raise ApiError(400, "BODY_INVALID", f'unknown field "{extra[0]}" (expected cwd)')
        cwd = body.get("cwd")
        if not isinstance(cwd, str) or not cwd.strip():
            raise ApiError(400, "BODY_INVALID", "cwd must be a non-empty string")
        caller = await self.caller("rest")
        self.send(_found(await self.run(self.workspace.move_session, session, cwd, caller), session))

    @web.authenticated
    @authorized("write")  # deletes shared state (observations, call log) and the spill files
    async def delete(self, session: str) -> None:
        _found(await self.run(self.workspace.delete_session, session, await self.caller("rest")), session)
        self.set_status(204)
        self.finish()


def _found(value, session: str):
    if value is None or value is False:
        raise ApiError(404, "SESSION_NOT_FOUND", f'no session "{session}"')
    return value


class CallsHandler(DshHandler):
    @web.authenticated
    @authorized("read")
    async def get(self, session: str) -> None:
        offset = self.query_int("offset", 0, 0, 2**53)  # beyond 2**53: sqlite's integer range
        limit = self.query_int("limit", 100, 1, CALLS_MAX_LIMIT)
        caller = await self.caller("rest")
        page = await self.run(self.workspace.calls, session, offset, limit, self.user_filter(), caller)
        self.send(_found(page, session))


class SpillsHandler(DshHandler):
    @web.authenticated
    @authorized("read")
    async def get(self, session: str) -> None:
        caller = await self.caller("rest")
        self.send(_found(await self.run(self.workspace.spill_list, session, self.user_filter(), caller), session))


class SpillPageHandler(DshHandler):
    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        locator = self.get_query_argument("locator", "")
        if not locator:
            raise ApiError(400, "ARGUMENT_INVALID", "locator is required")
        session = self.get_query_argument("session", "") or "default"
        offset = self.query_int("offset", 1)  # out of range: read's own ARGUMENT_INVALID result
        limit = self.query_int("limit", None)
        caller = await self.caller("rest")
        result = await self.run(self.workspace.spill_page, locator, session, offset, limit, caller=caller)
        self.send(result_json(result))


class BrowseHandler(DshHandler):
    """A listing page for a person's view (the sidebar's explorer): sorted or filtered over the
    whole folder, with its stamp for a "changed since?" check. Not a tool call: not in the call
    log, the model never sees it; it opens the folder as ``list`` does, so it shows no more."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        sort = self.get_query_argument("sort", "") or "model"
        if sort not in BROWSE_SORTS:
            raise ApiError(400, "ARGUMENT_INVALID", f"sort must be one of {', '.join(BROWSE_SORTS)}")
        descending = self.get_query_argument("descending", "") in ("1", "true")
        value = await self.run(
            self.workspace.browse,
            self.get_query_argument("path", "") or None,
            self.query_int("offset", 1, 1),
            self.query_int("limit", None, 0, 10_000),
            sort,
            descending,
            self.get_query_argument("filter", "") or None,
            self.get_query_argument("session", "") or None,
            await self.caller("rest"),
        )
        self.send(value)


class StatusHandler(DshHandler):
    """How the tools are confined here, and whether the state works: for operators and agents."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        self.send(await self.run(self.workspace.status, await self.caller("rest")))


class OpenFilesHandler(DshHandler):
    """The files a person has open in JupyterLab, as ``list`` would name them (the sidebar's
    activity shows them beside the agent's calls). Not a tool call: not logged, no session."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        self.send(await self.run(self.workspace.open_files))


class OpenAPIHandler(DshHandler):
    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        self.send(build_document(self.workspace.registry, self.base_url))


def route_table() -> list[tuple]:
    """The routes, relative to the server's base_url (the framework prefixes it)."""
    from .tab_handlers import tab_routes  # they build on DshHandler, defined here

    sid = r"(?P<session>[^/]+)"
    return [
        (rf"{PREFIX}/tools", ToolsHandler),
        (rf"{PREFIX}/tools/(?P<name>[^/]+)", ToolCallHandler),
        (rf"{PREFIX}/sessions", SessionsHandler),
        (rf"{PREFIX}/sessions/{sid}", SessionHandler),
        (rf"{PREFIX}/sessions/{sid}/calls", CallsHandler),
        (rf"{PREFIX}/sessions/{sid}/spills", SpillsHandler),
        (rf"{PREFIX}/spill", SpillPageHandler),
        (rf"{PREFIX}/browse", BrowseHandler),
        (rf"{PREFIX}/progress/(?P<progress_id>[^/]+)", ProgressHandler),
        (rf"{PREFIX}/openapi.json", OpenAPIHandler),
        (rf"{PREFIX}/status", StatusHandler),
        (rf"{PREFIX}/documents", OpenFilesHandler),
        *tab_routes(),
    ]
