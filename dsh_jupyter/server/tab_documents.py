"""Files open in JupyterLab tabs without collaboration: the tabs' half of the core's ``LiveDocuments``.

Why it exists: without real-time collaboration each browser page holds its own copy of a file it
has open. A tool that writes the file under it leaves the page's copy stale, and the person's next
save meets JupyterLab's "File Changed" dialog, where either answer loses one side's work. So a
tool hands the change to the pages that have the file open (``save_in_tabs``), through the
requests of ``server/tabs.py``, which the extension (``labextension_shim/src/tabs.ts``) answers:

1. **take**, to every page of a caller who may write that has the file open: in one synchronous
   JavaScript turn (no keystroke can come between the check and the change) the page answers
   ``unsaved`` when the document has unsaved changes, ``changed`` when its idea of the file (the
   contents model's hash, else its last-modified time) is not the file on disk now, and otherwise
   applies the content to the document by the smallest change and answers ``taken``. With one
   page the take also saves at once, in the same turn (``save``), through the document's own
   context: JupyterLab's own save, so no dialog, and the page's idea of the file stays right.
2. With several pages: when one refused, every page that took the change is asked to **undo**
   it, and the call raises; otherwise one page **save**s, and the others learn the saved file's
   contents model (**saved**), so their next save meets no dialog either. They learn it only when
   the saved document held exactly the change (``exact``): a page where the person typed between
   the take and the save saved that typing too, and the others then keep the change unsaved and
   meet JupyterLab's dialog at their next save, as two people typing in two pages do.

``moved`` tells the pages that had a moved file (or a file beneath a moved folder) open, so
their tabs follow it (the page emits the rename JupyterLab's document context follows); and
``presence`` says who has a file open (``open_files``: every file that is). Pages of callers
who may not write count for presence but are never asked: they cannot save, so they cannot
overwrite anyone.

What it must never do: run on the event loop's own thread (it waits for the loop), change a tab
that has unsaved changes, call a file saved that no page saved, wait unbounded for a page
(``TAKE_WAIT_S``, ``SAVE_WAIT_S``), or raise from ``moved``. Two saves of one file never
interleave (one lock per file).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os

from jupyter_core.utils import ensure_async

from ..core.documents import DocumentChanged, OpenUnsaved, PageSilent, Presence
from ..core.fs.files import file_version
from .tabs import OpenDocument, PageRequest, TabRegistry

__all__ = ["SAVE_WAIT_S", "TAKE_WAIT_S", "TabDocuments"]

log = logging.getLogger(__name__)

# A page takes a change in one JavaScript turn as soon as its long poll answers, then posts its
# answer: milliseconds. Five seconds covers a page busy rendering a large notebook or a slow link,
# and bounds how long a tool call waits on a page that has gone quiet (PageSilent).
TAKE_WAIT_S = 5.0
# A save is JupyterLab's own PUT of the whole file through the contents API, then a look at its
# new hash: seconds for a notebook of tens of megabytes.
SAVE_WAIT_S = 30.0
_SLACK_S = 5.0  # the tool thread's own bound beyond the coroutine's


def _iso(value) -> str | None:
    """A contents model's time as Jupyter's JSON writes it (``Z`` for UTC)."""
    if value is None:
        return None
    return value.isoformat().replace("+00:00", "Z") if hasattr(value, "isoformat") else str(value)


class TabDocuments:
    """``LiveDocuments`` for files open in browser tabs (see the module docstring).

    It holds no shared documents: ``snapshot`` and ``text_snapshot`` are None, and the
    ``replace_*`` methods raise ``DocumentChanged`` (a server that also runs collaboration
    combines this with ``CollabDocuments``).
    """

    def __init__(self, serverapp, loop: asyncio.AbstractEventLoop, poll_s: float) -> None:
        self.serverapp = serverapp
        self.loop = loop
        self.root = os.path.realpath(serverapp.root_dir)
        self.registry = TabRegistry(loop, poll_s)
        self._locks: dict[str, tuple[asyncio.Lock, list[int]]] = {}

    # -- paths ---------------------------------------------------------------------------------

    def _rel(self, real: str) -> str | None:
        """The contents API's path of ``real`` (None when it is not beneath the root)."""
        rel = os.path.relpath(real, self.root)
        if rel == "." or rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
            return None
        return rel.replace(os.sep, "/")

    def resolve(self, documents: list[dict]) -> list[OpenDocument]:
        """A page's reported documents with their real paths (blocking: run off the loop)."""
        return [
            OpenDocument(
                d["path"], os.path.realpath(os.path.join(self.root, d["path"])), d["notebook"], d["dirty"], d["tabs"]
            )
            for d in documents
        ]

    # -- LiveDocuments -------------------------------------------------------------------------

    def presence(self, real: str) -> Presence | None:
        found = self.registry.presence(real)
        if found is None:
            return None
        unsaved, tabs = found
        return Presence(shared=False, unsaved=unsaved, tabs=tabs)

    def open_files(self) -> list[tuple[str, Presence]]:
        return [
            (real, Presence(shared=False, unsaved=unsaved, tabs=tabs))
            for real, (unsaved, tabs) in self.registry.open_files().items()
        ]

    def snapshot(self, real: str) -> tuple[dict, str] | None:
        return None

    def text_snapshot(self, real: str) -> tuple[str, str] | None:
        return None

    def replace_sources(self, real: str, version: str, sources: dict[int, tuple[str, str]]) -> str:
        raise DocumentChanged()

    def change_cells(self, real: str, version: str, steps: list[dict]) -> str:
        raise DocumentChanged()

    def replace_notebook(self, real: str, version: str, data: dict) -> str:
        raise DocumentChanged()

    def replace_text(self, real: str, version: str, text: str) -> str:
        raise DocumentChanged()

    def replace_ranges(self, real: str, version: str, notebook: bool, ranges: list) -> str:
        raise DocumentChanged()

    def save_in_tabs(self, real: str, content: str, notebook: bool, version: str | None = None) -> bool:
        """See ``LiveDocuments.save_in_tabs``. ``version``: the file's version (``file_version``)
        the caller's content is based on; the change is refused (``DocumentChanged``) when the file
        is no longer at it, so nobody's save in between is undone."""
        if not self.registry.copies(real, writers=True):
            return False
        bound = TAKE_WAIT_S * 3 + SAVE_WAIT_S + _SLACK_S
        try:
            return self._run(self._save(real, content, notebook, version), bound)
        except concurrent.futures.TimeoutError:
            raise PageSilent("a tab that has the file open did not answer in time") from None

    def moved(self, old_real: str, new_real: str) -> None:
        if not self.registry.copies(old_real, below=True):
            return
        try:
            self._run(self._moved(old_real, new_real), TAKE_WAIT_S + _SLACK_S)
        except Exception:  # best effort: the move itself is done
            log.warning("dsh_jupyter: could not tell the open tabs that %s moved", old_real, exc_info=True)

    # -- on the loop -----------------------------------------------------------------------------

    def _run(self, coro, timeout: float):
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            coro.close()
            raise RuntimeError("open tabs are reached from tool threads, never from the event loop")
        try:
            future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        except RuntimeError:  # the loop is closed: the server is stopping
            coro.close()
            raise PageSilent("the server is stopping") from None
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise
        except concurrent.futures.CancelledError:  # the loop stopped while it waited
            raise PageSilent("the server is stopping") from None

    async def _save(self, real: str, content: str, notebook: bool, version: str | None) -> bool:
        entry = self._locks.setdefault(real, (asyncio.Lock(), [0]))
        entry[1][0] += 1  # callers holding or waiting for the lock: it is dropped after the last
        try:
            async with entry[0]:
                return await self._save_locked(real, content, notebook, version)
        finally:
            entry[1][0] -= 1
            if not entry[1][0]:
                self._locks.pop(real, None)

    async def _save_locked(self, real: str, content: str, notebook: bool, version: str | None) -> bool:
        copies = self.registry.copies(real, writers=True)
        if not copies:
            return False
        expect = await self._on_disk(real, version)
        single = len(copies) == 1
        asks = [
            (
                client,
                doc,
                {
                    "type": "take",
                    "path": doc.path,
                    "notebook": notebook,
                    "content": content,
                    "expect": expect,
                    "save": single,
                },
            )
            for client, doc in copies
        ]
        answers = await self._ask_all(asks, TAKE_WAIT_S + (SAVE_WAIT_S if single else 0))
        taken = [t for t in answers if _status(t[3]) in ("taken", "saved")]
        refusal = _refusal([a for *_, a in answers])
        if refusal is not None:
            if not single:  # one page refused or failed in its own turn, changing nothing
                await self._undo(taken)
            raise refusal
        if not taken:
            return False  # every page had closed it meanwhile: nothing was changed
        if single:
            return True
        saver = next((t for t in taken if (t[3] or {}).get("canSave")), taken[0])
        client, doc, request, _ = saver
        assert request is not None
        ((*_, answer),) = await self._ask_all(
            [(client, doc, {"type": "save", "path": doc.path, "take": request.id})], SAVE_WAIT_S
        )
        others = [t for t in taken if t is not saver]
        if answer is None or _status(answer) != "saved":
            await self._undo(others)
            raise PageSilent(_said(answer) or "the tab that was to save the file did not answer in time")
        if answer.get("exact") and answer.get("model"):
            tell = [
                (c, d, {"type": "saved", "path": d.path, "take": r.id, "model": answer["model"]})
                for c, d, r, _ in others
                if r is not None
            ]
            await self._ask_all(tell, TAKE_WAIT_S)
        return True

    async def _on_disk(self, real: str, version: str | None) -> dict:
        """What the file on disk is now, as a page's contents model names it: hash and
        last-modified from the server's contents manager. ``DocumentChanged`` when it is gone
        or no longer at ``version``."""
        rel = self._rel(real)
        if rel is None:
            raise DocumentChanged()

        def current() -> str | None:
            try:
                return file_version(os.stat(real))
            except OSError:
                return None

        before = current()
        if before is None or (version is not None and before != version):
            raise DocumentChanged()
        cm = self.serverapp.contents_manager
        try:
            try:
                model = await ensure_async(cm.get(rel, content=False, require_hash=True))
            except TypeError:  # a contents manager older than hashes (jupyter_server < 2.11)
                model = await ensure_async(cm.get(rel, content=False))
        except Exception:  # gone, or not a file the contents manager serves
            raise DocumentChanged() from None
        if current() != before:
            raise DocumentChanged()
        return {
            "hash": model.get("hash"),
            "hash_algorithm": model.get("hash_algorithm"),
            "last_modified": _iso(model.get("last_modified")),
        }

    async def _ask_all(
        self, asks: list[tuple[str, OpenDocument, dict]], timeout: float
    ) -> list[tuple[str, OpenDocument, PageRequest | None, dict | None]]:
        """Send each request and wait, at most ``timeout`` in all, for the answers; a request not
        answered by then is withdrawn (its answer None, as for a page that went away)."""
        sent = [(client, doc, self.registry.ask(client, body)) for client, doc, body in asks]
        futures = [request.answer for _, _, request in sent if request is not None]
        if futures:
            await asyncio.wait(futures, timeout=timeout)
        out = []
        for client, doc, request in sent:
            answer = None
            if request is not None:
                if request.answer.done():
                    answer = request.answer.result()
                else:
                    self.registry.withdraw(client, request)
            out.append((client, doc, request, answer))
        return out

    async def _undo(self, taken: list[tuple[str, OpenDocument, PageRequest | None, dict | None]]) -> None:
        """Ask each page that took a change to give it back (bounded; a page whose answer came too
        late gives it back itself, when the server tells it nobody waits for that answer)."""
        asks = [(c, d, {"type": "undo", "path": d.path, "take": r.id}) for c, d, r, _ in taken if r is not None]
        if asks:
            await self._ask_all(asks, TAKE_WAIT_S)

    async def _moved(self, old_real: str, new_real: str) -> None:
        new_path = self._rel(new_real)
        told = self.registry.moved(old_real, new_real, new_path)
        place = {"from": self._rel(old_real), "to": new_path}  # the moved file or folder itself
        asks = [
            (client, _NO_DOCUMENT, {"type": "moved", **place, "moves": [{"from": a, "to": b} for a, b in moves]})
            for client, moves in told.items()
        ]
        if asks:
            await self._ask_all(asks, TAKE_WAIT_S)


_NO_DOCUMENT = OpenDocument("", "", False, False, 0)  # a request about no one document (a move)


def _status(answer: dict | None) -> str | None:
    return answer.get("status") if answer else None


def _said(answer: dict | None) -> str | None:
    """The refusal for a page that said its save failed. What the page said goes to the log, not
    into the refusal: a caller shows the refusal, and a page's words are not the server's."""
    if _status(answer) != "failed":
        return None
    log.warning("dsh_jupyter: a tab could not save a file: %s", (answer or {}).get("message") or "(no reason given)")
    return "the tab could not save the file"


def _refusal(answers: list[dict | None]) -> Exception | None:
    """What the pages' answers to a take say, the most telling first; None when none refused."""
    statuses = [_status(a) for a in answers]
    if "unsaved" in statuses:
        return OpenUnsaved("a tab that has the file open holds unsaved changes")
    if "changed" in statuses:
        return DocumentChanged("the file on disk is no longer what the tabs show")
    if "busy" in statuses:
        return PageSilent("a tab that has the file open is still loading it")
    for answer in answers:
        if _status(answer) not in ("taken", "saved", "gone"):
            return PageSilent(_said(answer) or "a tab that has the file open did not answer in time")
    return None
