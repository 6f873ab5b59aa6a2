"""``%dsh grep`` over the cap: the spread page, its footer, the frame and the HTML table agree."""

from __future__ import annotations

import html
import os

import nbformat
from nbformat import v4

HINT = "Use read with offset/limit, or grep this path to search within it."


def test_magic_grep_over_the_cap_is_spread_and_says_so(shell, cell, root, tree, python_ws):
    spec = {f"hay/aaa/f{i}.txt": "needle\n" * 100 for i in range(10)}
    spec.update({f"hay/{e * 3}/f{i}.txt": "needle\n" * 3 for e in "bcdefghij" for i in range(5)})
    tree(root, spec)
    r = shell.run_line_magic("dsh", "grep needle hay")
    loc = r.value["spill"]
    footer = (
        "(Showing 250 of 1135 matches from all 55 files that matched, sampled across top-level entries and "
        f"files instead of taken in path order. Full grep result stored at: {loc}. {HINT})"
    )
    assert r.text.endswith("\n\n" + footer) and r.footer() == footer
    assert (r.value["files"], r.value["filesTotal"], r.value["sampled"]) == (55, 55, True)
    frame = r.to_frame()
    assert len(frame) == 250 and frame["path"].nunique() == 55
    assert frame.to_dict("records") == [{k: m[k] for k in ("path", "line", "text")} for m in r.value["matches"]]
    # the static table for non-widget frontends repeats the header and the footer
    table = r._repr_mimebundle_()["text/html"]
    assert f"<p>{html.escape('Found 250 of 1135 matches')}</p>" in table
    assert f"<p>{html.escape(footer)}</p>" in table
    # --text prints the same page as the Python API (its own call saves its own spill)
    _, out, err = cell("%dsh grep needle hay --text")
    assert err == ""
    plain = python_ws().run("grep", pattern="needle", path="hay")
    assert out.rpartition("\n\n")[0] == plain.text.rpartition("\n\n")[0]
    # the widget's footer is the model's footer
    assert r.widget().footer == footer


def test_magic_glob_and_grep_take_exclude_repeated(shell, root, tree):
    tree(root, {"node_modules/p/a.js": "needle\n", "src/app.js": "needle\n", "src/x.min.js": "needle\n"})
    g = shell.run_line_magic("dsh", "glob *.js --exclude node_modules --exclude *.min.js")
    assert g.text == "src/app.js" and g.value["exclude"] == ["node_modules", "*.min.js"]
    r = shell.run_line_magic("dsh", "grep needle --exclude node_modules/**")
    assert r.text == "Found 2 matches\n\nsrc/app.js\nLine 1: needle\n\nsrc/x.min.js\nLine 1: needle"


def test_magic_grep_takes_notebook_scope(shell, root):
    out = v4.new_output("stream", name="stdout", text="zebra_count: 3\n")
    cell = v4.new_code_cell("show()", id="s", outputs=[out])
    nbformat.write(v4.new_notebook(cells=[cell]), os.fspath(root / "nb.ipynb"))
    r = shell.run_line_magic("dsh", "grep zebra_count --notebook-scope outputs")
    assert r.text == "Found 1 match\n\nnb.ipynb\nCell 1, output 1, line 1: zebra_count: 3"
    assert r.value["matches"][0]["output"] == 1
    assert shell.run_line_magic("dsh", "grep zebra_count").text == "No matches found"
