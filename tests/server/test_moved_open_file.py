"""A moved open file: its room tells JupyterLab the new path before it saves there.

JupyterLab's tab learns a server-side save from the room's ``hash`` and then asks the file's
model *at the path the tab has*; a save announced before the path would be looked up at the old
path (404), the tab would keep the old hash, and the person's next Ctrl+S would find the file
"changed on disk". jupyter-collaboration's loader announces a new path only at its next poll of
the file, so the server here polls once a minute: the path must arrive at once, and before the
first hash the room announces after the move, while the person types across it.
"""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from collab_person import person, type_at, until
from servers import JupyterProcess

pytestmark = pytest.mark.slow

TOKEN = "moved-open-token"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("moved-open")
    root = tmp / "tree"
    root.mkdir()
    root = type(root)(os.path.realpath(root))
    srv = JupyterProcess.start(
        tmp,
        root,
        token=TOKEN,
        timeout=90,
        extra_args=["--YDocExtension.document_save_delay=3", "--YDocExtension.file_poll_interval=60"],
    )
    try:
        yield srv
    finally:
        srv.stop()


def test_the_new_path_reaches_the_tab_before_any_save_there(server):
    (server.root / "notes.py").write_text("".join(f"line {i}\n" for i in range(1, 11)))

    async def scenario():
        async with person(server, "notes.py") as doc:
            seen: list[tuple[str, object]] = []
            doc.ystate.observe(lambda event: seen.extend((k, v["newValue"]) for k, v in event.keys.items()))
            await asyncio.to_thread(server.tool, "read", "mv", file_path="notes.py")
            type_at(doc, 0, "# typed before the move\n")  # saved 3 s later: pending when the move comes
            moved_at = len(seen)
            moved = await asyncio.to_thread(server.tool, "move", "mv", source="notes.py", destination="sub/notes.py")
            started = time.monotonic()
            await until(lambda: doc.path == "sub/notes.py", timeout=5, what="the new path reaching the tab")
            waited = time.monotonic() - started
            type_at(doc, 0, "# typed after the move\n")
            await until(
                lambda: (server.root / "sub" / "notes.py").read_text().startswith("# typed after the move"),
                what="the room saving at the new path",
            )
            await until(lambda: any(k == "hash" for k, _ in seen[moved_at:]), what="a save announced")
            return moved, waited, [k for k, _ in seen[moved_at:] if k in ("path", "hash")]

    moved, waited, order = asyncio.run(scenario())
    assert moved["value"]["open"] == "shared", moved
    assert waited < 5  # not the loader's minute-long poll
    assert order.index("path") < order.index("hash"), order  # any hash after the move comes after the path
    assert (server.root / "sub" / "notes.py").read_text().startswith("# typed after the move\n# typed before the move")
    assert not (server.root / "notes.py").exists()
