"""End to end: the shim's command and every widget, clicked in Chromium against a real JupyterLab.

Each test opens one notebook of the prepared root (see conftest.py) the way a person would, by its
URL with ``?reset``. It waits until the kernel is idle, runs all cells from the Run menu, then
clicks through the widget: what the rows, the pager and the footer say after each click is what
the test checks. Along the way it saves the screenshots that docs/notebook.md and docs/tour.md
show (1200×800 PNGs in docs/screenshots/).
"""

from __future__ import annotations

import re

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ACTIVE = ".jp-NotebookPanel:not(.lm-mod-hidden)"
MAX_PNG_BYTES = 1_000_000


def expect():
    from playwright.sync_api import expect as _expect

    return _expect


# -- driving JupyterLab --------------------------------------------------------------------------


def wait_for_kernel_idle(page) -> None:
    """The status bar says "<kernel> | Idle": the kernel has started and is not running anything."""
    page.wait_for_function(
        "() => /\\| Idle/.test(document.querySelector('#jp-main-statusbar')?.innerText || '')", timeout=90_000
    )


def wait_for_all_cells_run(page) -> None:
    page.wait_for_function(
        f"""() => {{
            const prompts = [...document.querySelectorAll('{ACTIVE} .jp-CodeCell .jp-InputPrompt')];
            return prompts.length > 0 && prompts.every(p => /^\\[\\d+\\]:$/.test(p.textContent.trim()));
        }}""",
        timeout=120_000,
    )
    wait_for_kernel_idle(page)


def open_notebook(page, lab, name: str) -> None:
    page.goto(f"{lab.url}lab/tree/{name}?reset&token={lab.token}")
    page.locator(f"{ACTIVE} .jp-Cell").first.wait_for()
    wait_for_kernel_idle(page)
    page.keyboard.press("Control+b")  # hide the file browser: more room for the widgets
    page.locator("#jp-left-stack").wait_for(state="hidden")


def run_all_cells(page) -> None:
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-item", has_text=re.compile(r"^Run All Cells")).click()
    wait_for_all_cells_run(page)


def output(page, index: int):
    return page.locator(f"{ACTIVE} .jp-Cell").nth(index).locator(".jp-OutputArea-output")


def button(scope, text: str):
    return scope.locator("button.widget-button", has_text=re.compile(rf"^{re.escape(text)}$"))


def status(scope, pattern: str):
    """The pager's status label (``entries 1-200 of 210``, ``lines 1-15 of 40``)."""
    return scope.locator("div.widget-label", has_text=re.compile(pattern))


def footer(scope, text: str):
    """The model's footer, repeated verbatim under the page."""
    return scope.locator(".widget-html-content pre", has_text=text)


def row_names(scope) -> list[str]:
    return [t.strip() for t in scope.locator(".widget-gridbox button.widget-button").all_inner_texts()]


def screenshot(page, top, path) -> None:
    """A 1200×800 shot of the page, scrolled so that ``top`` is at the top of the notebook."""
    top.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.mouse.move(1, 1)
    page.wait_for_timeout(400)
    page.screenshot(path=str(path))
    assert 10_000 < path.stat().st_size < MAX_PNG_BYTES, (path, path.stat().st_size)


# -- the tests ------------------------------------------------------------------------------------


def test_palette_command_opens_a_notebook_with_the_listing(page, lab, screenshot_dir):
    page.goto(f"{lab.url}lab?reset&token={lab.token}")
    launcher_card = page.locator(".jp-LauncherCard", has_text="Open workspace explorer")
    expect()(launcher_card).to_be_visible(timeout=90_000)

    page.keyboard.press("Control+Shift+C")
    palette = page.locator(".jp-ModalCommandPalette")
    palette.locator("input").fill("Open workspace explorer")
    item = palette.locator(".lm-CommandPalette-item", has_text="Open workspace explorer")
    expect()(item).to_have_count(1)
    headers = [h.strip().lower() for h in palette.locator(".lm-CommandPalette-header").all_inner_texts()]
    assert headers == ["dsh-jupyter"], headers
    screenshot(page, palette, screenshot_dir / "palette.png")
    item.click()

    # a new notebook: its first cell loads the extension, lists the root, and has run
    out = output(page, 0)
    expect()(button(out, "big/")).to_be_visible(timeout=90_000)
    editor = page.locator(f"{ACTIVE} .jp-Cell").first.locator(".jp-InputArea-editor")
    expect()(editor).to_contain_text("%load_ext dsh_jupyter")
    expect()(editor).to_contain_text("%dsh list")
    expect()(button(out, "src/")).to_be_visible()
    expect()(footer(out, "entries:")).to_be_visible()
    expect()(out.locator(".widget-html-content", has_text="list")).to_have_count(1)

    # and the command saved it in the root
    status_code, listing = lab.request("GET", "api/contents")
    assert status_code == 200
    assert any(re.fullmatch(r"Untitled\d*\.ipynb", f["name"]) for f in listing["content"]), listing


def test_listing_next_page_and_directory_click(page, lab, screenshot_dir):
    open_notebook(page, lab, "explore.ipynb")
    run_all_cells(page)
    out = output(page, 0)

    button(out, "big/").click()  # a directory lists in place
    expect()(status(out, r"^entries 1-200 of 210$")).to_be_visible()
    expect()(footer(out, "(Showing entries 1-200 of 210: 5 directories, 205 files.")).to_be_visible()
    expect()(footer(out, "Use offset=201 to continue.)")).to_be_visible()
    first_page = row_names(out)
    assert len(first_page) == 200 and first_page[:2] == ["dir-1/", "dir-2/"], first_page[:5]

    button(out, "next").click()  # one more page: rows and footer change
    expect()(status(out, r"^entries 201-210 of 210$")).to_be_visible()
    expect()(footer(out, "(Showing entries 201-210 of 210: 5 directories, 205 files.")).to_be_visible()
    expect()(footer(out, "End of listing.)")).to_be_visible()
    second_page = row_names(out)
    assert second_page == [f"file-{i:03d}.txt" for i in range(196, 206)], second_page
    screenshot(page, out, screenshot_dir / "listing.png")

    button(out, ".").click()  # the breadcrumb goes back up
    expect()(button(out, "big/")).to_be_visible()
    expect()(status(out, r"^entries 1-\d+ of \d+$")).to_be_visible()


def test_read_window_pages_and_shows_the_model_text(page, lab, screenshot_dir):
    open_notebook(page, lab, "read.ipynb")
    run_all_cells(page)
    out = output(page, 0)
    expect()(status(out, r"^lines 1-12 of 40$")).to_be_visible()
    expect()(footer(out, "(Showing lines 1-12 of 40. Use offset=13 to continue.)")).to_be_visible()

    button(out, "next").click()
    expect()(status(out, r"^lines 13-24 of 40$")).to_be_visible()
    expect()(footer(out, "(Showing lines 13-24 of 40. Use offset=25 to continue.)")).to_be_visible()
    expect()(out.locator(".widget-html-content pre", has_text="value_14 = 14")).to_be_visible()

    out.locator("button.widget-toggle-button", has_text="model view").click()
    model = out.locator(".widget-html-content pre", has_text="<path>src/app/main.py</path>")
    expect()(model).to_be_visible()
    assert "16: value_14 = 14" in model.inner_text()
    screenshot(page, out, screenshot_dir / "read.png")


def test_glob_is_sampled_and_the_spill_viewer_pages(page, lab, screenshot_dir):
    open_notebook(page, lab, "glob.ipynb")
    run_all_cells(page)
    out = output(page, 1)
    expect()(out.locator(".widget-html-content", has_text=re.compile(r"^glob \* in \.: 12 of \d+ paths"))).to_be_visible()
    expect()(footer(out, "sampled across")).to_be_visible()
    expect()(out.locator(".widget-html-content b", has_text="big/")).to_be_visible()  # a group header
    screenshot(page, out, screenshot_dir / "glob.png")

    button(out, "open the full result").click()
    spill_status = status(out, r"^lines 1-200 of \d+$")
    expect()(spill_status).to_be_visible()
    total = int(spill_status.inner_text().rsplit(" ", 1)[1])
    assert total > 200
    first_line = out.locator(".widget-html-content pre", has_text=re.compile(r"^\s*1  "))
    expect()(first_line).to_be_visible()

    button(out, "next").click()  # the spill viewer's pager
    expect()(status(out, rf"^lines 201-{total} of {total}$")).to_be_visible()
    expect()(footer(out, f"(End of file - total {total} lines)")).to_be_visible()
    spill_view = out.locator(".widget-html-content", has_text="saved result").locator("xpath=../..")
    screenshot(page, spill_view, screenshot_dir / "spill.png")


def test_grep_match_opens_a_read_window(page, lab, screenshot_dir):
    open_notebook(page, lab, "grep.ipynb")
    run_all_cells(page)
    out = output(page, 1)
    expect()(out.locator(".widget-html-content", has_text=re.compile(r"Found 8 of \d+ matches"))).to_be_visible()
    expect()(footer(out, "from all 4 files that matched, sampled across top-level entries and files")).to_be_visible()
    expect()(footer(out, "Full grep result stored at:")).to_be_visible()

    match = out.locator("button.widget-button", has_text=re.compile(r"^Line 12: value_10 = 10")).first
    match.click()  # a match opens a read window at its line, marked
    expect()(out.locator(".widget-html-content", has_text="read").locator("code", has_text="src/app/main.py")).to_be_visible()
    expect()(out.locator("mark", has_text="value_10 = 10  # TODO check 10")).to_be_visible()
    expect()(status(out, r"^lines 9-40 of 40$")).to_be_visible()
    screenshot(page, out, screenshot_dir / "grep.png")


def test_call_log_shows_every_surface_and_the_exact_text(page, lab, screenshot_dir):
    # an agent, over REST, in the session the notebook switches to: a search, and an edit before any read
    agent = lab.tool("grep", session="e2e-calls", pattern="TODO", include="*.md")
    assert not agent["isError"], agent["text"]
    refused = lab.tool("edit", session="e2e-calls", file_path="notes.txt", old_string="first", new_string="1st")
    assert refused["value"]["code"] == "FS_NOT_OBSERVED"
    open_notebook(page, lab, "calls.ipynb")
    run_all_cells(page)

    button(output(page, 1), "src/").click()  # a click: logged with surface "widget"
    expect()(status(output(page, 1), r"^entries 1-2 of 2$")).to_be_visible()

    log = output(page, 2)
    button(log, "newest").click()
    headers = log.locator(".jupyter-widget-Collapse-header")
    expect()(headers.filter(has_text="widget · list")).to_have_count(1)
    titles = [t.strip() for t in headers.all_inner_texts()]
    assert titles == ["1. rest · grep", "2. rest · edit ERROR", "3. magic · list", "4. widget · list"], titles

    headers.filter(has_text="rest · grep").click()  # expand: exactly what the agent's model read
    expect()(log.locator(".widget-html-content pre", has_text=agent["text"].splitlines()[0])).to_be_visible()
    assert agent["text"] in log.locator(".jupyter-widget-Collapse-contents pre").first.inner_text()
    screenshot(page, log, screenshot_dir / "calls.png")
