"""Files a person has open, on a real ``jupyter server`` with jupyter-collaboration: the tools go
through the shared document, never the file under it.

The person is a Y.js client of the server's collaboration (``tests/collab_person.py``), typing into
the shared document as their tab would; the agent calls the tools over REST. After every scenario
the person's document and the file the room saves hold every character the person typed and
every change the agent was told it made, or the agent was refused and nothing changed.
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

TOKEN = "open-docs-token"
SOURCE = "".join(f"line {i}\n" for i in range(1, 11))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("open-docs")
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


def fresh(server, name: str, text: str = SOURCE):
    (server.root / name).write_text(text)
    return name


async def agent(server, tool: str, session: str, **args) -> dict:
    return await asyncio.to_thread(server.tool, tool, session, **args)


def on_disk(server, name: str, predicate, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = (server.root / name).read_text()
        if predicate(text):
            return text
        time.sleep(0.1)
    raise AssertionError(f"{name} on disk never matched: {text!r}")


def test_read_shows_the_open_document_with_the_persons_unsaved_typing(server):
    name = fresh(server, "r.py")

    async def scenario():
        async with person(server, name) as doc:
            type_at(doc, 0, "# typed\n")
            await until(lambda: "# typed" in doc.get())
            await asyncio.sleep(0.2)
            return await agent(server, "read", "r", file_path=name, limit=2)

    read = asyncio.run(scenario())
    assert read["text"] == (
        "<path>r.py</path>\n<type>file</type>\n<content>\n1: # typed\n2: line 1\n\n"
        "(This file is open in JupyterLab: shown as its live document, unsaved changes included.)\n"
        "(Showing lines 1-2 of 11. Use offset=3 to continue.)\n</content>"
    )
    assert read["value"]["open"] == "shared"


def test_an_edit_goes_into_the_open_document_and_keeps_the_persons_typing(server):
    name = fresh(server, "e.py")

    async def scenario():
        async with person(server, name) as doc:
            type_at(doc, len(doc.get()), "# person at the end\n")
            await until(lambda: "person at the end" in doc.get())
            await asyncio.sleep(0.2)
            await agent(server, "read", "e", file_path=name)
            edit = await agent(server, "edit", "e", file_path=name, old_string="line 3", new_string="LINE THREE")
            await until(lambda: "LINE THREE" in doc.get(), what="the edit reaching the person's tab")
            type_at(doc, 0, "# typed after\n")  # the person keeps typing
            await until(lambda: doc.get().startswith("# typed after"))
            return edit, doc.get()

    edit, seen = asyncio.run(scenario())
    assert edit["text"].split("\n")[0] == (
        "The file e.py has been updated successfully. The change went to the file open in JupyterLab, which saves it."
    )
    assert edit["value"]["open"] == "shared"
    assert seen == "# typed after\n" + SOURCE.replace("line 3", "LINE THREE") + "# person at the end\n"
    on_disk(server, name, lambda t: t == seen)  # the room saved what the person sees: nothing lost


def test_an_edit_after_the_person_typed_since_the_read_is_refused(server):
    name = fresh(server, "g.py")

    async def scenario():
        async with person(server, name) as doc:
            await agent(server, "read", "g", file_path=name)
            type_at(doc, 0, "x")
            await until(lambda: doc.get().startswith("x"))
            await asyncio.sleep(0.2)
            edit = await agent(server, "edit", "g", file_path=name, old_string="line 2", new_string="LINE 2")
            await asyncio.sleep(0.3)
            return edit, doc.get()

    edit, seen = asyncio.run(scenario())
    assert edit["isError"] and edit["value"]["code"] == "FS_NOT_OBSERVED"
    # the gate speaks of writing for both tools, as on files
    assert edit["text"] == 'Error: cannot write "g.py": it changed since this session last read it; read it again'
    assert seen == "x" + SOURCE


def test_a_write_is_merged_with_what_the_person_typed_since_the_read(server):
    name = fresh(server, "w.py")

    async def scenario():
        async with person(server, name) as doc:
            await agent(server, "read", "w", file_path=name)
            type_at(doc, len(doc.get()), "# person\n")  # the person adds a line at the end ...
            await until(lambda: "# person" in doc.get())
            await asyncio.sleep(0.2)
            new = SOURCE.replace("line 1\n", "first line\n")  # ... while the agent rewrites line 1
            write = await agent(server, "write", "w", file_path=name, content=new)
            await until(lambda: doc.get().startswith("first line"), what="the write reaching the tab")
            return write, doc.get()

    write, seen = asyncio.run(scenario())
    assert write["text"] == (
        "<path>w.py</path>\n<type>file</type>\n<content>\nUpdated file. The change went to the file open in "
        "JupyterLab, which saves it. The person's changes since this session read it were kept.\n</content>"
    )
    assert write["value"]["merged"] is True and write["value"]["open"] == "shared"
    assert seen == SOURCE.replace("line 1\n", "first line\n") + "# person\n"
    on_disk(server, name, lambda t: t == seen)


def test_a_write_that_changes_the_lines_the_person_changed_is_refused(server):
    name = fresh(server, "c.py")

    async def scenario():
        async with person(server, name) as doc:
            await agent(server, "read", "c", file_path=name)
            type_at(doc, len("line 1\nline 2"), " (person)")
            await until(lambda: "(person)" in doc.get())
            await asyncio.sleep(0.2)
            write = await agent(server, "write", "c", file_path=name, content=SOURCE.replace("line 2", "LINE 2"))
            await asyncio.sleep(0.3)
            return write, doc.get()

    write, seen = asyncio.run(scenario())
    assert write["isError"] and write["value"]["code"] == "FS_OPEN_CONFLICT"
    assert write["text"] == (
        'Error: cannot write "c.py": it is open in JupyterLab, and the person changed line 2 since this session '
        "read it, which this change changes too; nothing was changed. Read it again"
    )
    assert seen == SOURCE.replace("line 2", "line 2 (person)")


def test_a_moved_open_file_takes_its_document_along_and_never_comes_back(server):
    name = fresh(server, "m.py")

    async def scenario():
        async with person(server, name) as doc:
            await agent(server, "read", "m", file_path=name)
            moved = await agent(server, "move", "m", source=name, destination="sub/moved.py")
            await until(lambda: doc.path == "sub/moved.py", what="the document's path following the file")
            type_at(doc, 0, "# typed after the move\n")  # the room saves this ... at the new path
            await until(
                lambda: (server.root / "sub" / "moved.py").read_text().startswith("# typed after"),
                what="the room saving at the new path",
            )
            return moved

    moved = asyncio.run(scenario())
    assert moved["text"] == (
        "Moved file m.py to sub/moved.py, creating the missing parent directories. It was open in JupyterLab, and its "
        "tab follows it."
    )
    assert moved["value"]["open"] == "shared"
    time.sleep(1.0)  # one more save delay: nothing makes the old path again
    assert not (server.root / name).exists()


def test_a_write_of_an_open_notebook_keeps_the_persons_cell(server):
    nb = v4.new_notebook(cells=[v4.new_code_cell("a = 1", id="one"), v4.new_code_cell("b = 2", id="two")])
    nbformat.write(nb, str(server.root / "n.ipynb"))

    async def scenario():
        async with person(server, "n.ipynb", notebook=True) as doc:
            await agent(server, "read", "n", file_path="n.ipynb")
            cell = doc.ycells[1]["source"]
            cell.insert(len(str(cell)), "\nprint(b)")  # the person types in cell 2
            await until(lambda: "print(b)" in doc.get()["cells"][1]["source"])
            await asyncio.sleep(0.2)
            mine = v4.new_notebook(cells=[v4.new_code_cell("a = 10", id="one"), v4.new_code_cell("b = 2", id="two")])
            write = await agent(server, "write", "n", file_path="n.ipynb", content=nbformat.writes(mine))
            assert not write["isError"], write["text"]
            await until(lambda: doc.get()["cells"][0]["source"] == "a = 10", what="the write reaching the tab")
            return write, [c["source"] for c in doc.get()["cells"]]

    write, sources = asyncio.run(scenario())
    assert write["value"]["merged"] is True and write["value"]["live"] is True, write
    assert sources == ["a = 10", "b = 2\nprint(b)"]


def test_an_outline_and_an_output_of_an_open_notebook_come_from_its_live_document(server):
    """The person retitles a heading they have not saved: the outline shows the shared document, and
    an output read whole comes from it too, each with the live document's note, as the cell view."""
    nb = v4.new_notebook(
        cells=[
            v4.new_markdown_cell("# Draft", id="h"),
            v4.new_code_cell(
                "run()", id="run", execution_count=1, outputs=[v4.new_output("stream", name="stdout", text="saved\n")]
            ),
        ]
    )
    nbformat.write(nb, str(server.root / "o.ipynb"))

    async def scenario():
        async with person(server, "o.ipynb", notebook=True) as doc:
            heading = doc.ycells[0]["source"]
            heading.insert(len(str(heading)), " and final")  # the person types in the heading
            await until(lambda: doc.get()["cells"][0]["source"] == "# Draft and final")
            await asyncio.sleep(0.2)
            outline = await agent(server, "read", "o", file_path="o.ipynb", outline=True)
            output = await agent(server, "read", "o", file_path="o.ipynb", cell_id="run", output=1)
            return outline, output

    outline, output = asyncio.run(scenario())
    live = "(This notebook is open in Jupyter: shown as its live document, unsaved changes included.)"
    assert outline["text"] == (
        "<path>o.ipynb</path>\n<type>outline</type>\n<content>\n"
        '[cell 1 id="h", section of 2 cells] # Draft and final\n[cell 2 id="run", code] run()\n\n'
        f"{live}\n(End of outline - total 2 cells, 1 heading)\n</content>"
    )
    assert outline["value"]["live"] is True and outline["value"]["open"] == "shared"
    assert output["text"] == (
        "<path>o.ipynb</path>\n<type>output</type>\n<content>\n"
        '[cell 2 id="run", output 1: stream stdout]\n1: saved\n\n'
        f"{live}\n(End of output - total 1 line)\n</content>"
    )
    assert output["value"]["live"] is True


def test_the_open_shared_documents_are_listed_and_each_call_on_one_says_so(server):
    """``GET /dsh/api/documents`` lists each file a tab is connected to (a second tab counts), the
    call log marks a call on one as ``shared``, and a file whose tabs left is no longer listed."""
    name = fresh(server, "listed.py")
    nb = v4.new_notebook(cells=[v4.new_code_cell("x = 1", id="x")])
    nbformat.write(nb, str(server.root / "listed.ipynb"))

    def listed() -> dict:
        status, data = server.request("GET", "dsh/api/documents")
        assert status == 200, data
        return data

    async def scenario():
        async with person(server, name), person(server, name), person(server, "listed.ipynb", notebook=True):
            await until(lambda: listed()["total"] == 2, what="both files listed")
            shown = listed()
            read = await agent(server, "read", "listed", file_path=name)
        await until(lambda: listed()["total"] == 0, what="the files leaving the list once their tabs left")
        return shown, read

    shown, read = asyncio.run(scenario())
    assert shown == {
        "files": [
            {"path": "listed.ipynb", "shared": True, "tabs": 1, "unsaved": None},
            {"path": "listed.py", "shared": True, "tabs": 2, "unsaved": None},
        ],
        "total": 2,
        "notShown": 0,
    }
    status, log = server.request("GET", "dsh/api/sessions/listed/calls")
    assert status == 200
    assert [(c["callId"], c["open"]) for c in log["calls"]] == [(read["callId"], "shared")]


def test_edit_cells_changes_the_shared_notebook_cell_by_cell_and_keeps_the_persons_typing(server):
    """Inserted, moved, retyped, cleared and deleted cells land in the document's cells array; the
    cell the person types in is never replaced: their unsaved typing before the call stays, and
    typing into the same shared text after it still reaches the document and the file."""
    load = v4.new_code_cell("df = load()", id="load", execution_count=1)
    load.outputs = [v4.new_output("stream", name="stdout", text="loaded\n")]
    nb = v4.new_notebook(
        cells=[
            v4.new_markdown_cell("# Title", id="intro"),
            load,
            v4.new_code_cell("plot(df)", id="plot"),
            v4.new_raw_cell("old", id="old"),
        ]
    )
    nbformat.write(nb, str(server.root / "cells.ipynb"))

    def by_id(doc) -> dict:
        return {c["id"]: c for c in doc.get()["cells"]}

    async def scenario():
        async with person(server, "cells.ipynb", notebook=True) as doc:
            typing = doc.ycells[1]["source"]  # the person's cursor is in "load"
            typing.insert(len(str(typing)), "\n# unsaved 1")
            await until(lambda: "# unsaved 1" in by_id(doc)["load"]["source"])
            await asyncio.sleep(0.2)
            await agent(server, "read", "cells", file_path="cells.ipynb")
            changed = await agent(
                server,
                "edit_cells",
                "cells",
                file_path="cells.ipynb",
                operations=[
                    {"op": "insert", "cell_type": "markdown", "source": "## Plot", "before": "plot"},
                    {"op": "move", "cell_id": "plot", "at": "start"},
                    {"op": "set_type", "cell_id": "intro", "cell_type": "raw"},
                    {"op": "clear_outputs", "cell_id": "load"},
                    {"op": "delete", "cell_id": "old"},
                ],
            )
            assert not changed["isError"], changed["text"]
            await until(lambda: "old" not in by_id(doc), what="the change reaching the person's tab")
            typing.insert(len(str(typing)), "\n# unsaved 2")  # the same shared text, after the call
            await until(lambda: "# unsaved 2" in by_id(doc)["load"]["source"], what="typing after the call")
            return changed, doc.get()["cells"]

    changed, cells = asyncio.run(scenario())
    new = changed["value"]["operations"][0]["cell"]
    assert changed["text"] == (
        "The notebook cells.ipynb has been updated successfully: 5 operations. The change went to the notebook "
        "open in Jupyter, which saves it.\n"
        f'1. inserted cell "{new}" (markdown) before "plot"\n'
        '2. moved cell "plot" (code) to the start\n'
        '3. changed cell "intro" from markdown to raw\n'
        '4. cleared the outputs of cell "load": 1 output\n'
        '5. deleted cell "old" (raw)\n'
        "Cell order now (4 cells), around the changes:\n"
        '* 1 "plot" code\n'
        '* 2 "intro" raw\n'
        '* 3 "load" code\n'
        f'* 4 "{new}" markdown'
    )
    assert (changed["value"]["live"], changed["value"]["open"]) == (True, "shared")
    want = [
        ("plot", "code", "plot(df)"),
        ("intro", "raw", "# Title"),
        ("load", "code", "df = load()\n# unsaved 1\n# unsaved 2"),
        (new, "markdown", "## Plot"),
    ]
    assert [(c["id"], c["cell_type"], c["source"]) for c in cells] == want
    assert (cells[2]["outputs"], cells[2]["execution_count"]) == ([], None)

    def saved(text: str) -> bool:
        try:
            got = nbformat.reads(text, as_version=4)
        except ValueError:  # caught mid-save: Jupyter writes a file in place, emptying it first
            return False
        return [(c.id, c.cell_type, c.source) for c in got.cells] == want

    text = on_disk(server, "cells.ipynb", saved)  # the room saved what the person sees
    nbformat.validate(nbformat.reads(text, as_version=4))


def test_edit_cells_after_the_person_typed_since_the_read_is_refused(server):
    nb = v4.new_notebook(cells=[v4.new_code_cell("a = 1", id="one"), v4.new_code_cell("b = 2", id="two")])
    nbformat.write(nb, str(server.root / "typed.ipynb"))

    async def scenario():
        async with person(server, "typed.ipynb", notebook=True) as doc:
            await agent(server, "read", "typed", file_path="typed.ipynb")
            doc.ycells[1]["source"].insert(5, "0")
            await until(lambda: doc.get()["cells"][1]["source"] == "b = 20")
            await asyncio.sleep(0.2)
            refused = await agent(
                server, "edit_cells", "typed", file_path="typed.ipynb", operations=[{"op": "delete", "cell_id": "one"}]
            )
            await asyncio.sleep(0.3)
            return refused, [c["source"] for c in doc.get()["cells"]]

    refused, sources = asyncio.run(scenario())
    assert refused["isError"] and refused["value"]["code"] == "FS_NOT_OBSERVED"
    assert refused["text"] == (
        'Error: cannot write "typed.ipynb": it changed since this session last read it; read it again'
    )
    assert sources == ["a = 1", "b = 20"]
