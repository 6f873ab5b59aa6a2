"""The search and session widget models driven from Python (no browser): grep, glob, saved results, call log.

Requests are sent as the browser sends them (``act``); the helpers are the listing tests'
(test_widgets.py), the ``big`` tree is in conftest.py.
"""

from __future__ import annotations

import os
import re

from dsh_jupyter.kernel.results import calls_info
from dsh_jupyter.kernel.widgets import CallLogView, GlobView, GrepView, SpillsView, SpillView, view_for

from .test_widgets import act, shown, widget_calls

# -- grep and glob ------------------------------------------------------------------------------


def test_grep_groups_matches_with_spans_and_opens_at_the_line(make_ws, big):
    ws = make_ws()
    view = view_for(shown(ws, "grep", pattern="hello", path="src"))
    assert isinstance(view, GrepView) and view.header == "Found 2 matches" and view.footer == ""
    assert view.by_file == {"src/app.py": 1, "src/lib/util.py": 1}
    util = view.files[1]
    assert util["label"] == "src/lib/util.py"
    line, text, spans = util["matches"][0]
    assert line == 40 and text == "hello = 'util'   # hello again"  # spacing kept
    assert [text[a:b] for a, b in spans] == ["hello", "hello"]
    act(view, "open_match", group=1, index=0)
    assert view.panel["anchor"] == "match:1:0" and view.panel["highlight"] == 40
    assert view.panel["highlightSpan"] == spans[0]  # the first match, for "open in editor" to select
    assert view.opened.offset == 37 and 40 in [n for n, _ in view.panel["lines"]]
    assert widget_calls(ws) == [("read", {"file_path": "src/lib/util.py", "offset": 37})]
    act(view, "open_path", group=0)
    assert view.panel["anchor"] == "file:0" and view.opened.offset == 1 and view.panel["highlight"] == 0
    assert view.panel["highlightSpan"] is None


def test_a_search_from_the_widget_sends_how_far_it_got_before_done(make_ws, big, comms, monkeypatch):
    from dsh_jupyter.core.tools.grep import tool as grep_tool

    monkeypatch.setattr(grep_tool, "PROGRESS_EVERY_S", 0.0)
    ws = make_ws()
    view = view_for(shown(ws, "grep", pattern="HELLO", path="src"))
    comms.sent.clear()
    act(view, "refine", ignore_case=True, output_mode="content", context=0)
    customs = [
        data["content"] for _c, kind, data in comms.sent if kind == "comm_msg" and data.get("method") == "custom"
    ]
    assert customs[-1] == {"done": 1, "ok": True}
    told = [c["progress"] for c in customs if "progress" in c]
    assert told and all(t.endswith(" so far") for t in told), customs


def test_grep_toolbar_asks_again_with_case_mode_and_context(make_ws, big):
    """The toolbar's case, mode and context controls re-run grep in the view's session; the page
    that answers replaces the view's, with the model's header and footer for those arguments."""
    ws = make_ws()
    view = view_for(shown(ws, "grep", pattern="HELLO", path="src"))
    assert view.files == [] and view.notice == "No matches found"
    assert view.options == {"ignore_case": False, "output_mode": "content", "context": 0}
    act(view, "refine", ignore_case=True, output_mode="content", context=0)
    assert (
        view.error == ""
        and view.header == "Found 2 matches"
        and view.by_file == {"src/app.py": 1, "src/lib/util.py": 1}
    )
    assert view.options["ignore_case"] is True and view.notice == ""
    act(view, "refine", ignore_case=True, output_mode="files_with_matches", context=0)
    assert view.header == "Found 2 matches in 2 files, in path order"
    assert [(f["path"], f["count"], f["matches"]) for f in view.files] == [
        ("src/app.py", 1, []),
        ("src/lib/util.py", 1, []),
    ]
    act(view, "refine", ignore_case=True, output_mode="content", context=1)
    app = view.files[0]
    assert app["count"] == 1 and app["matches"] == [
        [3, "def main():", [], None, True],
        [4, "    return 'hello world'", [[12, 17]]],
    ]
    assert view.model_text.startswith("Found 2 matches (rows Line N- are context, not matches)")
    act(view, "open_match", group=0, index=0)  # a context row opens the file at its line
    assert view.panel["highlight"] == 3 and view.panel["highlightSpan"] is None  # no match on it: the line
    act(view, "open_match", group=0, index=1)
    assert view.panel["highlight"] == 4 and view.panel["highlightSpan"] == [12, 17]
    act(view, "refine", ignore_case=True, output_mode="count", context=2)  # refused: the page stays
    assert view.error == "Error: context applies to output_mode content, not count" and view.files[0]["count"] == 1
    assert [args for tool, args in widget_calls(ws) if tool == "grep"] == [
        {"pattern": "HELLO", "path": "src", "ignore_case": True},
        {"pattern": "HELLO", "path": "src", "ignore_case": True, "output_mode": "files_with_matches"},
        {"pattern": "HELLO", "path": "src", "ignore_case": True, "context": 1},
        {"pattern": "HELLO", "path": "src", "ignore_case": True, "output_mode": "count", "context": 2},
    ]


def test_grep_spill_opens_in_the_panel_and_its_paths_are_links(make_ws, big):
    ws = make_ws(grep_max_matches=10)
    view = view_for(shown(ws, "grep", pattern="x", path="big", include="file0*"))
    assert view.header == "Found 10 of 99 matches" and view.footer.startswith("(Full grep result stored at:")
    assert view.spill_name == "grep x big --include 'file0*'"
    act(view, "spill")
    panel = view.panel
    assert panel["anchor"] == "spill" and panel["kind"] == "spill" and panel["name"] == view.spill_name
    assert panel["status"].startswith("lines 1-200 of ") and panel["links"][0] is None  # "Found 99 matches"
    first_path = next(i for i, link in enumerate(panel["links"]) if link and link[1] == 0)
    path = panel["links"][first_path][0]
    assert panel["links"][first_path + 1] == [path, 1]
    act(view, "window", op="link", index=first_path + 1)
    assert view.opened.path == path and view.panel["highlight"] == 1 and view.panel["back"] == "saved result"
    act(view, "window", op="back")
    assert view.panel["kind"] == "spill" and view.opened.offset == 1


def test_glob_groups_and_opens_the_spill(make_ws, big):
    ws = make_ws(glob_max_results=20)
    result = shown(ws, "glob", pattern="*.txt")
    view = view_for(result)
    assert isinstance(view, GlobView)
    assert [g["key"] for g in view.groups] == ["big/", "long.txt"]
    assert view.summary == "in .: 20 of 452 paths in 2 top-level entries shown, oldest first in each"
    assert sum(len(g["paths"]) for g in view.groups) == 20
    assert view.footer == result.footer() and "sampled across 2 of the 2 top-level entries" in view.footer
    act(view, "spill")
    spill = view.opened
    assert (
        spill.locator == result.value["spill"]
        and spill.footer == "(Showing lines 1-200 of 452. Use offset=201 to continue.)"
    )
    assert view.panel["links"][0][1] == 0 and all(link for link in view.panel["links"])  # every line is a path
    act(view, "window", op="next")
    assert spill.offset == 201 and spill.model_text == ws.spill_page(result.value["spill"], offset=201, limit=200).text
    act(view, "window", op="previous")
    assert spill.offset == 1
    act(view, "open_path", group=0, index=1)
    assert view.opened.path == view.groups[0]["paths"][1][0] and view.panel["anchor"] == "path:0:1"


def test_glob_under_the_cap_has_no_spill(make_ws, big):
    ws = make_ws()
    view = view_for(shown(ws, "glob", pattern="*.py"))
    assert view.spill is None and view.open_spill() is None and view.footer == ""
    assert view.groups == [
        {
            "key": "src/",
            "label": "src/",
            "paths": [["src/app.py", "src/app.py"], ["src/lib/util.py", "src/lib/util.py"]],
        }
    ]


def test_spill_viewer_is_for_the_owning_session_only(make_ws, big):
    ws = make_ws(glob_max_results=5)
    locator = ws.run("glob", pattern="*.txt").value["spill"]
    other = make_ws(session="someone else")
    view = SpillView(other, other.session, locator)
    assert view.error.startswith("Error: cannot read ") and view.error.endswith(": not found") and view.lines == []


# -- call log and saved results ----------------------------------------------------------------


def test_glob_groups_sort_by_name_and_back_without_a_call(make_ws, big):
    ws = make_ws()
    for i, name in enumerate(["c.txt", "a.txt", "b.txt"]):
        p = big / "ordered" / name
        p.parent.mkdir(exist_ok=True)
        p.write_text("x\n")
        os.utime(p, (1_000_000 + i, 1_000_000 + i))  # c oldest, then a, then b
    view = view_for(shown(ws, "glob", pattern="ordered/*.txt"))
    assert isinstance(view, GlobView) and view.order == "time"
    tool_order = [p for p, _ in view.groups[0]["paths"]]
    assert tool_order == ["ordered/c.txt", "ordered/a.txt", "ordered/b.txt"]
    assert view.summary.endswith(", oldest first in each")
    calls = len(ws.calls(limit=100)["calls"])
    act(view, "order", order="name")
    assert [p for p, _ in view.groups[0]["paths"]] == ["ordered/a.txt", "ordered/b.txt", "ordered/c.txt"]
    assert view.summary.endswith(", by name in each (the model's page is oldest first)")
    act(view, "order", order="time")
    assert [p for p, _ in view.groups[0]["paths"]] == tool_order
    assert len(ws.calls(limit=100)["calls"]) == calls  # sorted here: no new call


def test_call_log_titles_and_one_expanded_text(make_ws, big):
    ws = make_ws()
    texts = [ws.run("read", file_path="src/app.py", offset=2).text, ws.run("list", path="nowhere").text]
    view = view_for(calls_info(ws.calls(), ws))
    assert isinstance(view, CallLogView)
    assert view.titles() == ["1. python · read src/app.py --offset 2", "2. python · list nowhere ERROR"]
    first = view.calls[0]
    assert first["tool"] == "read" and first["started"] > 0 and first["ms"] >= 0 and not first["error"]
    assert view.expanded is None and view.expanded_text == ""
    act(view, "expand", number=2)
    assert view.expanded == 2 and view.expanded_text == texts[1]
    act(view, "expand", number=1)
    assert view.expanded_text == texts[0]
    act(view, "expand", number=1)  # again: collapsed
    assert view.expanded is None and view.expanded_text == ""
    assert view.footer == "(2 calls.)"


def test_the_call_log_on_screen_shows_calls_as_they_land(make_ws, big):
    ws = make_ws()
    ws.run("list")
    view = CallLogView(ws, ws.session)
    act(view, "poll")  # nothing new
    assert view.total == 1 and view.notice == ""
    agent = make_ws(session=ws.session)  # another surface on the same session and state file
    agent.run("read", file_path="src/app.py")
    act(view, "poll")
    assert view.total == 2 and view.titles()[-1] == "2. python · read src/app.py" and view.notice == ""


def test_a_call_that_lands_before_the_first_poll_still_shows(make_ws, big):
    """The log may first be on screen (and first poll) after an agent's call landed: that call is
    new to the page shown, so the poll shows it rather than taking it as already seen."""
    ws = make_ws()
    ws.run("list")
    view = CallLogView(ws, ws.session)
    agent = make_ws(session=ws.session)
    agent.run("read", file_path="src/app.py")
    act(view, "poll")
    assert view.total == 2 and view.titles()[-1] == "2. python · read src/app.py" and view.notice == ""
    act(view, "poll")  # nothing new since
    assert view.total == 2


def test_a_poll_leaves_an_open_call_text_and_counts_the_new_calls(make_ws, big):
    ws = make_ws()
    ws.run("list")
    view = CallLogView(ws, ws.session)
    act(view, "poll")
    act(view, "expand", number=1)
    ws.run("read", file_path="src/app.py")
    ws.run("read", file_path="long.txt", limit=1)
    act(view, "poll")
    assert view.expanded == 1 and view.total == 1
    assert view.notice == "2 new calls since this page: ↻ newest shows them."
    act(view, "newest")
    assert view.total == 3 and view.notice == ""


def test_call_log_pages_newest_last_and_filters(make_ws, big):
    ws = make_ws()
    for i in range(7):
        ws.run("read", file_path="long.txt", offset=i + 1, limit=1)
    ws.run("read", file_path="missing.txt")
    view = CallLogView(ws, ws.session, limit=3)
    assert view.offset == 6 and view.status == "calls 6-8 of 8" and not view.pager["next"]
    act(view, "page", where="previous")
    assert view.offset == 3 and view.footer == "(Showing calls 3-5 of 8. Use --offset N --limit N to see others.)"
    ws.run("list")
    act(view, "newest")
    assert [c["tool"] for c in view.calls] == ["read", "read", "list"]
    act(view, "filter", tool="list", errors_only=False)
    assert view.titles() == ["9. python · list"] and view.summary == "1 call kept by the filter"
    act(view, "filter", tool="", errors_only=True)
    assert view.titles() == ["8. python · read missing.txt ERROR"]
    act(view, "expand", number=8)
    assert view.expanded_text.startswith("Error: cannot read")
    act(view, "filter", tool="", errors_only=False)
    assert view.total == 9 and view.summary == "9 calls"


def test_call_titles_show_long_arguments_by_their_length(make_ws, big):
    ws = make_ws()
    ws.run("write", file_path="new.txt", content="z" * 5000)
    view = CallLogView(ws, ws.session)
    assert view.titles() == ["1. python · write new.txt --content '<5000 characters>'"]


def test_call_titles_name_their_target_however_long(make_ws, big):
    """A long path keeps its start and its file name; a long pattern its start (not "<N characters>")."""
    ws = make_ws()
    deep = "projects/analysis/2026/quarterly-reports/region-north/very-long-file-name.csv"
    ws.run("read", file_path=deep)
    ws.run("grep", pattern="x" * 100, path="src")
    view = CallLogView(ws, ws.session)
    assert view.titles() == [
        "1. python · read 'projects/analysis/20…ts/region-north/very-long-file-name.csv' ERROR",  # not found
        "2. python · grep '" + "x" * 59 + "…' src",
    ]


def test_spills_are_named_by_their_query_and_open(make_ws, big):
    ws = make_ws(glob_max_results=5)
    ws.run("glob", pattern="*.txt", path="big")
    view = SpillsView(ws, ws.session)
    assert [s["name"] for s in view.spills] == ["glob '*.txt' big"]
    act(view, "open", index=0)
    assert isinstance(view.opened.total, int) and view.panel["anchor"] == "spill:0"
    assert view.panel["name"] == "glob '*.txt' big"


def test_grep_counts_beside_the_title_say_what_they_are(make_ws, root, tree):
    """The summary beside the grep widget's title: the Workspace panel's words, with separators and
    plurals; the model's header stays verbatim."""
    tree(root, {"one.txt": "needle\n", **{f"many/f{i:04d}.txt": "hay needle\n" * 2 for i in range(1100)}})
    ws = make_ws(grep_max_matches=250)
    one = view_for(shown(ws, "grep", pattern="needle", path="one.txt"))
    assert (one.summary, one.header) == ("1 match in 1 file", "Found 1 match")
    sampled = view_for(shown(ws, "grep", pattern="needle", path="many"))
    assert sampled.summary == "2,200 matches in 1,100 files — showing 250, sampled across files"
    assert sampled.header == "Found 250 of 2200 matches"
    page = view_for(shown(ws, "grep", pattern="needle", path="many", offset=251))
    assert page.summary == "2,200 matches in 1,100 files — showing 251–500"
    files = view_for(shown(ws, "grep", pattern="needle", path="many", output_mode="files_with_matches"))
    assert files.summary == "2,200 matches in 1,100 files — showing files 1–250"
    none = view_for(shown(ws, "grep", pattern="absent", path="many"))
    assert none.summary == "No matches"
    cut = make_ws(raw_output_max_bytes=20_000)
    partial = view_for(shown(cut, "grep", pattern="needle", path="many", offset=1))
    assert re.fullmatch(
        r"at least [\d,]+ matches in [\d,]+\+ files — stopped at the output limit \(20,000 bytes of matches\)",
        partial.summary,
    ), partial.summary
