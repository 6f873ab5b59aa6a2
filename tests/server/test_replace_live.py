"""``replace`` on files a person has open, on a real ``jupyter server`` with jupyter-collaboration:
the occurrences are changed in the shared document, range by range, never the file under it.

The person is a Y.js client of the server's collaboration (``tests/collab_person.py``), typing into
the shared document between the agent's preview and its apply, and again while the call runs;
the agent calls ``replace`` over REST. Afterwards the person's document and the file the room
saves hold every character the person typed and every replacement the agent was told it made;
or the agent was refused, naming the file, and nothing changed anywhere (the files nobody has
open included).
"""

from __future__ import annotations

import asyncio
import os
import time

import nbformat
import pytest
from collab_person import person, type_at, until
from nbformat import v4
from servers import JupyterProcess

pytestmark = pytest.mark.slow

TOKEN = "replace-live-token"
SOURCE = "".join(f"line {i} uses old_name\n" for i in range(1, 6))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("replace-live")
    root = tmp / "tree"
    root.mkdir()
    root = type(root)(os.path.realpath(root))
    srv = JupyterProcess.start(
        tmp, root, token=TOKEN, timeout=90, extra_args=["--YDocExtension.document_save_delay=0.5"]
    )
    try:
        yield srv
    finally:
        srv.stop()


async def agent(server, session: str, **args) -> dict:
    return await asyncio.to_thread(server.tool, "replace", session, **args)


def on_disk(server, name: str, predicate, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = (server.root / name).read_text()
        if predicate(text):
            return text
        time.sleep(0.1)
    raise AssertionError(f"{name} on disk never matched: {text!r}")


def folder(server, name: str, files: dict[str, str]) -> str:
    (server.root / name).mkdir()
    for rel, text in files.items():
        (server.root / name / rel).write_text(text)
    return name


def test_the_persons_typing_elsewhere_is_kept_and_the_file_nobody_has_open_is_renamed(server):
    where = folder(server, "t", {"open.py": SOURCE, "shut.py": "old_name = 1\n"})

    async def scenario():
        async with person(server, "t/open.py") as doc:
            preview = await agent(server, "t", pattern="old_name", replacement="new_name", path=where)
            ids = [o["id"] for o in preview["value"]["occurrences"] if o["path"] != "t/open.py" or o["line"] != 3]
            type_at(doc, 0, "# the person's first line\n")  # above every occurrence: they all move
            line4 = doc.get().index("line 4")
            type_at(doc, line4, ">> ")  # on a line with an occurrence, away from it
            await until(lambda: ">> line 4" in doc.get())
            await asyncio.sleep(0.2)
            done = await agent(server, "t", pattern="old_name", replacement="new_name", path=where, occurrences=ids)
            await until(lambda: "line 1 uses new_name" in doc.get(), what="the replace reaching the person's tab")
            type_at(doc, len(doc.get()), "# typed after\n")  # the person keeps typing
            await until(lambda: doc.get().endswith("# typed after\n"))
            return preview, done, doc.get()

    preview, done, seen = asyncio.run(scenario())
    assert preview["value"]["totalOccurrences"] == 6
    assert done["text"] == (
        'Replaced 5 occurrences of "old_name" in 2 files:\n'
        "t/open.py: 4 (open in JupyterLab: changed in its live document, which JupyterLab saves)\n"
        "t/shut.py: 1"
    )
    assert done["value"]["changed"] == [
        {"path": "t/open.py", "replacements": 4, "open": "shared", "live": True},
        {"path": "t/shut.py", "replacements": 1},
    ]
    assert seen == (
        "# the person's first line\n"
        "line 1 uses new_name\nline 2 uses new_name\nline 3 uses old_name\n>> line 4 uses new_name\n"
        "line 5 uses new_name\n# typed after\n"
    )
    on_disk(server, "t/open.py", lambda t: t == seen)  # the room saved what the person sees
    assert (server.root / "t" / "shut.py").read_text() == "new_name = 1\n"


def test_an_occurrence_the_person_changed_refuses_the_whole_call_and_nothing_changes(server):
    where = folder(server, "c", {"open.py": SOURCE, "shut.py": "old_name = 1\n"})

    async def scenario():
        async with person(server, "c/open.py") as doc:
            preview = await agent(server, "c", pattern="old_name", replacement="new_name", path=where)
            at = doc.get().index("old_name", doc.get().index("line 2"))
            type_at(doc, at + 4, "X")  # the person types inside an occurrence: old_Xname
            await until(lambda: "old_Xname" in doc.get())
            await asyncio.sleep(0.2)
            ids = [o["id"] for o in preview["value"]["occurrences"]]
            done = await agent(server, "c", pattern="old_name", replacement="new_name", path=where, occurrences=ids)
            await asyncio.sleep(0.5)
            return done, doc.get()

    done, seen = asyncio.run(scenario())
    assert done["isError"] and done["value"]["code"] == "FS_NOT_OBSERVED"
    assert done["text"] == 'Error: cannot replace: "c/open.py" changed since the preview; preview again'
    assert seen == SOURCE.replace("line 2 uses old_name", "line 2 uses old_Xname")
    on_disk(server, "c/open.py", lambda t: t == seen)
    assert (server.root / "c" / "shut.py").read_text() == "old_name = 1\n"
    assert sorted(os.listdir(server.root / "c")) == ["open.py", "shut.py"]  # no temporary file left


def test_a_notebook_open_with_the_person_typing_in_another_cell(server):
    (server.root / "n").mkdir()
    nb = v4.new_notebook(
        cells=[
            v4.new_code_cell("old_name = 1", id="one"),
            v4.new_code_cell("print(old_name)", id="two"),
            v4.new_markdown_cell("About old_name", id="three"),
        ]
    )
    nbformat.write(nb, str(server.root / "n" / "nb.ipynb"))

    async def scenario():
        async with person(server, "n/nb.ipynb", notebook=True) as doc:
            preview = await agent(server, "n", pattern="old_name", replacement="new_name", path="n")
            rows = preview["value"]["occurrences"]
            ids = [o["id"] for o in rows if o["cell"] != 3]  # the markdown cell is left as it is
            cell = doc.ycells[1]["source"]
            cell.insert(0, "# typed by the person\n")  # in cell 2, above its occurrence
            doc.ycells[2]["source"].insert(len(str(doc.ycells[2]["source"])), "!")  # in cell 3, not chosen
            await until(lambda: "typed by the person" in doc.get()["cells"][1]["source"])
            await asyncio.sleep(0.2)
            done = await agent(server, "n", pattern="old_name", replacement="new_name", path="n", occurrences=ids)
            await until(lambda: doc.get()["cells"][0]["source"] == "new_name = 1", what="the replace reaching the tab")
            return rows, done, [c["source"] for c in doc.get()["cells"]]

    rows, done, sources = asyncio.run(scenario())
    assert [(o["cell"], o["line"], o["before"], o["after"]) for o in rows] == [
        (1, 1, "old_name = 1", "new_name = 1"),
        (2, 1, "print(old_name)", "print(new_name)"),
        (3, 1, "About old_name", "About new_name"),
    ]
    assert done["value"]["changed"] == [{"path": "n/nb.ipynb", "replacements": 2, "open": "shared", "live": True}]
    assert sources == ["new_name = 1", "# typed by the person\nprint(new_name)", "About old_name!"]

    def saved(text: str) -> bool:
        try:
            cells = nbformat.reads(text, as_version=4).cells
        except ValueError:  # caught mid-save: Jupyter writes a file in place, emptying it first
            return False
        return [c.source for c in cells] == sources

    nbformat.validate(nbformat.reads(on_disk(server, "n/nb.ipynb", saved), as_version=4))


def test_the_preview_searches_the_open_document_with_its_unsaved_typing(server):
    """A preview is the document's read: an occurrence the person typed and the room has not saved
    yet is found there, and applied."""
    (server.root / "u").mkdir()
    (server.root / "u" / "draft.py").write_text("old_name = 1\n")

    async def scenario():
        async with person(server, "u/draft.py") as doc:
            type_at(doc, len(doc.get()), "print(old_name)\n")
            await until(lambda: "print(old_name)" in doc.get())
            await asyncio.sleep(0.05)
            preview = await agent(server, "u", pattern="old_name", replacement="new_name", path="u")
            done = await agent(
                server, "u", pattern="old_name", replacement="new_name", path="u", occurrences="all", expected_count=2
            )
            await until(lambda: "print(new_name)" in doc.get())
            return preview, done, doc.get()

    preview, done, seen = asyncio.run(scenario())
    assert [(o["line"], o["before"]) for o in preview["value"]["occurrences"]] == [
        (1, "old_name = 1"),
        (2, "print(old_name)"),
    ]
    assert done["value"]["replacements"] == 2
    assert seen == "new_name = 1\nprint(new_name)\n"
    on_disk(server, "u/draft.py", lambda t: t == seen)


def test_a_file_previewed_before_the_person_opened_it_is_changed_in_its_document(server):
    """The preview searched the file (nobody had it open); the person opens it and types before
    the apply: the occurrences are found in the document from the file's content, which the
    preview saw, and the person's typing stays."""
    (server.root / "p").mkdir()
    (server.root / "p" / "later.py").write_text(SOURCE)
    (server.root / "p" / "later.ipynb").write_text(
        nbformat.writes(v4.new_notebook(cells=[v4.new_code_cell("x = old_name", id="x")]))
    )

    async def scenario():
        preview = await agent(server, "p", pattern="old_name", replacement="new_name", path="p")
        async with person(server, "p/later.py") as doc, person(server, "p/later.ipynb", notebook=True) as nb:
            type_at(doc, 0, "# opened and typed\n")
            nb.ycells[0]["source"].insert(0, "# typed\n")
            await until(lambda: doc.get().startswith("# opened") and "# typed" in nb.get()["cells"][0]["source"])
            await asyncio.sleep(0.2)
            total = preview["value"]["totalOccurrences"]
            done = await agent(
                server,
                "p",
                pattern="old_name",
                replacement="new_name",
                path="p",
                occurrences="all",
                expected_count=total,
            )
            await until(lambda: "new_name" in doc.get() and "new_name" in nb.get()["cells"][0]["source"])
            return done, doc.get(), nb.get()["cells"][0]["source"]

    done, text, cell = asyncio.run(scenario())
    assert done["value"]["changed"] == [
        {"path": "p/later.ipynb", "replacements": 1, "open": "shared", "live": True},
        {"path": "p/later.py", "replacements": 5, "open": "shared", "live": True},
    ], done
    assert text == "# opened and typed\n" + SOURCE.replace("old_name", "new_name")
    assert cell == "# typed\nx = new_name"
    on_disk(server, "p/later.py", lambda t: t == text)


def test_a_refusal_in_one_open_document_puts_back_the_change_made_in_another(server):
    """Two files open, one closed: the first open document is changed, the second refuses (the
    person typed in its occurrence), so the first gets its occurrences back and the closed file
    is never written."""
    where = folder(server, "u2", {"a.py": "old_name = 1\n# a\n", "b.py": "old_name = 2\n", "c.py": "old_name = 3\n"})

    async def scenario():
        async with person(server, "u2/a.py") as a, person(server, "u2/b.py") as b:
            preview = await agent(server, "u2", pattern="old_name", replacement="new_name", path=where)
            type_at(b, 3, "X")  # oldX_name: b's occurrence changed
            type_at(a, len(a.get()), "# the person in a\n")  # and typing on in a, elsewhere
            await until(lambda: "oldX" in b.get() and "person in a" in a.get())
            await asyncio.sleep(0.2)
            seen_by_a: list[str] = []
            a.observe(lambda *_: seen_by_a.append(a.get()))
            done = await agent(
                server,
                "u2",
                pattern="old_name",
                replacement="new_name",
                path=where,
                occurrences="all",
                expected_count=3,
            )
            await asyncio.sleep(1.0)
            return preview, done, a.get(), b.get(), seen_by_a

    preview, done, a_text, b_text, seen_by_a = asyncio.run(scenario())
    assert preview["value"]["totalOccurrences"] == 3
    assert (
        done["isError"] and done["text"] == 'Error: cannot replace: "u2/b.py" changed since the preview; preview again'
    )
    assert any("new_name" in t for t in seen_by_a), seen_by_a  # a was changed, then put back
    assert a_text == "old_name = 1\n# a\n# the person in a\n"
    assert b_text == "oldX_name = 2\n"
    on_disk(server, "u2/a.py", lambda t: t == a_text)
    assert (server.root / "u2" / "c.py").read_text() == "old_name = 3\n"
    assert sorted(os.listdir(server.root / "u2")) == ["a.py", "b.py", "c.py"]


def test_a_read_only_file_open_in_jupyterlab_refuses_before_anything_changes(server):
    where = folder(server, "ro", {"a.py": "old_name = 1\n", "b.py": "old_name = 2\n"})
    os.chmod(server.root / "ro" / "b.py", 0o444)

    async def scenario():
        async with person(server, "ro/b.py") as doc:
            await agent(server, "ro", pattern="old_name", replacement="new_name", path=where)
            done = await agent(
                server,
                "ro",
                pattern="old_name",
                replacement="new_name",
                path=where,
                occurrences="all",
                expected_count=2,
            )
            await asyncio.sleep(0.3)
            return done, doc.get()

    try:
        done, seen = asyncio.run(scenario())
    finally:
        os.chmod(server.root / "ro" / "b.py", 0o644)
    assert done["isError"] and done["value"]["code"] == "FS_PERMISSION_DENIED"
    assert done["text"] == 'Error: cannot replace in "ro/b.py": permission denied'
    assert seen == "old_name = 2\n"
    assert (server.root / "ro" / "a.py").read_text() == "old_name = 1\n"
    assert sorted(os.listdir(server.root / "ro")) == ["a.py", "b.py"]


def test_occurrences_after_non_ascii_text_land_on_their_characters(server):
    """Positions are code points for the tools and UTF-8 bytes for the shared text: an occurrence
    after accents and an emoji, with the person typing more of them above, is replaced exactly."""
    (server.root / "uni").mkdir()
    (server.root / "uni" / "u.py").write_text("café = 'old_name' 🎉 old_name\n")

    async def scenario():
        async with person(server, "uni/u.py") as doc:
            await agent(server, "uni", pattern="old_name", replacement="nöw", path="uni")
            type_at(doc, 0, "# über 🎈\n")
            await until(lambda: doc.get().startswith("# über"))
            await asyncio.sleep(0.2)
            done = await agent(
                server, "uni", pattern="old_name", replacement="nöw", path="uni", occurrences="all", expected_count=2
            )
            await until(lambda: "nöw" in doc.get())
            return done, doc.get()

    done, seen = asyncio.run(scenario())
    assert done["value"]["replacements"] == 2, done
    assert seen == "# über 🎈\ncafé = 'nöw' 🎉 nöw\n"
    on_disk(server, "uni/u.py", lambda t: t == seen)
