"""The tab routes on a real server: what a page reports, its long poll, its answers, and the
handshake of ``save_in_tabs`` and ``moved`` (``server/tab_documents.py``), with this test playing
the page over real HTTP exactly as ``labextension_shim/src/tabs.ts`` does.

The tool side runs on a worker thread (``run_in_executor``), as a tool call does; the page saves
through Jupyter's own contents API, as JupyterLab's document context does. The browser tests
(``tests/e2e/test_tabs.py``) run the real extension in Chromium.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
import urllib.parse
import uuid
from datetime import datetime, timezone

import nbformat
import pytest
from nbformat import v4
from servers import ALICE, BOB, TWO_USERS

from dsh_jupyter.core.documents import DocumentChanged, OpenUnsaved, PageSilent, Presence
from dsh_jupyter.core.fs.files import file_version
from dsh_jupyter.server import tab_documents

from .test_server_auth import LOCKED, TOKEN, _browser_login

# A poll that finds nothing is held 2 s (not 20), so a test that checks "nothing waits" is quick.
pytestmark = pytest.mark.dsh_settings(tabs_poll_s=2.0)

NOTES = "first line\nsecond line\n"


def new_page() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def tabs(jp_serverapp):
    return jp_serverapp.web_app.settings["dsh_jupyter_tabs"]


@pytest.fixture
def quick(monkeypatch):
    """Short waits, so a page that stays quiet is found out in a second, not in 35."""
    monkeypatch.setattr(tab_documents, "TAKE_WAIT_S", 0.6)
    monkeypatch.setattr(tab_documents, "SAVE_WAIT_S", 0.6)


def doc(path: str, kind: str = "file", dirty: bool = False, tabs: int = 1) -> dict:
    return {"path": path, "kind": kind, "dirty": dirty, "tabs": tabs}


async def report(api, client, *documents, headers=None):
    return await api("POST", "tabs", client, body={"documents": list(documents)}, headers=headers)


async def poll(api, client, after=0, headers=None):
    status, data = await api("GET", "tabs", client, "requests", params={"after": str(after)}, headers=headers)
    assert status == 200, data
    return data["requests"]


async def answer(api, client, request, status, headers=None, **extra):
    code, data = await api(
        "POST", "tabs", client, "answers", body={"request": request["id"], "status": status, **extra}, headers=headers
    )
    assert code == 200, data
    return data["accepted"]


async def save_as_the_page(jp_fetch, path: str, content: str) -> dict:
    """What JupyterLab's document context does: PUT the file, then ask its new hash."""
    await jp_fetch(
        "api", "contents", path, method="PUT", body=json.dumps({"type": "file", "format": "text", "content": content})
    )
    reply = await jp_fetch("api", "contents", path, params={"content": "0", "hash": "1"})
    return json.loads(reply.body)


def in_thread(fn, *args):
    return asyncio.get_running_loop().run_in_executor(None, fn, *args)


# -- what a page reports, and presence --------------------------------------------------------


async def test_presence_follows_what_pages_report(api, tabs, jp_root_dir):
    real = str(jp_root_dir / "notes.txt")
    one, two = new_page(), new_page()
    assert tabs.presence(real) is None
    status, data = await report(api, one, doc("notes.txt"), doc("src/app.py", tabs=2))
    assert (status, data) == (200, {"client": one, "documents": 2, "gone": False})
    assert tabs.presence(real) == Presence(shared=False, unsaved=False, tabs=1)
    assert tabs.presence(str(jp_root_dir / "src" / "app.py")) == Presence(shared=False, unsaved=False, tabs=2)
    await report(api, two, doc("/notes.txt", dirty=True))  # a leading slash names the same file
    assert tabs.presence(real) == Presence(shared=False, unsaved=True, tabs=2)
    await report(api, two)  # the tab closed: presence drops at once
    assert tabs.presence(real) == Presence(shared=False, unsaved=False, tabs=1)
    status, data = await api("POST", "tabs", one, body={"gone": True})
    assert (status, data) == (200, {"client": one, "documents": 0, "gone": True})
    assert tabs.presence(real) is None
    status, data = await api("GET", "tabs", one, "requests")
    assert (status, data["code"], data["message"]) == (404, "PAGE_UNKNOWN", f'no page "{one}"; report its tabs first')


async def test_a_path_through_a_symlink_names_the_real_file(api, tabs, jp_root_dir):
    os.symlink("src", jp_root_dir / "code")
    await report(api, new_page(), doc("code/app.py"))
    assert tabs.presence(str(jp_root_dir / "src" / "app.py")) == Presence(shared=False, unsaved=False, tabs=1)


@pytest.mark.parametrize(
    "body,message",
    [
        ({"documents": "x"}, "documents must be a list"),
        ({"documents": [], "extra": 1}, 'unknown field "extra" (expected documents, or gone)'),
        ({"documents": [{"path": "a", "kind": "pdf", "dirty": False}]}, "a document's kind must be file or notebook"),
        (
            {"documents": [{"path": "", "kind": "file", "dirty": False}]},
            "a document's path must be a file's path relative to the server's root",
        ),
        (
            {"documents": [{"path": "a\0b", "kind": "file", "dirty": False}]},
            "a document's path must be a file's path relative to the server's root",
        ),
        ({"documents": [{"path": "a", "kind": "file", "dirty": "no"}]}, "a document's dirty must be true or false"),
        (
            {"documents": [{"path": "a", "kind": "file", "dirty": False, "tabs": 0}]},
            "a document's tabs must be a number from 1 to 1000",
        ),
        (
            {"documents": [{"path": "a", "kind": "file", "dirty": False, "cursor": 3}]},
            "each document must be an object of path, kind, dirty and tabs",
        ),
        (
            {"documents": [{"path": f"f{i}", "kind": "file", "dirty": False} for i in range(1001)]},
            "documents lists more than 1000 files",
        ),
        ({"gone": False}, 'unknown field "gone" (expected documents, or gone)'),
    ],
)
async def test_a_bad_report_is_refused_whole(api, tabs, jp_root_dir, body, message):
    client = new_page()
    status, data = await api("POST", "tabs", client, body=body)
    assert (status, data["code"], data["message"]) == (400, "BODY_INVALID", message)
    assert tabs.registry.pages() == 0


@pytest.mark.parametrize(
    "body,message",
    [
        (
            {"request": "x", "status": "done", "cursor": 1},
            'unknown field "cursor" (expected request, status, canSave, exact, model, message)',
        ),
        ({"request": "", "status": "done"}, "request must be the id of a request this page was sent"),
        (
            {"request": "x", "status": "ok"},
            "status must be one of taken, saved, unsaved, changed, busy, gone, failed, done",
        ),
        ({"request": "x", "status": "taken", "canSave": "yes"}, "canSave must be true or false"),
        ({"request": "x", "status": "saved", "exact": 1}, "exact must be true or false"),
        ({"request": "x", "status": "failed", "message": 3}, "message must be a string"),
        (
            {"request": "x", "status": "saved", "model": {"hash": 5}},
            "model must be a contents model (strings and booleans)",
        ),
    ],
)
async def test_a_bad_answer_is_refused_and_the_request_still_waits(api, tabs, jp_root_dir, quick, body, message):
    client = new_page()
    await report(api, client, doc("notes.txt"))
    saving = in_thread(tabs.save_in_tabs, str(jp_root_dir / "notes.txt"), "agent\n", False)
    (take,) = await poll(api, client)
    status, data = await api(
        "POST", "tabs", client, "answers", body={**body, "request": body["request"] and take["id"]}
    )
    assert (status, data["code"], data["message"]) == (400, "BODY_INVALID", message)
    with pytest.raises(PageSilent):  # nothing was answered
        await saving
    assert (jp_root_dir / "notes.txt").read_text() == NOTES


@pytest.mark.parametrize("client", ["short", "x" * 65, "with space", "caf\u00e9-caf\u00e9"])
async def test_a_page_id_must_look_like_one(api, tabs, client):
    for method, parts, body in [
        ("POST", (), {"documents": []}),
        ("GET", ("requests",), None),
        ("POST", ("answers",), {"request": "x", "status": "done"}),
    ]:
        status, data = await api(method, "tabs", client, *parts, body=body)
        assert (status, data["code"], data["message"]) == (
            400,
            "ARGUMENT_INVALID",
            "a page id is 8 to 64 letters, digits, - or _",
        )
    assert tabs.registry.pages() == 0


@pytest.mark.dsh_settings(tabs_poll_s=0.5)
async def test_a_page_that_stops_polling_is_forgotten(api, tabs, jp_root_dir):
    real = str(jp_root_dir / "notes.txt")
    quiet, polling = new_page(), new_page()
    await report(api, quiet, doc("notes.txt"))
    await report(api, polling, doc("notes.txt"))
    deadline = time.monotonic() + 10
    while tabs.presence(real) != Presence(shared=False, unsaved=False, tabs=1) and time.monotonic() < deadline:
        assert await poll(api, polling) == []  # each poll is held 0.5 s and keeps this page alive
    assert tabs.presence(real) == Presence(shared=False, unsaved=False, tabs=1)
    status, data = await api("GET", "tabs", quiet, "requests")
    assert (status, data["code"]) == (404, "PAGE_UNKNOWN")
    for _ in range(6):  # 3 s: twice the 1.5 s after which a quiet page goes, the polling page is still there
        assert await poll(api, polling) == []
    assert tabs.presence(real) == Presence(shared=False, unsaved=False, tabs=1)


@pytest.mark.server_config(LOCKED)
async def test_a_beacon_says_the_page_went_away_with_the_xsrf_cookie_as_a_query_argument(
    api, jp_fetch, tabs, jp_root_dir
):
    jar = await _browser_login(jp_fetch)
    browser = {"Authorization": "", "Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())}
    client = new_page()
    status, _ = await api(
        "POST", "tabs", client, body={"documents": [doc("notes.txt")]}, headers={**browser, "X-XSRFToken": jar["_xsrf"]}
    )
    assert status == 200
    real = str(jp_root_dir / "notes.txt")
    assert tabs.presence(real) is not None
    # navigator.sendBeacon sets no header: without the _xsrf argument Jupyter refuses it
    status, data = await api("POST", "tabs", client, body={"gone": True}, headers=browser)
    assert status == 403 and "_xsrf" in data["message"]
    assert tabs.presence(real) is not None
    status, _ = await api(
        "POST",
        "tabs",
        client,
        body=json.dumps({"gone": True}),
        headers=browser,
        params={"_xsrf": urllib.parse.unquote(jar["_xsrf"])},
    )
    assert status == 200
    assert tabs.presence(real) is None
    assert TOKEN  # the page never sends the token itself


# -- who may use a page ---------------------------------------------------------------------------


@pytest.mark.server_config(TWO_USERS)
async def test_a_page_is_its_reporters_alone(api, tabs, jp_root_dir, jp_auth_header):
    client = new_page()
    await report(api, client, doc("notes.txt"), headers=ALICE)
    for headers in (BOB, jp_auth_header):
        status, data = await api("GET", "tabs", client, "requests", headers=headers)
        assert (status, data["code"]) == (404, "PAGE_UNKNOWN")
        status, data = await report(api, client, headers=headers)
        assert (status, data["code"], data["message"]) == (
            403,
            "FORBIDDEN",
            f'page "{client}" was reported by another caller',
        )
        status, data = await api("POST", "tabs", client, body={"gone": True}, headers=headers)
        assert (status, data["code"]) == (404, "PAGE_UNKNOWN")
    status, data = await api("POST", "tabs", client, "answers", body={"request": "x", "status": "done"}, headers=BOB)
    assert (status, data["code"]) == (403, "FORBIDDEN")  # bob may not write: he may answer nothing
    assert tabs.presence(str(jp_root_dir / "notes.txt")) == Presence(shared=False, unsaved=False, tabs=1)


@pytest.mark.server_config(TWO_USERS)
async def test_a_readers_page_counts_but_is_never_asked(api, tabs, jp_root_dir, quick):
    real = str(jp_root_dir / "notes.txt")
    client = new_page()
    status, _ = await report(api, client, doc("notes.txt", dirty=True), headers=BOB)
    assert status == 200
    assert tabs.presence(real) == Presence(shared=False, unsaved=True, tabs=1)
    assert await in_thread(tabs.save_in_tabs, real, "agent\n", False) is False  # bob cannot save: not asked
    assert await poll(api, client, headers=BOB) == []
    assert (jp_root_dir / "notes.txt").read_text() == NOTES


# -- save_in_tabs -----------------------------------------------------------------------------


async def test_no_open_tab_changes_nothing(tabs, jp_root_dir):
    assert await in_thread(tabs.save_in_tabs, str(jp_root_dir / "notes.txt"), "x", False) is False
    assert (jp_root_dir / "notes.txt").read_text() == NOTES


async def test_one_page_takes_the_change_and_saves_it_in_one_turn(api, jp_fetch, tabs, jp_root_dir):
    real = str(jp_root_dir / "notes.txt")
    client = new_page()
    await report(api, client, doc("notes.txt"))
    version = file_version(os.stat(real))
    saving = in_thread(tabs.save_in_tabs, real, "agent line\n" + NOTES, False, version)
    (take,) = await poll(api, client)
    stat = os.stat(real)
    modified = datetime.fromtimestamp(stat.st_mtime, tz=timezone.utc).isoformat().replace("+00:00", "Z")
    assert take == {
        "id": take["id"],
        "seq": 1,
        "type": "take",
        "path": "notes.txt",
        "notebook": False,
        "content": "agent line\n" + NOTES,
        "save": True,
        "expect": {
            "hash": hashlib.sha256(NOTES.encode()).hexdigest(),
            "hash_algorithm": "sha256",
            "last_modified": modified,
        },
    }
    await save_as_the_page(jp_fetch, "notes.txt", take["content"])
    assert await answer(api, client, take, "saved", exact=True, model={"hash": "h"}) is True
    assert await saving is True
    assert (jp_root_dir / "notes.txt").read_text() == "agent line\n" + NOTES
    assert await answer(api, client, take, "saved") is False  # answered already: off the queue


@pytest.mark.parametrize(
    "status,error",
    [("unsaved", OpenUnsaved), ("changed", DocumentChanged), ("busy", PageSilent), ("failed", PageSilent)],
)
async def test_a_page_that_refuses_leaves_the_file_alone(api, tabs, jp_root_dir, status, error):
    real = str(jp_root_dir / "notes.txt")
    client = new_page()
    await report(api, client, doc("notes.txt", dirty=status == "unsaved"))
    saving = in_thread(tabs.save_in_tabs, real, "agent\n", False)
    (take,) = await poll(api, client)
    assert await answer(api, client, take, status, message="permission denied") is True
    with pytest.raises(error) as raised:
        await saving
    if status == "failed":  # the page's own words go to the log, not into the refusal
        assert str(raised.value) == "the tab could not save the file"
    assert (jp_root_dir / "notes.txt").read_text() == NOTES
    assert await poll(api, client, after=take["seq"]) == []  # no undo: one page changes nothing when it refuses


async def test_a_file_changed_since_the_caller_looked_is_refused_before_any_page_is_asked(api, tabs, jp_root_dir):
    real = str(jp_root_dir / "notes.txt")
    client = new_page()
    await report(api, client, doc("notes.txt"))
    version = file_version(os.stat(real))
    (jp_root_dir / "notes.txt").write_text("someone saved\n")
    with pytest.raises(DocumentChanged):
        await in_thread(tabs.save_in_tabs, real, "agent\n", False, version)
    assert await poll(api, client) == []
    (jp_root_dir / "notes.txt").unlink()
    with pytest.raises(DocumentChanged):
        await in_thread(tabs.save_in_tabs, real, "agent\n", False)


async def test_a_silent_page_is_page_silent_and_its_late_answer_is_not_accepted(api, tabs, jp_root_dir, quick):
    real = str(jp_root_dir / "notes.txt")
    client = new_page()
    await report(api, client, doc("notes.txt"))
    saving = in_thread(tabs.save_in_tabs, real, "agent\n", False)
    (take,) = await poll(api, client)
    with pytest.raises(PageSilent):
        await saving
    assert await answer(api, client, take, "taken") is False  # the page then gives its change back itself
    assert await poll(api, client) == []  # withdrawn: not asked again
    assert (jp_root_dir / "notes.txt").read_text() == NOTES


async def test_two_pages_take_one_saves_the_other_learns_the_saved_file(api, jp_fetch, tabs, jp_root_dir):
    real = str(jp_root_dir / "notes.txt")
    one, two = new_page(), new_page()
    await report(api, one, doc("notes.txt"))
    await report(api, two, doc("notes.txt"))
    saving = in_thread(tabs.save_in_tabs, real, "agent\n", False)
    (take1,), (take2,) = await asyncio.gather(poll(api, one), poll(api, two))
    assert take1["save"] is False and take2["save"] is False and take1["content"] == take2["content"] == "agent\n"
    await answer(api, one, take1, "taken", canSave=False)
    await answer(api, two, take2, "taken", canSave=True)
    (save,) = await poll(api, two, after=take2["seq"])
    assert save == {"id": save["id"], "seq": 2, "type": "save", "path": "notes.txt", "take": take2["id"]}
    model = await save_as_the_page(jp_fetch, "notes.txt", "agent\n")
    await answer(api, two, save, "saved", exact=True, model=model)
    (learn,) = await poll(api, one, after=take1["seq"])
    assert learn == {
        "id": learn["id"],
        "seq": 2,
        "type": "saved",
        "path": "notes.txt",
        "take": take1["id"],
        "model": {
            k: model[k]
            for k in (
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
            )
        },
    }
    await answer(api, one, learn, "done")
    assert await saving is True
    assert (jp_root_dir / "notes.txt").read_text() == "agent\n"


async def test_one_of_two_pages_unsaved_the_other_gives_its_change_back(api, tabs, jp_root_dir):
    real = str(jp_root_dir / "notes.txt")
    one, two = new_page(), new_page()
    await report(api, one, doc("notes.txt"))
    await report(api, two, doc("notes.txt", dirty=True))
    saving = in_thread(tabs.save_in_tabs, real, "agent\n", False)
    (take1,), (take2,) = await asyncio.gather(poll(api, one), poll(api, two))
    await answer(api, one, take1, "taken", canSave=True)
    await answer(api, two, take2, "unsaved")
    (undo,) = await poll(api, one, after=take1["seq"])
    assert undo == {"id": undo["id"], "seq": 2, "type": "undo", "path": "notes.txt", "take": take1["id"]}
    await answer(api, one, undo, "done")
    with pytest.raises(OpenUnsaved):
        await saving
    assert (jp_root_dir / "notes.txt").read_text() == NOTES


async def test_a_page_that_closed_the_file_meanwhile_is_left_out(api, tabs, jp_root_dir):
    real = str(jp_root_dir / "notes.txt")
    client = new_page()
    await report(api, client, doc("notes.txt"))
    saving = in_thread(tabs.save_in_tabs, real, "agent\n", False)
    (take,) = await poll(api, client)
    await answer(api, client, take, "gone")
    assert await saving is False  # the tool writes the file itself
    assert (jp_root_dir / "notes.txt").read_text() == NOTES


# -- moved ------------------------------------------------------------------------------------


async def test_moved_tells_the_pages_and_presence_follows(api, tabs, jp_root_dir):
    page = new_page()
    await report(api, page, doc("src/app.py"), doc("src/util/helpers.py"), doc("notes.txt"))
    old, new = str(jp_root_dir / "src"), str(jp_root_dir / "code")
    os.rename(old, new)
    moving = in_thread(tabs.moved, old, new)
    (moved,) = await poll(api, page)
    assert moved == {
        "id": moved["id"],
        "seq": 1,
        "type": "moved",
        "from": "src",
        "to": "code",
        "moves": [
            {"from": "src/app.py", "to": "code/app.py"},
            {"from": "src/util/helpers.py", "to": "code/util/helpers.py"},
        ],
    }
    await answer(api, page, moved, "done")
    assert await moving is None
    assert tabs.presence(str(jp_root_dir / "src" / "app.py")) is None
    assert tabs.presence(str(jp_root_dir / "code" / "util" / "helpers.py")) == Presence(False, False, 1)


async def test_moved_never_raises_for_a_page_that_does_not_answer(api, tabs, jp_root_dir, quick):
    page = new_page()
    await report(api, page, doc("notes.txt"))
    os.rename(jp_root_dir / "notes.txt", jp_root_dir / "moved.txt")
    assert await in_thread(tabs.moved, str(jp_root_dir / "notes.txt"), str(jp_root_dir / "moved.txt")) is None
    assert tabs.presence(str(jp_root_dir / "moved.txt")) == Presence(False, False, 1)
    assert await poll(api, page) == []  # withdrawn once nobody waited for it


async def test_the_tools_side_never_runs_on_the_event_loop(tabs, jp_root_dir, api):
    await report(api, new_page(), doc("notes.txt"))
    with pytest.raises(RuntimeError, match="never from the event loop"):
        tabs.save_in_tabs(str(jp_root_dir / "notes.txt"), "x", False)


async def test_edit_cells_goes_through_the_tab_that_has_the_notebook_open(api, jp_fetch, tool, jp_root_dir):
    """A clean tab takes the new notebook and saves it (the answer says so); a tab with unsaved
    changes refuses, and the file is left as it was."""
    path = jp_root_dir / "tab.ipynb"
    nbformat.write(
        v4.new_notebook(cells=[v4.new_code_cell("a = 1", id="a"), v4.new_markdown_cell("# B", id="b")]), str(path)
    )
    client = new_page()
    await report(api, client, doc("tab.ipynb", kind="notebook"))
    assert not (await tool("read", session="cells", file_path="tab.ipynb"))["isError"]
    ops = [{"op": "move", "cell_id": "b", "at": "start"}]
    changing = asyncio.ensure_future(tool("edit_cells", session="cells", file_path="tab.ipynb", operations=ops))
    (take,) = await poll(api, client)
    assert (take["type"], take["path"], take["notebook"], take["save"]) == ("take", "tab.ipynb", True, True)
    assert [c["id"] for c in json.loads(take["content"])["cells"]] == ["b", "a"]
    await save_as_the_page(jp_fetch, "tab.ipynb", take["content"])
    assert await answer(api, client, take, "saved", exact=True, model={"hash": "h"}) is True
    changed = await changing
    assert changed["text"] == (
        "The notebook tab.ipynb has been updated successfully: 1 operation. The change went to the file open in "
        "JupyterLab, which saved it.\n"
        '1. moved cell "b" (markdown) to the start\n'
        "Cell order now (2 cells), around the changes:\n"
        '* 1 "b" markdown\n'
        '  2 "a" code'
    )
    assert changed["value"]["open"] == "tab"
    assert [c.id for c in nbformat.read(str(path), as_version=4).cells] == ["b", "a"]

    saved = path.read_bytes()
    await report(api, client, doc("tab.ipynb", kind="notebook", dirty=True))
    refused = await tool(
        "edit_cells", session="cells", file_path="tab.ipynb", operations=[{"op": "delete", "cell_id": "a"}]
    )
    assert refused["value"]["code"] == "FS_OPEN_UNSAVED"
    assert refused["text"] == (
        'Error: cannot edit "tab.ipynb": it is open in JupyterLab with unsaved changes; nothing was changed. '
        "Ask the person to save or close it, then read it again"
    )
    assert path.read_bytes() == saved


async def test_replace_hands_a_file_open_in_a_tab_to_the_tab_and_writes_the_others(api, jp_fetch, tool, jp_root_dir):
    """One call: the file nobody has open is renamed into place, the one open in a clean tab is
    handed to the tab, which saves it (no "File Changed" dialog); the answer says which."""
    (jp_root_dir / "renames").mkdir()
    for name in ("one.txt", "two.txt"):
        (jp_root_dir / "renames" / name).write_text("alpha\nkeep\n")
    client = new_page()
    await report(api, client, doc("renames/two.txt"))
    preview = await tool("replace", pattern="alpha", replacement="beta", path="renames")
    assert preview["value"]["totalOccurrences"] == 2
    changing = asyncio.ensure_future(
        tool("replace", pattern="alpha", replacement="beta", path="renames", occurrences="all", expected_count=2)
    )
    (take,) = await poll(api, client)
    assert (take["type"], take["path"], take["notebook"], take["content"]) == (
        "take",
        "renames/two.txt",
        False,
        "beta\nkeep\n",
    )
    await save_as_the_page(jp_fetch, "renames/two.txt", take["content"])
    assert await answer(api, client, take, "saved", exact=True, model={"hash": "h"}) is True
    done = await changing
    assert done["text"] == (
        'Replaced 2 occurrences of "alpha" in 2 files:\n'
        "renames/one.txt: 1\n"
        "renames/two.txt: 1 (open in JupyterLab: the tab took the change and saved it)"
    )
    assert done["value"]["changed"] == [
        {"path": "renames/one.txt", "replacements": 1},
        {"path": "renames/two.txt", "replacements": 1, "open": "tab", "live": True},
    ]
    assert [(jp_root_dir / "renames" / n).read_text() for n in ("one.txt", "two.txt")] == ["beta\nkeep\n"] * 2


async def test_replace_refuses_a_tab_with_unsaved_changes_and_changes_nothing(api, tool, jp_root_dir):
    (jp_root_dir / "dirty").mkdir()
    for name in ("one.txt", "two.txt"):
        (jp_root_dir / "dirty" / name).write_text("alpha\n")
    await report(api, new_page(), doc("dirty/two.txt", dirty=True))
    preview = await tool("replace", pattern="alpha", replacement="beta", path="dirty")
    assert preview["value"]["totalOccurrences"] == 2
    done = await tool("replace", pattern="alpha", replacement="beta", path="dirty", occurrences="all", expected_count=2)
    assert done["isError"] and done["value"]["code"] == "FS_OPEN_UNSAVED"
    assert done["text"] == (
        'Error: cannot replace in "dirty/two.txt": it is open in JupyterLab with unsaved changes; nothing was '
        "changed. Ask the person to save or close it, then read it again"
    )
    assert [(jp_root_dir / "dirty" / n).read_text() for n in ("one.txt", "two.txt")] == ["alpha\n", "alpha\n"]
    assert not [n for n in os.listdir(jp_root_dir / "dirty") if n not in ("one.txt", "two.txt")]


async def test_replace_undoes_the_tabs_change_when_a_file_changed_before_the_renames(api, jp_fetch, tool, jp_root_dir):
    """The tab saved its change, then a file on disk turns out changed: the tab is handed its old
    content back (and saves it), the disk file is left as the other writer made it."""
    (jp_root_dir / "undo").mkdir()
    for name in ("one.txt", "two.txt"):
        (jp_root_dir / "undo" / name).write_text("alpha\n")
    client = new_page()
    await report(api, client, doc("undo/two.txt"))
    await tool("replace", pattern="alpha", replacement="beta", path="undo")
    changing = asyncio.ensure_future(
        tool("replace", pattern="alpha", replacement="beta", path="undo", occurrences="all", expected_count=2)
    )
    (take,) = await poll(api, client)
    (jp_root_dir / "undo" / "one.txt").write_text("alpha, changed by another process\n")
    await save_as_the_page(jp_fetch, "undo/two.txt", take["content"])
    assert await answer(api, client, take, "saved", exact=True, model={"hash": "h"}) is True
    (back,) = await poll(api, client, after=take["seq"])
    assert (back["type"], back["content"]) == ("take", "alpha\n")
    await save_as_the_page(jp_fetch, "undo/two.txt", back["content"])
    assert await answer(api, client, back, "saved", exact=True, model={"hash": "h"}) is True
    done = await changing
    assert done["isError"] and done["value"]["code"] == "FS_NOT_OBSERVED"
    assert done["text"] == 'Error: cannot replace: "undo/one.txt" changed since the preview; preview again'
    assert (jp_root_dir / "undo" / "one.txt").read_text() == "alpha, changed by another process\n"
    assert (jp_root_dir / "undo" / "two.txt").read_text() == "alpha\n"


async def test_replace_hands_a_notebook_open_in_a_tab_its_new_json(api, jp_fetch, tool, jp_root_dir):
    path = jp_root_dir / "nbtab.ipynb"
    nbformat.write(
        v4.new_notebook(cells=[v4.new_code_cell("old_name = 1", id="a"), v4.new_markdown_cell("old_name", id="b")]),
        str(path),
    )
    client = new_page()
    await report(api, client, doc("nbtab.ipynb", kind="notebook"))
    preview = await tool("replace", session="nbtab", pattern="old_name", replacement="new_name", path="nbtab.ipynb")
    first = [o["id"] for o in preview["value"]["occurrences"] if o["cell"] == 1]
    changing = asyncio.ensure_future(
        tool(
            "replace",
            session="nbtab",
            pattern="old_name",
            replacement="new_name",
            path="nbtab.ipynb",
            occurrences=first,
        )
    )
    (take,) = await poll(api, client)
    assert (take["type"], take["notebook"]) == ("take", True)
    taken = json.loads(take["content"])
    assert [(c["id"], "".join(c["source"])) for c in taken["cells"]] == [("a", "new_name = 1"), ("b", "old_name")]
    await save_as_the_page(jp_fetch, "nbtab.ipynb", take["content"])
    assert await answer(api, client, take, "saved", exact=True, model={"hash": "h"}) is True
    done = await changing
    assert done["value"]["changed"] == [{"path": "nbtab.ipynb", "replacements": 1, "open": "tab", "live": True}]
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    assert [c.source for c in nb.cells] == ["new_name = 1", "old_name"]
