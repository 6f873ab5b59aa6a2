"""The replace preview widget driven from Python as the browser drives it (``act``): the boxes'
ids, Apply with some unchecked, ``"all"`` for a whole page, refusals shown in place, paging."""

from __future__ import annotations

import nbformat
import pytest

from dsh_jupyter.kernel.widgets import ReplaceView, view_for
from dsh_jupyter.kernel.widgets.replacing import change_parts, split_change

from .test_widgets import act, shown, widget_calls


@pytest.mark.parametrize(
    ("before", "after", "parts"),
    [
        ("a = foo", "a = bar", ("a = ", "foo", "bar", "")),
        ("b = foo(foo)", "b = foo(bar)", ("b = foo(", "foo", "bar", ")")),
        ("foo", "foofoo", ("foo", "", "foo", "")),  # the end never overlaps the start
        ("x_old_x", "x_x", ("x_", "old_", "", "x")),
        ("same", "same", ("same", "", "", "")),
    ],
)
def test_a_preview_line_splits_into_what_stays_and_what_changes(before, after, parts):
    assert split_change(before, after) == parts
    head, removed, added, tail = parts
    assert head + removed + tail == before and head + added + tail == after


def test_a_preview_row_is_split_where_the_tool_placed_the_occurrence():
    row = {"before": "total = old_total", "after": "total = new_total", "span": [8, 17]}
    assert change_parts(row) == ("total = ", "old_total", "new_total", "")  # not "old" -> "new"
    cut = {"before": "x = old_total …", "after": "x = new_total …", "span": [4, 99]}  # a long line cut
    assert change_parts(cut) == ("x = ", "old", "new", "_total …")


@pytest.fixture
def tree(root):
    (root / "src").mkdir()
    (root / "src" / "x.py").write_text("a = foo\nb = foo(foo)\n")
    (root / "y.txt").write_text("foo\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = foo\nfoo()")]
    nbformat.write(nb, root / "n.ipynb")
    return root


def preview(ws, **args):
    view = view_for(shown(ws, "replace", pattern="foo", replacement="bar", **args))
    assert isinstance(view, ReplaceView)
    return view


def ids_of(view):
    return [item["id"] for f in view.files for item in f["items"]]


def test_the_preview_is_grouped_by_file_with_each_change_split_and_placed(make_ws, tree):
    view = preview(make_ws())
    assert view.kind == "replace" and view.subject == "foo"
    assert view.summary == "6 occurrences in 3 files" and view.status == "occurrences 1-6 of 6"
    assert [(f["path"], f["count"]) for f in view.files] == [("n.ipynb", 2), ("src/x.py", 3), ("y.txt", 1)]
    nb_items = view.files[0]["items"]
    assert [i["place"] for i in nb_items] == ["1:1", "1:2"]  # cell 1, lines 1 and 2
    assert {k: nb_items[1][k] for k in ("head", "removed", "added", "tail")} == {
        "head": "",
        "removed": "foo",
        "added": "bar",
        "tail": "()",
    }
    assert nb_items[0]["head"] == "x = " and nb_items[0]["tail"] == ""
    second = view.files[1]["items"][2]
    assert (second["place"], second["head"], second["tail"]) == ("2", "b = foo(", ")")
    assert view.pager == {"prev": False, "next": False, "offset": 1, "noun": "occurrences", "step": 6}
    assert view.model_text.startswith('Found 6 occurrences of "foo" in 3 files') and not view.applied


def test_apply_changes_the_checked_occurrences_only_and_previews_again(make_ws, tree, root):
    ws = make_ws()
    view = preview(ws, path="src")
    keep = view.files[0]["items"][1]["id"]  # b = [foo](foo) stays
    chosen = [i for i in ids_of(view) if i != keep]
    act(view, "apply", ids=chosen)
    assert view.error == ""
    assert (root / "src" / "x.py").read_text() == "a = bar\nb = foo(bar)\n"
    assert (root / "y.txt").read_text() == "foo\n"  # outside the path searched
    assert widget_calls(ws)[0] == (
        "replace",
        {"pattern": "foo", "replacement": "bar", "path": "src", "occurrences": chosen},
    )
    assert view.applied == 'Replaced 2 occurrences of "foo" in 1 file:\nsrc/x.py: 2'
    # previewed again: what is left is on screen, every box for it new
    assert view.summary == "1 occurrence in 1 file"
    assert [(i["head"], i["removed"], i["tail"]) for i in view.files[0]["items"]] == [("b = ", "foo", "(bar)")]


def test_every_box_of_a_whole_preview_applies_all_guarded_by_its_total(make_ws, tree, root):
    ws = make_ws()
    view = preview(ws)
    act(view, "apply", ids=ids_of(view))
    assert widget_calls(ws)[0][1] == {
        "pattern": "foo",
        "replacement": "bar",
        "occurrences": "all",
        "expected_count": 6,
    }
    assert (root / "src" / "x.py").read_text() == "a = bar\nb = bar(bar)\n"
    assert nbformat.read(root / "n.ipynb", as_version=4).cells[0].source == "x = bar\nbar()"
    assert view.files == [] and view.summary == "No occurrences"
    assert view.notice.startswith("No occurrences of")


def test_a_file_changed_since_the_preview_refuses_in_place_and_writes_nothing(make_ws, tree, root):
    ws = make_ws()
    view = preview(ws)
    (root / "y.txt").write_text("foo\nmore\n")  # a neighbour changed it after the preview (same count)
    before = ids_of(view)
    act(view, "apply", ids=before)
    assert view.error == 'Error: cannot replace: "y.txt" changed since the preview; preview again'
    assert ids_of(view) == before and not view.applied  # the page stays for the person to look
    assert (root / "src" / "x.py").read_text() == "a = foo\nb = foo(foo)\n"
    assert (root / "y.txt").read_text() == "foo\nmore\n"
    (root / "y.txt").write_text("foo foo\n")
    act(view, "apply", ids=before)  # every box: "all", whose guard is the preview's total
    assert view.error == "Error: cannot replace: 7 occurrences match now, not the expected_count 6; preview again"
    act(view, "refresh")
    assert view.error == "" and view.summary == "7 occurrences in 3 files"


def test_nothing_checked_or_an_id_not_on_the_page_applies_nothing(make_ws, tree, root):
    ws = make_ws()
    view = preview(ws)
    act(view, "apply", ids=[])
    assert view.error == "Error: no occurrence is checked; check the ones to change"
    act(view, "apply", ids=["0123456789ab"])
    assert view.error.startswith("Error: the widget could not do 'apply' (ValueError: an occurrence to apply")
    assert widget_calls(ws) == [] and (root / "y.txt").read_text() == "foo\n"


def test_a_paged_preview_applies_the_page_shown_by_its_ids(make_ws, tree, root):
    ws = make_ws(replace_max_results=2)
    view = preview(ws, path="src")
    assert view.status == "occurrences 1-2 of 3" and view.pager["next"] is True
    act(view, "page", where="next")
    assert view.status == "occurrences 3-3 of 3" and view.pager["prev"] is True
    last = ids_of(view)
    act(view, "apply", ids=last)  # every box of this page, but not the whole preview: the ids
    assert widget_calls(ws)[-2][1]["occurrences"] == last
    assert (root / "src" / "x.py").read_text() == "a = foo\nb = foo(bar)\n"
    assert view.status == "occurrences 1-2 of 2"


def test_an_applied_replace_has_no_preview_view(make_ws, tree):
    ws = make_ws()
    shown(ws, "replace", pattern="foo", replacement="bar")
    assert view_for(shown(ws, "replace", pattern="foo", replacement="bar", occurrences="all", expected_count=6)) is None
