"""A folder listed while a file in it moves answers the folder without that file, never a 404.

Jupyter's contents manager lists a folder by asking ``get`` for each name it found; a name renamed
away in between made the whole listing a 404 (JupyterLab's file browser then shows "Directory not
found"). ``server/listing_guard.py`` leaves such an entry out. The races here are real: a thread
renames a file back and forth as fast as it can while the folder is listed, through a real
``jupyter server`` subprocess's REST API and through the sync contents manager in this process.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from jupyter_server.services.contents.filemanager import FileContentsManager
from servers import JupyterProcess
from tornado.web import HTTPError

from dsh_jupyter.server.listing_guard import guard_listings

pytestmark = pytest.mark.slow

STEADY = [f"f{i:03d}.txt" for i in range(200)]


def folder(root: Path) -> Path:
    d = root / "d"
    d.mkdir(parents=True)
    for name in STEADY:
        (d / name).write_text("x")
    return d


class Mover:
    """Renames ``m.txt`` to ``n.txt`` and back in ``d``, as fast as it can, until stopped."""

    def __init__(self, d: Path) -> None:
        self.a, self.b = d / "m.txt", d / "n.txt"
        self.a.write_text("m")
        self.stop = threading.Event()
        self.renames = 0
        self.thread = threading.Thread(target=self.run)

    def run(self) -> None:
        while not self.stop.is_set():
            os.rename(self.a, self.b)
            os.rename(self.b, self.a)
            self.renames += 2

    def __enter__(self) -> Mover:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(10)


def names(model: dict) -> list[str]:
    return sorted(entry["name"] for entry in model["content"])


def test_listings_over_rest_while_a_file_moves_are_all_answered(tmp_path):
    root = Path(os.path.realpath(tmp_path / "root"))
    d = folder(root)
    server = JupyterProcess.start(tmp_path, root, token="listing-token")
    try:
        listed = 0
        with Mover(d) as mover:
            # at least 3 s and 20 listings, however busy the machine (at most 60 s)
            start = time.monotonic()
            while time.monotonic() < start + 3 or (listed <= 20 and time.monotonic() < start + 60):
                status, model = server.request("GET", "api/contents/d?content=1")
                assert status == 200, (status, model)
                got = names(model)
                assert got[:200] == STEADY and set(got[200:]) <= {"m.txt", "n.txt"}, got[200:]
                listed += 1
        assert listed > 20 and mover.renames > 1000, (listed, mover.renames)
        # a folder or a file that is not there is still a 404
        assert server.request("GET", "api/contents/nope?content=1")[0] == 404
        assert server.request("GET", "api/contents/d/nope.txt")[0] == 404
    finally:
        server.stop()


def test_the_sync_contents_manager_lists_the_rest_too(tmp_path):
    d = folder(tmp_path)
    cm = FileContentsManager(root_dir=str(tmp_path))
    assert guard_listings(cm) is True and guard_listings(cm) is True  # once only
    listed = 0
    with Mover(d):
        start = time.monotonic()  # at least 2 s and 20 listings, however busy the machine (at most 60 s)
        while time.monotonic() < start + 2 or (listed <= 20 and time.monotonic() < start + 60):
            got = names(cm.get("d"))
            assert got[:200] == STEADY and set(got[200:]) <= {"m.txt", "n.txt"}, got[200:]
            listed += 1
    assert listed > 20
    with pytest.raises(HTTPError) as missing:
        cm.get("d/nope.txt", content=False)
    assert missing.value.status_code == 404
