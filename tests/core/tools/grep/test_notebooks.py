"""``grep`` in notebooks: matches in cell sources as ``Cell C, line L``, never in outputs or JSON.

Real notebooks made with nbformat, real rg, exact model text; the value and the spill carry the
cell's index and id.
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
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"load()" * 200).decode()


def make(root: Path, tmp_path: Path, **settings) -> Workspace:
    return Workspace(root, state_path=tmp_path / "state" / "s.sqlite", **settings)


def write_nb(path: Path, cells, minor: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nb = v4.new_notebook(cells=cells)
    if minor is not None:
        nb.nbformat_minor = minor
    nbformat.write(nb, os.fspath(path))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "ws"
    r.mkdir()
    return r


def analysis(root: Path, rel: str = "analysis.ipynb") -> Path:
    path = root / rel
    write_nb(
        path,
        [
            v4.new_markdown_cell("# Load the data\nWe call load() once.", id="intro"),
            v4.new_code_cell(
                "import pandas as pd\n\ndf = load()\nprint(df)",
                id="load-cell",
                execution_count=1,
                outputs=[
                    v4.new_output("stream", name="stdout", text="load() done\n"),
                    v4.new_output("display_data", data={"image/png": PNG, "text/plain": "load() figure"}),
                ],
            ),
            v4.new_code_cell("", id="empty"),
            v4.new_code_cell("x = 'ünï'  # load() again\n", id="again"),
        ],
    )
    return path


def test_grep_reports_cells_and_lines_not_json(root: Path, tmp_path: Path) -> None:
    analysis(root)
    (root / "tool.py").write_text("def load():\n    pass\n", encoding="utf-8")
    r = make(root, tmp_path).run("grep", pattern=r"load\(\)")
    assert r.text == (
        "Found 4 matches\n\n"
        "analysis.ipynb\n"
        "Cell 1, line 2: We call load() once.\n"
        "Cell 2, line 3: df = load()\n"
        "Cell 4, line 1: x = 'ünï'  # load() again\n\n"
        "tool.py\n"
        "Line 1: def load():"
    )
    first = r.value["matches"][0]
    assert first == {
        "path": "analysis.ipynb",
        "line": 2,
        "cell": 1,
        "cellId": "intro",
        "text": "We call load() once.",
        "submatches": [[8, 14]],
    } or (first["cell"], first["cellId"], first["line"]) == (1, "intro", 2)
    assert [(m["cell"], m["cellId"], m["line"]) for m in r.value["matches"][:3]] == [
        (1, "intro", 2),
        (2, "load-cell", 3),
        (4, "again", 1),
    ]
    assert "cell" not in r.value["matches"][3]
    assert r.value["files"] == 2 and r.value["totalMatches"] == 4


def test_anchors_mean_what_they_mean_in_a_file(root: Path, tmp_path: Path) -> None:
    # as JSON the line is '    "import pandas as pd\n",': ^import could never match it
    analysis(root)
    r = make(root, tmp_path).run("grep", pattern="^import", path="analysis.ipynb")
    assert r.text == "Found 1 match\n\nanalysis.ipynb\nCell 2, line 1: import pandas as pd"


def test_outputs_and_metadata_are_never_searched(root: Path, tmp_path: Path) -> None:
    analysis(root)
    ws = make(root, tmp_path)
    assert ws.run("grep", pattern="done|figure|image/png|execution_count|nbformat").text == "No matches found"
    assert ws.run("grep", pattern="iVBOR").text == "No matches found"  # the base64 of the PNG


def test_include_and_a_folder_path(root: Path, tmp_path: Path) -> None:
    analysis(root, "sub/deep/a.ipynb")
    (root / "sub" / "b.py").write_text("load()\n", encoding="utf-8")
    ws = make(root, tmp_path)
    r = ws.run("grep", pattern="again", path="sub", include="*.ipynb")
    assert r.text == "Found 1 match\n\nsub/deep/a.ipynb\nCell 4, line 1: x = 'ünï'  # load() again"
    assert ws.run("grep", pattern="again", include="*.py").text == "No matches found"
    assert (
        ws.run("grep", pattern="load", path="sub", include="*.py").text == "Found 1 match\n\nsub/b.py\nLine 1: load()"
    )


def test_an_ipynb_that_is_not_a_notebook_is_searched_as_text(root: Path, tmp_path: Path) -> None:
    (root / "broken.ipynb").write_text('{"cells": [\n  "df = load()"\n', encoding="utf-8")
    r = make(root, tmp_path).run("grep", pattern="load")
    assert r.text == 'Found 1 match\n\nbroken.ipynb\nLine 2:   "df = load()"'
    assert "cell" not in r.value["matches"][0]


def test_notebooks_are_found_as_other_files_are(root: Path, tmp_path: Path) -> None:
    # dotfiles are searched, VCS folders are not
    analysis(root, ".drafts/a.ipynb")
    analysis(root, ".git/b.ipynb")
    analysis(root, "kept.ipynb")
    ws = make(root, tmp_path)
    assert ws.run("grep", pattern="again").text == (
        "Found 2 matches\n\n.drafts/a.ipynb\nCell 4, line 1: x = 'ünï'  # load() again\n\n"
        "kept.ipynb\nCell 4, line 1: x = 'ünï'  # load() again"
    )


def test_a_cell_line_that_looks_like_structure_stays_a_row(root: Path, tmp_path: Path) -> None:
    write_nb(root / "f.ipynb", [v4.new_code_cell("s = 'x'\nLine 9: forged x\n</cell>x", id="c")])
    r = make(root, tmp_path).run("grep", pattern="x")
    assert r.text == (
        "Found 3 matches\n\nf.ipynb\nCell 1, line 1: s = 'x'\nCell 1, line 2: Line 9: forged x\n"
        "Cell 1, line 3: </cell>x"
    )


def test_a_notebook_without_cell_ids(root: Path, tmp_path: Path) -> None:
    nb = v4.new_notebook(cells=[v4.new_code_cell("needle = 1")])
    nb.nbformat_minor = 4
    del nb.cells[0]["id"]
    nbformat.write(nb, os.fspath(root / "old.ipynb"))
    r = make(root, tmp_path).run("grep", pattern="needle")
    assert r.text == "Found 1 match\n\nold.ipynb\nCell 1, line 1: needle = 1"
    assert (r.value["matches"][0]["cell"], r.value["matches"][0]["cellId"]) == (1, None)


def test_the_spill_names_cells_with_their_ids(root: Path, tmp_path: Path) -> None:
    write_nb(root / "a.ipynb", [v4.new_code_cell("hit\nhit", id="one"), v4.new_markdown_cell("hit", id="two")])
    (root / "b.txt").write_text("hit\nhit\n", encoding="utf-8")
    ws = make(root, tmp_path, grep_max_matches=2)
    r = ws.run("grep", pattern="hit")
    loc = r.value["spill"]
    assert r.text == (
        "Found 2 of 5 matches\n\na.ipynb\nCell 1, line 1: hit\n\nb.txt\nLine 1: hit\n\n"
        "(Showing 2 of 5 matches from all 2 files that matched, sampled across top-level entries and files "
        f"instead of taken in path order. Full grep result stored at: {loc}. {HINT})"
    )
    assert Path(loc).read_text(encoding="utf-8") == (
        "Found 5 matches\n\na.ipynb\n"
        'Cell 1 (id="one"), line 1: hit\nCell 1 (id="one"), line 2: hit\nCell 2 (id="two"), line 1: hit\n\n'
        "b.txt\nLine 1: hit\nLine 2: hit\n"
    )


def test_a_bad_pattern_is_reported_once(root: Path, tmp_path: Path) -> None:
    analysis(root)
    for path in ("analysis.ipynb", "."):
        r = make(root, tmp_path).run("grep", pattern="(", path=path)
        assert r.value["code"] == "SEARCH_INVALID_PATTERN"
        assert r.text == "Error: invalid pattern: regex parse error:\n    (\nerror: unclosed group"


def test_hidden_notebooks_follow_the_setting_and_links_out_are_not_followed(root: Path, tmp_path: Path) -> None:
    analysis(root, ".drafts/a.ipynb")
    analysis(root, "kept.ipynb")
    outside = analysis(tmp_path, "outside.ipynb")
    (root / "link.ipynb").symlink_to(outside)
    (root / "linked").symlink_to(tmp_path)
    ws = make(root, tmp_path, allow_hidden=False)
    assert (
        ws.run("grep", pattern="again").text == "Found 1 match\n\nkept.ipynb\nCell 4, line 1: x = 'ünï'  # load() again"
    )
