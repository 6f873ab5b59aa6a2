"""The ``/dsh/api/tabs`` routes: how a JupyterLab page tells the server what its tabs have open,
waits for the server's requests, and answers them.

Why it exists: the server cannot reach into a browser page; the page reaches the server. The
extension (``labextension_shim/src/tabs.ts``) makes a page id at each page load and:

* ``POST /tabs/{client}`` reports the documents its tabs have open (``{"documents": [...]}``),
  at once whenever that changes, and ``{"gone": true}`` when the page goes away (a beacon, which
  carries Jupyter's ``_xsrf`` as a query argument since it can set no header);
* ``GET /tabs/{client}/requests?after=N`` is its long poll: the requests numbered above N that
  wait for it, at once when there are any, else after at most ``tabs_poll_s`` (none). It only
  reads: a request leaves the queue when it is answered (or the server withdraws it);
* ``POST /tabs/{client}/answers`` answers one request. Answers lead to writes (a page that takes
  a change saves the file), so this route needs ``contents:write``; the other two ``contents:read``.

Each handler parses, asks the call policy who the page belongs to (``policy.admit_page``), makes
one call into the registry (``server/tabs.py``) and finishes.

What it must never do: change anything on the GET but the page's liveness clock, let a caller
see or answer another caller's page (it is answered as unknown: 404 ``PAGE_UNKNOWN``), or hold a
poll past ``tabs_poll_s`` or past its connection.
"""

from __future__ import annotations

import asyncio
import re

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..core.policy import CallRefused, admit_page
from .handlers import PREFIX, ApiError, DshHandler
from .tabs import PageTaken, PageUnknown, parse_answer, parse_report

__all__ = ["PAGE_ID", "tab_routes"]

PAGE_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")  # what a page makes at load: 32 random hex digits


class TabsHandler(DshHandler):
    """The registry of open tabs (``self.settings["dsh_jupyter_tabs"]``) and the page's owner."""

    async def prepare(self) -> None:  # type: ignore[override]
        await super().prepare()  # authentication first: a stranger learns nothing, not even this
        if not PAGE_ID.match(self.path_kwargs.get("client", "")):
            raise ApiError(400, "ARGUMENT_INVALID", "a page id is 8 to 64 letters, digits, - or _")

    @property
    def tabs(self):
        return self.settings["dsh_jupyter_tabs"]

    async def owner(self, answers: bool = False) -> tuple[str, bool]:
        """Whose page this is (the policy's identity) and whether that caller may write."""
        caller = await self.caller("rest")
        try:
            return admit_page(caller, answers), caller.may_write
        except CallRefused as exc:
            raise ApiError(403, exc.code, exc.message) from None

    def unknown(self, client: str) -> ApiError:
        return ApiError(404, "PAGE_UNKNOWN", f'no page "{client}"; report its tabs first')


class PageReportHandler(TabsHandler):
    @web.authenticated
    @authorized("read")
    async def post(self, client: str) -> None:
        try:
            reported = parse_report(self.json_body())
        except ValueError as exc:
            raise ApiError(400, "BODY_INVALID", str(exc)) from None
        owner, may_write = await self.owner()
        if reported is None:
            try:
                self.tabs.registry.forget(owner, client)
            except PageUnknown:
                raise self.unknown(client) from None
            self.send({"client": client, "documents": 0, "gone": True})
            return
        documents = await self.run(self.tabs.resolve, reported)
        try:
            self.tabs.registry.report(owner, may_write, client, documents)
        except PageTaken:
            raise ApiError(403, "FORBIDDEN", f'page "{client}" was reported by another caller') from None
        self.send({"client": client, "documents": len(documents), "gone": False})


class PageRequestsHandler(TabsHandler):
    def initialize(self, name: str, **kwargs) -> None:
        super().initialize(name, **kwargs)
        self.wake = asyncio.Event()
        self.left = False

    def on_connection_close(self) -> None:
        self.left = True
        self.wake.set()
        super().on_connection_close()

    @web.authenticated
    @authorized("read")
    async def get(self, client: str) -> None:
        after = self.query_int("after", 0, 0, 2**53)
        owner, _ = await self.owner()
        try:
            requests = await self.tabs.registry.wait(owner, client, after, self.wake, lambda: self.left)
        except PageUnknown:
            raise self.unknown(client) from None
        self.send({"requests": requests})


class PageAnswersHandler(TabsHandler):
    @web.authenticated
    @authorized("write")  # an answer leads to a write: the page saves the file
    async def post(self, client: str) -> None:
        try:
            request, answer = parse_answer(self.json_body())
        except ValueError as exc:
            raise ApiError(400, "BODY_INVALID", str(exc)) from None
        owner, _ = await self.owner(answers=True)
        try:
            accepted = self.tabs.registry.answer(owner, client, request, answer)
        except PageUnknown:
            raise self.unknown(client) from None
        self.send({"accepted": accepted})


def tab_routes() -> list[tuple]:
    """The tab routes, relative to the server's base_url."""
    page = r"(?P<client>[^/]+)"
    return [
        (rf"{PREFIX}/tabs/{page}", PageReportHandler),
        (rf"{PREFIX}/tabs/{page}/requests", PageRequestsHandler),
        (rf"{PREFIX}/tabs/{page}/answers", PageAnswersHandler),
    ]
