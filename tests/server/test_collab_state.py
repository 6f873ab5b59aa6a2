"""jupyter-collaboration's own state goes to Jupyter's data folder, unless the user put it elsewhere.

A real ``jupyter server`` (jupyter-collaboration and dsh_jupyter both enabled by their installed
config files) over a root holding one CRLF file; a room is opened on it as JupyterLab opens one
(``PUT /api/collaboration/session/<path>``, then the room's websocket). The document history and
the session record land in ``<jupyter data dir>/dsh_jupyter/``: no ``.jupyter_ystore.db`` in the
server's working folder, no ``.jupyter/`` in the root, and the file itself untouched. Set on the
command line, the user's own locations win.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest
from servers import JupyterProcess
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

pytestmark = pytest.mark.slow

CRLF = b"a = 1\r\nb = 2\r\n"
OLD_NS = 978_307_200_000_000_000  # 2001-01-01


def make_root(tmp: Path) -> Path:
    root = tmp / "root"
    root.mkdir(parents=True)
    (root / "crlf.py").write_bytes(CRLF)
    os.utime(root / "crlf.py", ns=(OLD_NS, OLD_NS))
    return Path(os.path.realpath(root))


def open_room(server: JupyterProcess, path: str, until) -> None:
    """Open ``path``'s room as JupyterLab does, hold it until ``until()`` (or 30 s), close it."""
    status, session = server.request("PUT", f"api/collaboration/session/{path}", {"format": "text", "type": "file"})
    assert status in (200, 201), (status, session)
    room = f"text:file:{session['fileId']}"
    url = server.url.replace("http://", "ws://") + f"api/collaboration/room/{room}?sessionId={session['sessionId']}"

    async def hold():
        request = HTTPRequest(url, headers={"Authorization": f"token {server.token}"})
        ws = await websocket_connect(request)
        deadline = time.monotonic() + 30
        while not until() and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        await asyncio.sleep(2.5)  # past document_save_delay (1 s): a save the room makes has happened
        ws.close()

    asyncio.run(hold())


def test_collaboration_state_goes_to_the_data_folder(tmp_path):
    root = make_root(tmp_path)
    server = JupyterProcess.start(tmp_path / "srv", root, timeout=90)
    data = Path(server.env["JUPYTER_DATA_DIR"]) / "dsh_jupyter"
    try:
        open_room(
            server, "crlf.py", lambda: (data / "collaboration_sessions.json").exists() and (data / "ystore.db").exists()
        )
    finally:
        server.stop()
    assert (data / "ystore.db").is_file()
    sessions = json.loads((data / "collaboration_sessions.json").read_text())
    assert len(sessions) == 1 and "version" in next(iter(sessions.values()))
    assert sorted(os.listdir(root)) == ["crlf.py"]  # no .jupyter/, no checkpoints
    assert (root / "crlf.py").read_bytes() == CRLF and (root / "crlf.py").stat().st_mtime_ns == OLD_NS
    assert not (server.tmp / ".jupyter_ystore.db").exists()  # the server's working folder
    log = server.log.read_text(errors="replace")
    assert (
        f"dsh_jupyter: collaboration state outside the workspace: SQLiteYStore.db_path = {data / 'ystore.db'}, "
        f"YDocExtension.session_store_path = {data / 'collaboration_sessions.json'}"
    ) in log


def test_the_user_s_own_locations_win(tmp_path):
    root = make_root(tmp_path)
    mine = tmp_path / "mine"
    server = JupyterProcess.start(
        tmp_path / "srv",
        root,
        timeout=90,
        extra_args=[
            f"--SQLiteYStore.db_path={mine / 'history.db'}",
            f"--YDocExtension.session_store_path={mine / 'sessions.json'}",
        ],
    )
    mine.mkdir()
    data = Path(server.env["JUPYTER_DATA_DIR"]) / "dsh_jupyter"
    try:
        open_room(server, "crlf.py", lambda: (mine / "history.db").exists() and (mine / "sessions.json").exists())
    finally:
        server.stop()
    assert (mine / "history.db").is_file() and (mine / "sessions.json").is_file()
    assert not (data / "ystore.db").exists() and not (data / "collaboration_sessions.json").exists()
    assert "collaboration state outside the workspace" not in server.log.read_text(errors="replace")
    assert sorted(os.listdir(root)) == ["crlf.py"]
