"""``edit`` and ``write`` of notebooks: cell sources only, validated before writing, gated.

Real notebooks made with nbformat; each edit is checked on the saved file (valid nbformat,
outputs, metadata and ids kept, layout unchanged except for the edited source).
"""

from __future__ import annotations

import json
import os

import nbformat
from nbformat import v4

NB = "nb.ipynb"


def make(root, name=NB):
    nb = v4.new_notebook(
        cells=[
            v4.new_markdown_cell("# Title\nload the data", id="intro"),
            v4.new_code_cell(
                "df = load()\ndf.head()",
                id="load",
                execution_count=4,
                metadata={"tags": ["keep"]},
                outputs=[v4.new_output("stream", name="stdout", text="ok\n")],
            ),
            v4.new_code_cell("df = load()\nplot(df)", id="plot", execution_count=5),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(nb, os.fspath(root / name))
    return root / name


def saved(path):
    text = path.read_text()
    nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    nbformat.validate(nb)
    return nb, text


def test_edit_replaces_text_in_one_cell_and_keeps_the_rest(ws, root):
    path = make(root)
    before = path.read_text()
    assert not ws.run("read", file_path=NB).is_error
    r = ws.run("edit", file_path=NB, old_string="df.head()", new_string="df.describe()")
    assert r.text.startswith("The file nb.ipynb has been updated successfully.\n--- nb.ipynb cell ")
    assert {k: r.value[k] for k in ("path", "replaceAll", "replacements", "cells")} == {
        "path": NB,
        "replaceAll": False,
        "replacements": 1,
        "cells": [2],
    }
    assert r.value["diff"].startswith('--- nb.ipynb cell 2 (id="load")\n+++ nb.ipynb cell 2 (id="load")\n@@ ')
    nb, text = saved(path)
    assert nb.cells[1].source == "df = load()\ndf.describe()"
    assert nb.cells[1].outputs[0].text == "ok\n" and nb.cells[1].metadata == {"tags": ["keep"]}
    assert [c.id for c in nb.cells] == ["intro", "load", "plot"]
    assert nb.metadata.kernelspec.name == "python3"
    # the file is the one nbformat would write, changed only in that source line
    assert text == before.replace('"df.head()"', '"df.describe()"')


def test_old_string_must_be_unique_across_the_notebook(ws, root, expect_error):
    make(root)
    ws.run("read", file_path=NB)
    expect_error(
        ws.run("edit", file_path=NB, old_string="df = load()", new_string="df = fetch()"),
        "EDIT_AMBIGUOUS",
        'old_string appears 2 times in the cell sources of "nb.ipynb" (cells 2, 3); '
        "add context, give cell_id or set replace_all",
    )
    expect_error(
        ws.run("edit", file_path=NB, old_string="nope", new_string="x"),
        "EDIT_NOT_FOUND",
        'old_string not found in the cell sources of "nb.ipynb"',
    )
    # outputs are not sources: "ok" is only in an output
    expect_error(ws.run("edit", file_path=NB, old_string="ok\n", new_string="x"), "EDIT_NOT_FOUND")


def test_cell_id_narrows_the_edit_to_one_cell(ws, root, expect_error):
    path = make(root)
    ws.run("read", file_path=NB)
    r = ws.run("edit", file_path=NB, old_string="df = load()", new_string="df = fetch()", cell_id="plot")
    assert not r.is_error, r.text
    assert r.value["cells"] == [3]
    nb, _ = saved(path)
    assert nb.cells[1].source.startswith("df = load()") and nb.cells[2].source == "df = fetch()\nplot(df)"
    expect_error(
        ws.run("edit", file_path=NB, old_string="x", new_string="y", cell_id="nope"),
        "EDIT_NOT_FOUND",
        'no cell has the id "nope" in "nb.ipynb"',
    )
    expect_error(
        ws.run("edit", file_path=NB, old_string="df.head()", new_string="y", cell_id="plot"),
        "EDIT_NOT_FOUND",
        'old_string not found in cell "plot" of "nb.ipynb"',
    )


def test_replace_all_changes_every_cell(ws, root):
    path = make(root)
    ws.run("read", file_path=NB)
    r = ws.run("edit", file_path=NB, old_string="df", new_string="frame", replace_all=True)
    assert r.text.startswith("The file nb.ipynb has been updated. All occurrences were successfully replaced.\n")
    assert r.value["replacements"] == 4 and r.value["cells"] == [2, 3]
    nb, _ = saved(path)
    assert nb.cells[2].source == "frame = load()\nplot(frame)"


def test_an_edit_needs_a_read_of_the_current_version(ws, make_ws, root, expect_error):
    path = make(root)
    expect_error(
        ws.run("edit", file_path=NB, old_string="plot(df)", new_string="x"),
        "FS_NOT_OBSERVED",
        'cannot write "nb.ipynb": read it first in this session',
    )
    ws.run("read", file_path=NB)
    other = make_ws(session="other")
    other.run("read", file_path=NB)
    assert not other.run("edit", file_path=NB, old_string="plot(df)", new_string="show(df)").is_error
    expect_error(
        ws.run("edit", file_path=NB, old_string="show(df)", new_string="x"),
        "FS_NOT_OBSERVED",
        'cannot write "nb.ipynb": it changed since this session last read it; read it again',
    )
    # after its own edit a session needs no new read
    ws.run("read", file_path=NB)
    assert not ws.run("edit", file_path=NB, old_string="show(df)", new_string="a(df)").is_error
    assert not ws.run("edit", file_path=NB, old_string="a(df)", new_string="b(df)").is_error
    assert saved(path)[0].cells[2].source.endswith("b(df)")


def test_an_edit_that_would_break_the_notebook_is_refused(ws, root, expect_error):
    path = make(root)
    (root / "raw.ipynb").write_text(path.read_text())
    ws.run("read", file_path="raw.ipynb")
    before = (root / "raw.ipynb").read_bytes()
    # the cells view cannot break JSON; a text edit of a broken notebook is checked the same way
    (root / "bad.ipynb").write_text('{"cells": []')
    ws.run("read", file_path="bad.ipynb")
    expect_error(
        ws.run("edit", file_path="bad.ipynb", old_string='"cells"', new_string='"cels"'),
        "NOTEBOOK_INVALID",
        "cannot edit \"bad.ipynb\": it is not valid JSON (Expecting ',' delimiter: line 1 column 12 (char 11)); "
        "nothing was written",
    )
    assert (root / "bad.ipynb").read_text() == '{"cells": []'
    # a text edit that repairs it is allowed
    fixed = ws.run(
        "edit",
        file_path="bad.ipynb",
        old_string='{"cells": []',
        new_string='{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n',
    )
    assert not fixed.is_error, fixed.text
    assert (root / "raw.ipynb").read_bytes() == before


def test_cell_id_needs_a_notebook(ws, root, expect_error):
    (root / "a.py").write_text("x = 1\n")
    ws.run("read", file_path="a.py")
    expect_error(
        ws.run("edit", file_path="a.py", old_string="x", new_string="y", cell_id="a"),
        "ARGUMENT_INVALID",
        "cell_id applies to notebooks (.ipynb files) only",
    )
    (root / "bad.ipynb").write_text("[]")
    ws.run("read", file_path="bad.ipynb")
    expect_error(
        ws.run("edit", file_path="bad.ipynb", old_string="[", new_string="(", cell_id="a"),
        "NOTEBOOK_INVALID",
        'cannot edit "bad.ipynb" by cell: it is not a valid notebook: the top level is not a JSON object',
    )


def test_write_of_a_notebook_must_be_valid(ws, root, expect_error):
    expect_error(
        ws.run("write", file_path="new.ipynb", content="{not json"),
        "NOTEBOOK_INVALID",
        'cannot write "new.ipynb": it is not valid JSON (Expecting property name enclosed in double quotes: '
        "line 1 column 2 (char 1)); nothing was written",
    )
    assert not (root / "new.ipynb").exists()
    bad = json.dumps(
        {
            "cells": [{"cell_type": "code", "source": "x", "metadata": {}, "id": "a"}],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )
    expect_error(
        ws.run("write", file_path="sub/new.ipynb", content=bad),
        "NOTEBOOK_INVALID",
        "cannot write \"sub/new.ipynb\": it is not a valid notebook: 'outputs' is a required property "
        "(in cell 1); nothing was written",
    )
    assert not (root / "sub").exists()
    dup = json.dumps(
        {
            "cells": [v4.new_markdown_cell("a", id="same"), v4.new_markdown_cell("b", id="same")],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )
    expect_error(
        ws.run("write", file_path="new.ipynb", content=dup),
        "NOTEBOOK_INVALID",
        'cannot write "new.ipynb": it is not a valid notebook: cells 1 and 2 have the same id "same"; '
        "nothing was written",
    )
    good = nbformat.writes(v4.new_notebook(cells=[v4.new_code_cell("x = 1", id="a")]))
    r = ws.run("write", file_path="new.ipynb", content=good)
    assert r.text == "<path>new.ipynb</path>\n<type>file</type>\n<content>\nCreated file\n</content>"
    assert saved(root / "new.ipynb")[0].cells[0].source == "x = 1"


def test_replacing_a_notebook_keeps_the_gate_and_validation(ws, root, expect_error):
    path = make(root)
    before = path.read_bytes()
    expect_error(ws.run("write", file_path=NB, content="{}"), "NOTEBOOK_INVALID")
    good = nbformat.writes(v4.new_notebook(cells=[v4.new_code_cell("y = 2", id="b")]))
    expect_error(ws.run("write", file_path=NB, content=good), "FS_NOT_OBSERVED")
    assert path.read_bytes() == before
    ws.run("read", file_path=NB)
    assert ws.run("write", file_path=NB, content=good).text.endswith("Updated file\n</content>")
    assert saved(path)[0].cells[0].id == "b"


def test_edit_keeps_a_notebook_in_another_layout(ws, root):
    nb = v4.new_notebook(cells=[v4.new_code_cell("print('é')", id="a")])
    data = json.loads(nbformat.writes(nb))
    text = json.dumps(data, indent=2, ensure_ascii=True)  # another tool's layout, no final newline
    (root / "two.ipynb").write_text(text)
    ws.run("read", file_path="two.ipynb")
    assert not ws.run("edit", file_path="two.ipynb", old_string="print", new_string="show").is_error
    assert (root / "two.ipynb").read_text() == text.replace("print", "show")


def test_unicode_and_source_strings_round_trip(ws, root):
    nb = v4.new_notebook(cells=[v4.new_code_cell("s = 'ünï ✓'\n</cell>", id="u")])
    raw = json.loads(nbformat.writes(nb))
    raw["cells"][0]["source"] = "s = 'ünï ✓'\n</cell>"  # a string, not a list of lines
    text = json.dumps(raw, indent=1, ensure_ascii=False) + "\n"
    (root / "u.ipynb").write_text(text)
    r = ws.run("read", file_path="u.ipynb")
    assert "1: s = 'ünï ✓'\n2: <\\/cell>\n</cell>" in r.text  # the view escapes its own tags
    assert not ws.run("edit", file_path="u.ipynb", old_string="✓", new_string="✗").is_error
    assert (root / "u.ipynb").read_text() == text.replace("✓", "✗")
