"""A person's tab without a browser: a Y.js client of a real jupyter-collaboration server.

JupyterLab opens a file by asking ``PUT /api/collaboration/session/<path>`` for the file's room and
then syncing a Y document over the room's websocket; this does the same with pycrdt's own
``Provider`` (the client the collaboration's tests use), so a test can type into the shared
document as a person's tab would, and see what the person sees, while an agent calls the tools.
The browser tests (``tests/e2e``) play a person with real keys; this one is for the server's rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.request
from collections.abc import AsyncIterator

from httpx_ws import aconnect_ws
from jupyter_ydoc import YNotebook, YUnicode
from pycrdt import Provider
from pycrdt.websocket.websocket import HttpxWebsocket

from dsh_jupyter.server.collab import _units


def _session(server, path: str, notebook: bool) -> dict:
    body = json.dumps({"format": "json" if notebook else "text", "type": "notebook" if notebook else "file"})
    req = urllib.request.Request(
        f"{server.url}api/collaboration/session/{path}",
        data=body.encode(),
        method="PUT",
        headers={"Authorization": f"token {server.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


@contextlib.asynccontextmanager
async def person(server, path: str, notebook: bool = False, timeout: float = 30.0) -> AsyncIterator:
    """A tab with ``path`` open: yields its ``YUnicode`` (or ``YNotebook``) once it holds the file."""
    data = await asyncio.to_thread(_session, server, path, notebook)
    room = f"{data['format']}:{data['type']}:{data['fileId']}"
    url = f"{server.url}api/collaboration/room/{room}?sessionId={data['sessionId']}&token={server.token}"
    doc = YNotebook() if notebook else YUnicode()
    async with aconnect_ws(url) as ws, Provider(doc.ydoc, HttpxWebsocket(ws, room)):
        deadline = time.monotonic() + timeout
        while not (doc.get()["cells"] if notebook else doc.get()):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the room of {path} never sent its content")
            await asyncio.sleep(0.05)
        yield doc


async def until(predicate, timeout: float = 15.0, what: str = "it") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s")
        await asyncio.sleep(0.05)


def type_at(doc: YUnicode, index: int, text: str) -> None:
    """Type ``text`` at character ``index`` of a text document, as a keystroke would."""
    ytext = doc._ysource
    old = str(ytext)
    ytext.insert(_units(old, len(ytext))(old[:index]), text)
