"""Files open in JupyterLab with real-time collaboration, through jupyter-collaboration's shared documents.

Why it exists: with real-time collaboration (the ``jupyter_server_ydoc`` extension of
``jupyter-collaboration``, in the ``lab`` and ``collab`` extras) every notebook and text file a
person has open is a shared document in this server (a ``YNotebook`` or a ``YUnicode``), and the
file on disk lags behind it: the person's unsaved typing is only in the document, and the room
saves the document over the file. ``CollabDocuments`` is the shared-document half of the core's
``LiveDocuments`` (``core/documents.py``): the tools read the open document, ``edit`` changes it in
place, ``write`` merges into it (``server/merging.py``), so JupyterLab shows the change at once and
saves it itself, and nobody's typing is overwritten; after a ``move`` the file's id follows it, so
the room, and the tab on it, follow the file to its new path.

A document is open when its room has a client (a browser tab is connected); it is found as
jupyter_server_ydoc finds it, by the file's id (``file_id_manager``) and the room id
``json:notebook:<id>`` or ``text:file:<id>`` (``open_files`` lists the rooms with clients, each
file named by its id). Its version is a digest of its content: it changes whenever the content
does (typing, running a cell), which is what the read-before-write gate needs; the content of the
versions reported lately is remembered, for the merge of a ``write``.

Tool calls run on worker threads; the document lives on the event loop. Every look at or change to
a document therefore runs on the loop (``run_coroutine_threadsafe``), each as one coroutine with
no await between checking the version and changing the document, so nothing can slip between.

What it must never do: run on the event loop's own thread (it would wait for itself), create a
room (a file nobody has open is changed as a file), change a document whose version is not the
one checked, or import jupyter_server_ydoc when it is not installed (it is looked up at run time).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import difflib
import hashlib
import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator

import nbformat

from ..core.documents import DocumentChanged, Presence
from .merging import merge_notebooks, merge_texts

__all__ = ["YDOC_EXTENSION", "CollabDocuments"]

YDOC_EXTENSION = "jupyter_server_ydoc"  # the server extension of jupyter-collaboration
_WAIT_S = 30.0  # how long a tool call waits for the event loop to answer about a document
_MERGE_TRIES = 5  # merges made again when the person typed between the merge and its change
_ROOM_KINDS = ("json:notebook", "text:file")  # the rooms of the documents the tools reach

log = logging.getLogger(__name__)


def document_version(data: dict) -> str:
    body = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "ydoc:" + hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _units(text: str, length: int) -> Callable[[str], int]:
    """How the shared text counts positions: UTF-8 bytes (pycrdt's default), code points or UTF-16."""
    if length == len(text.encode("utf-8", "surrogatepass")):
        return lambda s: len(s.encode("utf-8", "surrogatepass"))
    if length == len(text):
        return len
    return lambda s: len(s.encode("utf-16-le", "surrogatepass")) // 2


def text_version(text: str) -> str:
    return "ydoc:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _edits(old: str, new: str) -> list[tuple[int, int, str]]:
    """``(start, end, text)`` replacements (code points of ``old``) that make ``old`` into ``new``,
    one per changed run of lines, each cut to the characters that differ; last first."""
    a, b = old.splitlines(True), new.splitlines(True)
    starts = [0]
    for line in a:
        starts.append(starts[-1] + len(line))
    out = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        was, now = "".join(a[i1:i2]), "".join(b[j1:j2])
        head = 0
        limit = min(len(was), len(now))
        while head < limit and was[head] == now[head]:
            head += 1
        tail = 0
        while tail < limit - head and was[len(was) - 1 - tail] == now[len(now) - 1 - tail]:
            tail += 1
        out.append((starts[i1] + head, starts[i1] + len(was) - tail, now[head : len(now) - tail]))
    return out[::-1]


def _replace_text(ytext, old: str, new: str) -> None:
    """Change the shared text ``ytext`` (holding ``old``) to ``new`` by the smallest deletes and
    inserts, a run of changed lines at a time, so collaborators' cursors elsewhere stay put."""
    size = _units(old, len(ytext))
    for start, end, text in _edits(old, new):  # last first: earlier positions stay valid
        at = size(old[:start])
        removed = size(old[start:end])
        if removed:
            del ytext[at : at + removed]
        if text:
            ytext.insert(at, text)


def _check_steps(ids: list, steps: list[dict]) -> None:
    """``DocumentChanged`` unless every step finds its cell where it says (replayed on the ids)."""
    ids = list(ids)
    for step in steps:
        at = step["at"]
        if step["do"] == "insert":
            if not 0 <= at <= len(ids):
                raise DocumentChanged()
            ids.insert(at, step["cell"].get("id"))
            continue
        if not 0 <= at < len(ids) or (step.get("id") is not None and ids[at] != step["id"]):
            raise DocumentChanged()
        if step["do"] == "delete":
            del ids[at]


class _Remembered:
    """The content of the versions reported lately, by version (a few, bounded in size)."""

    def __init__(self, entries: int = 64, max_chars: int = 64 * 1024 * 1024) -> None:
        self._items: OrderedDict[str, str | dict] = OrderedDict()
        self._sizes: dict[str, int] = {}
        self._entries, self._max = entries, max_chars
        self._lock = threading.Lock()

    def put(self, version: str, content: str | dict, size: int) -> None:
        if size > self._max // 4:
            return
        with self._lock:
            self._items[version] = content
            self._items.move_to_end(version)
            self._sizes[version] = size
            while len(self._items) > self._entries or sum(self._sizes.values()) > self._max:
                gone, _ = self._items.popitem(last=False)
                self._sizes.pop(gone, None)

    def get(self, version: str) -> str | dict | None:
        with self._lock:
            return copy.deepcopy(self._items.get(version))


class CollabDocuments:
    """Shared documents over jupyter_server_ydoc's rooms (see the module docstring)."""

    def __init__(self, serverapp, loop: asyncio.AbstractEventLoop) -> None:
        self.serverapp = serverapp
        self.loop = loop
        self.root = os.path.realpath(serverapp.root_dir)
        self._seen = _Remembered()

    # -- finding the document --------------------------------------------------------------------

    def _extension(self):
        return self.serverapp.web_app.settings.get(YDOC_EXTENSION)

    def _rel(self, real: str) -> str | None:
        rel = os.path.relpath(real, self.root)
        if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
            return None
        return rel.replace(os.sep, "/")

    def _room_id(self, rel: str, notebook: bool) -> str | None:
        ids = self.serverapp.web_app.settings.get("file_id_manager")
        if ids is None:
            return None
        file_id = ids.get_id(rel)  # an unindexed file was never opened: no room can exist
        if file_id is None:
            return None
        return f"json:notebook:{file_id}" if notebook else f"text:file:{file_id}"

    async def _document(self, rel: str, notebook: bool = True):
        ext = self._extension()
        room_id = self._room_id(rel, notebook)
        if ext is None or room_id is None:
            return None
        return await ext.get_document(room_id=room_id, copy=False)

    def _open(self, rel: str, notebook: bool) -> bool:
        """Whether a tab is connected to the file's room now (a room outlives its last tab a while)."""
        ext = self._extension()
        room_id = self._room_id(rel, notebook)
        server = getattr(ext, "ywebsocket_server", None)
        room = getattr(server, "rooms", {}).get(room_id) if room_id is not None else None
        return bool(room is not None and getattr(room, "clients", None))

    def _run(self, make):
        """Run the coroutine ``make(rel)``-style callable on the event loop and wait for its answer."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            raise RuntimeError("live documents are reached from tool threads, never from the event loop")
        return asyncio.run_coroutine_threadsafe(make(), self.loop).result(_WAIT_S)

    # -- LiveDocuments: presence -------------------------------------------------------------------

    def presence(self, real: str) -> Presence | None:
        rel = self._rel(real)
        if rel is None or self._extension() is None:
            return None

        async def look():
            return self._open(rel, True) or self._open(rel, False)

        return Presence(shared=True) if self._run(look) else None

    def open_files(self) -> list[tuple[str, Presence]]:
        """Every file whose shared document a tab is connected to now, with the number of
        connections (one per page): each room of a notebook or a text file with clients, named
        by its file id as ``presence`` finds it."""
        if self._extension() is None:
            return []

        async def look():
            ids = self.serverapp.web_app.settings.get("file_id_manager")
            rooms = getattr(getattr(self._extension(), "ywebsocket_server", None), "rooms", {})
            found = []
            for room_id, room in list(rooms.items()):
                kind, _, file_id = str(room_id).rpartition(":")
                clients = getattr(room, "clients", None)
                if kind not in _ROOM_KINDS or not clients or ids is None:
                    continue  # another kind of room (awareness, a binary file), or nobody connected
                rel = ids.get_path(file_id)
                if rel is not None:
                    found.append((rel, len(clients)))
            return found

        return [
            (os.path.realpath(os.path.join(self.root, rel)), Presence(shared=True, tabs=count))
            for rel, count in self._run(look)
        ]

    # -- LiveDocuments: notebooks --------------------------------------------------------------------

    def snapshot(self, real: str) -> tuple[dict, str] | None:
        rel = self._rel(real)
        if rel is None or self._extension() is None:
            return None

        async def look():
            doc = await self._document(rel)
            if doc is None:
                return None
            data = doc.get()
            return data, document_version(data)

        found = self._run(look)
        if found is not None:
            self._seen.put(found[1], found[0], len(json.dumps(found[0])))
        return found

    def replace_sources(self, real: str, version: str, sources: dict[int, tuple[str, str]]) -> str:
        rel = self._rel(real)
        if rel is None:
            raise DocumentChanged()

        async def change():
            doc = await self._document(rel)
            if doc is None or document_version(doc.get()) != version:
                raise DocumentChanged()
            cells = doc.ycells
            texts = {}
            for index, (old, _new) in sources.items():
                if index > len(cells):
                    raise DocumentChanged()
                ytext = cells[index - 1]["source"]
                if str(ytext) != old:
                    raise DocumentChanged()
                texts[index] = ytext
            with doc.ydoc.transaction():
                for index, (old, new) in sources.items():
                    _replace_text(texts[index], old, new)
            data = doc.get()
            return data, document_version(data)

        return self._remember(self._run(change))

    def change_cells(self, real: str, version: str, steps: list[dict]) -> str:
        """The cells array changed by ``steps`` (``LiveDocuments.change_cells``) in one transaction:
        cells inserted and deleted where the steps say, a moved cell put back as the document held
        it (its id, its typing), outputs cleared in their own cell; no other cell is touched."""
        rel = self._rel(real)
        if rel is None:
            raise DocumentChanged()

        async def change():
            from pycrdt import Array  # installed with jupyter-collaboration, which made the document

            doc = await self._document(rel)
            if doc is None or document_version(doc.get()) != version:
                raise DocumentChanged()
            cells = doc.ycells
            _check_steps([cell.get("id") for cell in cells], steps)  # before anything changes
            taken = None
            with doc.ydoc.transaction():
                for step in steps:
                    at = step["at"]
                    if step["do"] == "insert":
                        cell = taken if step.get("moved") and taken is not None else step["cell"]
                        cells.insert(at, doc.create_ycell(cell))
                    elif step["do"] == "delete":
                        taken = cells[at].to_py()
                        del cells[at]
                    else:  # clear: this cell's outputs and execution count, in place
                        ycell = cells[at]
                        outputs = ycell.get("outputs")
                        if isinstance(outputs, Array):
                            outputs.clear()
                        else:
                            ycell["outputs"] = Array()
                        ycell["execution_count"] = None
            data = doc.get()
            return data, document_version(data)

        return self._remember(self._run(change))

    def replace_notebook(self, real: str, version: str, data: dict) -> str:
        rel = self._rel(real)
        if rel is None:
            raise DocumentChanged()
        # as Jupyter loads a file into a document: multiline strings (sources, output text) joined
        value = nbformat.reads(json.dumps(data), as_version=nbformat.NO_CONVERT)

        async def change():
            doc = await self._document(rel)
            if doc is None or document_version(doc.get()) != version:
                raise DocumentChanged()
            doc.set(value)  # cell by cell, kept by id (jupyter_ydoc)
            now = doc.get()
            return now, document_version(now)

        return self._remember(self._run(change))

    def merge_notebook(self, real: str, base: dict, data: dict) -> tuple[str, bool]:
        for _ in range(_MERGE_TRIES):
            found = self.snapshot(real)
            if found is None:
                raise DocumentChanged()
            live, version = found
            merged, kept = merge_notebooks(base, dict(data), live)
            try:
                return self.replace_notebook(real, version, merged), kept
            except DocumentChanged:
                continue  # the person typed meanwhile: merge again with what they typed
        raise DocumentChanged()

    # -- LiveDocuments: text files -------------------------------------------------------------------

    def text_snapshot(self, real: str) -> tuple[str, str] | None:
        rel = self._rel(real)
        if rel is None or self._extension() is None:
            return None

        async def look():
            doc = await self._document(rel, notebook=False)
            if doc is None:
                return None
            text = doc.get()
            return text, text_version(text)

        found = self._run(look)
        if found is not None:
            self._seen.put(found[1], found[0], len(found[0]))
        return found

    def replace_text(self, real: str, version: str, text: str) -> str:
        rel = self._rel(real)
        if rel is None:
            raise DocumentChanged()

        async def change():
            doc = await self._document(rel, notebook=False)
            if doc is None:
                raise DocumentChanged()
            old = doc.get()
            if text_version(old) != version:
                raise DocumentChanged()
            with doc.ydoc.transaction():
                _replace_text(doc._ysource, old, text)
            now = doc.get()
            return now, text_version(now)

        return self._remember(self._run(change))

    def replace_ranges(
        self, real: str, version: str, notebook: bool, ranges: list[tuple[int | None, int, int, str, str]]
    ) -> str:
        """Exactly ``ranges`` deleted and inserted (``LiveDocuments.replace_ranges``), in one
        transaction, the last of each text first so the earlier positions stay valid."""
        rel = self._rel(real)
        if rel is None:
            raise DocumentChanged()

        async def change():
            doc = await self._document(rel, notebook=notebook)
            if doc is None:
                raise DocumentChanged()
            now = doc.get()
            versioned = document_version if notebook else text_version
            if versioned(now) != version:
                raise DocumentChanged()
            texts: dict[int | None, tuple] = {}  # cell (None: the text file) -> (ytext, its text, its units)
            for cell, start, end, old, _new in ranges:
                if cell not in texts:
                    if notebook:
                        if cell is None or not 0 < cell <= len(doc.ycells):
                            raise DocumentChanged()
                        ytext = doc.ycells[cell - 1]["source"]
                    else:
                        ytext = doc._ysource
                    text = str(ytext)
                    texts[cell] = (ytext, text, _units(text, len(ytext)))
                if texts[cell][1][start:end] != old:
                    raise DocumentChanged()
            with doc.ydoc.transaction():
                for cell, start, end, old, new in sorted(ranges, key=lambda r: (r[0] or 0, r[1]), reverse=True):
                    ytext, text, size = texts[cell]
                    at = size(text[:start])
                    if end > start:
                        del ytext[at : at + size(old)]
                    if new:
                        ytext.insert(at, new)
            data = doc.get()
            return data, versioned(data)

        return self._remember(self._run(change))

    def merge_text(self, real: str, base: str, text: str) -> tuple[str, bool]:
        for _ in range(_MERGE_TRIES):
            found = self.text_snapshot(real)
            if found is None:
                raise DocumentChanged()
            live, version = found
            merged, kept = merge_texts(base, text, live)
            try:
                return self.replace_text(real, version, merged), kept
            except DocumentChanged:
                continue  # the person typed meanwhile: merge again with what they typed
        raise DocumentChanged()

    # -- LiveDocuments: what was read, moves, tabs ----------------------------------------------------

    def remembered(self, real: str, version: str) -> str | dict | None:
        return self._seen.get(version)

    def _remember(self, found: tuple) -> str:
        content, version = found
        self._seen.put(version, content, len(content) if isinstance(content, str) else len(json.dumps(content)))
        return version

    def _loaders(self, old: str) -> list:
        """The file loaders (whose lock every save of a room takes) of the open files at or below ``old``."""
        ext = self._extension()
        ids = self.serverapp.web_app.settings.get("file_id_manager")
        if ext is None or ids is None:
            return []
        found = []
        file_id = ids.get_id(old)
        if file_id is not None and file_id in ext.file_loaders:
            found.append(ext.file_loaders[file_id])
        prefix = old.rstrip("/") + "/"
        for room in list(getattr(ext.ywebsocket_server, "rooms", {}).values()):
            loader = getattr(room, "_file", None)  # a folder moved: the rooms of the files below it
            try:
                below = loader is not None and loader.path.startswith(prefix)
            except Exception:
                below = False
            if below and loader not in found:
                found.append(loader)
        return found

    @contextlib.contextmanager
    def moving(self, old_real: str, new_real: str) -> Iterator[None]:
        """Hold the saves of the rooms of the files being moved (each room saves under its file
        loader's lock: a save in flight would make the file again at its old path), and once the
        rename is done tell the file-id service, so the files keep their ids: their rooms (and with
        them each document's ``path``, which JupyterLab's tab follows) go with them."""
        old, new = self._rel(old_real), self._rel(new_real)
        ids = self.serverapp.web_app.settings.get("file_id_manager")
        if old is None or new is None or ids is None or self._extension() is None:
            yield
            return
        held = threading.Event()
        box: dict = {}

        async def hold():
            box["release"] = release = asyncio.Event()
            loaders = self._loaders(old)
            for loader in loaders:
                await loader._lock.acquire()
            try:
                held.set()
                await release.wait()
                if box.get("done"):
                    ids.move(old, new)
                    for loader in loaders:
                        await _announce_path(loader)
            finally:
                for loader in reversed(loaders):
                    loader._lock.release()

        future = asyncio.run_coroutine_threadsafe(hold(), self.loop)
        if not held.wait(_WAIT_S):
            future.cancel()
            log.warning("could not hold the saves of %s for a move; moving without", old)
            yield
            return
        try:
            yield
            box["done"] = True
        finally:
            self.loop.call_soon_threadsafe(box["release"].set)
            try:
                future.result(_WAIT_S)
            except Exception as exc:  # the move is done; an open tab may stay on the old path
                log.warning("could not tell Jupyter's file ids that %s moved to %s: %s", old, new, exc)

    def save_in_tabs(self, real: str, content: str, notebook: bool, version: str | None = None) -> bool:
        return False  # shared documents have no tabs of their own: see presence (shared=True)


async def _announce_path(loader) -> None:
    """Tell the rooms of a moved file its new path now, while its saves are still held.

    jupyter-collaboration's file loader notices a new path only at its next poll of the file (up
    to ``file_poll_interval`` later), and a save can come first: the document is saved at the new
    path and JupyterLab is told of that save while its tab still has the old path, so the tab
    ignores the save's new hash, and the person's next Ctrl+S finds the file "changed on disk".
    Announcing the path before any save (the loader's lock is held) keeps the order right: the
    path, then the saves. The loader's own poll then finds nothing new. Private attributes of the
    loader are used; if they change, this logs and the loader's poll announces the path as before.
    """
    try:
        path = loader.path
        if getattr(loader, "_current_path", path) == path:
            return
        loader._current_path = path
        for callback in list(loader._filepath_subscriptions.values()):
            done = callback()
            if asyncio.iscoroutine(done):
                await done
    except Exception as exc:
        log.warning("could not tell the open documents of %s their new path: %s", getattr(loader, "file_id", "?"), exc)
