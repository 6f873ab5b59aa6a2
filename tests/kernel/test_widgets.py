"""The widgets driven from Python (no browser): paging, navigation, opened views, what they hold."""

from __future__ import annotations

import html
from collections import Counter

import pytest

from dsh_jupyter.kernel.results import KernelResult, calls_info
from dsh_jupyter.kernel.widgets import (
    CallLogView,
    GlobView,
    GrepView,
    ListingView,
    ReadView,
    SpillsView,
    SpillView,
    view_for,
)
from dsh_jupyter.kernel.widgets.base import pre


@pytest.fixture
def big(root, tree):
    """``big/``: 450 files and 2 directories; ``long.txt``: 5,000 lines."""
    spec = {f"big/file{i:03}.txt": f"content {i}\n" for i in range(450)}
    spec["big/dir_a/inner.txt"] = "inner\n"
    spec["big/dir_b"] = {}
    spec["long.txt"] = "".join(f"row {i}\n" for i in range(1, 5001))
    spec["src/app.py"] = "import os\n\ndef main():\n    return 'hello world'\n"
    spec["src/lib/util.py"] = "".join(f"x = {i}\n" for i in range(1, 40)) + "hello = 'util'\n"
    tree(root, spec)
    return root


def shown(ws, tool, **args):
    return KernelResult.wrap(ws.run(tool, **args), ws, args)


def widget_calls(ws):
    return [(c["tool"], c["args"]) for c in ws.calls(limit=1000)["calls"] if c["surface"] == "widget"]


def row_names(view):
    return [row.name.description for row in view._pool]


# -- listing -------------------------------------------------------------------------------------


def test_listing_pages_one_page_at_a_time(make_ws, big):
    ws = make_ws(list_max_entries=200)
    view = ListingView(ws, ws.session, result=shown(ws, "list", path="big"))
    assert (view.offset, len(view.rows), view.total) == (1, 200, 452)
    seen = []
    for button, offset, count in [("next", 201, 200), ("next", 401, 52), ("prev", 201, 200), ("prev", 1, 200)]:
        getattr(view.pager, f"{button}_button").click()
        assert (view.offset, len(view.rows)) == (offset, count)
        expected = ws.run("list", path="big", offset=offset)
        assert view.footer == expected.footer() and view.model_text == expected.text
        assert view.rows == expected.value["entries"]
        # what the front end holds: one page of rows, no more
        assert len(view.grid.children) == 4 * count
        assert len(view._pool) <= 200
        assert sum(1 for name in row_names(view) if name) == count
        seen.append(view.pager.status.value)
    assert seen[1] == "entries 401-452 of 452" and view.pager.prev_button.disabled
    assert widget_calls(ws) == [("list", {"path": "big", "offset": o}) for o in (201, 401, 201, 1)]


def test_listing_next_is_disabled_on_the_last_page(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, ws.session, path="big", offset=401)
    assert view.pager.next_button.disabled and not view.pager.prev_button.disabled
    assert view.footer.endswith("End of listing.)")


def test_listing_jump_and_a_bad_jump_keeps_the_page(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, ws.session, path="big")
    view.pager.offset_box.value = 77
    view.pager.go_button.click()
    assert view.offset == 77 and view.rows[0]["name"] == "file074.txt"
    view.pager.offset_box.value = 999
    view.pager.go_button.click()
    assert view.error == 'Error: offset 999 is out of range for "big" (452 entries)'
    assert view.offset == 77 and len(view.rows) == 200
    assert view.error_line.layout.display == "" and html.escape(view.error) in view.error_line.value
    view.pager.offset_box.value = 1
    view.pager.go_button.click()
    assert view.error == "" and view.error_line.layout.display == "none"


def test_listing_reuses_its_row_widgets(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, ws.session, path="big")
    before = [id(cell) for row in view._pool for cell in row.cells()]
    view.pager.next_button.click()
    view.pager.next_button.click()
    view.pager.prev_button.click()
    assert [id(cell) for row in view._pool for cell in row.cells()] == before


def test_a_page_change_is_one_message_per_changed_widget(make_ws, big, comms):
    ws = make_ws()
    view = ListingView(ws, ws.session, path="big")
    comms.sent.clear()
    view.pager.next_button.click()
    updates = Counter(comm_id for comm_id, msg_type, data in comms.sent if data and data.get("method") == "update")
    assert updates and max(updates.values()) == 1
    assert not [m for m in comms.sent if m[1] == "comm_open"]  # no widget is created for a new page


def test_directory_click_lists_it_and_breadcrumb_goes_up(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, ws.session)
    big_row = next(i for i, e in enumerate(view.rows) if e["name"] == "big")
    view._pool[big_row].name.click()
    assert view.path == "big" and view.offset == 1
    view._pool[0].name.click()  # dir_a (directories come first)
    assert view.path == "big/dir_a"
    assert view.footer == ws.run("list", path="big/dir_a").footer() == "(1 entry: 0 directories, 1 file)"
    assert [b.description for b in view.breadcrumb.children] == [".", "big", "dir_a"]
    assert view.breadcrumb.children[-1].disabled
    view.breadcrumb.children[1].click()
    assert view.path == "big" and view.total == 452
    view.breadcrumb.children[0].click()
    assert view.path == "."
    assert ("list", {"path": "big/dir_a", "offset": 1}) in widget_calls(ws)


def test_file_click_opens_a_read_view(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, ws.session, path="src")
    index = next(i for i, e in enumerate(view.rows) if e["name"] == "app.py")
    view._pool[index].name.click()
    opened = view.opened
    assert isinstance(opened, ReadView) and opened.path == "src/app.py"
    assert opened.model_text == ws.run("read", file_path="src/app.py").text
    assert opened.footer == "(End of file - total 4 lines)"
    assert view.detail.children[-1] is opened
    view.close_button.click()
    assert view.opened is None and view.detail.children == ()


def test_listing_rows_show_what_the_table_needs(make_ws, root, tree, link):
    tree(root, {"d/a file.txt": "12345", "d/sub": {}, "d/ln": link("a file.txt")})
    ws = make_ws()
    view = ListingView(ws, ws.session, path="d")
    cells = [(r.name.description, r.kind.value, r.size.value) for r in view._pool]
    assert cells == [("sub/", "directory", ""), ("a file.txt", "file", "5"), ("ln@", "other", "")]
    assert view._pool[2].name.disabled and "a file.txt" in view._pool[2].name.tooltip
    assert all(len(r.mtime.value) == 16 for r in view._pool)


def test_model_view_toggle_shows_the_exact_text(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, ws.session, path="big")
    assert view.model_box.layout.display == "none" and view.model_box.value == ""
    view.model_toggle.value = True
    assert view.model_box.value == pre(view.model_text) and view.model_box.layout.display == ""
    view.pager.next_button.click()
    assert view.model_box.value == pre(ws.run("list", path="big", offset=201).text)
    view.model_toggle.value = False
    assert view.model_box.value == "" and view.model_box.layout.display == "none"
    assert html.escape(view.footer) in view.footer_line.value


# -- read ----------------------------------------------------------------------------------------


def test_read_view_pages(make_ws, big):
    ws = make_ws()
    view = ReadView(ws, ws.session, path="long.txt")
    assert (view.offset, len(view.lines)) == (1, 2000)
    assert view.footer == "(Showing lines 1-2000 of 5000. Use offset=2001 to continue.)"
    view.pager.next_button.click()
    assert view.offset == 2001 and view.lines[0] == {"number": 2001, "text": "row 2001"}
    view.pager.next_button.click()
    assert view.offset == 4001 and view.footer == "(End of file - total 5000 lines)"
    assert view.pager.next_button.disabled
    view.pager.offset_box.value = 4990
    view.pager.go_button.click()
    assert len(view.lines) == 11 and view.model_text == ws.run("read", file_path="long.txt", offset=4990).text
    view.pager.prev_button.click()
    assert view.offset == 2990
    assert all(t == "read" for t, _ in widget_calls(ws))


def test_read_view_keeps_the_limit_of_the_magic(make_ws, big):
    ws = make_ws()
    view = view_for(shown(ws, "read", file_path="long.txt", limit=10))
    assert isinstance(view, ReadView) and view.limit == 10
    view.pager.next_button.click()
    assert [line["number"] for line in view.lines] == list(range(11, 21))
    assert view.footer == "(Showing lines 11-20 of 5000. Use offset=21 to continue.)"


# -- grep and glob ------------------------------------------------------------------------------


def test_grep_groups_matches_and_a_match_opens_at_its_line(make_ws, big):
    ws = make_ws()
    result = shown(ws, "grep", pattern="hello", path="src")
    view = view_for(result)
    assert isinstance(view, GrepView)
    assert view.by_file == {"src/app.py": 1, "src/lib/util.py": 1}
    assert view.header_text == "Found 2 matches" and view.footer == ""
    file_box = view.body.children[1]
    assert file_box.children[0].description == "src/lib/util.py"
    match_button = file_box.children[1].children[0]
    assert match_button.description == "Line 40: hello = 'util'"
    match_button.click()
    opened = view.opened
    assert isinstance(opened, ReadView) and opened.highlight == 40
    assert opened.offset == 37 and 40 in [line["number"] for line in opened.lines]
    assert "<mark>hello = &#x27;util&#x27;</mark>" in opened.window.value
    assert widget_calls(ws) == [("read", {"file_path": "src/lib/util.py", "offset": 37})]
    file_box.children[0].click()
    assert view.opened.offset == 1 and view.opened.highlight == 0


def test_glob_groups_by_top_level_entry_and_opens_the_spill(make_ws, big):
    ws = make_ws(glob_max_results=20)
    result = shown(ws, "glob", pattern="*.txt")
    view = view_for(result)
    assert isinstance(view, GlobView)
    assert set(view.groups) == {"big/", "long.txt"}
    assert sum(len(p) for p in view.groups.values()) == 20
    assert view.footer == result.footer() and "sampled across 2 of the 2 top-level entries" in view.footer
    assert view.spill_button.layout.display == ""
    view.spill_button.click()
    spill = view.opened
    assert isinstance(spill, SpillView) and spill.locator == result.value["spill"]
    assert spill.footer == "(Showing lines 1-200 of 452. Use offset=201 to continue.)"
    spill.pager.next_button.click()
    assert spill.offset == 201 and len(spill.lines) == 200
    assert spill.model_text == ws.spill_page(result.value["spill"], offset=201, limit=200).text
    spill.pager.next_button.click()
    assert spill.footer == "(End of file - total 452 lines)" and len(spill.lines) == 52
    assert [t for t, _ in widget_calls(ws)] == ["read", "read", "read"]
    # a path in the glob page opens a read window
    view.body.children[0].children[1].click()
    assert isinstance(view.opened, ReadView) and view.opened.path.endswith(".txt")


def test_glob_under_the_cap_has_no_spill_button(make_ws, big):
    ws = make_ws()
    view = view_for(shown(ws, "glob", pattern="*.py"))
    assert view.spill is None and view.spill_button.layout.display == "none" and view.open_spill() is None
    assert view.footer == "" and view.groups == {"src/": ["src/app.py", "src/lib/util.py"]}


def test_spill_viewer_is_for_the_owning_session_only(make_ws, big):
    ws = make_ws(glob_max_results=5)
    locator = ws.run("glob", pattern="*.txt").value["spill"]
    other = make_ws(session="someone else")
    view = SpillView(other, other.session, locator)
    assert view.error.startswith("Error: cannot read ") and view.error.endswith(": not found") and view.lines == []


def test_grep_spill_button(make_ws, big):
    ws = make_ws(grep_max_matches=10)
    view = view_for(shown(ws, "grep", pattern="content", path="big"))
    assert view.header_text == "Found 10 of 450 matches" and view.footer.startswith("(Full grep result stored at:")
    view.spill_button.click()
    assert view.opened.footer.startswith("(Showing lines 1-200 of ")


# -- call log and saved results ----------------------------------------------------------------


def test_call_log_expands_to_the_exact_text(make_ws, big):
    ws = make_ws()
    texts = [ws.run("read", file_path="src/app.py").text, ws.run("list", path="nowhere").text]
    view = view_for(calls_info(ws.calls(), ws))
    assert isinstance(view, CallLogView)
    assert [c["tool"] for c in view.calls] == ["read", "list"]
    assert view.accordion.titles == ("1. python · read", "2. python · list ERROR")
    assert all(child.value == "" for child in view.accordion.children)
    view.accordion.selected_index = 1
    assert view.expanded == 1 and view.accordion.children[1].value == pre(texts[1])
    view.expand(0)
    assert view.accordion.children[0].value == pre(texts[0]) and view.accordion.children[1].value == ""
    assert view.footer == "(2 calls.)"


def test_call_log_pages_newest_last(make_ws, big):
    ws = make_ws()
    for i in range(7):
        ws.run("read", file_path="long.txt", offset=i + 1, limit=1)
    view = CallLogView(ws, ws.session, limit=3)
    assert view.offset == 5 and [c["args"]["offset"] for c in view.calls] == [5, 6, 7]
    assert view.pager.next_button.disabled
    view.pager.prev_button.click()
    assert view.offset == 2 and view.footer == "(Showing calls 2-4 of 7. Use --offset N --limit N to see others.)"
    ws.run("list")
    view.refresh_button.click()
    assert [c["tool"] for c in view.calls] == ["read", "read", "list"]


def test_call_log_reuses_its_sections_from_page_to_page(make_ws, big):
    """Paging changes the titles, never the section widgets: JupyterLab's accordion view put new
    titles on the old sections while it was still removing them when both were replaced at once."""
    ws = make_ws()
    for i in range(5):
        ws.run("read", file_path="long.txt", offset=i + 1, limit=1)
    view = CallLogView(ws, ws.session, limit=3)
    sections = list(view.accordion.children)
    view.expand(0)
    view.pager.prev_button.click()
    assert list(view.accordion.children) == sections
    assert view.accordion.titles == ("1. python · read", "2. python · read", "3. python · read")
    assert all(child.value == "" for child in sections)  # no text of the previous page is kept
    view.pager.next_button.click()  # the last page is shorter: a prefix of the same sections
    assert view.accordion.titles == ("4. python · read", "5. python · read")
    assert list(view.accordion.children) == sections[:2]


def test_spills_view_opens_a_spill(make_ws, big):
    ws = make_ws(glob_max_results=5)
    ws.run("glob", pattern="*.txt")
    view = SpillsView(ws, ws.session)
    assert len(view.spills) == 1
    button = view.children[3].children[0].children[0]
    button.click()
    assert isinstance(view.opened, SpillView) and view.opened.total == 452


def test_views_log_with_surface_widget_in_their_session(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, "another", path="big")
    view.pager.next_button.click()
    surfaces = {c["surface"] for c in ws.calls("another")["calls"]}
    assert surfaces == {"widget"} and ws.calls()["total"] == 0


def test_navigation_leaves_no_widgets_behind(make_ws, big):
    from ipywidgets.widgets.widget import _instances  # every live widget model (ipywidgets 8)

    ws = make_ws()
    view = ListingView(ws, ws.session, path="big")
    view.load("src", 1)
    view.load("big", 1)
    before = len(_instances)
    for _ in range(3):
        view.load("src", 1)
        view._pool[1].name.click()  # app.py: a read window opens
        view.close_opened()
        view.breadcrumb.children[0].click()
        view.load("big", 1)
        view.pager.next_button.click()
    assert len(_instances) <= before
