"""What each JupyterLab page has open in its tabs, and the requests the server has for that page.

Why it exists: without real-time collaboration every browser page holds its own copy of a file
it has open, and only that page can change its copy and save it without JupyterLab's "File
Changed" dialog. So the extension (``labextension_shim/src/tabs.ts``) reports, per page (a client
id made at each page load), the documents its tabs have open (contents path, notebook or text,
unsaved changes or not, how many tabs), at once whenever that changes, and keeps one long poll
open for the server's requests, each of which it answers with a POST. This registry keeps both in
memory: the reports, which tool threads read (``copies``, ``presence``, ``open_files``), and per page a queue of
requests, each with a future that the asking coroutine (``server/tab_documents.py``) awaits.

A page is bound to the caller who first reported it (``policy.admit_page``): no other caller
reads its requests, answers them or replaces its report, and to them it does not exist. A page
not heard from (no report, answer or poll) for ``FORGET_POLLS`` poll periods, with no poll open,
is forgotten, as is one that says it is going away.

What it must never do: change anything on a long poll but the polling page's own liveness clock
(a GET), take a request off a queue on anything but its answer or the asker's withdrawal, keep a
report of another caller's page, grow without bound (``MAX_PAGES_PER_CALLER``,
``MAX_DOCUMENTS``), or touch a future or an event off the event loop (tool threads only read the
reports, under the lock).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = [
    "FORGET_POLLS",
    "MAX_DOCUMENTS",
    "MAX_PAGES_PER_CALLER",
    "OpenDocument",
    "PageRequest",
    "PageUnknown",
    "TabRegistry",
    "parse_answer",
    "parse_report",
]

# A page keeps one poll open at all times, so three poll periods without one means it is gone
# (its network dropped, its machine slept, it was killed without saying so).
FORGET_POLLS = 3
# One person rarely has more than a few JupyterLab pages open; this bounds what one caller can
# make the server hold. Past it, the caller's page heard from least recently is forgotten.
MAX_PAGES_PER_CALLER = 64
# Documents one page may report at once; a page with more tabs than this is not a person's page.
MAX_DOCUMENTS = 1000
MAX_PATH_CHARS = 4096  # longer than any path Linux opens
MAX_MESSAGE_CHARS = 500  # what a page may say about a save that failed
ANSWER_STATUSES = ("taken", "saved", "unsaved", "changed", "busy", "gone", "failed", "done")
MODEL_FIELDS = (
    "path",
    "name",
    "type",
    "writable",
    "created",
    "last_modified",
    "mimetype",
    "format",
    "hash",
    "hash_algorithm",
)  # what a page's answer may say of a saved file (Jupyter's contents model)


class PageUnknown(Exception):
    """No page with this id is known for this caller (never reported, forgotten, or another's)."""


class PageTaken(Exception):
    """The page id was reported by another caller."""


@dataclass(frozen=True)
class OpenDocument:
    """One document a page has open: ``path`` as the page names it (the contents API's path,
    relative to the server's root), ``real`` the real path it names (symlinks resolved, as the
    tools' targets are), a notebook or not, unsaved changes or not, and in how many tabs."""

    path: str
    real: str
    notebook: bool
    dirty: bool
    tabs: int


@dataclass
class PageRequest:
    """A request for one page: ``body`` is what the page gets (with ``id`` and ``seq``); ``answer``
    resolves with the page's answer (a dict), or with None when the page went away."""

    id: str
    seq: int
    body: dict
    answer: asyncio.Future

    def public(self) -> dict:
        return {"id": self.id, "seq": self.seq, **self.body}


@dataclass
class Page:
    owner: str
    may_write: bool
    heard: float
    documents: tuple[OpenDocument, ...] = ()
    polling: int = 0
    seq: int = 0
    requests: dict[str, PageRequest] = field(default_factory=dict)
    wakers: set[asyncio.Event] = field(default_factory=set)


def parse_report(body: dict) -> list[dict] | None:
    """The documents a page's report lists (``path``, ``kind``, ``dirty``, ``tabs``), or None for
    ``{"gone": true}``. ``ValueError`` with one sentence for anything else."""
    if body.get("gone") is True and set(body) == {"gone"}:
        return None
    extra = sorted(set(body) - {"documents"})
    if extra:
        raise ValueError(f'unknown field "{extra[0]}" (expected documents, or gone)')
    documents = body.get("documents")
    if not isinstance(documents, list):
        raise ValueError("documents must be a list")
    if len(documents) > MAX_DOCUMENTS:
        raise ValueError(f"documents lists more than {MAX_DOCUMENTS} files")
    out = []
    for doc in documents:
        if not isinstance(doc, dict) or set(doc) - {"path", "kind", "dirty", "tabs"}:
            raise ValueError("each document must be an object of path, kind, dirty and tabs")
        path, kind, dirty, tabs = doc.get("path"), doc.get("kind"), doc.get("dirty"), doc.get("tabs", 1)
        if not isinstance(path, str) or not path.strip("/") or len(path) > MAX_PATH_CHARS or "\0" in path:
            raise ValueError("a document's path must be a file's path relative to the server's root")
        if kind not in ("file", "notebook"):
            raise ValueError("a document's kind must be file or notebook")
        if not isinstance(dirty, bool):
            raise ValueError("a document's dirty must be true or false")
        if not isinstance(tabs, int) or isinstance(tabs, bool) or not 1 <= tabs <= MAX_DOCUMENTS:
            raise ValueError(f"a document's tabs must be a number from 1 to {MAX_DOCUMENTS}")
        out.append({"path": path.strip("/"), "notebook": kind == "notebook", "dirty": dirty, "tabs": tabs})
    return out


def parse_answer(body: dict) -> tuple[str, dict]:
    """``(request id, answer)`` of a page's answer; ``ValueError`` with one sentence otherwise."""
    extra = sorted(set(body) - {"request", "status", "canSave", "exact", "model", "message"})
    if extra:
        raise ValueError(f'unknown field "{extra[0]}" (expected request, status, canSave, exact, model, message)')
    request, status = body.get("request"), body.get("status")
    if not isinstance(request, str) or not 1 <= len(request) <= 64:
        raise ValueError("request must be the id of a request this page was sent")
    if status not in ANSWER_STATUSES:
        raise ValueError(f"status must be one of {', '.join(ANSWER_STATUSES)}")
    answer: dict = {"status": status}
    for name in ("canSave", "exact"):
        if name in body:
            if not isinstance(body[name], bool):
                raise ValueError(f"{name} must be true or false")
            answer[name] = body[name]
    if "message" in body:
        if not isinstance(body["message"], str):
            raise ValueError("message must be a string")
        answer["message"] = body["message"][:MAX_MESSAGE_CHARS]
    if "model" in body:
        model = body["model"]
        if not isinstance(model, dict) or not all(
            v is None or isinstance(v, (str, bool)) for k, v in model.items() if k in MODEL_FIELDS
        ):
            raise ValueError("model must be a contents model (strings and booleans)")
        answer["model"] = {k: model[k] for k in MODEL_FIELDS if k in model}
    return request, answer


class TabRegistry:
    """The pages' reports and request queues (see the module docstring).

    The reports are read from any thread under ``_lock``; everything else runs on ``loop``.
    ``poll_s`` is how long a poll is held when nothing waits for the page.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, poll_s: float, clock: Callable[[], float] = time.monotonic):
        self.loop = loop
        self.poll_s = poll_s
        self.forget_s = FORGET_POLLS * poll_s
        self.clock = clock
        self._pages: dict[str, Page] = {}
        self._lock = threading.Lock()

    # -- what pages have open (any thread) -------------------------------------------------------

    def copies(self, real: str, *, writers: bool = False, below: bool = False) -> list[tuple[str, OpenDocument]]:
        """``(page id, document)`` for every live page's document of the file at ``real`` (with
        ``below``: also every file beneath it); ``writers``: only pages whose caller may write."""
        prefix = real.rstrip(os.sep) + os.sep
        with self._lock:
            self._prune()
            return [
                (client, doc)
                for client, page in self._pages.items()
                if page.may_write or not writers
                for doc in page.documents
                if doc.real == real or (below and doc.real.startswith(prefix))
            ]

    def presence(self, real: str) -> tuple[bool, int] | None:
        """``(any copy unsaved, tabs)`` of the file at ``real`` over every live page; None if none."""
        found = self.copies(real)
        if not found:
            return None
        return any(doc.dirty for _, doc in found), sum(doc.tabs for _, doc in found)

    def open_files(self) -> dict[str, tuple[bool, int]]:
        """``{real path: (any copy unsaved, tabs)}`` over every live page's documents: what
        ``presence`` answers, for every file that is open."""
        found: dict[str, tuple[bool, int]] = {}
        with self._lock:
            self._prune()
            for page in self._pages.values():
                for doc in page.documents:
                    unsaved, tabs = found.get(doc.real, (False, 0))
                    found[doc.real] = (unsaved or doc.dirty, tabs + doc.tabs)
        return found

    def pages(self) -> int:
        with self._lock:
            self._prune()
            return len(self._pages)

    def moved(self, old_real: str, new_real: str, new_path: str | None) -> dict[str, list[tuple[str, str]]]:
        """Make every report name the file (or folder) moved from ``old_real`` by its new place;
        ``{page id: [(old path, new path)]}`` of the pages that had it, or something beneath it,
        open and whose caller may write (they are told). ``new_path``: the new place's contents
        path (None: outside the root; the documents are dropped from the reports)."""
        prefix = old_real.rstrip(os.sep) + os.sep
        told: dict[str, list[tuple[str, str]]] = {}
        with self._lock:
            for client, page in self._pages.items():
                kept = []
                for doc in page.documents:
                    if doc.real != old_real and not doc.real.startswith(prefix):
                        kept.append(doc)
                        continue
                    rest = doc.real[len(old_real) :]
                    if new_path is None:
                        continue
                    to = new_path + rest.replace(os.sep, "/")
                    kept.append(OpenDocument(to, new_real + rest, doc.notebook, doc.dirty, doc.tabs))
                    if page.may_write:
                        told.setdefault(client, []).append((doc.path, to))
                page.documents = tuple(kept)
        return told

    def _prune(self) -> None:
        """Forget pages not heard from for ``forget_s`` with no poll open (under the lock)."""
        now = self.clock()
        stale = [c for c, p in self._pages.items() if p.polling == 0 and now - p.heard > self.forget_s]
        for client in stale:
            self._settle(self._pages.pop(client))

    def _settle(self, page: Page) -> None:
        """Answer a forgotten page's outstanding requests with None (on the loop)."""
        if not page.requests:
            return
        requests, page.requests = list(page.requests.values()), {}

        def settle() -> None:
            for request in requests:
                if not request.answer.done():
                    request.answer.set_result(None)

        if _on_loop(self.loop):
            settle()
        else:
            self.loop.call_soon_threadsafe(settle)

    # -- the page's side (event loop) ------------------------------------------------------------

    def report(self, owner: str, may_write: bool, client: str, documents: list[OpenDocument]) -> None:
        """Replace what page ``client`` of ``owner`` has open (``PageTaken``: another caller's)."""
        with self._lock:
            self._prune()
            page = self._pages.get(client)
            if page is not None and page.owner != owner:
                raise PageTaken(client)
            if page is None:
                page = self._pages[client] = Page(owner, may_write, self.clock())
                mine = sorted((p.heard, c) for c, p in self._pages.items() if p.owner == owner)
                for _, oldest in mine[: max(0, len(mine) - MAX_PAGES_PER_CALLER)]:
                    self._settle(self._pages.pop(oldest))
            page.may_write, page.heard, page.documents = may_write, self.clock(), tuple(documents)

    def forget(self, owner: str, client: str) -> None:
        """Page ``client`` says it is going away (``PageUnknown`` if it is not ``owner``'s)."""
        with self._lock:
            self._own(owner, client)
            self._settle(self._pages.pop(client))

    async def wait(
        self, owner: str, client: str, after: int, wake: asyncio.Event, closed: Callable[[], bool]
    ) -> list[dict]:
        """The requests waiting for page ``client`` with a ``seq`` above ``after``: at once when
        there are any, else when one comes, the connection closed (``wake`` set, ``closed()``) or
        ``poll_s`` passed (then none). Reads only; the page stays alive while it waits."""
        with self._lock:
            page = self._own(owner, client)
            page.polling += 1
            page.heard = self.clock()
            page.wakers.add(wake)
        try:
            deadline = self.loop.time() + self.poll_s
            while True:
                waiting = [r.public() for r in page.requests.values() if r.seq > after]
                remaining = deadline - self.loop.time()
                if waiting or closed() or remaining <= 0 or self._pages.get(client) is not page:
                    return waiting
                wake.clear()
                try:
                    await asyncio.wait_for(wake.wait(), remaining)
                except asyncio.TimeoutError:
                    pass
        finally:
            with self._lock:
                page.wakers.discard(wake)
                page.polling -= 1
                page.heard = self.clock()

    def answer(self, owner: str, client: str, request_id: str, answer: dict) -> bool:
        """Page ``client``'s answer to one of its requests, which leaves the queue; False when
        nobody waits for it any more (the asker gave up, or it was answered already)."""
        with self._lock:
            page = self._own(owner, client)
            page.heard = self.clock()
            request = page.requests.pop(request_id, None)
        if request is None or request.answer.done():
            return False
        request.answer.set_result(answer)
        return True

    def _own(self, owner: str, client: str) -> Page:
        self._prune()
        page = self._pages.get(client)
        if page is None or page.owner != owner:
            raise PageUnknown(client)
        return page

    # -- the asker's side (event loop) -----------------------------------------------------------

    def ask(self, client: str, body: dict) -> PageRequest | None:
        """Queue a request for page ``client`` and wake its poll; None when the page is gone."""
        with self._lock:
            page = self._pages.get(client)
            if page is None:
                return None
            page.seq += 1
            request = PageRequest(uuid.uuid4().hex[:16], page.seq, body, self.loop.create_future())
            page.requests[request.id] = request
            wakers = list(page.wakers)
        for wake in wakers:
            wake.set()
        return request

    def withdraw(self, client: str, request: PageRequest) -> None:
        """Take ``request`` off page ``client``'s queue: nobody waits for its answer any more."""
        with self._lock:
            page = self._pages.get(client)
            if page is not None:
                page.requests.pop(request.id, None)
        if not request.answer.done():
            request.answer.set_result(None)


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
