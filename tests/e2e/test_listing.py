"""End to end: the listing widget in a real JupyterLab and Chromium (see helpers.py for how it is driven).

What only a browser shows: the output's height, where an opened window lands, what keys do (and
that they do not reach the notebook), the busy state of a slow call, sizes and times as people
read them, the theme's colours, and what a kernel restart leaves behind. Screenshots for the docs
are taken along the way (docs/screenshots/listing*.png).
"""

from __future__ import annotations

import re

import pytest

from .helpers import (
    ACTIVE,
    contrast,
    expect,
    footer,
    labels,
    not_busy,
    output,
    row,
    rows,
    run_notebook,
    screenshot,
    set_theme,
    status,
    widget,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MAX_OUTPUT_PX = 800


def test_listing_pages_a_directory_in_a_bounded_output(page, lab, screenshot_dir):
    run_notebook(page, lab, "explore.ipynb")
    w = widget(page, 0)
    assert output(page, 0).bounding_box()["height"] <= MAX_OUTPUT_PX
    row(w, "big/").click()  # a directory lists in place
    expect()(status(w)).to_have_text("entries 1-200 of 210")
    expect()(footer(w)).to_contain_text("(Showing entries 1-200 of 210: 5 directories, 205 files.")
    assert output(page, 0).bounding_box()["height"] <= MAX_OUTPUT_PX  # 200 rows scroll inside it
    names = labels(w)
    assert len(names) == 200 and names[:2] == ["dir-1/", "dir-2/"], names[:5]
    expect()(w.locator(".dsh-crumbs li")).to_have_text([".", "big"])
    expect()(w.locator(".dsh-order")).to_have_text(re.compile(r"^the model's order: directories first"))

    w.locator(".dsh-controls .dsh-next").click()  # rows, status and footer change together
    expect()(status(w)).to_have_text("entries 201-210 of 210")
    expect()(footer(w)).to_contain_text("End of listing.)")
    assert labels(w) == [f"file-{i:03d}.txt" for i in range(196, 206)]
    w.locator(".dsh-controls .dsh-prev").click()
    expect()(status(w)).to_have_text("entries 1-200 of 210")

    row(w, "file-003.txt").click()  # a file opens below its row
    panel = w.locator("#dsh-panel")
    expect()(panel.locator(".dsh-line")).to_have_text(["1file 3"])
    screenshot(page, output(page, 0), screenshot_dir / "listing.png")
    w.locator(".dsh-crumb", has_text=re.compile(r"^\.$")).click()  # the breadcrumb goes back up
    expect()(row(w, "big/")).to_be_visible()


def test_an_opened_file_is_in_view_below_the_row_that_opened_it(page, lab):
    run_notebook(page, lab, "explore.ipynb")
    w = widget(page, 0)
    row(w, "big/").click()
    expect()(status(w)).to_have_text("entries 1-200 of 210")
    opener = row(w, "file-180.txt")
    opener.scroll_into_view_if_needed()
    opener.click()
    panel = w.locator("#dsh-panel")
    expect()(panel).to_be_visible()
    box = panel.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= page.viewport_size["height"], box  # no scrolling needed
    expect()(opener).to_have_class(re.compile(r"\bdsh-opener\b"))
    expect()(opener).to_have_attribute("aria-expanded", "true")
    assert opener.evaluate("el => el.nextElementSibling.querySelector('#dsh-panel') !== null")
    expect()(panel.locator(".dsh-window-bar code")).to_have_text("big/file-180.txt")
    expect()(panel.locator(".dsh-pager")).to_have_count(1)  # one pager per view
    panel.locator(".dsh-close").click()
    expect()(w.locator("#dsh-panel")).to_have_count(0)
    expect()(opener).not_to_have_class(re.compile(r"\bdsh-opener\b"))


def test_sizes_times_sort_by_size_and_filter(page, lab):
    run_notebook(page, lab, "sizes.ipynb")
    w = widget(page, 0)
    log = row(w, "app.log")
    expect()(log.locator(".dsh-size")).to_have_text("16.4 MiB")
    expect()(row(w, "medium.bin").locator(".dsh-size")).to_have_text("4.9 KiB")
    expect()(row(w, "tiny.txt").locator(".dsh-size")).to_have_text("10 B")
    expect()(log.locator(".dsh-mtime")).to_have_text(re.compile(r"^(just now|\d+ (seconds?|min|hours?) ago)$"))
    expect()(log.locator(".dsh-mtime")).to_have_attribute("title", re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$"))
    assert labels(w) == ["app.log", "medium.bin", "small.txt", "tiny.txt"]

    size = w.locator("[role=columnheader]", has_text="size")
    size.locator("button").click()
    expect()(size).to_have_attribute("aria-sort", "ascending")
    not_busy(w)
    assert labels(w) == ["tiny.txt", "small.txt", "medium.bin", "app.log"]
    expect()(w.locator(".dsh-order")).to_have_text(
        re.compile(r"^Sorted by size, smallest first, over all 4 entries: not the model's order")
    )
    expect()(w.locator(".dsh-footer-note")).to_contain_text("of the model's own page")
    size.locator("button").click()
    expect()(size).to_have_attribute("aria-sort", "descending")
    not_busy(w)
    assert labels(w)[0] == "app.log"
    w.locator(".dsh-model-order").click()
    not_busy(w)
    assert labels(w) == ["app.log", "medium.bin", "small.txt", "tiny.txt"]

    w.locator(".dsh-filter").fill("TXT")
    expect()(status(w)).to_have_text("entries 1-2 of 2 matching")
    assert labels(w) == ["small.txt", "tiny.txt"]


def test_sort_is_over_the_whole_listing_not_the_page(page, lab):
    run_notebook(page, lab, "explore.ipynb")
    w = widget(page, 0)
    row(w, "big/").click()
    expect()(status(w)).to_have_text("entries 1-200 of 210")
    w.locator("[role=columnheader] button", has_text="name").click()  # A to Z
    not_busy(w)
    w.locator("[role=columnheader] button", has_text="name").click()  # Z to A
    not_busy(w)
    assert labels(w)[:2] == ["file-205.txt", "file-204.txt"]  # on the model's second page


def test_keyboard_moves_opens_and_goes_up_without_reaching_the_notebook(page, lab):
    run_notebook(page, lab, "explore.ipynb")
    w = widget(page, 0)
    page.locator(f"{ACTIVE} .jp-Cell").first.click(position={"x": 5, "y": 5})  # command mode, cell 1 active
    rows(w).first.focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect()(rows(w).nth(2)).to_be_focused()  # waits: the first paint may still be settling
    focused = page.evaluate("() => document.activeElement.querySelector('.dsh-label')?.textContent")
    assert focused == labels(w)[2]
    ring = page.evaluate("() => getComputedStyle(document.activeElement).boxShadow")
    assert ring != "none", ring  # a visible focus ring
    active = page.locator(f"{ACTIVE} .jp-Cell.jp-mod-active")
    expect()(active).to_have_count(1)
    assert page.locator(f"{ACTIVE} .jp-Cell").first.evaluate("el => el.classList.contains('jp-mod-active')")

    page.keyboard.press("Home")
    for _ in range(labels(w).index("big/")):  # .ipynb_checkpoints/ may come first
        page.keyboard.press("ArrowDown")
    expect()(row(w, "big/")).to_be_focused()
    page.keyboard.press("Enter")
    expect()(status(w)).to_have_text("entries 1-200 of 210")
    expect()(rows(w).first).to_be_focused()  # a new page starts at its first row
    page.keyboard.press("ArrowDown")
    expect()(row(w, "dir-2/")).to_be_focused()
    page.keyboard.press("Backspace")
    expect()(row(w, "big/")).to_be_visible()
    rows(w).first.focus()
    page.keyboard.press("/")
    expect()(w.locator(".dsh-filter")).to_be_focused()
    page.keyboard.press("Escape")
    expect()(rows(w).first).to_be_focused()
    row(w, "big/").focus()
    page.keyboard.press("Enter")
    expect()(status(w)).to_have_text("entries 1-200 of 210")
    expect()(rows(w).first).to_be_focused()
    page.keyboard.press("Alt+ArrowUp")
    expect()(row(w, "big/")).to_be_visible()
    assert page.locator(f"{ACTIVE} .jp-Cell").first.evaluate("el => el.classList.contains('jp-mod-active')")
    assert page.locator(f"{ACTIVE} .jp-Cell").count() == 2  # nothing was added, cut or moved

    row(w, "big/").click()
    expect()(status(w)).to_have_text("entries 1-200 of 210")
    not_busy(w)
    row(w, "file-002.txt").focus()
    page.keyboard.press("Enter")  # a file opens below its row; Escape closes it, back on the row
    expect()(w.locator("#dsh-panel .dsh-close")).to_be_focused()
    page.keyboard.press("Escape")
    expect()(w.locator("#dsh-panel")).to_have_count(0)
    expect()(row(w, "file-002.txt")).to_be_focused()
    box = w.locator(".dsh-controls .dsh-jump")
    assert box.evaluate("el => el.clientWidth >= 7 * parseFloat(getComputedStyle(el).fontSize) * 0.55")
    box.fill("205")
    box.press("Enter")  # Enter jumps, like "go"
    expect()(status(w)).to_have_text("entries 205-210 of 210")
    box = w.locator(".dsh-controls .dsh-jump")
    box.fill("999")
    box.press("Enter")  # a failed call: its error, styled as one; the page stays
    error = w.locator(":scope > .dsh-error")
    expect()(error).to_have_text('Error: offset 999 is out of range for "big" (210 entries)')
    expect()(error).to_have_attribute("role", "alert")
    assert error.evaluate("el => getComputedStyle(el).borderLeftStyle") == "solid"
    expect()(status(w)).to_have_text("entries 205-210 of 210")


CELL_KEYS = [
    "m",
    "r",
    "x",
    "d",
    "d",
    "a",
    "b",
    "z",
    "j",
    "k",
    "c",
    "v",
    "y",
    "1",
    "Shift+m",
    "Shift+j",
    "Shift+Enter",
    "Control+Enter",
    "Alt+Enter",
]


def test_plain_keys_stay_in_the_widget_and_the_palette_still_opens(page, lab):
    """Command-mode keys and Enter with a modifier, pressed on a row or on the grep toolbar, leave
    the notebook's cells as they were; Ctrl+Shift+C still opens JupyterLab's command palette from
    inside the widget."""
    run_notebook(page, lab, "explore.ipynb")
    w = widget(page, 0)
    cells = page.locator(f"{ACTIVE} .jp-Cell")
    page.locator(f"{ACTIVE} .jp-Cell").first.click(position={"x": 5, "y": 5})  # command mode
    kinds = "els => els.map(e => [['jp-CodeCell', 'jp-MarkdownCell', 'jp-RawCell'].find(k => e.classList.contains(k)), e.querySelector('.jp-InputArea')?.innerText ?? ''])"
    before = cells.evaluate_all(kinds)
    # a file's row: Enter with a modifier opens the file below it (a folder's would list that
    # folder, and the next Enter would open a row of it, so where the focus ends would depend on
    # how fast the kernel answers)
    row(w, "notes.txt").focus()
    for key in CELL_KEYS:
        page.keyboard.press(key)
    not_busy(w)
    assert w.evaluate("root => root.contains(document.activeElement)"), "the focus left the widget"
    page.wait_for_timeout(300)  # a leaked key would have acted by now
    assert cells.evaluate_all(kinds) == before
    expect()(cells).to_have_count(2)
    assert cells.first.evaluate("el => el.classList.contains('jp-mod-active')")  # nothing ran, nothing moved
    expect()(output(page, 0).locator(".dsh")).to_have_count(1)  # the output is still there
    page.keyboard.press("Control+Shift+c")
    palette = page.locator(".jp-ModalCommandPalette")
    expect()(palette).to_be_visible()
    page.keyboard.press("Escape")
    expect()(palette).to_be_hidden()

    run_notebook(page, lab, "refine.ipynb")  # the grep toolbar's select and button as well
    w = widget(page, 0)
    page.locator(f"{ACTIVE} .jp-Cell").first.click(position={"x": 5, "y": 5})
    for control in (w.locator(".dsh-mode"), w.locator(".dsh-case")):
        control.focus()
        for key in CELL_KEYS:
            if "Enter" not in key:  # Enter on a button presses it, as a browser does
                page.keyboard.press(key)
    page.wait_for_timeout(300)
    expect()(page.locator(f"{ACTIVE} .jp-CodeCell")).to_have_count(1)
    expect()(page.locator(f"{ACTIVE} .jp-MarkdownCell")).to_have_count(0)
    expect()(w.locator(".dsh-notice")).to_have_text("No matches found")  # nor did they ask grep again


def test_rows_carry_jupyterlabs_file_type_icons(page, lab, screenshot_dir):
    """With the dsh extension on the page, file rows show the file browser's icon for their type;
    folders keep the widget's own."""
    run_notebook(page, lab, "explore.ipynb")
    w = widget(page, 0)
    expect()(row(w, "README.md")).to_be_visible()

    def lab_icon(label):
        return row(w, label).locator("svg").first.get_attribute("data-lab-icon")

    assert lab_icon("README.md") == "ui-components:markdown"
    assert lab_icon("notes.txt") == "ui-components:file"  # the file browser shows .txt so too
    assert lab_icon("explore.ipynb") == "ui-components:notebook"
    expect()(row(w, "src/").locator("svg.dsh-icon-folder")).to_have_count(1)
    screenshot(page, w, screenshot_dir / "listing-icons.png")


def test_copy_path_from_a_row_by_click_and_by_key(page, lab):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=lab.url.rstrip("/"))
    run_notebook(page, lab, "explore.ipynb")
    w = widget(page, 0)
    row(w, "src/").click()
    expect()(status(w)).to_have_text("entries 1-2 of 2")
    target = row(w, "app/")
    target.hover()
    copy = target.locator(".dsh-copy")
    expect()(copy.locator("svg")).to_have_count(1)  # JupyterLab's copy icon, not a character
    assert copy.evaluate("b => b.textContent.trim()") == ""
    copy.click()
    assert page.evaluate("() => navigator.clipboard.readText()") == "src/app"
    expect()(copy.locator("svg path")).to_have_attribute("d", re.compile(r"^M9 16\.17"))  # the check icon, a moment
    expect()(status(w)).to_have_text("entries 1-2 of 2")  # the click copied, it did not open the folder
    row(w, "lib/").focus()
    page.keyboard.press("c")
    page.wait_for_function("async () => (await navigator.clipboard.readText()) === 'src/lib'", timeout=5_000)


def test_plain_keys_stay_in_the_widget_in_notebook7(page, lab):
    """Notebook 7's notebook page binds the same command-mode keys: pressed on a listing row they
    leave the cells as they were, and the output stays."""
    page.goto(f"{lab.url}notebooks/explore.ipynb?token={lab.token}")
    nb = ".jp-NotebookPanel"
    page.locator(f"{nb} .jp-Cell").first.wait_for(timeout=90_000)
    w = page.locator(f"{nb} .jp-Cell").first.locator(".jp-OutputArea-output .dsh").first
    for _ in range(12):  # a run asked before the kernel is up may be dropped: ask until it shows
        dialog = page.locator(".jp-Dialog")
        if dialog.count():  # seen on a loaded machine: say which dialog, rather than time out behind it
            text = dialog.first.inner_text()
            if not text.startswith("Select Kernel"):
                raise AssertionError(f"Notebook 7 shows a dialog: {text!r}")
            # Notebook 7 asks which kernel when the notebook opened before it knew the kernels (a
            # loaded machine, twice in full runs): the person takes the one it offers, Python 3
            assert "Python 3 (ipykernel)" in text, text
            dialog.first.locator(".jp-mod-accept").click()
            expect()(dialog).to_have_count(0)
        page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-item", has_text=re.compile(r"^Run All Cells")).click()
        try:
            rows(w).first.wait_for(timeout=10_000)
            break
        except Exception:
            page.keyboard.press("Escape")
    expect()(rows(w).first).to_be_visible()
    cells = page.locator(f"{nb} .jp-Cell")
    cells.first.click(position={"x": 5, "y": 5})  # command mode
    kinds = "els => els.map(e => [['jp-CodeCell', 'jp-MarkdownCell', 'jp-RawCell'].find(k => e.classList.contains(k)), e.querySelector('.jp-InputArea')?.innerText ?? ''])"
    before = cells.evaluate_all(kinds)
    # a file's row, as in JupyterLab's test above: a folder's would be listed by Enter with a
    # modifier, and where the focus ends would depend on how fast the kernel answers
    notes = row(w, "notes.txt")
    notes.focus()
    expect()(notes).to_be_focused()
    for key in CELL_KEYS:
        page.keyboard.press(key)
    not_busy(w)
    assert w.evaluate("root => root.contains(document.activeElement)"), "the focus left the widget"
    page.wait_for_timeout(300)  # a leaked key would have acted by now
    assert cells.evaluate_all(kinds) == before
    expect()(cells).to_have_count(2)
    expect()(page.locator(f"{nb} .jp-Cell").first.locator(".dsh")).to_have_count(1)
    assert notes.get_attribute("data-lm-suppress-shortcuts") is None  # marked for one event at a time
    page.keyboard.press("Control+Shift+c")  # the command palette still opens from inside the widget
    palette = page.locator(".jp-ModalCommandPalette")
    expect()(palette).to_be_visible()
    page.keyboard.press("Escape")


def test_a_call_running_over_a_second_can_be_stopped(page, lab):
    """The stop button appears after a second of waiting and interrupts the kernel: the call ends,
    the view says it was stopped and keeps its page, and the next click works."""
    run_notebook(page, lab, "stop.ipynb")
    w = widget(page, 1)
    expect()(status(w)).to_have_text("entries 1-200 of 210")
    stop = w.locator(".dsh-stop")
    expect()(stop).to_be_hidden()
    w.evaluate("""root => {
        const kernel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
        window.dshStopShown = null;
        window.dshClicked = performance.now();
        new MutationObserver(() => {
            const b = root.querySelector('.dsh-stop');
            if (b && !b.hidden && window.dshStopShown === null) window.dshStopShown = performance.now();
        }).observe(root, {attributes: true, subtree: true, attributeFilter: ['hidden']});
    }""")
    w.locator(".dsh-controls .dsh-next").click()
    # the call sleeps 60 s; on a loaded machine the button was once still hidden 5 s after the click
    expect()(stop).to_be_visible(timeout=20_000)
    shown_after = page.evaluate("() => window.dshStopShown - window.dshClicked")
    assert shown_after >= 900, shown_after  # not before a second has passed
    stop.click()
    not_busy(w)
    expect()(w.locator(".dsh-error")).to_have_text(
        "Error: stopped before it finished ('page' was interrupted); the page is as it was"
    )
    expect()(status(w)).to_have_text("entries 1-200 of 210")
    expect()(stop).to_be_hidden()
    w.locator(".dsh-controls .dsh-next").click()  # the kernel is fine: the next call runs
    not_busy(w)
    expect()(status(w)).to_have_text("entries 201-210 of 210")


def test_busy_state_shows_at_once_and_clicks_do_not_queue(page, lab):
    run_notebook(page, lab, "slow.ipynb")
    w = widget(page, 1)
    expect()(status(w)).to_have_text("entries 1-200 of 210")
    w.evaluate("""root => {
        window.dshBusy = [];
        new MutationObserver(() => window.dshBusy.push([performance.now(), root.getAttribute('aria-busy')]))
            .observe(root, {attributes: true, attributeFilter: ['aria-busy']});
        root.addEventListener('click', () => { window.dshClick = window.dshClick || performance.now(); }, true);
    }""")
    # five clicks in one task, as quick hands make them: none waits for a round trip of the
    # browser's driver, so all come before the answer on a busy machine too
    w.evaluate("root => { for (let i = 0; i < 5; i++) root.querySelector('.dsh-controls .dsh-next').click(); }")
    expect()(w.locator(".dsh-spinner")).to_be_visible()
    expect()(w).to_have_attribute("aria-busy", "true")
    not_busy(w)
    expect()(status(w)).to_have_text("entries 201-210 of 210")
    clicked, marks = page.evaluate("() => [window.dshClick, window.dshBusy]")
    assert marks[0][1] == "true" and marks[0][0] - clicked < 100, (clicked, marks)
    assert len(marks) == 2  # busy once, idle once: the other clicks were not sent
    _, log = lab.request("GET", "dsh/api/sessions/e2e-slow/calls?limit=100")
    widget_lists = [c for c in log["calls"] if c["surface"] == "widget" and c["tool"] == "list"]
    assert len(widget_lists) == 1, widget_lists


def test_a_key_pressed_after_the_rows_came_but_before_done_is_sent_at_done(page, lab):
    """A page's state is drawn a moment before its "done": Alt+Up pressed in between (the first
    row already has the focus) goes up once the first request is done, instead of being lost."""
    run_notebook(page, lab, "late.ipynb")
    w = widget(page, 1)
    row(w, "big/").click()
    expect()(status(w)).to_have_text("entries 1-200 of 210")
    expect()(rows(w).first).to_be_focused()
    expect()(w).to_have_attribute("aria-busy", "true")  # its "done" is 1.5 s behind its rows
    page.keyboard.press("Alt+ArrowUp")
    expect()(w.locator(".dsh-crumbs li")).to_have_text(["."], timeout=15_000)
    expect()(row(w, "big/")).to_be_visible()
    not_busy(w)
    _, log = lab.request("GET", "dsh/api/sessions/e2e-late/calls?limit=100")
    paths = [c["args"].get("path") for c in log["calls"] if c["surface"] == "widget" and c["tool"] == "list"]
    assert paths == ["big", "."], paths


def test_a_kernel_restart_asks_to_rerun_the_cell(page, lab):
    run_notebook(page, lab, "explore.ipynb")
    w = widget(page, 0)
    expect()(row(w, "big/")).to_be_visible()
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Kernel$")).click()
    page.locator(".lm-Menu-item", has_text=re.compile(r"^Restart Kernel…")).click()
    page.locator(".jp-Dialog-button.jp-mod-accept").click()
    gone = w.locator(".dsh-gone")
    expect()(gone).to_be_visible(timeout=60_000)
    expect()(gone).to_contain_text("Re-run this cell")
    assert w.bounding_box()["height"] > 300  # the page stays, not a collapsed grid
    row(w, "big/").click(force=True)  # nothing happens, nothing breaks
    expect()(w).not_to_have_attribute("aria-busy", "true")


def test_dark_and_light_themes_are_readable(page, lab, screenshot_dir):
    run_notebook(page, lab, "explore.ipynb")
    w = widget(page, 0)
    row(w, "big/").click()
    expect()(status(w)).to_have_text("entries 1-200 of 210")
    row(w, "file-002.txt").click()
    expect()(w.locator("#dsh-panel")).to_be_visible()
    try:
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            set_theme(page, theme)
            rows(w).nth(3).focus()
            checks = {
                "name": row(w, "file-004.txt").locator(".dsh-label"),
                "size": row(w, "file-004.txt").locator(".dsh-size"),
                "modified": row(w, "file-004.txt").locator(".dsh-mtime"),
                "focused row": rows(w).nth(3).locator(".dsh-label"),
                "opener row": row(w, "file-002.txt").locator(".dsh-label"),
                "status": status(w),
                "order": w.locator(".dsh-order"),
                "footer": footer(w),
                "line number": w.locator("#dsh-panel .dsh-ln").first,
                "code": w.locator("#dsh-panel .dsh-code").first,
                "header": w.locator("[role=columnheader] button").first,
            }
            ratios = {name: round(contrast(loc), 2) for name, loc in checks.items()}
            assert all(r >= 4.5 for r in ratios.values()), (theme, ratios)  # WCAG AA for text
            if theme == "JupyterLab Dark":
                screenshot(page, output(page, 0), screenshot_dir / "listing-dark.png")
        assert w.locator("[role=grid]").count() == 1 and w.locator("[role=row]").count() > 200
        assert w.locator("[role=columnheader]").count() == 3
    finally:
        set_theme(page, "JupyterLab Light")
