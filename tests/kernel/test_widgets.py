"""The listing and read widget models driven from Python (no browser): traits, paging, sorting,
filter, opened windows (grep, glob and the call log: test_widgets_search.py).

A click in the browser is one custom message ``{action, seq, ...}``; ``act`` sends exactly that
through the view's message handler, so these tests exercise what the front end asks for.
"""

from __future__ import annotations

import os
import threading
import time

from dsh_jupyter.kernel.results import KernelResult
from dsh_jupyter.kernel.widgets import DshView, ListingView, ReadView, view_for
from dsh_jupyter.kernel.widgets.listing import MODEL_ORDER


def shown(ws, tool, **args):
    return KernelResult.wrap(ws.run(tool, **args), ws, args)


def act(view, action, **args):
    """What a click sends: one custom message, handled as the browser's request."""
    view._on_msg(view, {"action": action, "seq": 1, **args}, [])


def widget_calls(ws, session=None):
    return [(c["tool"], c["args"]) for c in ws.calls(session, limit=1000)["calls"] if c["surface"] == "widget"]


def names(view):
    return [r["name"] for r in view.rows]


# -- listing -------------------------------------------------------------------------------------


def test_listing_pages_one_page_at_a_time(make_ws, big):
    ws = make_ws(list_max_entries=200)
    view = ListingView(ws, ws.session, result=shown(ws, "list", path="big"))
    assert (view.offset, len(view.rows), view.total, view.status) == (1, 200, 452, "entries 1-200 of 452")
    assert view.pager == {"prev": False, "next": True, "offset": 1, "noun": "entries", "step": 200}
    for where, offset, count in [("next", 201, 200), ("next", 401, 52), ("previous", 201, 200), ("previous", 1, 200)]:
        act(view, "page", where=where)
        assert (view.offset, len(view.rows)) == (offset, count)
        expected = ws.run("list", path="big", offset=offset)
        assert view.footer == expected.footer() and view.model_text == expected.text
        assert names(view) == [e["name"] for e in expected.value["entries"]]
    assert widget_calls(ws) == [("list", {"path": "big", "offset": o}) for o in (201, 401, 201, 1)]


def test_a_listing_asked_with_details_keeps_asking_for_them(make_ws, big):
    """The table shows sizes and times either way; the model view shows the text the model gets."""
    ws = make_ws(list_max_entries=200)
    view = ListingView(ws, ws.session, result=shown(ws, "list", path="big", details=True))
    assert "file000.txt  (1 byte, " in view.model_text
    act(view, "page", where="next")
    assert widget_calls(ws) == [("list", {"path": "big", "offset": 201, "details": True})]
    assert view.model_text == ws.run("list", path="big", offset=201, details=True).text
    assert "file200.txt  (201 bytes, " in view.model_text


def test_listing_last_page_and_a_bad_jump_keeps_the_page(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, ws.session, path="big", offset=401)
    assert view.pager["next"] is False and view.pager["prev"] is True
    assert view.footer.endswith("End of listing.)") and view.status == "entries 401-452 of 452"
    act(view, "page", where=77)
    assert view.offset == 77 and view.rows[0]["name"] == "file074.txt"
    act(view, "page", where=999)
    assert view.error == 'Error: offset 999 is out of range for "big" (452 entries)'
    assert view.offset == 77 and len(view.rows) == 200
    act(view, "page", where=1)
    assert view.error == ""


def test_a_request_is_one_state_update_then_done(make_ws, big, comms):
    ws = make_ws()
    view = ListingView(ws, ws.session, path="big")
    comms.sent.clear()
    act(view, "page", where="next")
    methods = [data.get("method") for _comm, kind, data in comms.sent if kind == "comm_msg"]
    assert methods == ["update", "custom"]  # rows, status, footer together; then "done"
    update = next(data for _c, kind, data in comms.sent if data.get("method") == "update")
    assert {"rows", "status", "footer", "offset", "pager"} <= set(update["state"])
    assert comms.sent[-1][2]["content"] == {"done": 1, "ok": True}
    assert not [m for m in comms.sent if m[1] == "comm_open"]  # no widget is created for a page


def test_a_failing_action_reports_and_still_ends_the_request(make_ws, big, comms):
    ws = make_ws()
    view = ListingView(ws, ws.session, path="big")
    comms.sent.clear()
    act(view, "no_such_action")
    assert view.error.startswith("Error: the widget could not do 'no_such_action'")
    assert comms.sent[-1][2]["content"] == {"done": 1, "ok": False}


def test_an_interrupt_during_a_request_ends_it_and_keeps_the_page(make_ws, big, comms):
    """The stop button interrupts the kernel: SIGINT lands in the running call (here, a real
    signal sent to this process while a list call runs); the view says so and answers "done"."""
    import signal

    ws = make_ws()
    view = ListingView(ws, ws.session, path="big")
    real = ws.call

    def interrupted(tool, args=None, **kw):
        # to this thread, where Python's handler raises KeyboardInterrupt: a signal sent to the
        # process may land on another of its threads, and this sleep would not be cut short
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        time.sleep(1)
        return real(tool, args, **kw)

    ws.call = interrupted
    comms.sent.clear()
    before = names(view)
    # a kernel raises KeyboardInterrupt on SIGINT; a process started in the background by a shell
    # without job control inherits SIGINT ignored, so the test sets Python's handler itself
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        act(view, "page", where="next")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert view.error == "Error: stopped before it finished ('page' was interrupted); the page is as it was"
    assert names(view) == before and view.offset == 1
    assert comms.sent[-1][2]["content"] == {"done": 1, "ok": False}


def test_directory_click_crumbs_and_up(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, ws.session)
    act(view, "open", index=names(view).index("big"))
    assert view.path == "big" and view.offset == 1
    act(view, "open", index=0)  # dir_a (directories come first)
    assert view.path == "big/dir_a" and view.footer == "(1 entry: 0 directories, 1 file)"
    assert view.crumbs == [[".", "."], ["big", "big"], ["dir_a", "big/dir_a"]]
    act(view, "up")
    assert view.path == "big" and view.total == 452
    act(view, "crumb", path=".")
    assert view.path == "."
    act(view, "up")  # at the top: nothing happens
    assert view.path == "." and view.error == ""


def test_file_click_opens_a_window_below_its_row(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, ws.session, path="src")
    index = names(view).index("app.py")
    act(view, "open", index=index)
    assert view.opened.path == "src/app.py"
    assert view.panel["anchor"] == f"row:{index}" and view.panel["subject"] == "src/app.py"
    assert view.panel["lines"][0] == [1, "import os"] and view.panel["footer"] == "(End of file - total 4 lines)"
    assert view.opened.model_text == ws.run("read", file_path="src/app.py").text
    act(view, "close")
    assert view.opened is None and view.panel == {}


def test_a_page_change_closes_the_window_its_row_opened(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, ws.session, path="big")
    act(view, "open", index=2)
    assert view.panel
    act(view, "page", where="next")
    assert view.panel == {} and view.opened is None


def test_rows_are_plain_data_with_the_models_names(make_ws, root, tree, link):
    tree(root, {"d/a file.txt": "12345", "d/sub": {}, "d/ln": link("a file.txt"), "d/ends with space ": "x"})
    ws = make_ws()
    view = ListingView(ws, ws.session, path="d")
    cells = [(r["label"], r["type"], r["size"]) for r in view.rows]
    assert cells == [
        ("sub/", "directory", None),
        ("a file.txt", "file", 5),
        ('"ends with space "', "file", 1),
        ("ln@", "other", None),
    ]
    assert view.rows[3]["target"] == "d/a file.txt"  # shown from the root
    assert all(isinstance(r["mtime"], float) for r in view.rows)
    act(view, "open", index=3)  # a link is not followed
    assert view.opened is None and view.path == "d"


def test_model_view_sends_the_text_only_while_open(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, ws.session, path="big")
    assert view.model_shown == "" and view.model_text
    act(view, "model_view", on=True)
    assert view.model_shown == view.model_text
    act(view, "page", where="next")
    assert view.model_shown == ws.run("list", path="big", offset=201).text
    act(view, "model_view", on=False)
    assert view.model_shown == ""


def test_sort_by_size_is_over_the_whole_listing_and_not_logged(make_ws, big):
    ws = make_ws(list_max_entries=50)
    view = ListingView(ws, ws.session, path="big")
    assert view.order == MODEL_ORDER and view.footer_note == ""
    act(view, "sort", key="size")
    assert view.sort == "size" and not view.descending
    act(view, "sort", key="size")  # the same column again: descending
    assert view.descending and names(view)[:2] == ["file449.txt", "file448.txt"]  # not on the model's first page
    assert view.order == "Sorted by size, largest first, over all 452 entries: not the model's order"
    assert view.footer == ws.run("list", path="big").footer()  # still the model's own footer...
    assert view.footer_note.startswith("(of the model's own page, entries 1-50 in its own order")
    act(view, "page", where="next")
    assert names(view)[0] == "file399.txt" and view.status == "entries 51-100 of 452"
    act(view, "sort", key="model", descending=False)
    assert view.order == MODEL_ORDER and names(view)[0] == "dir_a" and view.footer_note == ""
    assert [t for t, _ in widget_calls(ws)] == ["list", "list"]  # sorted pages are not tool calls


def test_sort_by_modified_and_name(make_ws, root, tree):
    tree(root, {"m/b.txt": "b", "m/A.txt": "a", "m/c.txt": "c"})
    for name, t in [("b.txt", 3000), ("A.txt", 1000), ("c.txt", 2000)]:
        os.utime(root / "m" / name, (t, t))
    ws = make_ws()
    view = ListingView(ws, ws.session, path="m")
    act(view, "sort", key="modified")
    assert names(view) == ["A.txt", "c.txt", "b.txt"]
    act(view, "sort", key="name", descending=True)
    assert names(view) == ["c.txt", "b.txt", "A.txt"]


def test_filter_is_over_the_whole_listing_and_belongs_to_its_folder(make_ws, big):
    ws = make_ws(list_max_entries=20)
    view = ListingView(ws, ws.session, path="big")
    act(view, "filter", text="FILE44")
    assert names(view) == [f"file44{i}.txt" for i in range(10)] and view.matched == 10 and view.total == 452
    assert view.status == "entries 1-10 of 10 matching"
    assert view.order.endswith("; 10 of 452 names contain FILE44")
    act(view, "filter", text="")
    assert view.matched == 452 and view.status == "entries 1-20 of 452" and view.order == MODEL_ORDER
    act(view, "filter", text="dir")
    act(view, "open", index=0)  # into dir_a: the filter stays behind
    assert view.path == "big/dir_a" and view.filter == "" and names(view) == ["inner.txt"]


def test_a_changed_folder_is_noticed_on_the_next_interaction(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, ws.session, path="src")
    assert view.notice == ""
    time.sleep(0.01)
    (big / "src" / "new.txt").write_text("new\n")
    act(view, "open", index=names(view).index("app.py"))
    assert view.notice == "This folder changed since this page was fetched. Refresh to see it as it is now."
    act(view, "refresh")
    assert view.notice == "" and "new.txt" in names(view)


def test_a_listing_on_screen_lists_a_changed_folder_again_by_itself(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, ws.session, path="src")
    before = len(widget_calls(ws))
    act(view, "poll")  # nothing changed: no call, no notice
    assert len(widget_calls(ws)) == before and view.notice == ""
    time.sleep(0.01)
    (big / "src" / "new.txt").write_text("new\n")
    act(view, "poll")
    assert "new.txt" in names(view) and view.notice == ""
    assert widget_calls(ws)[-1] == ("list", {"path": "src", "offset": 1})


def test_a_poll_keeps_the_page_while_a_file_is_open_below_a_row(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, ws.session, path="src")
    act(view, "open", index=names(view).index("app.py"))
    time.sleep(0.01)
    (big / "src" / "new.txt").write_text("new\n")
    act(view, "poll")
    assert "new.txt" not in names(view) and view.opened is not None
    assert view.notice == "This folder changed since this page was fetched. Refresh to see it as it is now."


def test_paging_a_changed_folder_says_entries_may_have_moved(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, ws.session, path="big")
    (big / "big" / "aaa.txt").write_text("new\n")
    act(view, "page", where="next")
    assert view.notice.startswith("This folder changed since the previous page was fetched")
    act(view, "crumb", path=".")  # another folder: a fresh start
    assert view.notice == ""


def test_views_log_with_surface_widget_in_their_session(make_ws, big):
    ws = make_ws()
    view = ListingView(ws, "another", path="big")
    act(view, "page", where="next")
    assert {c["surface"] for c in ws.calls("another")["calls"]} == {"widget"} and ws.calls()["total"] == 0


def test_a_view_is_one_widget_model_whatever_it_opens(make_ws, big):
    from ipywidgets.widgets.widget import _instances  # every live widget model (ipywidgets 8)

    ws = make_ws()
    before = len(_instances)
    view = ListingView(ws, ws.session, path="src")
    assert len(_instances) == before + 2  # the view and its Layout: no widget per row
    for _ in range(3):
        act(view, "open", index=names(view).index("app.py"))
        act(view, "close")
        act(view, "open", index=names(view).index("lib"))
        act(view, "up")
    assert len(_instances) == before + 2 and isinstance(view, DshView)


# -- read ----------------------------------------------------------------------------------------


def test_read_view_pages_and_jumps(make_ws, big):
    ws = make_ws()
    view = ReadView(ws, ws.session, path="long.txt")
    assert (view.offset, len(view.lines), view.status) == (1, 2000, "lines 1-2,000 of 5,000")
    assert view.footer == "(Showing lines 1-2000 of 5000. Use offset=2001 to continue.)"
    act(view, "window", op="next")
    assert view.offset == 2001 and view.panel["lines"][0] == [2001, "row 2001"]
    act(view, "window", op="next")
    assert view.offset == 4001 and view.footer == "(End of file - total 5000 lines)" and not view.panel["next"]
    act(view, "window", op="jump", line=4990)
    assert len(view.lines) == 11 and view.model_text == ws.run("read", file_path="long.txt", offset=4990).text
    act(view, "window", op="previous")  # after a jump: one limit back
    assert view.offset == 2990
    assert all(t == "read" for t, _ in widget_calls(ws))


def test_a_streamed_window_says_the_file_goes_on(make_ws, big):
    """A big file is read as a stream and its lines are not counted: the status says there is more."""
    ws = make_ws(read_stream_min_size=1000)
    view = ReadView(ws, ws.session, path="long.txt")
    assert view.total is None and view.status == "lines 1-2,000 of at least 2,001"
    act(view, "window", op="jump", line=4990)
    assert view.status == "lines 4,990-5,000 of 5,000"  # the last window knows the total


def test_end_shows_the_last_lines_numbered_from_the_start_when_counted(make_ws, big):
    ws = make_ws()
    view = ReadView(ws, ws.session, path="long.txt", limit=100)
    assert view.panel["end"]
    act(view, "window", op="last")
    assert (view.offset, view.status) == (4901, "lines 4,901-5,000 of 5,000")
    assert not view.panel["end"] and not view.panel["next"]
    assert widget_calls(ws)[-1] == ("read", {"file_path": "long.txt", "offset": -100, "limit": 100})


def test_end_of_a_big_file_is_numbered_from_the_end_and_pages_back(make_ws, big):
    ws = make_ws(read_stream_min_size=1000)
    view = ReadView(ws, ws.session, path="long.txt", limit=100)
    act(view, "window", op="last")
    assert view.offset == -100 and view.panel["lines"][-1] == [-1, "row 5000"]
    assert view.status == "lines -100 to -1, counted from the end"
    assert view.panel["prev"] and not view.panel["next"] and not view.panel["end"]
    act(view, "window", op="previous")
    assert view.offset == -200 and view.panel["lines"][0] == [-200, "row 4801"] and view.panel["next"]
    act(view, "window", op="next")
    assert view.offset == -100
    act(view, "window", op="jump", line=-3)
    assert [row[0] for row in view.panel["lines"]] == [-3, -2, -1]


def test_a_saved_result_has_no_end_button(make_ws, big):
    from dsh_jupyter.kernel.widgets.windows import SpillWindow

    assert SpillWindow.can_end is False


def test_previous_exactly_undoes_next_in_a_byte_capped_window(make_ws, root, tree):
    lines = [("y" * 900 if i % 3 == 0 else "short") for i in range(1, 3001)]
    tree(root, {"wide.txt": "\n".join(lines) + "\n"})
    ws = make_ws()
    view = ReadView(ws, ws.session, path="wide.txt")
    starts = [view.offset]
    for _ in range(3):
        act(view, "window", op="next")
        starts.append(view.offset)
    assert starts[1] - starts[0] < ws.settings.read_limit  # the byte cap cut the window short
    for expected in reversed(starts[:-1]):
        act(view, "window", op="previous")
        assert view.offset == expected
    assert not view.panel["prev"]


def test_read_view_keeps_the_limit_of_the_magic(make_ws, big):
    ws = make_ws()
    view = view_for(shown(ws, "read", file_path="long.txt", limit=10))
    assert isinstance(view, ReadView) and view.limit == 10
    act(view, "window", op="next")
    assert [line["number"] for line in view.lines] == list(range(11, 21))
    assert view.footer == "(Showing lines 11-20 of 5000. Use offset=21 to continue.)"
    act(view, "close")  # the window is the whole view: nothing to close
    assert view.panel


def test_editor_path_only_under_the_servers_root(make_ws, big, monkeypatch):
    ws = make_ws()
    monkeypatch.delenv("DSH_ROOT", raising=False)
    assert ReadView(ws, ws.session, path="src/app.py").panel["editor"] == ""
    monkeypatch.setenv("DSH_ROOT", str(big))
    assert ReadView(ws, ws.session, path="src/app.py").panel["editor"] == "src/app.py"
    monkeypatch.setenv("DSH_ROOT", str(big / "src" / "lib"))
    assert ReadView(ws, ws.session, path="src/app.py").panel["editor"] == ""
