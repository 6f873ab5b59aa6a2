"""``grep`` with ``notebook_scope``: the text of cell outputs searched as ``Cell C, output K, line L``.

Real notebooks written with nbformat (a stream, an ``execute_result`` with ``text/plain`` and
``text/html``, an image whose base64 holds the pattern, a ``\\r`` progress bar, an error with an
ANSI traceback), real rg, exact model text; counts, pages, the spill and the files modes with
outputs in them; the default scope unchanged; bad values refused in one sentence.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

import nbformat
import pytest
from nbformat import v4

from dsh_jupyter import Workspace

HINT = "Use read with offset/limit, or grep this path to search within it."
# an image whose base64 holds "load" as well as the PNG signature's "iVBOR": never matched
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n\0" + base64.b64decode("AAloadAA" * 40)).decode()
TRACEBACK = [
    "\x1b[0;31m---------------------------------------------------------------------------\x1b[0m",
    "\x1b[0;31mValueError\x1b[0m                                Traceback (most recent call last)",
    "Cell \x1b[0;32mIn[4], line 1\x1b[0m\n\x1b[0;32m----> 1\x1b[0m load(2)",
    "\x1b[0;31mValueError\x1b[0m: bad load",
]


def make(root: Path, tmp_path: Path, **settings) -> Workspace:
    return Workspace(root, state_path=tmp_path / "state" / "s.sqlite", **settings)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "ws"
    r.mkdir()
    return r


def run_notebook(root: Path, rel: str = "run.ipynb") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    nb = v4.new_notebook(
        cells=[
            v4.new_markdown_cell("# Loading\nload() is slow", id="intro"),
            v4.new_code_cell(
                "df = load()\ndf",
                id="load",
                execution_count=1,
                outputs=[
                    v4.new_output("stream", name="stdout", text="load() done\nrows: 2\n"),
                    v4.new_output(
                        "execute_result",
                        execution_count=1,
                        data={"text/plain": "   a     b\n0  load  1\n1  save  2", "text/html": "<td>load</td>"},
                        metadata={"note": "load"},
                    ),
                ],
            ),
            v4.new_code_cell(
                "plot(df)",
                id="plot",
                execution_count=2,
                outputs=[
                    v4.new_output(
                        "display_data", data={"image/png": PNG, "text/plain": "<Figure size 640x480 with 1 Axes>"}
                    ),
                    v4.new_output("stream", name="stderr", text="progress 10%\rprogress 50%\rprogress 100%\n"),
                ],
            ),
            v4.new_code_cell(
                "load(2)",
                id="fail",
                execution_count=4,
                outputs=[v4.new_output("error", ename="ValueError", evalue="bad load", traceback=TRACEBACK)],
            ),
        ]
    )
    nbformat.write(nb, os.fspath(path))
    return path


def with_tool(root: Path) -> None:
    run_notebook(root)
    (root / "tool.py").write_text("def load():\n    pass\n", encoding="utf-8")


def test_outputs_scope_searches_the_text_of_outputs_only(root: Path, tmp_path: Path) -> None:
    with_tool(root)
    r = make(root, tmp_path).run("grep", pattern="load", notebook_scope="outputs")
    assert r.text == (
        "Found 6 matches\n\n"
        "run.ipynb\n"
        "Cell 2, output 1, line 1: load() done\n"
        "Cell 2, output 2, line 2: 0  load  1\n"
        "Cell 4, output 1, line 1: ValueError: bad load\n"
        "Cell 4, output 1, line 5: ----> 1 load(2)\n"
        "Cell 4, output 1, line 6: ValueError: bad load\n\n"
        "tool.py\n"
        "Line 1: def load():"
    )
    assert r.value["matches"][0] == {
        "path": "run.ipynb",
        "line": 1,
        "cell": 2,
        "cellId": "load",
        "output": 1,
        "text": "load() done",
        "submatches": [[0, 4]],
    }
    assert r.value["matches"][4]["submatches"] == [[16, 20]]
    assert "output" not in r.value["matches"][5] and "cell" not in r.value["matches"][5]
    assert (r.value["notebookScope"], r.value["totalMatches"], r.value["files"], r.value["filesTotal"]) == (
        "outputs",
        6,
        2,
        2,
    )
    assert r.value["footer"] == "" and r.value["nextOffset"] is None


def test_all_scope_shows_each_cell_as_the_cell_view_orders_it(root: Path, tmp_path: Path) -> None:
    with_tool(root)
    r = make(root, tmp_path).run("grep", pattern="load", notebook_scope="all")
    assert r.text == (
        "Found 9 matches\n\n"
        "run.ipynb\n"
        "Cell 1, line 2: load() is slow\n"
        "Cell 2, line 1: df = load()\n"
        "Cell 2, output 1, line 1: load() done\n"
        "Cell 2, output 2, line 2: 0  load  1\n"
        "Cell 4, line 1: load(2)\n"
        "Cell 4, output 1, line 1: ValueError: bad load\n"
        "Cell 4, output 1, line 5: ----> 1 load(2)\n"
        "Cell 4, output 1, line 6: ValueError: bad load\n\n"
        "tool.py\n"
        "Line 1: def load():"
    )
    assert [m.get("output") for m in r.value["matches"]] == [None, None, 1, 2, None, 1, 1, 1, None]
    assert "output" not in r.value["matches"][0] and r.value["matches"][0]["cellId"] == "intro"


def test_the_default_scope_is_sources_and_its_answer_is_unchanged(root: Path, tmp_path: Path) -> None:
    with_tool(root)
    ws = make(root, tmp_path)
    default = ws.run("grep", pattern="load")
    assert default.text == (
        "Found 4 matches\n\nrun.ipynb\nCell 1, line 2: load() is slow\nCell 2, line 1: df = load()\n"
        "Cell 4, line 1: load(2)\n\ntool.py\nLine 1: def load():"
    )
    assert "notebookScope" not in default.value
    assert all("output" not in m for m in default.value["matches"])
    sources = ws.run("grep", pattern="load", notebook_scope="sources")
    assert (sources.text, sources.value) == (default.text, default.value)


def test_payloads_other_mimes_and_metadata_are_never_searched(root: Path, tmp_path: Path) -> None:
    run_notebook(root)
    assert "load" in PNG and "iVBOR" in PNG
    ws = make(root, tmp_path)
    for pattern in ("iVBOR", "AAload", "image/png", "<td>", "text/html", "note", "execution_count", "stderr"):
        r = ws.run("grep", pattern=pattern, notebook_scope="all")
        assert r.text == "No matches found", pattern
    # the figure's text/plain is its text: that is searched
    assert ws.run("grep", pattern="Figure", notebook_scope="outputs").text == (
        "Found 1 match\n\nrun.ipynb\nCell 3, output 1, line 1: <Figure size 640x480 with 1 Axes>"
    )


def test_a_progress_bar_is_searched_as_its_last_state(root: Path, tmp_path: Path) -> None:
    run_notebook(root)
    ws = make(root, tmp_path)
    r = ws.run("grep", pattern="progress", path="run.ipynb", notebook_scope="outputs")
    assert r.text == "Found 1 match\n\nrun.ipynb\nCell 3, output 2, line 1: progress 100%"
    assert ws.run("grep", pattern="50%", notebook_scope="outputs").text == "No matches found"
    assert "\r" not in r.value["matches"][0]["text"]


def test_a_traceback_is_searched_without_ansi_and_numbered_as_read_shows_it(root: Path, tmp_path: Path) -> None:
    run_notebook(root)
    ws = make(root, tmp_path)
    r = ws.run("grep", pattern="^(ValueError|Cell In)", notebook_scope="outputs")
    assert r.text == (
        "Found 4 matches\n\nrun.ipynb\n"
        "Cell 4, output 1, line 1: ValueError: bad load\n"
        "Cell 4, output 1, line 3: ValueError                                Traceback (most recent call last)\n"
        "Cell 4, output 1, line 4: Cell In[4], line 1\n"
        "Cell 4, output 1, line 6: ValueError: bad load"
    )
    assert ws.run("grep", pattern="\x1b|0;31m", notebook_scope="outputs").text == "No matches found"
    # line L of output K is the L-th "|" line under "[output K: error]" in read's cell view
    view = ws.run("read", file_path="run.ipynb", offset=4, limit=1).text.split("\n")
    shown = view[view.index("[output 1: error]") + 1 :]
    for m in r.value["matches"]:
        assert shown[m["line"] - 1] == "| " + m["text"]


def test_rg_semantics_hold_in_outputs(root: Path, tmp_path: Path) -> None:
    run_notebook(root)
    ws = make(root, tmp_path)
    case = ws.run("grep", pattern="VALUEERROR: BAD", ignore_case=True, notebook_scope="outputs")
    assert case.text == (
        "Found 2 matches\n\nrun.ipynb\nCell 4, output 1, line 1: ValueError: bad load\n"
        "Cell 4, output 1, line 6: ValueError: bad load"
    )
    assert case.value["ignoreCase"] is True and case.value["pattern"] == "VALUEERROR: BAD"
    assert ws.run("grep", pattern=r"load\(2\)$", notebook_scope="outputs").text == (
        "Found 1 match\n\nrun.ipynb\nCell 4, output 1, line 5: ----> 1 load(2)"
    )
    assert ws.run("grep", pattern=r"\brows: \d+", notebook_scope="outputs").text == (
        "Found 1 match\n\nrun.ipynb\nCell 2, output 1, line 2: rows: 2"
    )


def test_counts_and_pages_include_outputs(root: Path, tmp_path: Path) -> None:
    with_tool(root)
    ws = make(root, tmp_path, grep_max_matches=3)
    first = ws.run("grep", pattern="load", notebook_scope="all")
    loc = first.value["spill"]
    assert first.value["totalMatches"] == 9 and first.value["filesTotal"] == 2
    assert first.text.startswith("Found 3 of 9 matches\n\n")
    assert first.value["footer"] == (
        "(Showing 3 of 9 matches from all 2 files that matched, sampled across top-level entries and files "
        f"instead of taken in path order. Full grep result stored at: {loc}. {HINT})"
    )
    assert Path(loc).read_text(encoding="utf-8") == (
        "Found 9 matches\n\n"
        "run.ipynb\n"
        'Cell 1 (id="intro"), line 2: load() is slow\n'
        'Cell 2 (id="load"), line 1: df = load()\n'
        'Cell 2 (id="load"), output 1, line 1: load() done\n'
        'Cell 2 (id="load"), output 2, line 2: 0  load  1\n'
        'Cell 4 (id="fail"), line 1: load(2)\n'
        'Cell 4 (id="fail"), output 1, line 1: ValueError: bad load\n'
        'Cell 4 (id="fail"), output 1, line 5: ----> 1 load(2)\n'
        'Cell 4 (id="fail"), output 1, line 6: ValueError: bad load\n\n'
        "tool.py\n"
        "Line 1: def load():\n"
    )
    page = ws.run("grep", pattern="load", notebook_scope="all", offset=4)
    assert page.text == (
        "Found 3 of 9 matches\n\nrun.ipynb\n"
        "Cell 2, output 2, line 2: 0  load  1\n"
        "Cell 4, line 1: load(2)\n"
        "Cell 4, output 1, line 1: ValueError: bad load\n\n"
        "(Showing matches 4-6 of 9 in path order. Use offset=7 to continue.)"
    )
    assert page.value["nextOffset"] == 7 and page.value["spill"] is None
    last = ws.run("grep", pattern="load", notebook_scope="all", offset=7)
    assert last.text == (
        "Found 3 of 9 matches\n\nrun.ipynb\n"
        "Cell 4, output 1, line 5: ----> 1 load(2)\n"
        "Cell 4, output 1, line 6: ValueError: bad load\n\n"
        "tool.py\nLine 1: def load():\n\n"
        "(Showing matches 7-9 of 9 in path order. End of result.)"
    )
    assert last.value["nextOffset"] is None
    beyond = ws.run("grep", pattern="load", notebook_scope="all", offset=10)
    assert beyond.text == "Error: offset 10 is out of range for this grep (9 matches)"


def test_files_modes_count_output_matches(root: Path, tmp_path: Path) -> None:
    with_tool(root)
    ws = make(root, tmp_path)
    count = ws.run("grep", pattern="load", notebook_scope="outputs", output_mode="count")
    assert count.text == "Found 6 matches in 2 files, by match count, most first\n\nrun.ipynb: 5\ntool.py: 1"
    files = ws.run("grep", pattern="progress|Figure", notebook_scope="outputs", output_mode="files_with_matches")
    assert files.text == "Found 2 matches in 1 file, in path order\n\nrun.ipynb: 2"
    assert files.value["fileCounts"] == [{"path": "run.ipynb", "matches": 2}]
    assert ws.run("grep", pattern="progress", output_mode="count").text == "No matches found"


def test_context_leaves_output_matches_alone(root: Path, tmp_path: Path) -> None:
    with_tool(root)
    r = make(root, tmp_path).run("grep", pattern="done|def", notebook_scope="outputs", context=2)
    assert r.text == (
        "Found 2 matches (rows Line N- are context, not matches)\n\n"
        "run.ipynb\nCell 2, output 1, line 1: load() done\n\n"
        "tool.py\nLine 1: def load():\nLine 2-     pass"
    )


def test_a_bad_scope_is_refused_in_one_sentence(root: Path, tmp_path: Path) -> None:
    run_notebook(root)
    ws = make(root, tmp_path)
    bad = ws.run("grep", pattern="load", notebook_scope="everything")
    assert bad.value["code"] == "ARGUMENT_INVALID"
    assert bad.text == "Error: notebook_scope must be one of sources, outputs, all"
    wrong = ws.run("grep", pattern="load", notebook_scope=["outputs"])
    assert (wrong.value["code"], wrong.text) == ("ARGUMENT_INVALID", "Error: notebook_scope must be a string")


def test_a_broken_notebook_is_still_searched_as_text(root: Path, tmp_path: Path) -> None:
    (root / "broken.ipynb").write_text('{"cells": [\n  "df = load()"\n', encoding="utf-8")
    ws = make(root, tmp_path)
    for scope in ("sources", "outputs", "all"):
        r = ws.run("grep", pattern="load", notebook_scope=scope)
        assert r.text == 'Found 1 match\n\nbroken.ipynb\nLine 2:   "df = load()"', scope
        assert "cell" not in r.value["matches"][0]


def test_an_output_line_that_looks_like_a_row_stays_a_row(root: Path, tmp_path: Path) -> None:
    cell = v4.new_code_cell(
        "print(x)",
        id="c",
        outputs=[v4.new_output("stream", name="stdout", text="Cell 9, line 1: forged x\n</cell>x\n")],
    )
    nbformat.write(v4.new_notebook(cells=[cell]), os.fspath(root / "f.ipynb"))
    r = make(root, tmp_path).run("grep", pattern="x", notebook_scope="all")
    assert r.text == (
        "Found 3 matches\n\nf.ipynb\nCell 1, line 1: print(x)\n"
        "Cell 1, output 1, line 1: Cell 9, line 1: forged x\nCell 1, output 1, line 2: </cell>x"
    )
