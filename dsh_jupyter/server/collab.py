"""Notebooks open in JupyterLab, through jupyter-collaboration's shared documents.

Why it exists: with real-time collaboration (the ``jupyter_server_ydoc`` extension of
``jupyter-collaboration``, the ``dsh-jupyter[collab]`` extra) a notebook someone has open is a
shared document (a ``YNotebook``) in this server, and the file on disk lags behind it: the
person's unsaved typing is only in the document, and the room saves the document over the file.
``CollabDocuments`` is the core's ``LiveDocuments`` (``core/documents.py``) for such a server: the
notebook tools read the open document, and ``edit``/``write`` change it, so JupyterLab shows the
change at once and saves it itself, and nobody's typing is overwritten.

A document is "open" when its room exists (JupyterLab opened it and the room has not been cleaned
up); it is found as jupyter_server_ydoc finds it, by the file's id (``file_id_manager``) and the
room id ``json:notebook:<id>``. Its version is a digest of its content: it changes whenever the
content does (typing, running a cell), which is what the read-before-write gate needs.

Tool calls run on worker threads; the document lives on the event loop. Every look at or change to
a document therefore runs on the loop (``run_coroutine_threadsafe``), each as one coroutine with
no await between checking the version and changing the document, so nothing can slip between.

What it must never do: run on the event loop's own thread (it would wait for itself), create a
room (a notebook nobody has open is edited as a file), change a document whose version is not the
one checked, or import jupyter_server_ydoc when it is not installed (it is looked up at run time).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Callable

import nbformat

from ..core.documents import DocumentChanged

__all__ = ["YDOC_EXTENSION", "CollabDocuments"]

YDOC_EXTENSION = "jupyter_server_ydoc"  # the server extension of jupyter-collaboration
_WAIT_S = 30.0  # how long a tool call waits for the event loop to answer about a document


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


def _replace_text(ytext, old: str, new: str) -> None:
    """Change the shared text ``ytext`` (holding ``old``) to ``new`` by one delete and one insert
    around the common prefix and suffix, so collaborators' cursors elsewhere stay where they are."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1
    size = _units(old, len(ytext))
    at = size(old[:start])
    removed = size(old[start : len(old) - end])
    if removed:
        del ytext[at : at + removed]
    inserted = new[start : len(new) - end]
    if inserted:
        ytext.insert(at, inserted)


class CollabDocuments:
    """``LiveDocuments`` over jupyter_server_ydoc's rooms (see the module docstring)."""

    def __init__(self, serverapp, loop: asyncio.AbstractEventLoop) -> None:
        self.serverapp = serverapp
        self.loop = loop
        self.root = os.path.realpath(serverapp.root_dir)

    # -- finding the document --------------------------------------------------------------------

    def _extension(self):
        return self.serverapp.web_app.settings.get(YDOC_EXTENSION)

    def _rel(self, real: str) -> str | None:
        rel = os.path.relpath(real, self.root)
        if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
            return None
        return rel.replace(os.sep, "/")

    async def _document(self, rel: str):
        ext = self._extension()
        ids = self.serverapp.web_app.settings.get("file_id_manager")
        if ext is None or ids is None:
            return None
        file_id = ids.get_id(rel)  # an unindexed file was never opened: no room can exist
        if file_id is None:
            return None
        return await ext.get_document(room_id=f"json:notebook:{file_id}", copy=False)

    def _run(self, make):
        """Run the coroutine ``make(rel)``-style callable on the event loop and wait for its answer."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            raise RuntimeError("live documents are reached from tool threads, never from the event loop")
        return asyncio.run_coroutine_threadsafe(make(), self.loop).result(_WAIT_S)

    # -- LiveDocuments ---------------------------------------------------------------------------

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

        return self._run(look)

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
            return document_version(doc.get())

        return self._run(change)

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
            doc.set(value)
            return document_version(doc.get())

        return self._run(change)
