"""End to end: read windows, grep, glob, the saved-result window and the call log, in Chromium.

What only a browser shows: code in a monospace font with its spacing kept, the matched text in its
own element, a match opening at its line in view, JupyterLab's editor opened with that match selected, the
height caps, and how small a saved notebook stays. Screenshots for the docs are taken along the way.
"""

from __future__ import annotations

import re

import pytest

from .helpers import (
    ACTIVE,
    expect,
    footer,
    not_busy,
    output,
    run_notebook,
    screenshot,
    set_theme,
    status,
    widget,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def window_status(scope):
    """The status of the read window in ``scope`` (a widget, or the window itself)."""
    return scope.locator(".dsh-pager .dsh-status").first


def first_line(scope) -> int:
    return int(scope.locator(".dsh-window .dsh-line .dsh-ln").first.inner_text())


def test_read_window_pages_jumps_and_shows_the_model_text(page, lab, screenshot_dir):
    run_notebook(page, lab, "read.ipynb")
    w = widget(page, 0)
    expect()(window_status(w)).to_have_text("lines 1-12 of 40")
    # the model's footer once (the view's, below the window), and one bar naming the file
    expect()(w.locator(".dsh-footer-text")).to_have_text("(Showing lines 1-12 of 40. Use offset=13 to continue.)")
    expect()(w.locator(".dsh-window-footer")).to_have_count(0)
    expect()(w.locator(".dsh-titlebar .dsh-window-bar .dsh-subject")).to_have_text("src/app/main.py")
    expect()(w.locator(".dsh-window > .dsh-window-bar")).to_have_count(0)
    w.locator(".dsh-window .dsh-next").click()
    expect()(window_status(w)).to_have_text("lines 13-24 of 40")
    assert first_line(w) == 13
    w.locator(".dsh-window .dsh-prev").click()
    expect()(window_status(w)).to_have_text("lines 1-12 of 40")
    box = w.locator(".dsh-window .dsh-jump")
    box.fill("1234567")
    assert box.evaluate("el => el.scrollWidth <= el.clientWidth"), "seven digits must fit"
    box.fill("30")
    box.press("Enter")
    expect()(window_status(w)).to_have_text("lines 30-40 of 40")
    w.locator(".dsh-window .dsh-prev").click()  # after a jump: one window back
    expect()(window_status(w)).to_have_text("lines 18-29 of 40")
    box = w.locator(".dsh-window .dsh-jump")
    box.fill("400")
    box.press("Enter")  # out of range: its error once, the window as it was
    expect()(w.locator(".dsh-error")).to_have_count(1)
    expect()(w.locator(".dsh-error")).to_have_text('Error: offset 400 is out of range for "src/app/main.py" (40 lines)')
    expect()(window_status(w)).to_have_text("lines 18-29 of 40")
    code = w.locator(".dsh-window .dsh-code").first
    assert "monospace" in code.evaluate("el => getComputedStyle(el).fontFamily")
    w.locator(".dsh-model-toggle").click()
    model = w.locator(".dsh-model")
    expect()(model).to_contain_text("<path>src/app/main.py</path>")
    assert "20: value_18 = 18" in model.inner_text()
    screenshot(page, output(page, 0), screenshot_dir / "read.png")


def test_a_long_read_is_height_capped_and_previous_undoes_next(page, lab):
    run_notebook(page, lab, "long.ipynb")
    w = widget(page, 0)
    expect()(window_status(w)).to_have_text(re.compile(r"^lines 1-[\d,]+ of 3,000$"))
    assert output(page, 0).bounding_box()["height"] <= 800
    lines = w.locator(".dsh-lines")
    assert lines.evaluate("el => el.scrollHeight > el.clientHeight")  # it scrolls inside
    starts = [first_line(w)]
    for _ in range(2):
        w.locator(".dsh-window .dsh-next").click()
        not_busy(w)
        starts.append(first_line(w))
    for expected in reversed(starts[:-1]):
        w.locator(".dsh-window .dsh-prev").click()
        not_busy(w)
        assert first_line(w) == expected, starts


def test_grep_marks_matches_and_a_match_opens_at_its_line(page, lab, screenshot_dir):
    run_notebook(page, lab, "grep.ipynb")
    w = widget(page, 1)
    expect()(w.locator(".dsh-search-header")).to_have_text(re.compile(r"^Found 8 of \d+ matches$"))
    # the page is spread over the five matching files, and the footer says so as the model sees it
    expect()(footer(w)).to_contain_text("from all 5 files that matched, sampled across top-level entries and files")
    expect()(footer(w)).to_contain_text("Full grep result stored at:")
    head = w.locator(".dsh-group-head", has_text="src/app/main.py")
    expect()(head.locator(".dsh-count")).to_have_text("2")  # its first two matches: lines 7 and 12
    match = w.locator(".dsh-item", has=page.locator(".dsh-ln", has_text=re.compile(r"^12$")))
    expect()(match.locator("mark.dsh-hl")).to_have_text("TODO")
    match.click()  # opens at its line, marked and in view
    panel = w.locator("#dsh-panel")
    hit = panel.locator(".dsh-hit")
    expect()(hit).to_have_attribute("data-line", "12")
    expect()(hit.locator(".dsh-code")).to_have_text("value_10 = 10  # TODO check 10")
    expect()(window_status(panel)).to_have_text("lines 9-40 of 40")
    box = hit.bounding_box()
    assert 0 <= box["y"] <= page.viewport_size["height"] - box["height"], box
    expect()(match).to_have_class(re.compile(r"\bdsh-opener\b"))
    screenshot(page, output(page, 1), screenshot_dir / "grep.png")
    try:
        set_theme(page, "JupyterLab Dark")
        screenshot(page, output(page, 1), screenshot_dir / "grep-dark.png")
    finally:
        set_theme(page, "JupyterLab Light")

    panel.locator(".dsh-editor").click()  # the JupyterLab extension opens the editor with the match selected
    editor_tab = page.locator(".lm-TabBar-tab.lm-mod-current", has_text="main.py")
    expect()(editor_tab).to_be_visible()
    page.wait_for_function(
        """() => {
            const view = window.jupyterapp.shell.currentWidget?.content?.editor?.editor;
            const main = view && view.state.selection.main;
            return !!main && view.state.sliceDoc(main.from, main.to) === 'TODO'
                && view.state.doc.lineAt(main.from).number === 12;
        }"""
    )

    page.locator(".lm-TabBar-tab", has_text="grep.ipynb").click()
    head.locator(".dsh-toggle").click()  # a group folds
    expect()(w.locator(".dsh-item", has=page.locator(".dsh-ln", has_text=re.compile(r"^12$")))).to_have_count(0)


def test_grep_toolbar_case_mode_and_context(page, lab):
    """The toolbar asks grep again: ignore case, one row per file, context rows drawn apart."""
    run_notebook(page, lab, "refine.ipynb")
    w = widget(page, 0)
    expect()(w.locator(".dsh-notice")).to_have_text("No matches found")  # case-sensitive: no "todo"
    case = w.locator(".dsh-case")  # Aa pressed: match case, as in JupyterLab's own search
    expect()(case).to_have_attribute("aria-pressed", "true")
    expect()(case).to_have_attribute("title", "Match case (on: click to match letters in any case)")
    case.click()
    expect()(w.locator(".dsh-search-header")).to_have_text("Found 5 matches")
    expect()(w.locator(".dsh-case")).to_have_attribute("aria-pressed", "false")
    expect()(w.locator(".dsh-case")).to_have_attribute("title", "Match case (off: letters match in any case)")
    w.locator(".dsh-mode").select_option("files_with_matches")
    expect()(w.locator(".dsh-search-header")).to_have_text("Found 5 matches in 3 files, in path order")
    heads = w.locator(".dsh-group-head")
    expect()(heads).to_have_count(3)
    expect()(heads.nth(0).locator(".dsh-count")).to_have_text("2")  # numbers.py: two TODO lines
    expect()(w.locator(".dsh-item")).to_have_count(0)
    expect()(w.locator(".dsh-context-lines")).to_be_disabled()
    w.locator(".dsh-mode").select_option("content")
    w.locator(".dsh-context-lines").select_option("1")
    expect()(w.locator(".dsh-search-header")).to_have_text("Found 5 matches (rows Line N- are context, not matches)")
    numbers = w.locator(".dsh-group", has=page.locator(".dsh-group-head", has_text="numbers.py"))
    expect()(numbers.locator(".dsh-item.dsh-context .dsh-ln")).to_have_text(["1", "4"])
    expect()(numbers.locator(".dsh-item:not(.dsh-context) mark.dsh-hl")).to_have_text(["TODO", "TODO"])
    not_busy(w)


def test_code_keeps_its_spacing_in_a_monospace_font(page, lab):
    run_notebook(page, lab, "spaced.ipynb")
    w = widget(page, 1)
    code = w.locator(".dsh-item .dsh-code").first
    expect()(code).to_have_text("x  =   1    # TODO   keep   spacing")
    assert code.evaluate("el => el.innerText") == "x  =   1    # TODO   keep   spacing"
    style = code.evaluate("el => [getComputedStyle(el).fontFamily, getComputedStyle(el).whiteSpace]")
    assert "monospace" in style[0] and style[1] == "pre", style
    mark = code.locator("mark")
    expect()(mark).to_have_count(1)
    expect()(mark).to_have_text("TODO")
    widths = code.evaluate("""el => ['iiii', 'MMMM'].map(t => {
        const s = document.createElement('span'); s.textContent = t; el.append(s);
        const w = s.getBoundingClientRect().width; s.remove(); return w; })""")
    assert abs(widths[0] - widths[1]) < 0.5, widths  # every character is as wide as the next

    late = w.locator(".dsh-item .dsh-code").nth(1)  # a 1,500-character line: shown around its match
    expect()(late.locator(".dsh-cut").first).to_have_text("…")
    expect()(late.locator("mark")).to_have_text("TODO")
    assert late.evaluate("el => el.textContent.length") < 200
    mark_box, item_box = late.locator("mark").bounding_box(), w.locator(".dsh-item").nth(1).bounding_box()
    assert item_box["x"] <= mark_box["x"] and mark_box["x"] + mark_box["width"] <= item_box["x"] + item_box["width"]


def test_glob_and_the_saved_result_whose_paths_are_links(page, lab, screenshot_dir):
    run_notebook(page, lab, "glob.ipynb")
    w = widget(page, 1)
    expect()(w.locator(".dsh-summary")).to_have_text(re.compile(r"^in \.: 12 of \d+ paths .*, oldest first in each$"))
    expect()(footer(w)).to_contain_text("sampled across")
    expect()(w.locator(".dsh-group-head", has_text="big/")).to_be_visible()
    # the saved result's long path shows by its file name; the whole path on hover and on copy
    short = footer(w).locator(".dsh-spill-path")
    expect()(short).to_have_text(re.compile(r"^…/[0-9a-f]+-glob-results\.txt$"))
    full = short.get_attribute("title")
    assert full.startswith("/") and "/dsh-spills/" in full and full.endswith(short.inner_text()[2:]), full
    assert footer(w).locator(".dsh-copy").get_attribute("data-copy") == full
    screenshot(page, output(page, 1), screenshot_dir / "glob.png")
    w.locator(".dsh-order-select").select_option("name")  # each group by name, and back
    not_busy(w)
    expect()(w.locator(".dsh-summary")).to_have_text(
        re.compile(r", by name in each \(the model's page is oldest first\)$")
    )
    big_paths = w.locator(".dsh-group", has=page.locator(".dsh-group-head", has_text="big/")).locator(
        ".dsh-item .dsh-label"
    )
    names = big_paths.all_inner_texts()
    assert names == sorted(names), names
    w.locator(".dsh-order-select").select_option("time")
    not_busy(w)
    expect()(w.locator(".dsh-summary")).to_have_text(re.compile(r"oldest first in each$"))

    # a folder's head is a row the keys reach: Enter folds it, ArrowRight unfolds, ArrowDown goes in
    head = w.locator(".dsh-group-head", has_text="big/")
    head.focus()
    page.keyboard.press("Enter")
    expect()(head).to_have_attribute("aria-expanded", "false")
    expect()(head).to_be_focused()
    page.keyboard.press("ArrowRight")
    expect()(head).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("ArrowDown")
    expect()(page.locator(":focus")).to_have_class(re.compile(r"\bdsh-item\b"))

    w.locator(".dsh-spill").click()
    panel = w.locator("#dsh-panel")
    expect()(window_status(panel)).to_have_text(re.compile(r"^lines 1-200 of [\d,]+$"))
    expect()(panel.locator(".dsh-window-bar code")).to_have_text("glob '*'")  # named by its query
    total = int(window_status(panel).inner_text().rsplit(" ", 1)[1].replace(",", ""))
    panel.locator(".dsh-next").click()
    expect()(window_status(panel)).to_have_text(f"lines 201-{total} of {total}")
    expect()(panel.locator(".dsh-window-footer")).to_have_text(f"(End of file - total {total} lines)")
    screenshot(page, panel, screenshot_dir / "spill.png")
    link = panel.locator("a.dsh-link", has_text="README.md")
    link.click()  # a path in the saved result opens that file
    expect()(panel.locator(".dsh-window-bar code")).to_have_text("README.md")
    expect()(panel.locator(".dsh-line")).to_have_text(["1# e2e workspace"])
    panel.locator("button", has_text="back to the saved result").click()
    expect()(window_status(panel)).to_have_text(f"lines 201-{total} of {total}")


def test_call_log_titles_filters_and_the_exact_text(page, lab, screenshot_dir):
    # an agent, over REST, in the session the notebook switches to: a search, and an edit before any read
    agent = lab.tool("grep", session="e2e-calls", pattern="TODO", include="*.md")
    assert not agent["isError"], agent["text"]
    refused = lab.tool("edit", session="e2e-calls", file_path="notes.txt", old_string="first", new_string="1st")
    assert refused["value"]["code"] == "FS_NOT_OBSERVED"
    run_notebook(page, lab, "calls.ipynb")
    listing = widget(page, 1)
    listing.locator("[data-row]", has_text="src/").click()  # a click: logged with surface "widget"
    expect()(status(listing)).to_have_text("entries 1-2 of 2")

    log = widget(page, 2)
    log.locator("button", has_text="newest").click()
    not_busy(log)
    calls = log.locator(".dsh-call")
    expect()(calls).to_have_count(4)
    assert [t.strip() for t in log.locator(".dsh-call .dsh-surface").all_inner_texts()] == [
        "rest",
        "rest",
        "magic",
        "widget",
    ]
    titles = [t.strip() for t in log.locator(".dsh-call .dsh-call-title").all_inner_texts()]
    assert titles == [
        "grep TODO --include '*.md'",
        "edit notes.txt --old_string '<5 characters>' --new_string '<3 characters>'",
        "list",
        "list src --offset 1",
    ], titles
    expect()(calls.nth(1).locator(".dsh-badge-error")).to_have_text("ERROR")
    expect()(calls.first.locator(".dsh-time")).to_have_text(re.compile(r"^\d\d:\d\d:\d\d$"))
    expect()(calls.first.locator(".dsh-ms")).to_have_text(re.compile(r"^[\d.]+ ms$"))

    calls.first.click()  # expand: exactly what the agent's model read
    text = log.locator("pre.dsh-call-text")
    expect()(text).to_be_visible()
    assert text.inner_text() == agent["text"]
    screenshot(page, output(page, 2), screenshot_dir / "calls.png")
    log.locator(".dsh-select").select_option("edit")
    not_busy(log)
    expect()(calls).to_have_count(1)
    log.locator(".dsh-select").select_option("")
    not_busy(log)
    log.locator(".dsh-check").check()
    not_busy(log)
    expect()(calls).to_have_count(1)
    expect()(calls.first.locator(".dsh-call-title")).to_contain_text("edit notes.txt")


def test_a_search_stopped_by_the_output_guard_shows_a_partial_page(page, lab):
    """big/ holds 205 matching files: far more than 1,500 bytes of rg output. The widget
    shows what rg had finished, with the model's header and footer saying it is partial."""
    run_notebook(page, lab, "partial.ipynb")
    w = widget(page, 1)
    expect()(w.locator(".dsh-search-header")).to_have_text(re.compile(r"^Found (\d+ of )?at least \d+ matches$"))
    expect()(footer(w)).to_contain_text(
        "(Partial result: rg was stopped after writing 1500 bytes of matches (setting raw_output_max_bytes)"
    )
    expect()(w.locator(".dsh-error")).to_be_hidden()


def test_a_long_search_from_the_toolbar_says_how_far_it_got(page, lab):
    run_notebook(page, lab, "progress.ipynb")
    w = widget(page, 1)
    expect()(w.locator(".dsh-search-header")).to_have_text(re.compile(r"^Found \d+ matches$"))
    w.locator(".dsh-case").click()  # asks grep again in any case: a long search
    expect()(w.locator(".dsh-busy-text")).to_have_text("7 matches in 2 files so far")
    not_busy(w)
    expect()(w.locator(".dsh-busy-text")).to_have_text("")
    expect()(w.locator(".dsh-search-header")).to_have_text(re.compile(r"^Found \d+ matches$"))


def test_the_listing_and_the_call_log_follow_changes_by_themselves(page, lab):
    """No click: a listing on screen lists its folder again when a file appears, and the call log
    shows an agent's call as it lands (each view asks every 2 s while visible)."""
    run_notebook(page, lab, "calls.ipynb")
    listing = widget(page, 1)
    listing.locator("[data-row]", has_text="src/").click()
    expect()(status(listing)).to_have_text("entries 1-2 of 2")
    log = widget(page, 2)
    made = lab.root / "src" / "zz-made-meanwhile.txt"
    try:
        made.write_text("new\n")
        expect()(status(listing)).to_have_text("entries 1-3 of 3", timeout=10_000)
        expect()(listing.locator("[data-row]", has_text="zz-made-meanwhile.txt")).to_be_visible()
        log.scroll_into_view_if_needed()  # a view asks only while it is on screen
        agent = lab.tool("read", session="e2e-calls", file_path="notes.txt")
        assert not agent["isError"], agent["text"]
        titles = log.locator(".dsh-call .dsh-call-title")
        expect()(titles.last).to_have_text("read notes.txt", timeout=20_000)
        expect()(log.locator(".dsh-call .dsh-surface").last).to_have_text("rest")
    finally:
        made.unlink(missing_ok=True)


def test_a_saved_notebook_with_50_reads_and_the_call_log_stays_small(page, lab):
    run_notebook(page, lab, "saved.ipynb")
    log = widget(page, 2)
    expect()(log.locator(".dsh-call")).to_have_count(50)  # the newest page of 51 calls
    page.locator(f"{ACTIVE} .jp-Cell").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+s")
    page.wait_for_function(
        "() => !document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)').title.includes('*')"
        " && !document.querySelector('.lm-TabBar-tab.lm-mod-current.jp-mod-dirty')",
        timeout=30_000,
    )
    saved = (lab.root / "saved.ipynb").read_bytes()
    print(f"saved notebook: {len(saved):,} bytes")
    assert len(saved) < 200_000, len(saved)
    assert b"</content>" not in saved and b"value_14 = 14" not in saved  # no call's text, just the summary
    assert b"read src/app/main.py" in saved or b"src/app/main.py" in saved
