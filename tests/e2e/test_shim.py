"""End to end: the JupyterLab extension's commands, in JupyterLab and in Notebook 7.

"Explore Folder with dsh" must open an explorer on the folder the file browser shows — a console
titled "dsh: <folder>", one per folder, whose kernel lists that folder in its own session — and
leave the folder alone: nothing written into it, nothing new in its listing, no "already loaded"
in the output. "open in editor" must select the line (or the match) and put it mid-editor.
"""

from __future__ import annotations

import os
import re

import pytest

from .helpers import expect, labels, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LABEL = "Explore Folder with dsh"
CONSOLE = ".jp-ConsolePanel:not(.lm-mod-hidden)"


def fnv1a(text: str) -> str:
    """The extension's folder hash (32-bit FNV-1a of the UTF-8 bytes, 8 hex digits)."""
    h = 0x811C9DC5
    for byte in text.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{h:08x}"


def session_of(folder: str) -> str:
    return f"explorer-{fnv1a(folder or '/')}"


def tree(root) -> dict[str, list[str]]:
    """Every folder under ``root`` with its sorted entries, read from disk."""
    return {d: sorted(dirs + files) for d, dirs, files in os.walk(root)}


def logged_calls(lab, session: str) -> list[tuple[str, dict]]:
    status, data = lab.request("GET", f"dsh/api/sessions/{session}/calls")
    assert status == 200, (status, data)
    value = data.get("value", data) if isinstance(data, dict) else data
    return [(c["tool"], c["args"]) for c in value["calls"]]


def run_from_palette(page):
    page.keyboard.press("Control+Shift+C")
    palette = page.locator(".jp-ModalCommandPalette, #command-palette").first
    palette.locator("input").fill(LABEL)
    item = palette.locator(".lm-CommandPalette-item", has_text=LABEL)
    expect()(item).to_have_count(1)
    return palette, item


def explorer_tab(page, folder: str):
    return page.locator(".lm-TabBar-tab", has_text=re.compile(rf"^\s*dsh: {re.escape(folder)}\s*$"))


def console_text(page) -> str:
    return page.locator(CONSOLE).inner_text()


def test_lab_explorer_leaves_the_folder_alone_one_tab_and_session_per_folder(page, lab, screenshot_dir):
    before = tree(lab.root)
    page.goto(f"{lab.url}lab/tree/src?reset&token={lab.token}")
    expect()(page.locator(".jp-BreadCrumbs")).to_contain_text("src", timeout=90_000)
    expect()(page.locator(".jp-LauncherCard", has_text=LABEL)).to_be_visible(timeout=90_000)
    palette, item = run_from_palette(page)
    headers = [h.strip().lower() for h in palette.locator(".lm-CommandPalette-header").all_inner_texts()]
    assert headers == ["dsh-jupyter"], headers
    assert not page.locator(".lm-CommandPalette-item", has_text=re.compile("Workspace", re.I)).count()
    screenshot(page, palette, screenshot_dir / "palette.png")
    item.click()

    expect()(explorer_tab(page, "src")).to_have_count(1, timeout=90_000)
    w = page.locator(f"{CONSOLE} .jp-CodeConsole-content .dsh").first
    expect()(w.locator(".dsh-subject").first).to_have_text("src", timeout=120_000)
    assert set(labels(w)) == {"app/", "lib/"}  # the folder as it is: no explorer file in it
    assert tree(lab.root) == before
    text = console_text(page)
    assert "%dsh list src" in text and "already loaded" not in text

    # Again: the same tab, the folder listed again, still no noise and no file.
    _, item = run_from_palette(page)
    item.click()
    expect()(page.locator(f"{CONSOLE} .jp-CodeConsole-content .dsh")).to_have_count(2, timeout=90_000)
    expect()(explorer_tab(page, "src")).to_have_count(1)
    assert "already loaded" not in console_text(page)

    # After a kernel restart the magic is gone: the next run loads it again, quietly.
    page.evaluate(
        """() => [...window.jupyterapp.shell.widgets('main')]
            .find(w => w.title.label === 'dsh: src').sessionContext.restartKernel()"""
    )
    page.wait_for_function(
        """() => [...window.jupyterapp.shell.widgets('main')]
            .find(w => w.title.label === 'dsh: src').sessionContext.kernelDisplayStatus === 'idle'""",
        timeout=90_000,
    )
    _, item = run_from_palette(page)
    item.click()
    # (the console clears itself when its kernel restarts, so this run's output is all there is)
    w = page.locator(f"{CONSOLE} .jp-CodeConsole-content .dsh")
    expect()(w).to_have_count(1, timeout=90_000)
    expect()(w.locator(".dsh-subject").first).to_have_text("src", timeout=120_000)
    text = console_text(page)
    assert f"%load_ext dsh_jupyter\n%dsh session {session_of('src')}\n%dsh list src" in text
    assert "already loaded" not in text and "UsageError" not in text

    # Another folder (as the launcher runs it, with its cwd): a second explorer, its own session.
    page.evaluate("() => window.jupyterapp.commands.execute('dsh-jupyter:open-explorer', {cwd: 'docs'})")
    expect()(explorer_tab(page, "docs")).to_have_count(1, timeout=90_000)
    d = page.locator(f"{CONSOLE} .jp-CodeConsole-content .dsh").first
    expect()(d.locator(".dsh-subject").first).to_have_text("docs", timeout=120_000)
    assert set(labels(d)) == {"guide.md"}
    assert "already loaded" not in console_text(page)
    expect()(page.locator(".lm-TabBar-tab", has_text=re.compile(r"^\s*dsh: "))).to_have_count(2)
    assert tree(lab.root) == before

    src_calls = logged_calls(lab, session_of("src"))
    docs_calls = logged_calls(lab, session_of("docs"))
    assert src_calls and {args.get("path") for tool, args in src_calls if tool == "list"} == {"src"}
    assert docs_calls and {args.get("path") for tool, args in docs_calls if tool == "list"} == {"docs"}
    assert session_of("src") != session_of("docs")


def _editor_state(page) -> dict:
    """The current editor's path, selection and where the selected line sits in its visible area."""
    return page.evaluate(
        """() => {
            const w = window.jupyterapp.shell.currentWidget;
            const editor = w && w.content && w.content.editor;
            if (!editor || !editor.editor) return null;
            const view = editor.editor;
            const main = view.state.selection.main;
            const line = view.state.doc.lineAt(main.from);
            const box = view.coordsAtPos(main.from);
            const area = view.scrollDOM.getBoundingClientRect();
            return {
                path: w.context.path, line: line.number, from: main.from - line.from, to: main.to - line.from,
                selected: view.state.sliceDoc(main.from, main.to), lineText: line.text,
                middle: box ? ((box.top + box.bottom) / 2 - area.top) / area.height : null,
                scrolled: view.scrollDOM.scrollTop,
            };
        }"""
    )


def _wait_for_editor(page, path: str, line: int) -> dict:
    page.wait_for_function(
        """([path, line]) => {
            const w = window.jupyterapp.shell.currentWidget;
            const view = w && w.content && w.content.editor && w.content.editor.editor;
            return !!view && w.context.path === path
                && view.state.doc.lineAt(view.state.selection.main.from).number === line;
        }""",
        arg=[path, line],
        timeout=90_000,
    )
    page.wait_for_timeout(500)  # the scroll is applied at CodeMirror's next measure
    return _editor_state(page)


def test_open_in_editor_selects_the_line_and_centres_it(page, lab):
    page.goto(f"{lab.url}lab?reset&token={lab.token}")
    expect()(page.locator(".jp-LauncherCard", has_text=LABEL)).to_be_visible(timeout=90_000)

    page.evaluate(
        "() => window.jupyterapp.commands.execute('dsh-jupyter:open-in-editor', {path: 'logs/long.txt', line: 1500})"
    )
    state = _wait_for_editor(page, "logs/long.txt", 1500)
    assert state["selected"] == state["lineText"] == "log line 1500: " + "." * (1500 % 50), state
    assert state["scrolled"] > 0 and 0.35 < state["middle"] < 0.65, state

    # The widgets' page event, with a match's span: that part of the line, mid-editor.
    page.evaluate(
        """() => document.dispatchEvent(new CustomEvent('dsh-jupyter:open-in-editor',
            {detail: {path: 'logs/long.txt', line: 2200, column: 4, length: 4}}))"""
    )
    state = _wait_for_editor(page, "logs/long.txt", 2200)
    assert (state["from"], state["to"], state["selected"]) == (4, 8, "line"), state
    assert 0.35 < state["middle"] < 0.65, state


def test_notebook7_command_from_the_tree_opens_an_explorer_tab_that_lists_the_folder(page, lab):
    before = tree(lab.root)
    page.goto(f"{lab.url}tree/docs?token={lab.token}")
    expect()(page.locator(".jp-DirListing-item", has_text="guide.md")).to_be_visible(timeout=90_000)
    _, item = run_from_palette(page)
    with page.context.expect_page(timeout=90_000) as opened:
        item.click()
    tab = opened.value
    try:
        tab.set_default_timeout(90_000)
        tab.wait_for_url(re.compile(r"/consoles/docs/dsh-explorer"))
        w = tab.locator(".jp-CodeConsole-content .dsh").first
        expect()(w.locator(".dsh-subject").first).to_have_text("docs", timeout=120_000)
        assert set(labels(w)) == {"guide.md"}
        text = tab.locator(".jp-CodeConsole").inner_text()
        assert "%dsh list docs" in text and "already loaded" not in text
        assert tree(lab.root) == before
    finally:
        tab.close()
