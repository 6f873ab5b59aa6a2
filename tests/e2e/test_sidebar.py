"""End to end: the Workspace panel in JupyterLab's left area (``dsh-jupyter:sidebar``), in Chromium.

Search: typing runs ``grep`` through the REST API after a pause, results grouped by file with
counts and line numbers, the tool's own footer, the case / whole-word / regex toggles, files-only
and count modes, pages in path order, and a click opening the editor with the match selected (a
notebook with the matching cell active).

Agent activity: calls an agent makes over REST appear within seconds with no click, newest first,
with an error badge when they failed; a click shows the call's exact text, and a write's file
opens from there; the session picker. (How the activity follows sessions: test_sidebar_panel.py.)

Explorer: ``list`` pages with the tool's footer, the breadcrumb, the filter over the page, and
following the file browser's folder.
"""

from __future__ import annotations

import nbformat
import pytest

from .helpers import expect, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PANEL = '[id="dsh-jupyter:sidebar"]'
SIDEBAR_SESSION = "jupyterlab-sidebar"
IGNORED = (
    "(Files named by .gitignore or .ignore rules were not searched (setting respect_ignore_files); "
    "grep such a file by its path to search it anyway.)\n\n"
)


def open_sidebar(page, lab):
    page.goto(f"{lab.url}lab?reset&token={lab.token}")
    tab = page.locator('.jp-SideBar .lm-TabBar-tab[data-id="dsh-jupyter:sidebar"]')
    tab.wait_for(timeout=90_000)
    # once the layout is restored, nothing takes the keyboard focus from the panel any more
    page.evaluate("() => window.jupyterapp.restored")
    expect()(page.locator(".jp-Launcher")).to_be_visible(timeout=90_000)
    tab.click()
    panel = page.locator(PANEL)
    expect()(panel).to_be_visible()
    return panel


def search(panel, text: str, **fields) -> None:
    """Fill the form (``include``, ``exclude``, ``mode``) then the pattern, and wait for the answer."""
    for name in ("include", "exclude"):
        if name in fields:
            panel.locator(f".dsh-sb-{name}").fill(fields[name])
    if "mode" in fields:
        panel.locator(".dsh-sb-mode").select_option(fields["mode"])
    panel.locator(".dsh-sb-pattern").fill(text)
    settle(panel)


def settle(panel) -> None:
    panel.page.wait_for_timeout(400)  # past the debounce
    expect()(panel.locator(".dsh-sb-search")).not_to_have_attribute("aria-busy", "true", timeout=30_000)


def status(panel):
    return panel.locator(".dsh-sb-status")


def group(panel, path: str):
    return panel.locator(f'.dsh-sb-file[data-path="{path}"]')


def set_toggle(panel, name: str, on: bool) -> None:
    button = panel.locator(f".dsh-sb-{name}")
    if (button.get_attribute("aria-pressed") == "true") != on:
        button.click()
    expect()(button).to_have_attribute("aria-pressed", str(on).lower())
    settle(panel)


def sidebar_calls(lab) -> int:
    code, data = lab.request("GET", f"dsh/api/sessions/{SIDEBAR_SESSION}/calls?offset=0&limit=1")
    return data["total"] if code == 200 else 0


def test_search_groups_matches_by_file_with_counts_and_the_footer(page, lab, screenshot_dir):
    panel = open_sidebar(page, lab)
    before = sidebar_calls(lab)
    panel.locator(".dsh-sb-include").fill("*.py")
    panel.locator(".dsh-sb-pattern").press_sequentially("TODO check", delay=40)
    expect()(panel.locator(".dsh-sb-pattern")).to_have_value("TODO check")
    settle(panel)
    # typing ten characters asked once (or twice, had the typing paused), not once per key
    assert sidebar_calls(lab) - before <= 2
    expect()(status(panel)).to_have_text("7 matches in 1 file")
    main = group(panel, "src/app/main.py")
    expect()(main.locator(".dsh-sb-count")).to_have_text("7")
    lines = [int(x) for x in main.locator(".dsh-sb-match").evaluate_all("els => els.map(e => e.dataset.line)")]
    assert lines == [7, 12, 17, 22, 27, 32, 37]
    expect()(main.locator(".dsh-sb-match mark").first).to_have_text("TODO check")

    search(panel, "TODO")  # every .py file: grouped, in path order, each with its count
    expect()(status(panel)).to_have_text("13 matches in 5 files")
    paths = panel.locator(".dsh-sb-file").evaluate_all("els => els.map(e => e.dataset.path)")
    assert paths == [
        "src/app/main.py",
        "src/app/util.py",
        "src/lib/numbers.py",
        "src/lib/spaced.py",
        "src/lib/strings.py",
    ]
    expect()(group(panel, "src/lib/numbers.py").locator(".dsh-sb-count")).to_have_text("2")
    screenshot(page, panel, screenshot_dir / "sidebar.png")

    search(panel, "log line", include="")  # 3000 matches: pages of 250 in path order, the tool's footer
    expect()(status(panel)).to_have_text("3,000 matches in 1 file — showing 1–250")
    footer = panel.locator(".dsh-sb-footer")
    # the tool's own footer, as the model reads it (the panel asks for the .gitignore rules)
    expect()(footer).to_have_text(
        IGNORED + "(Showing matches 1-250 of 3000 in path order. Use offset=251 to continue.)"
    )
    expect()(panel.locator(".dsh-sb-match")).to_have_count(250)
    expect()(panel.locator(".dsh-sb-prev")).to_be_disabled()
    panel.locator(".dsh-sb-next").click()
    settle(panel)
    expect()(footer).to_have_text(
        IGNORED + "(Showing matches 251-500 of 3000 in path order. Use offset=501 to continue.)"
    )
    expect()(status(panel)).to_have_text("3,000 matches in 1 file — showing 251–500")
    expect()(panel.locator(".dsh-sb-match").first).to_have_attribute("data-line", "251")
    panel.locator(".dsh-sb-prev").click()
    settle(panel)
    expect()(footer).to_contain_text("Showing matches 1-250 of 3000")
    expect()(panel.locator(".dsh-sb-prev")).to_be_disabled()


# The page's fetch, wrapped: a grep for "value_2" answers 2 s late, and even when the panel aborts
# it (the wrapper drops the abort signal), so the answer of an older search does arrive late.
SLOW_FETCH = """() => {
  const real = window.fetch;
  window.__lateAnswers = 0;
  window.fetch = async (input, init) => {
    if (input instanceof Request && input.url.includes('/dsh/api/tools/grep')) {
      const body = await input.clone().text();
      if (body.includes('"pattern":"value_2"')) {
        await new Promise(done => setTimeout(done, 2000));
        const response = await real(new Request(input, {signal: null}));
        window.__lateAnswers++;
        return response;
      }
    }
    return real(input, init);
  };
}"""


def test_search_drops_the_answer_of_an_older_search(page, lab):
    panel = open_sidebar(page, lab)
    page.evaluate(SLOW_FETCH)
    search(panel, "check", include="*.py")
    panel.locator(".dsh-sb-pattern").fill("value_2")
    page.wait_for_timeout(600)  # its request is out, its answer 2 s away
    panel.locator(".dsh-sb-pattern").fill("value_3")
    settle(panel)
    expect()(status(panel)).to_have_text("10 matches in 1 file")  # value_3, value_30 … value_38
    page.wait_for_function("() => window.__lateAnswers === 1")
    page.wait_for_timeout(300)
    expect()(status(panel)).to_have_text("10 matches in 1 file")
    marks = set(panel.locator(".dsh-sb-match mark").all_inner_texts())
    assert marks == {"value_3"}, marks


# The e2e tree is searched in milliseconds; a search that takes seconds is made by holding its
# answer back in the page (the server's own progress reports are tested against a real server in
# tests/server/test_server_progress.py). The progress asks go to the real server.
HELD_FETCH = """() => {
  const real = window.fetch;
  window.__progressAsks = 0;
  window.__heldAnswers = 0;
  window.fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url.includes('/dsh/api/progress/')) window.__progressAsks++;
    if (input instanceof Request && url.includes('/dsh/api/tools/grep')) {
      const body = await input.clone().text();
      if (body.includes('"pattern":"held"')) {
        if (!body.includes('"progress_id":"sidebar-')) throw new Error('no progress id in ' + body);
        await new Promise(done => setTimeout(done, 3000));
        window.__heldAnswers++;
        return real(new Request(input, {signal: null}));
      }
    }
    return real(input, init);
  };
}"""


def test_a_search_running_over_a_second_can_be_stopped(page, lab):
    panel = open_sidebar(page, lab)
    page.evaluate(HELD_FETCH)
    stop = panel.locator(".dsh-sb-stop")
    panel.locator(".dsh-sb-pattern").fill("held")
    page.wait_for_timeout(900)  # 200 ms of typing pause, then under a second of searching
    expect()(stop).to_be_hidden()
    expect()(stop).to_be_visible(timeout=3_000)
    page.wait_for_function("() => window.__progressAsks >= 1", timeout=5_000)  # it asks how far it got
    stop.click()
    expect()(status(panel)).to_have_text("Stopped before it finished")
    expect()(stop).to_be_hidden()
    expect()(panel.locator(".dsh-sb-search")).not_to_have_attribute("aria-busy", "true")
    page.wait_for_function("() => window.__heldAnswers === 1", timeout=10_000)  # the held answer came late
    page.wait_for_timeout(300)
    expect()(status(panel)).to_have_text("Stopped before it finished")  # and was dropped
    search(panel, "value_3")  # the next search runs as usual
    expect()(status(panel)).to_have_text("10 matches in 1 file")


def test_search_toggles_and_modes(page, lab):
    panel = open_sidebar(page, lab)
    search(panel, "todo", include="*.py")  # case off: ignore_case
    expect()(status(panel)).to_have_text("13 matches in 5 files")
    set_toggle(panel, "case", True)
    expect()(status(panel)).to_have_text("No matches")
    set_toggle(panel, "case", False)

    search(panel, "value_1")
    expect()(status(panel)).to_have_text("11 matches in 1 file")  # value_1, value_10 … value_19
    set_toggle(panel, "word", True)
    expect()(status(panel)).to_have_text("1 match in 1 file")
    expect()(panel.locator(".dsh-sb-match")).to_have_attribute("data-line", "3")
    set_toggle(panel, "word", False)

    search(panel, "value_3[0-9]")  # regex off: the brackets are literal
    expect()(status(panel)).to_have_text("No matches")
    set_toggle(panel, "regex", True)
    expect()(status(panel)).to_have_text("9 matches in 1 file")
    set_toggle(panel, "regex", False)

    search(panel, "TODO", mode="files_with_matches")
    rows = panel.locator(".dsh-sb-file-only")
    expect()(rows).to_have_count(5)
    expect()(panel.locator(".dsh-sb-match")).to_have_count(0)
    expect()(rows.first).to_have_attribute("data-path", "src/app/main.py")
    expect()(rows.first.locator(".dsh-sb-count")).to_have_text("7")
    panel.locator(".dsh-sb-mode").select_option("count")
    settle(panel)
    counts = rows.locator(".dsh-sb-count").all_inner_texts()
    assert [int(c) for c in counts] == sorted((int(c) for c in counts), reverse=True), counts
    search(panel, "TODO", include="*.md", exclude="docs/**", mode="content")
    expect()(status(panel)).to_have_text("No matches")


def test_search_click_opens_the_editor_with_the_match_selected(page, lab):
    panel = open_sidebar(page, lab)
    search(panel, "check 10", include="*.py")
    panel.locator(".dsh-sb-match").first.click()
    expect()(page.locator(".lm-TabBar-tab.lm-mod-current", has_text="main.py")).to_be_visible()
    # line 12 is "value_10 = 10  # TODO check 10": the match is columns 23-30, the cursor at its end
    expect()(page.locator("#jp-main-statusbar")).to_contain_text("Ln 12, Col 31")
    selected = page.evaluate(
        """() => {
            const editor = window.jupyterapp.shell.currentWidget.content.editor;
            const {start, end} = editor.getSelection();
            const lines = editor.model.sharedModel.getSource().split('\\n');
            return [start.line, lines[start.line].slice(start.column, end.column)];
        }"""
    )
    assert selected == [11, "check 10"]


def open_activity(page, lab):
    panel = open_sidebar(page, lab)
    panel.locator(".dsh-sb-tab", has_text="Activity").click()
    expect()(panel.locator(".dsh-sb-session")).to_be_visible()
    return panel


def call_row(panel, call_id: str):
    return panel.locator(f'.dsh-sb-call[data-call-id="{call_id}"]')


def test_activity_shows_rest_calls_as_they_happen_and_their_exact_text(page, lab, screenshot_dir):
    panel = open_activity(page, lab)
    listed = lab.tool("list", path="sizes")  # an agent's call over REST, in session default
    # the newest active session is shown until the person picks one
    expect()(panel.locator(".dsh-sb-session")).to_have_value("default", timeout=8_000)
    expect()(panel.locator(".dsh-sb-activity .dsh-sb-status")).to_contain_text("session default")
    row = call_row(panel, listed["callId"])
    expect()(row).to_be_visible(timeout=8_000)  # the poll brings it, no click needed
    expect()(row.locator(".dsh-sb-tool")).to_have_text("list")
    expect()(row.locator(".dsh-sb-surface")).to_have_text("rest")
    expect()(row.locator(".dsh-sb-args")).to_have_text("sizes")
    expect()(row.locator(".dsh-sb-badge-error")).to_have_count(0)
    assert panel.locator(".dsh-sb-call").first.get_attribute("data-call-id") == listed["callId"]  # newest first

    failed = lab.tool("read", file_path="no/such/file.txt")
    assert failed["isError"]
    bad = call_row(panel, failed["callId"])
    expect()(bad.locator(".dsh-sb-badge-error")).to_have_text("error", timeout=8_000)

    row.locator(".dsh-sb-call-head").click()
    text = row.locator(".dsh-sb-call-text")
    expect()(text).to_be_visible()
    assert text.evaluate("el => el.textContent") == listed["text"]
    expect()(row.locator(".dsh-sb-open")).to_have_count(0)  # list touches no file

    written = lab.tool("write", file_path="activity/written.txt", content="written by an agent\n")
    assert not written["isError"], written["text"]
    wrow = call_row(panel, written["callId"])
    expect()(wrow).to_be_visible(timeout=8_000)
    wrow.locator(".dsh-sb-call-head").click()
    assert wrow.locator(".dsh-sb-call-text").evaluate("el => el.textContent") == written["text"]
    screenshot(page, panel, screenshot_dir / "sidebar-activity.png")
    wrow.locator(".dsh-sb-open").click()
    expect()(page.locator(".lm-TabBar-tab.lm-mod-current", has_text="written.txt")).to_be_visible()

    notebook = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    assert not lab.tool("write", file_path="activity/cells.ipynb", content=notebook)["isError"]
    cells = lab.tool(
        "edit_cells",
        file_path="activity/cells.ipynb",
        operations=[{"op": "insert", "cell_type": "markdown", "source": "# Notes", "at": "end"}],
    )
    assert not cells["isError"], cells["text"]
    crow = call_row(panel, cells["callId"])
    expect()(crow).to_be_visible(timeout=8_000)
    crow.locator(".dsh-sb-call-head").click()
    assert crow.locator(".dsh-sb-call-text").evaluate("el => el.textContent") == cells["text"]
    expect()(crow.locator(".dsh-sb-open")).to_have_attribute("title", "Open activity/cells.ipynb in the editor")


def test_activity_session_picker(page, lab):
    other = lab.tool("glob", session="e2e-sidebar-agent", pattern="*.md")
    panel = open_activity(page, lab)
    picker = panel.locator(".dsh-sb-session")
    picker.focus()  # the list of sessions is read again on focus
    expect()(picker.locator('option[value="e2e-sidebar-agent"]')).to_have_count(1)
    picker.select_option("e2e-sidebar-agent")
    row = call_row(panel, other["callId"])
    expect()(row).to_be_visible(timeout=8_000)
    expect()(row.locator(".dsh-sb-args")).to_have_text("pattern=*.md")
    expect()(panel.locator(".dsh-sb-call")).to_have_count(1)
    later = lab.tool("grep", session="e2e-sidebar-agent", pattern="TODO", include="*.md")
    expect()(call_row(panel, later["callId"])).to_be_visible(timeout=8_000)
    expect()(panel.locator(".dsh-sb-call")).to_have_count(2)


def open_explorer(page, lab):
    panel = open_sidebar(page, lab)
    panel.locator(".dsh-sb-tab", has_text="Explorer").click()
    return panel


def entry_names(panel) -> list[str]:
    return panel.locator(".dsh-sb-entry").evaluate_all("els => els.map(e => e.dataset.name)")


def explorer_settled(panel) -> None:
    expect()(panel.locator(".dsh-sb-explorer")).not_to_have_attribute("aria-busy", "true", timeout=30_000)


def test_explorer_lists_pages_filters_and_follows_the_file_browser(page, lab):
    panel = open_explorer(page, lab)
    explorer_settled(panel)
    expect()(panel.locator('.dsh-sb-crumb[aria-current="location"]')).to_have_text("root")
    names = entry_names(panel)
    assert {"big", "src", "docs", "notes.txt", "README.md"} <= set(names), names
    assert names.index("src") < names.index("notes.txt")  # folders first, as list orders them

    panel.locator('.dsh-sb-entry[data-name="big"]').click()  # 210 entries: pages of 200
    explorer_settled(panel)
    status = panel.locator(".dsh-sb-explorer .dsh-sb-status")
    expect()(status).to_have_text("210 entries: 5 folders, 205 files")
    footer = panel.locator(".dsh-sb-explorer .dsh-sb-footer")
    expect()(footer).to_contain_text("Showing entries 1-200 of 210")
    expect()(panel.locator(".dsh-sb-entry")).to_have_count(200)
    panel.locator(".dsh-sb-explorer .dsh-sb-next").click()
    explorer_settled(panel)
    expect()(footer).to_contain_text("Showing entries 201-210 of 210")
    assert entry_names(panel) == [f"file-{i}.txt" for i in range(196, 206)]
    # the filter asks the server: over the whole folder, not only the page on screen
    panel.locator(".dsh-sb-filter").fill("file-01")
    expect()(status).to_have_text('entries 1-10 of 10 matching "file-01", by the model\'s order', timeout=10_000)
    assert entry_names(panel) == [f"file-{i:03d}.txt" for i in range(10, 20)]
    expect()(panel.locator(".dsh-sb-explorer .dsh-sb-next")).to_be_disabled()
    panel.locator(".dsh-sb-filter").fill("")
    expect()(status).to_have_text("210 entries: 5 folders, 205 files", timeout=10_000)
    expect()(panel.locator(".dsh-sb-entry")).to_have_count(200)

    panel.locator('.dsh-sb-crumb[data-path=""]').click()  # the breadcrumb goes back up
    explorer_settled(panel)
    expect()(panel.locator('.dsh-sb-entry[data-name="big"]')).to_be_visible()

    panel.locator(".dsh-sb-follow").check()  # following the file browser again
    # the file browser opens src/app (and takes the left area); back in the panel, that folder is listed
    page.evaluate("() => window.jupyterapp.commands.execute('filebrowser:go-to-path', {path: '/src/app/'})")
    expect()(page.locator(".jp-FileBrowser .jp-BreadCrumbs")).to_contain_text("app")
    page.locator('.jp-SideBar .lm-TabBar-tab[data-id="dsh-jupyter:sidebar"]').click()
    explorer_settled(panel)
    expect()(panel.locator('.dsh-sb-crumb[aria-current="location"]')).to_have_text("app")
    expect()(panel.locator(".dsh-sb-entry")).to_have_count(2)
    panel.locator('.dsh-sb-entry[data-name="util.py"]').click()
    expect()(page.locator(".lm-TabBar-tab.lm-mod-current", has_text="util.py")).to_be_visible()


def test_explorer_sorts_the_whole_folder_and_follows_changes_by_itself(page, lab):
    panel = open_explorer(page, lab)
    explorer_settled(panel)
    panel.locator('.dsh-sb-entry[data-name="sizes"]').click()
    explorer_settled(panel)
    assert entry_names(panel)[:1] == ["app.log"]  # the model's order: files by name
    panel.locator(".dsh-sb-sort").select_option("size")
    explorer_settled(panel)
    status = panel.locator(".dsh-sb-explorer .dsh-sb-status")
    expect()(status).to_have_text("entries 1-4 of 4, by size, ascending")
    assert entry_names(panel) == ["tiny.txt", "small.txt", "medium.bin", "app.log"]
    expect()(panel.locator(".dsh-sb-explorer .dsh-sb-footer")).to_have_text("")  # not a tool call: no model footer
    panel.locator(".dsh-sb-direction").click()
    explorer_settled(panel)
    assert entry_names(panel) == ["app.log", "medium.bin", "small.txt", "tiny.txt"]
    made = lab.root / "sizes" / "zz-huge.bin"
    try:
        made.write_bytes(b"z" * 50_000_000)  # the largest now: it comes first, with no click
        expect()(panel.locator(".dsh-sb-entry").first).to_have_attribute("data-name", "zz-huge.bin", timeout=10_000)
        expect()(status).to_have_text("entries 1-5 of 5, by size, descending")
    finally:
        made.unlink(missing_ok=True)
    expect()(status).to_have_text("entries 1-4 of 4, by size, descending", timeout=10_000)
    panel.locator(".dsh-sb-sort").select_option("model")
    explorer_settled(panel)
    expect()(status).to_have_text("entries 1-4 of 4, by the model's order, reversed")  # still descending
    assert entry_names(panel)[-1:] == ["app.log"]
    panel.locator(".dsh-sb-direction").click()  # the model's own order: list's pages, with its footer
    explorer_settled(panel)
    expect()(panel.locator(".dsh-sb-explorer .dsh-sb-footer")).to_contain_text("entries")
    _, log = lab.request("GET", "dsh/api/sessions/jupyterlab-sidebar/calls?limit=1000")
    assert all(c["tool"] != "browse" for c in log["calls"])


def test_search_click_on_a_notebook_match_opens_its_cell(page, lab):
    kernelspec = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    cells = [nbformat.v4.new_code_cell(src) for src in ("x = 1", "y = 2\n# the sidebar finds this cell", "z = 3")]
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": kernelspec}, cells=cells)
    code, _ = lab.request("PUT", "api/contents/sidebar-cells.ipynb", {"type": "notebook", "content": nb})
    assert code in (200, 201)
    panel = open_sidebar(page, lab)
    search(panel, "the sidebar finds", include="*.ipynb")
    expect()(status(panel)).to_have_text("1 match in 1 file")
    match = group(panel, "sidebar-cells.ipynb").locator(".dsh-sb-match")
    expect()(match.locator(".dsh-sb-line")).to_have_text("Cell 2, line 2")
    match.click()
    tab = page.locator(".lm-TabBar-tab.lm-mod-current", has_text="sidebar-cells.ipynb")
    expect()(tab).to_be_visible(timeout=30_000)
    active = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell.jp-mod-active")
    expect()(active).to_contain_text("# the sidebar finds this cell", timeout=30_000)
