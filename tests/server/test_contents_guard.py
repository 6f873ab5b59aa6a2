"""Saves that change nothing write nothing, CRLF files stay CRLF, listing checkpoints makes no folder.

Real contents managers (``FileContentsManager``, ``AsyncFileContentsManager`` and the server's
default ``AsyncLargeFileManager``) over real files, wrapped by ``server/contents_guard.py`` exactly
as the extension wraps the server's; each result is checked on disk: bytes and ``st_mtime_ns``.
Every file starts with a modification time in 2001, so a write cannot hide inside the clock's
resolution. Jupyter's data folder (the notary's signatures) is the test's own.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
from pathlib import Path

import nbformat
import pytest
from jupyter_server.services.contents.filemanager import AsyncFileContentsManager, FileContentsManager
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from jupyter_server.utils import ensure_async
from nbformat import v4
from tornado.web import HTTPError

from dsh_jupyter.server.contents_guard import UNCHANGED, guard_contents, plan_save

OLD_NS = 978_307_200_000_000_000  # 2001-01-01
LOG = logging.getLogger("test_contents_guard")
MANAGERS = [FileContentsManager, AsyncFileContentsManager, AsyncLargeFileManager]


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter-data"))


@pytest.fixture
def files(tmp_path) -> Path:
    folder = tmp_path / "files"
    folder.mkdir()
    return Path(os.path.realpath(folder))


def manager(cls, root: Path, guarded: bool = True):
    cm = cls(root_dir=str(root))
    if guarded:
        assert guard_contents(cm, LOG) is True
    return cm


def put(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    os.utime(path, ns=(OLD_NS, OLD_NS))
    return path


def state(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def run(coro_fn):
    return asyncio.run(coro_fn())


def text_model(text: str) -> dict:
    return {"type": "file", "format": "text", "content": text}


# -- the decision, pure ---------------------------------------------------------------------------


def test_plan_save_on_bytes():
    crlf = b"a = 1\r\nb = 2\r\n"
    assert plan_save(text_model("a = 1\nb = 2\n"), crlf) is UNCHANGED
    assert plan_save(text_model("a = 1\r\nb = 2\r\n"), crlf) is UNCHANGED
    assert plan_save(text_model("a = 1\nb = 3\n"), crlf) == text_model("a = 1\r\nb = 3\r\n")
    lone_cr = b"x\ry\r\nz\r\n"  # a carriage return inside a line stays one
    assert plan_save(text_model("x\ry\nz\n"), lone_cr) is UNCHANGED
    assert plan_save(text_model("x\ry\nw\n"), lone_cr) == text_model("x\ry\r\nw\r\n")
    lf = text_model("x\ny\n")
    assert plan_save(lf, b"x\n") is lf  # an LF file stays LF: the model is saved as it came
    mixed = b"one\r\ntwo\nthree\r\n"
    assert plan_save(text_model("one\ntwo\nthree\n"), mixed) is UNCHANGED
    assert plan_save(text_model("one\ntwo\nfour\n"), mixed) == text_model("one\ntwo\nfour\n")
    b64 = {"type": "file", "format": "base64", "content": base64.b64encode(b"\x00\xff").decode()}
    assert plan_save(b64, b"\x00\xff") is UNCHANGED
    assert plan_save(b64, b"\x00\xfe") is b64
    directory = {"type": "directory"}
    assert plan_save(directory, b"") is directory


# -- text files -----------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", MANAGERS)
def test_an_unchanged_save_leaves_bytes_and_mtime(cls, files):
    lf = put(files / "notes.txt", b"first line\nsecond line\n")
    cm = manager(cls, files)

    async def go():
        model = await ensure_async(cm.get("notes.txt"))
        saved = await ensure_async(cm.save(model, "notes.txt"))
        assert (saved["last_modified"] == model["last_modified"] and "content" not in saved) or saved["content"] is None
        assert saved["name"] == "notes.txt" and saved["type"] == "file"

    run(go)
    assert state(lf) == (b"first line\nsecond line\n", OLD_NS)
    assert not (files / ".ipynb_checkpoints").exists()


@pytest.mark.parametrize("cls", MANAGERS)
def test_a_crlf_file_saved_with_the_same_text_keeps_its_bytes(cls, files):
    raw = b"a = 1\r\nb = 2\r\n" * 5
    crlf = put(files / "crlf.py", raw)
    cm = manager(cls, files)

    async def go():
        # as the collaboration room sends it (line endings made \n) and as the file reads (\r\n)
        await ensure_async(cm.save(text_model(raw.decode().replace("\r\n", "\n")), "crlf.py"))
        await ensure_async(cm.save(text_model(raw.decode()), "crlf.py"))

    run(go)
    assert state(crlf) == (raw, OLD_NS)


@pytest.mark.parametrize("cls", MANAGERS)
def test_a_crlf_file_saved_with_a_change_keeps_crlf(cls, files):
    crlf = put(files / "crlf.py", b"a = 1\r\nb = 2\r\n")
    cm = manager(cls, files)
    run(lambda: ensure_async(cm.save(text_model("a = 1\nb = 2\nc = 3\n"), "crlf.py")))
    data, mtime = state(crlf)
    assert data == b"a = 1\r\nb = 2\r\nc = 3\r\n"
    assert mtime != OLD_NS


@pytest.mark.parametrize("cls", MANAGERS)
def test_an_lf_file_saved_with_a_change_stays_lf(cls, files):
    lf = put(files / "lf.txt", b"one\ntwo\n")
    cm = manager(cls, files)
    run(lambda: ensure_async(cm.save(text_model("one\ntwo\nthree\n"), "lf.txt")))
    assert state(lf)[0] == b"one\ntwo\nthree\n"
    assert state(lf)[1] != OLD_NS


def test_a_file_with_mixed_endings_is_left_alone_unchanged_and_saved_as_given_changed(files):
    mixed = put(files / "mixed.txt", b"one\r\ntwo\nthree\r\n")
    cm = manager(FileContentsManager, files)
    cm.save(text_model("one\ntwo\nthree\n"), "mixed.txt")
    assert state(mixed) == (b"one\r\ntwo\nthree\r\n", OLD_NS)
    cm.save(text_model("one\ntwo\nfour\n"), "mixed.txt")
    assert mixed.read_bytes() == b"one\ntwo\nfour\n"


@pytest.mark.parametrize("cls", MANAGERS)
def test_binary_files_unchanged_and_changed(cls, files):
    blob = put(files / "blob.bin", b"\x00\x01\xff" * 100)
    cm = manager(cls, files)

    async def go():
        model = await ensure_async(cm.get("blob.bin"))
        assert model["format"] == "base64"
        await ensure_async(cm.save(model, "blob.bin"))
        assert state(blob) == (b"\x00\x01\xff" * 100, OLD_NS)
        changed = {**model, "content": base64.b64encode(b"\x00\x02").decode()}
        await ensure_async(cm.save(changed, "blob.bin"))

    run(go)
    assert blob.read_bytes() == b"\x00\x02"


@pytest.mark.parametrize("cls", MANAGERS)
def test_a_new_file_is_written(cls, files):
    cm = manager(cls, files)
    run(lambda: ensure_async(cm.save(text_model(""), "new.txt")))
    assert (files / "new.txt").read_bytes() == b""


def test_a_chunked_upload_is_always_written(files):
    up = put(files / "up.bin", b"abc")
    cm = manager(AsyncLargeFileManager, files)
    chunk = {"type": "file", "format": "base64", "content": base64.b64encode(b"abc").decode(), "chunk": 1}

    async def go():
        await cm.save(chunk, "up.bin")
        assert up.stat().st_mtime_ns != OLD_NS  # the first chunk starts the file again, same bytes or not
        await cm.save({**chunk, "content": base64.b64encode(b"def").decode(), "chunk": -1}, "up.bin")

    run(go)
    assert up.read_bytes() == b"abcdef"


BAD_MODELS = [
    {"type": "file", "content": "x\n"},  # no format
    {"type": "file", "format": "text", "content": None},
    {"type": "file", "format": "base64", "content": "é"},
    {"type": "file", "format": "text", "content": "\udc80"},  # not encodable as UTF-8
    {"type": "notebook", "content": {"cells": []}},
]


@pytest.mark.parametrize("cls", [FileContentsManager, AsyncFileContentsManager])
@pytest.mark.parametrize("model", BAD_MODELS)
def test_a_save_the_manager_refuses_is_refused_the_same(cls, model, files):
    outcomes = []
    for guarded in (False, True):
        path = put(files / "a.txt", b"x\n")
        cm = manager(cls, files, guarded=guarded)
        with pytest.raises(HTTPError) as caught:
            run(lambda cm=cm: ensure_async(cm.save(dict(model), "a.txt")))
        outcomes.append((caught.value.status_code, caught.value.log_message, state(path)))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] in (400, 500)


# -- notebooks ------------------------------------------------------------------------------------


def write_notebook(path: Path, nb, indent: int = 1) -> Path:
    return put(path, (json.dumps(nb, indent=indent, sort_keys=True, ensure_ascii=False) + "\n").encode())


def notebook():
    return v4.new_notebook(
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        },
        cells=[v4.new_markdown_cell("# Title", id="title"), v4.new_code_cell("x = 1\nprint(x)", id="code")],
    )


@pytest.mark.parametrize("cls", MANAGERS)
@pytest.mark.parametrize("indent", [1, 2])
def test_a_notebook_saved_unchanged_is_untouched(cls, indent, files):
    # indent=2: a layout other than nbformat's, as another editor writes it, is kept too
    path = write_notebook(files / "nb.ipynb", notebook(), indent=indent)
    before = state(path)
    cm = manager(cls, files)

    async def go():
        model = await ensure_async(cm.get("nb.ipynb"))
        await ensure_async(cm.save(model, "nb.ipynb"))
        # the front end copies the kernel's language_info into the metadata when a kernel connects
        model["content"]["metadata"]["language_info"] = {
            "name": "python",
            "version": "3.11.7",
            "mimetype": "text/x-python",
            "file_extension": ".py",
        }
        await ensure_async(cm.save(model, "nb.ipynb"))

    run(go)
    assert state(path) == before
    assert not (files / ".ipynb_checkpoints").exists()


@pytest.mark.parametrize("cls", MANAGERS)
def test_a_changed_notebook_is_written_with_its_checkpoint(cls, files):
    path = write_notebook(files / "nb.ipynb", notebook())
    cm = manager(cls, files)

    async def go():
        model = await ensure_async(cm.get("nb.ipynb"))
        model["content"]["cells"][1]["source"] = "x = 2\nprint(x)"
        await ensure_async(cm.save(model, "nb.ipynb"))
        return await ensure_async(cm.list_checkpoints("nb.ipynb"))

    checkpoints = run(go)
    assert path.stat().st_mtime_ns != OLD_NS
    assert nbformat.read(str(path), as_version=4).cells[1].source == "x = 2\nprint(x)"
    assert [c["id"] for c in checkpoints] == ["checkpoint"]  # Jupyter's own: one checkpoint per notebook


@pytest.mark.parametrize("cls", [FileContentsManager, AsyncFileContentsManager])
def test_an_unchanged_save_of_a_notebook_whose_cells_are_trusted_still_signs_it(cls, files):
    nb = notebook()
    nb.cells[1].outputs = [v4.new_output("display_data", data={"text/html": "<b>1</b>"})]
    path = write_notebook(files / "nb.ipynb", nb)
    before = state(path)
    cm = manager(cls, files)

    async def go():
        model = await ensure_async(cm.get("nb.ipynb"))
        assert model["content"]["cells"][1]["metadata"]["trusted"] is False  # an output nobody signed
        model["content"]["cells"][1]["metadata"]["trusted"] = True  # "Trust Notebook" marks the code cells
        await ensure_async(cm.save(model, "nb.ipynb"))
        again = await ensure_async(cm.get("nb.ipynb"))
        return again["content"]["cells"][1]["metadata"]["trusted"]

    assert run(go) is True
    assert state(path) == before


# -- checkpoints ----------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", MANAGERS)
def test_listing_checkpoints_makes_no_folder_and_checkpoints_still_work(cls, files):
    (files / "sub").mkdir()
    path = put(files / "sub" / "a.txt", b"one\n")
    cm = manager(cls, files)

    async def go():
        assert await ensure_async(cm.list_checkpoints("sub/a.txt")) == []
        assert not (files / "sub" / ".ipynb_checkpoints").exists()
        made = await ensure_async(cm.create_checkpoint("sub/a.txt"))
        assert [c["id"] for c in await ensure_async(cm.list_checkpoints("sub/a.txt"))] == [made["id"]]
        await ensure_async(cm.save(text_model("two\n"), "sub/a.txt"))
        assert path.read_bytes() == b"two\n"
        await ensure_async(cm.restore_checkpoint(made["id"], "sub/a.txt"))

    run(go)
    assert path.read_bytes() == b"one\n"
    assert (files / "sub" / ".ipynb_checkpoints" / "a-checkpoint.txt").read_bytes() == b"one\n"


def test_guarding_twice_wraps_once(files):
    cm = manager(FileContentsManager, files)
    save = cm.save
    assert guard_contents(cm, LOG) is True
    assert cm.save is save


# -- through the server: the contents API a JupyterLab without collaboration saves with ----------


async def put_contents(jp_fetch, path: str, model: dict) -> dict:
    response = await jp_fetch("api", "contents", path, method="PUT", body=json.dumps(model))
    assert response.code == 200
    return json.loads(response.body)


async def test_the_server_s_contents_api_saves_nothing_unchanged(jp_fetch, jp_root_dir):
    crlf = put(jp_root_dir / "crlf.py", b"a = 1\r\nb = 2\r\n")
    got = json.loads((await jp_fetch("api", "contents", "crlf.py")).body)
    assert got["content"] == "a = 1\r\nb = 2\r\n"
    answer = await put_contents(jp_fetch, "crlf.py", text_model("a = 1\nb = 2\n"))
    assert answer["last_modified"] == got["last_modified"]
    assert state(crlf) == (b"a = 1\r\nb = 2\r\n", OLD_NS)
    await put_contents(jp_fetch, "crlf.py", text_model("a = 1\nb = 3\n"))
    assert crlf.read_bytes() == b"a = 1\r\nb = 3\r\n"
    checkpoints = json.loads((await jp_fetch("api", "contents", "crlf.py", "checkpoints")).body)
    assert checkpoints == [] and not (jp_root_dir / ".ipynb_checkpoints").exists()


@pytest.mark.dsh_settings(skip_unchanged_saves=False)
async def test_with_skip_unchanged_saves_off_every_save_writes(jp_fetch, jp_root_dir):
    crlf = put(jp_root_dir / "crlf.py", b"a = 1\r\nb = 2\r\n")
    await put_contents(jp_fetch, "crlf.py", text_model("a = 1\nb = 2\n"))
    assert crlf.read_bytes() == b"a = 1\nb = 2\n"  # plain Jupyter: LF, and written
    assert crlf.stat().st_mtime_ns != OLD_NS
