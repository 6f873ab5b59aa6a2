"""Opening a file with collaboration on writes nothing, on a real ``jupyter server``, no browser.

The person is a Y.js client of the server's collaboration (``tests/collab_person.py``) that does
on opening what JupyterLab's front end does: its provider sets ``document_id`` in the document's
``state`` map on every sync, and a notebook's panel copies the kernel's ``language_info`` into
the notebook's metadata. Each of these is a change of the shared document, so the room saves it
(``document_save_delay`` later). The room's save reaches the contents manager, and the file
keeps its bytes and its modification time (set to 2001 first, so no write can hide in the clock's
resolution). Typing is still saved, a CRLF file with CRLF. Without the extension's check
(``skip_unchanged_saves = False``) the same opening rewrites a CRLF file with LF: what
jupyter-collaboration does by itself, the reason for the check.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import nbformat
import pytest
from collab_person import person, type_at, until
from nbformat import v4
from servers import JupyterProcess

pytestmark = pytest.mark.slow

OLD_NS = 978_307_200_000_000_000  # 2001-01-01
CRLF = b"a = 1\r\nb = 2\r\n"
LF = b"first line\nsecond line\n"
LANGUAGE_INFO = {  # what ipykernel answers, as JupyterLab copies it into the notebook
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
    "version": "3.11.7",
}
SAVE_DELAY = 0.5  # document_save_delay: the room saves this long after a change


def seed(folder: Path) -> dict[str, Path]:
    folder.mkdir()
    files = {"crlf": folder / "crlf.py", "lf": folder / "plain.txt", "nb": folder / "note.ipynb"}
    files["crlf"].write_bytes(CRLF)
    files["lf"].write_bytes(LF)
    kernelspec = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb = v4.new_notebook(
        metadata={"kernelspec": kernelspec, "language_info": {"name": "python"}},
        cells=[v4.new_markdown_cell("# Looked at", id="title"), v4.new_code_cell("x = 1", id="code")],
    )
    nbformat.write(nb, str(files["nb"]))
    for path in files.values():
        os.utime(path, ns=(OLD_NS, OLD_NS))
    return files


def stat_and_bytes(files: dict[str, Path]) -> dict[str, tuple[int, int, bytes]]:
    return {key: (p.stat().st_mtime_ns, p.stat().st_size, p.read_bytes()) for key, p in files.items()}


def start(tmp: Path, *extra: str) -> JupyterProcess:
    root = tmp / "root"
    root.mkdir(parents=True)
    root = Path(os.path.realpath(root))
    return JupyterProcess.start(
        tmp, root, timeout=90, extra_args=[f"--YDocExtension.document_save_delay={SAVE_DELAY}", *extra]
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = start(tmp_path_factory.mktemp("looking"))
    try:
        yield srv
    finally:
        srv.stop()


def logged(server: JupyterProcess, text: str, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in server.log.read_text(errors="replace"):
            return True
        time.sleep(0.1)
    return False


async def look(server: JupyterProcess, path: str, notebook: bool = False) -> None:
    """Open ``path`` as JupyterLab does, change what opening changes, and stay past the room's save."""
    async with person(server, path, notebook) as doc:
        doc.ystate["document_id"] = f"opened {path}"  # as @jupyter/docprovider does on sync
        if notebook:
            doc._ymeta["metadata"]["language_info"] = LANGUAGE_INFO  # the kernel's, as the panel copies it
        await asyncio.sleep(SAVE_DELAY + 1.5)


def rel(server: JupyterProcess, path: Path) -> str:
    return str(path.relative_to(server.root))


def test_opening_a_crlf_file_an_lf_file_and_a_notebook_writes_none_of_them(server):
    files = seed(server.root / "looked")
    before = stat_and_bytes(files)
    for key, path in files.items():
        asyncio.run(look(server, rel(server, path), notebook=key == "nb"))
        # the room's save was made, and reached the contents manager, which left the file alone
        assert logged(server, f"dsh_jupyter: {rel(server, path)} is saved unchanged; the file is left as it was")
    assert stat_and_bytes(files) == before
    assert sorted(os.listdir(server.root / "looked")) == ["crlf.py", "note.ipynb", "plain.txt"]  # no checkpoints
    assert sorted(os.listdir(server.root)) == ["looked"]  # no .jupyter/ of collaboration's


def test_a_person_s_typing_is_saved_and_a_crlf_file_stays_crlf(server):
    files = seed(server.root / "typed")

    async def scenario():
        async with person(server, rel(server, files["crlf"])) as doc:
            doc.ystate["document_id"] = "typed crlf"
            type_at(doc, len(doc.get()), "c = 3\n")
            await until(lambda: files["crlf"].read_bytes() == b"a = 1\r\nb = 2\r\nc = 3\r\n", what="the CRLF save")
        async with person(server, rel(server, files["nb"]), notebook=True) as doc:
            cell = doc.ycells[1]["source"]
            cell.insert(len(str(cell)), "  # typed")
            await until(lambda: b"# typed" in files["nb"].read_bytes(), what="the notebook's save")

    asyncio.run(scenario())
    assert files["crlf"].stat().st_mtime_ns != OLD_NS
    assert nbformat.read(str(files["nb"]), as_version=4).cells[1].source == "x = 1  # typed"


def test_without_the_check_jupyter_collaboration_rewrites_a_crlf_file_it_only_opened(tmp_path):
    """What the check is for: jupyter-collaboration alone saves the document opening changed, with
    the line ends its loader made. Should this one fail, collaboration no longer does that."""
    srv = start(tmp_path, "--DshJupyter.skip_unchanged_saves=False")
    try:
        files = seed(srv.root / "looked")
        asyncio.run(look(srv, "looked/crlf.py"))
        assert logged(srv, "Saving file: looked/crlf.py")
    finally:
        srv.stop()
    assert files["crlf"].read_bytes() == b"a = 1\nb = 2\n"
    assert files["crlf"].stat().st_mtime_ns != OLD_NS
