"""``GET /dsh/api/documents``: the files a person has open in JupyterLab, on a real server, with
this test playing JupyterLab pages over real HTTP exactly as ``labextension_shim/src/tabs.ts``
reports its tabs; and the call log saying how a call's file was open.

The shared documents of real-time collaboration are tested against a real ``jupyter server`` with
jupyter-collaboration in ``test_server_open_documents.py``; the sidebar that shows both, in
Chromium, in ``tests/e2e/test_sidebar_open.py``.
"""

from __future__ import annotations

import os
import uuid

import nbformat
import pytest
from nbformat import v4
from servers import ALICE, BOB, TWO_USERS

pytestmark = pytest.mark.server_config(TWO_USERS)

NOTHING = {"files": [], "total": 0, "notShown": 0}


@pytest.fixture
def dsh_settings(request, jp_root_dir) -> dict:
    """A protected folder inside the root, besides what the test's marker says."""
    marker = request.node.get_closest_marker("dsh_settings")
    return {"protected_paths": [str(jp_root_dir / "kept")], **(marker.kwargs if marker else {})}


def doc(path: str, dirty: bool = False, tabs: int = 1, kind: str = "file") -> dict:
    return {"path": path, "kind": kind, "dirty": dirty, "tabs": tabs}


async def report(api, page: str, *documents: dict, headers=ALICE) -> None:
    status, data = await api("POST", "tabs", page, body={"documents": list(documents)}, headers=headers)
    assert status == 200, data


def row(path: str, tabs: int = 1, unsaved: bool = False) -> dict:
    return {"path": path, "shared": False, "tabs": tabs, "unsaved": unsaved}


async def open_files(api, headers=ALICE) -> dict:
    status, data = await api("GET", "documents", headers=headers)
    assert status == 200, data
    return data


async def test_what_pages_have_open_is_listed_as_list_would_name_it_to_every_reader(
    api, jp_root_dir, state_path, jp_auth_header
):
    (jp_root_dir / ".env").write_text("SECRET=1\n")
    (jp_root_dir / "lib" / "__pycache__").mkdir(parents=True)
    (jp_root_dir / "lib" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    (jp_root_dir / "kept").mkdir()
    (jp_root_dir / "kept" / "plan.txt").write_text("kept\n")
    os.symlink("src", jp_root_dir / "code")
    assert state_path.exists()  # the server made it: a hard link to it inside the root is the state under a name
    os.link(state_path, jp_root_dir / "copy.sqlite")
    assert await open_files(api) == NOTHING

    one, two = uuid.uuid4().hex, uuid.uuid4().hex
    await report(
        api,
        one,
        doc("notes.txt", dirty=True),
        doc("code/app.py"),
        doc(".env"),
        doc("lib/__pycache__/mod.cpython-311.pyc"),
        doc("kept/plan.txt"),
        doc("copy.sqlite"),
        doc("outside_link/hostname"),
        doc("../beside.txt"),
    )
    await report(api, two, doc("notes.txt", tabs=2), doc("données/été.txt", kind="notebook"))
    await report(api, uuid.uuid4().hex, doc("docs/guide with space.md"), headers=BOB)  # a reader's page counts
    want = {
        "files": [
            row("docs/guide with space.md"),
            row("données/été.txt"),
            row("notes.txt", tabs=3, unsaved=True),
            row("src/app.py"),
        ],  # by path, named where it really lies (code/app.py is src/app.py)
        "total": 4,
        "notShown": 6,  # hidden, a hide glob, protected, the state file by another name, outside the root twice
    }
    for headers in (ALICE, BOB, jp_auth_header):  # a writer, a reader, a token-only reader: the same list
        assert await open_files(api, headers) == want

    await report(api, one, doc("code/app.py"))  # the page closed the others: the list follows at once
    status, _ = await api("POST", "tabs", two, body={"gone": True}, headers=ALICE)
    assert status == 200
    assert await open_files(api, BOB) == {
        "files": [row("docs/guide with space.md"), row("src/app.py")],
        "total": 2,
        "notShown": 0,
    }


async def test_a_longer_list_is_cut_and_says_how_long_it_was(api, jp_root_dir):
    for start in (0, 700):  # two pages of 700 (a page reports at most 1,000); files need not exist
        await report(api, uuid.uuid4().hex, *(doc(f"many/f{i:04d}.txt") for i in range(start, start + 700)))
    got = await open_files(api)
    assert (got["total"], got["notShown"], len(got["files"])) == (1400, 0, 1000)
    assert [r["path"] for r in got["files"]] == [f"many/f{i:04d}.txt" for i in range(1000)]


@pytest.mark.dsh_settings(live_documents=False)
async def test_with_live_documents_off_nothing_is_open_for_the_tools(api, jp_root_dir, tool):
    await report(api, uuid.uuid4().hex, doc("notes.txt", dirty=True))
    assert await open_files(api) == NOTHING
    read = await tool("read", file_path="notes.txt")
    assert "open" not in read["value"]


async def test_the_call_log_says_how_each_call_s_file_was_open(api, jp_root_dir):
    page = uuid.uuid4().hex
    await report(api, page, doc("notes.txt", dirty=True), doc("src/app.py"))

    async def call(name: str, **args) -> dict:
        status, data = await api("POST", "tools", name, body={"session": "agent", "args": args}, headers=ALICE)
        assert status == 200, data
        return data

    unsaved = await call("read", file_path="notes.txt")
    in_tab = await call("read", file_path="src/app.py")
    closed = await call("read", file_path="docs/guide with space.md")
    refused = await call("edit", file_path="notes.txt", old_string="first", new_string="1st")
    assert (unsaved["value"]["open"], in_tab["value"]["open"], "open" in closed["value"]) == ("unsaved", "tab", False)
    assert refused["value"]["code"] == "FS_OPEN_UNSAVED"
    status, log = await api("GET", "sessions", "agent", "calls", headers=BOB)
    assert status == 200
    assert [(c["callId"], c["open"]) for c in log["calls"]] == [
        (unsaved["callId"], "unsaved"),
        (in_tab["callId"], "tab"),
        (closed["callId"], None),
        (refused["callId"], None),
    ]
    assert (jp_root_dir / "notes.txt").read_text() == "first line\nsecond line\n"


async def test_an_output_and_the_outline_of_a_notebook_open_in_a_tab_say_so(api, jp_root_dir):
    """Without collaboration a notebook open in a tab is read from the file, as its cell view is,
    with the tab's note before the footer."""
    out = v4.new_output("stream", name="stdout", text="done\n")
    nb = v4.new_notebook(
        cells=[v4.new_markdown_cell("# Plan", id="h"), v4.new_code_cell("go()", id="go", outputs=[out])]
    )
    nbformat.write(nb, str(jp_root_dir / "tab.ipynb"))
    await report(api, uuid.uuid4().hex, doc("tab.ipynb", dirty=True, kind="notebook"))

    async def call(name: str, **args) -> dict:
        status, data = await api("POST", "tools", name, body={"session": "agent", "args": args}, headers=ALICE)
        assert status == 200, data
        return data

    note = (
        "(This file is open in JupyterLab with unsaved changes, which this read does not show; a change to it is "
        "refused until they are saved.)"
    )
    output = await call("read", file_path="tab.ipynb", cell_id="go", output=1)
    assert output["text"] == (
        "<path>tab.ipynb</path>\n<type>output</type>\n<content>\n"
        '[cell 2 id="go", output 1: stream stdout]\n1: done\n\n'
        f"{note}\n(End of output - total 1 line)\n</content>"
    )
    assert (output["value"]["open"], output["value"]["live"]) == ("unsaved", False)
    outline = await call("read", file_path="tab.ipynb", outline=True)
    assert outline["text"] == (
        "<path>tab.ipynb</path>\n<type>outline</type>\n<content>\n"
        '[cell 1 id="h", section of 2 cells] # Plan\n[cell 2 id="go", code] go()\n\n'
        f"{note}\n(End of outline - total 2 cells, 1 heading)\n</content>"
    )
