"""End to end: the Workspace panel's Replace and the "Go to File…" palette, in Chromium.

A lab of its own over a small tree. Replace: a person shows the Replace field, previews a change
grouped by file (before struck, after marked, every occurrence checked), unchecks one, applies,
and the files on disk hold exactly the change (the unchecked occurrence untouched, a notebook's
cell source changed and its output not), the result said in place and the preview asked again; a
file changed on disk between the preview and Apply is refused in plain words, nothing written;
a file open in a tab with unsaved typing is refused too, and once saved the tab takes the change;
the search's options (match case, whole word, regex with a group, include) shape the preview and
the apply; a preview of two pages; typing while an apply runs loses neither its answer nor the
preview after it. Go to File: Ctrl+Alt+P, `wsp hdl` typed as a person types, the total count,
arrow keys, Enter opens the file; a stale answer never replaces a newer one; the command is in the
palette; in Notebook 7 the file opens in a tab of its own.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from .conftest import start_lab
from .helpers import contrast, expect, screenshot, set_theme
from .test_sidebar import open_sidebar, set_toggle, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MODELS = "def total_cost(rows):\n    return sum(r.total_cost for r in rows)\n"
REPORT = "from pkg.models import total_cost\n\nprint(total_cost([]))\n"
DRIFT = "alpha = 1\n"
OPTS = "Rate = rate_limit\nrate = 1\nrated = 2\n"
MANY = 150  # occurrences in one file: two pages of the preview (replace_max_results 100)


def build(root) -> None:
    files = {
        "pkg/models.py": MODELS,
        "pkg/report.py": REPORT,
        "drift/a.txt": DRIFT,
        "drift/b.txt": DRIFT,
        "drift/c.txt": DRIFT,
        "workspace/server/handlers.py": "HANDLERS = []\n",
        "workspace/server/models.py": "MODELS = []\n",
        "workspace/client/hdl.txt": "a note\n",
        "docs/handling.md": "# Handling\n",
        "opts/rates.py": OPTS,
        "many/items.txt": "item\n" * MANY,
        "race/r.txt": "one one\n",
        ".gitignore": "build/\n",
        "build/workspace/handlers.py": "generated\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x = total_cost(rows)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="total_cost printed\n")]
    nb.cells = [nbformat.v4.new_markdown_cell("# Costs"), cell]
    nbformat.write(nb, root / "analysis.ipynb")


@pytest.fixture(scope="module")
def lab(tmp_path_factory, chromium):
    tmp = tmp_path_factory.mktemp("replace-lab")
    build(tmp / "root")
    server = start_lab(tmp, tmp / "root")
    yield server
    server.stop()


def replace_status(panel):
    return panel.locator(".dsh-sb-replace-status")


def occurrence(panel, path: str, line: int, nth: int = 0):
    return panel.locator(f'.dsh-sb-file[data-path="{path}"] .dsh-sb-occ[data-line="{line}"]').nth(nth)


def show_replace(panel, pattern: str, replacement: str) -> None:
    toggle = panel.locator(".dsh-sb-replace-toggle")
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
    expect()(toggle).to_have_attribute("aria-expanded", "true")
    expect()(panel.locator(".dsh-sb-replacement")).to_be_focused()
    panel.locator(".dsh-sb-pattern").fill(pattern)
    panel.locator(".dsh-sb-replacement").fill(replacement)
    settle(panel)


def test_a_person_previews_unchecks_one_occurrence_and_applies(page, lab, screenshot_dir):
    root = lab.root
    panel = open_sidebar(page, lab)
    show_replace(panel, "total_cost", "net_cost")
    expect()(replace_status(panel)).to_have_text("5 occurrences in 3 files")
    groups = panel.locator(".dsh-sb-replace .dsh-sb-file").evaluate_all("els => els.map(e => e.dataset.path)")
    assert groups == ["analysis.ipynb", "pkg/models.py", "pkg/report.py"]
    # a notebook's place is its cell and line; its output is not an occurrence
    cell = occurrence(panel, "analysis.ipynb", 1)
    expect()(cell.locator(".dsh-sb-line")).to_have_text("Cell 2, line 1")
    expect()(cell.locator(".dsh-sb-text")).to_have_text("x = total_costnet_cost(rows)")
    expect()(cell.locator("del")).to_have_text("total_cost")
    expect()(cell.locator("ins")).to_have_text("net_cost")
    # the removed text struck, the new text marked
    assert "line-through" in cell.locator("del").evaluate("el => getComputedStyle(el).textDecorationLine")
    assert cell.locator("ins").evaluate("el => getComputedStyle(el).backgroundColor") != "rgba(0, 0, 0, 0)"
    # every occurrence checked at first; Apply says how many
    boxes = panel.locator(".dsh-sb-occ-check")
    expect()(boxes).to_have_count(5)
    assert all(boxes.evaluate_all("els => els.map(e => e.checked)"))
    apply = panel.locator(".dsh-sb-apply")
    expect()(apply).to_have_text("Replace all 5")

    # named for assistive technology: the preview and each file a group, each checkbox labelled
    expect()(panel.locator(".dsh-sb-replace-list")).to_have_attribute("role", "group")
    expect()(panel.locator(".dsh-sb-replace-list")).to_have_attribute("aria-label", "Replace preview")
    expect()(panel.locator('.dsh-sb-replace [data-path="pkg/models.py"]')).to_have_attribute(
        "aria-label", "pkg/models.py, 2 occurrences"
    )
    expect()(panel.locator('.dsh-sb-replace [data-path="pkg/models.py"] .dsh-sb-file-check')).to_have_attribute(
        "aria-label", "Replace in pkg/models.py"
    )
    expect()(cell.locator(".dsh-sb-occ-check")).to_have_attribute(
        "aria-label", "Replace at analysis.ipynb, Cell 2, line 1"
    )
    expect()(panel.locator(".dsh-sb-replace-toggle")).to_have_attribute("aria-controls", "dsh-sb-replace-row")
    # a file's checkbox toggles its occurrences, and shows a file partly chosen
    models = panel.locator('.dsh-sb-file[data-path="pkg/models.py"]')
    models.locator(".dsh-sb-file-check").uncheck()
    assert models.locator(".dsh-sb-occ-check").evaluate_all("els => els.map(e => e.checked)") == [False, False]
    expect()(apply).to_have_text("Replace 3 of 5")
    models.locator(".dsh-sb-file-check").check()
    expect()(apply).to_have_text("Replace all 5")

    # line 3 of report.py stays as it is
    report = panel.locator('.dsh-sb-file[data-path="pkg/report.py"]')
    occurrence(panel, "pkg/report.py", 3).locator(".dsh-sb-occ-check").uncheck()
    assert report.locator(".dsh-sb-file-check").evaluate("el => el.indeterminate") is True
    expect()(apply).to_have_text("Replace 4 of 5")
    expect()(occurrence(panel, "pkg/report.py", 3).locator(".dsh-sb-occ-check")).to_have_attribute(
        "aria-label", "Replace at pkg/report.py, line 3"
    )
    screenshot(page, panel, screenshot_dir / "sidebar-replace.png")
    # the struck and the marked text readable in both themes (WCAG AA: 4.5)
    try:
        for theme in ("JupyterLab Dark", "JupyterLab Light"):
            set_theme(page, theme)
            for tag in ("del", "ins"):
                ratio = contrast(cell.locator(tag))
                assert ratio >= 4.5, (theme, tag, ratio)
    finally:
        set_theme(page, "JupyterLab Light")

    apply.click()
    message = panel.locator(".dsh-sb-replace-message")
    expect()(message).to_have_text(
        'Replaced 4 occurrences of "total_cost" in 3 files:\nanalysis.ipynb: 1\npkg/models.py: 2\npkg/report.py: 1'
    )
    expect()(message).to_have_attribute("role", "status")
    settle(panel)
    # exactly the change on disk; the unchecked occurrence untouched
    assert (root / "pkg/models.py").read_text() == MODELS.replace("total_cost", "net_cost")
    assert (root / "pkg/report.py").read_text() == "from pkg.models import net_cost\n\nprint(total_cost([]))\n"
    nb = nbformat.read(root / "analysis.ipynb", as_version=4)
    nbformat.validate(nb)
    assert [c.source for c in nb.cells] == ["# Costs", "x = net_cost(rows)"]
    assert nb.cells[1].outputs[0]["text"] == "total_cost printed\n"
    # the preview asked again: the one left, still unchecked, the message kept
    expect()(replace_status(panel)).to_have_text("1 occurrence in 1 file")
    expect()(occurrence(panel, "pkg/report.py", 3).locator(".dsh-sb-occ-check")).not_to_be_checked()
    expect()(apply).to_be_disabled()
    expect()(message).to_contain_text('Replaced 4 occurrences of "total_cost"')
    # typing changes the search: the message of the last apply goes
    panel.locator(".dsh-sb-replacement").fill("net_total")
    settle(panel)
    expect()(message).to_be_hidden()

    # hidden again, the panel searches with grep
    panel.locator(".dsh-sb-replace-toggle").click()
    settle(panel)
    expect()(panel.locator(".dsh-sb-replace")).to_be_hidden()
    expect()(panel.locator(".dsh-sb-status")).to_have_text("1 match in 1 file")


def test_a_file_changed_since_the_preview_is_refused_and_nothing_is_written(page, lab, screenshot_dir):
    root = lab.root
    panel = open_sidebar(page, lab)
    panel.locator(".dsh-sb-include").fill("drift/**")
    show_replace(panel, "alpha", "beta")
    expect()(replace_status(panel)).to_have_text("3 occurrences in 3 files")
    (root / "drift/b.txt").write_text("alpha = 2  # changed elsewhere\n")
    panel.locator(".dsh-sb-apply").click()
    message = panel.locator(".dsh-sb-replace-message")
    expect()(message).to_have_text(
        "Nothing was replaced: a file changed since the preview. The preview below is new: check it "
        'and apply again.\ncannot replace: "drift/b.txt" changed since the preview; preview again'
    )
    expect()(message).to_have_attribute("role", "alert")
    settle(panel)
    # nothing written anywhere
    assert (root / "drift/a.txt").read_text() == DRIFT
    assert (root / "drift/b.txt").read_text() == "alpha = 2  # changed elsewhere\n"
    assert (root / "drift/c.txt").read_text() == DRIFT
    # the new preview shows the file as it is now
    expect()(occurrence(panel, "drift/b.txt", 1).locator(".dsh-sb-text")).to_have_text(
        "alphabeta = 2  # changed elsewhere"
    )
    expect()(message).to_be_visible()
    screenshot(page, panel, screenshot_dir / "sidebar-replace-refused.png")

    # a file open in a tab with the person's unsaved typing: refused, said, nothing written
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:open', {path: 'drift/c.txt'})")
    expect()(page.locator(".lm-TabBar-tab.lm-mod-current", has_text="c.txt")).to_be_visible()
    editor = page.locator(".jp-FileEditor:not(.lm-mod-hidden) .cm-content")
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("# typed\n")
    expect()(page.locator(".lm-TabBar-tab.lm-mod-current.jp-mod-dirty", has_text="c.txt")).to_be_visible()
    panel.locator(".dsh-sb-replacement").fill("gamma")
    settle(panel)
    panel.locator(".dsh-sb-apply").click()
    expect()(message).to_have_text(
        "Nothing was replaced: a file open in JupyterLab has unsaved changes. Save or close it, or uncheck "
        'its occurrences, and apply again.\ncannot replace in "drift/c.txt": it is open in JupyterLab with '
        "unsaved changes; nothing was changed. Ask the person to save or close it, then read it again"
    )
    settle(panel)
    assert (root / "drift/a.txt").read_text() == DRIFT
    assert (root / "drift/c.txt").read_text() == DRIFT
    # unchecked, the open file is left alone and the rest is changed
    occurrence(panel, "drift/c.txt", 1).locator(".dsh-sb-occ-check").uncheck()
    panel.locator(".dsh-sb-apply").click()
    expect()(message).to_have_text('Replaced 2 occurrences of "alpha" in 2 files:\ndrift/a.txt: 1\ndrift/b.txt: 1')
    settle(panel)
    assert (root / "drift/a.txt").read_text() == "gamma = 1\n"
    assert (root / "drift/b.txt").read_text() == "gamma = 2  # changed elsewhere\n"
    assert (root / "drift/c.txt").read_text() == DRIFT
    # saved, the tab takes the change itself and saves it
    editor.click()
    page.keyboard.press("Control+s")
    expect()(page.locator(".lm-TabBar-tab.lm-mod-current.jp-mod-dirty", has_text="c.txt")).to_have_count(0)
    assert (root / "drift/c.txt").read_text() == DRIFT + "# typed\n"
    panel.locator(".dsh-sb-replacement").fill("delta")
    settle(panel)
    occurrence(panel, "drift/c.txt", 1).locator(".dsh-sb-occ-check").check()
    panel.locator(".dsh-sb-apply").click()
    expect()(message).to_have_text(
        'Replaced 1 occurrence of "alpha" in 1 file:\n'
        "drift/c.txt: 1 (open in JupyterLab: the tab took the change and saved it)"
    )
    settle(panel)
    assert (root / "drift/c.txt").read_text() == "delta = 1\n# typed\n"


def test_the_search_options_shape_the_replace(page, lab):
    root = lab.root
    panel = open_sidebar(page, lab)
    panel.locator(".dsh-sb-include").fill("opts/**")
    show_replace(panel, "rate", "speed")  # plain text, any case
    expect()(replace_status(panel)).to_have_text("4 occurrences in 1 file")
    expect()(panel.locator(".dsh-sb-replace del")).to_have_text(["Rate", "rate", "rate", "rate"])
    set_toggle(panel, "case", True)
    expect()(replace_status(panel)).to_have_text("3 occurrences in 1 file")
    set_toggle(panel, "word", True)  # rate_limit and rated are other words
    expect()(replace_status(panel)).to_have_text("1 occurrence in 1 file")
    # a $ in the replacement is itself, with or without whole word
    panel.locator(".dsh-sb-replacement").fill("$x")
    settle(panel)
    expect()(panel.locator(".dsh-sb-replace ins")).to_have_text(["$x"])
    set_toggle(panel, "word", False)
    expect()(panel.locator(".dsh-sb-replace ins")).to_have_text(["$x", "$x", "$x"])
    # a regular expression with a group; the whole match struck, its replacement marked
    set_toggle(panel, "regex", True)
    panel.locator(".dsh-sb-pattern").fill(r"(\w+)_limit")
    panel.locator(".dsh-sb-replacement").fill("max_$1")
    settle(panel)
    expect()(replace_status(panel)).to_have_text("1 occurrence in 1 file")
    row = occurrence(panel, "opts/rates.py", 1)
    expect()(row.locator("del")).to_have_text("rate_limit")
    expect()(row.locator("ins")).to_have_text("max_rate")
    expect()(panel.locator(".dsh-sb-apply")).to_have_text("Replace all 1")
    panel.locator(".dsh-sb-apply").click()
    expect()(panel.locator(".dsh-sb-replace-message")).to_have_text(
        'Replaced 1 occurrence of "(\\\\w+)_limit" in 1 file:\nopts/rates.py: 1'
    )
    settle(panel)
    assert (root / "opts/rates.py").read_text() == "Rate = max_rate\nrate = 1\nrated = 2\n"
    expect()(replace_status(panel)).to_have_text("No occurrences")
    expect()(panel.locator(".dsh-sb-apply")).to_be_hidden()
    set_toggle(panel, "regex", False)
    set_toggle(panel, "case", False)


def test_a_preview_of_two_pages_applies_what_the_button_says(page, lab):
    root = lab.root
    panel = open_sidebar(page, lab)
    panel.locator(".dsh-sb-include").fill("many/**")
    show_replace(panel, "item", "thing")
    expect()(replace_status(panel)).to_have_text("150 occurrences in 1 file — showing 1–100")
    apply = panel.locator(".dsh-sb-apply")
    expect()(apply).to_have_text("Replace all 150")  # the page not shown is checked too
    more = panel.locator(".dsh-sb-more")
    more.click()
    settle(panel)
    expect()(replace_status(panel)).to_have_text("150 occurrences in 1 file")
    expect()(more).to_be_hidden()
    expect()(panel.locator(".dsh-sb-occ")).to_have_count(MANY)
    occurrence(panel, "many/items.txt", 120).locator(".dsh-sb-occ-check").uncheck()
    expect()(apply).to_have_text("Replace 149 of 150")
    apply.click()
    expect()(panel.locator(".dsh-sb-replace-message")).to_have_text(
        'Replaced 149 occurrences of "item" in 1 file:\nmany/items.txt: 149'
    )
    settle(panel)
    lines = (root / "many/items.txt").read_text().splitlines()
    assert lines == ["item" if n == 120 else "thing" for n in range(1, MANY + 1)]


# An apply is held back in the page for a while before it is sent, so that the person's typing
# starts a new preview first: the files as they were before the apply.
HELD_APPLY = """() => {
  const real = window.fetch;
  window.fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (input instanceof Request && url.includes('/dsh/api/tools/replace')) {
      const body = await input.clone().text();
      if (JSON.parse(body).args.occurrences !== undefined) {
        await new Promise(done => setTimeout(done, 1500));
        return real(new Request(input, {signal: null}));
      }
    }
    return real(input, init);
  };
}"""


def test_typing_while_an_apply_runs_neither_loses_its_answer_nor_shows_the_files_before_it(page, lab):
    root = lab.root
    panel = open_sidebar(page, lab)
    page.evaluate(HELD_APPLY)
    panel.locator(".dsh-sb-include").fill("race/**")
    show_replace(panel, "one", "two")
    expect()(replace_status(panel)).to_have_text("2 occurrences in 1 file")
    panel.locator(".dsh-sb-apply").click()
    panel.locator(".dsh-sb-replacement").fill("three")  # a new preview while the apply waits
    message = panel.locator(".dsh-sb-replace-message")
    expect()(message).to_have_text('Replaced 2 occurrences of "one" in 1 file:\nrace/r.txt: 2')
    settle(panel)
    assert (root / "race/r.txt").read_text() == "two two\n"
    # the newest preview (one -> three), asked again after the apply: nothing left to replace
    expect()(replace_status(panel)).to_have_text("No occurrences")
    expect()(message).to_be_visible()


def palette(page):
    return page.locator(".dsh-goto")


def test_go_to_file_finds_a_path_by_fragments_and_opens_it(page, lab, screenshot_dir):
    open_sidebar(page, lab)
    # the binding JupyterLab 4 leaves free, and the command in the palette
    keys = page.evaluate(
        "() => window.jupyterapp.commands.keyBindings"
        ".filter(b => b.command === 'dsh-jupyter:go-to-file').map(b => b.keys.join(' '))"
    )
    assert keys == ["Ctrl Alt P"]
    page.keyboard.press("Control+Shift+C")
    page.locator(".lm-CommandPalette-input").fill("Go to File")
    expect()(page.locator(".lm-CommandPalette-item", has_text="Go to File…")).to_be_visible()
    page.keyboard.press("Escape")

    page.locator(".jp-Launcher").click()
    page.keyboard.press("Control+Alt+P")
    dialog = palette(page)
    expect()(dialog).to_be_visible()
    expect()(dialog).to_have_attribute("role", "dialog")
    box = dialog.locator(".dsh-goto-input")
    expect()(box).to_be_focused()
    box.press_sequentially("wsp hdl", delay=60)
    status = dialog.locator(".dsh-goto-status")
    expect()(status).to_have_text("2 files match")
    options = dialog.locator('[role="option"]')
    # the .gitignore'd build/ is left out; the name starting with the word first
    assert options.evaluate_all("els => els.map(e => e.dataset.path)") == [
        "workspace/client/hdl.txt",
        "workspace/server/handlers.py",
    ]
    expect()(options.nth(0)).to_have_attribute("aria-selected", "true")
    expect()(box).to_have_attribute("aria-activedescendant", "dsh-goto-option-0")
    screenshot(page, dialog, screenshot_dir / "go-to-file.png")
    page.keyboard.press("Tab")  # a modal palette: the focus stays in its box
    expect()(box).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect()(options.nth(1)).to_have_attribute("aria-selected", "true")
    expect()(box).to_have_attribute("aria-activedescendant", "dsh-goto-option-1")
    page.keyboard.press("Enter")
    expect()(dialog).to_have_count(0)
    expect()(page.locator(".lm-TabBar-tab.lm-mod-current", has_text="handlers.py")).to_be_visible()
    opened = page.evaluate("() => window.jupyterapp.shell.currentWidget.context.path")
    assert opened == "workspace/server/handlers.py"

    # a click opens too; Escape closes and nothing opens
    page.keyboard.press("Control+Alt+P")
    box.fill("srv mdl")
    expect()(status).to_have_text("1 file matches")
    options.first.click()
    expect()(page.locator(".lm-TabBar-tab.lm-mod-current", has_text="models.py")).to_be_visible()
    page.keyboard.press("Control+Alt+P")
    box.fill("zzqq")
    expect()(status).to_have_text("No files match")
    page.keyboard.press("Escape")
    expect()(dialog).to_have_count(0)


# An answer for an older text is held back in the page until after the newer one is shown.
HELD_FIND = """() => {
  const real = window.fetch;
  window.fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (input instanceof Request && url.includes('/dsh/api/tools/find')) {
      const body = await input.clone().text();
      if (JSON.parse(body).args.query === 'hdl') {
        const answer = await real(new Request(input, {signal: null}));
        await new Promise(done => setTimeout(done, 1500));
        return answer;
      }
    }
    return real(input, init);
  };
}"""


def test_go_to_file_drops_a_stale_answer(page, lab):
    open_sidebar(page, lab)
    page.evaluate(HELD_FIND)
    page.keyboard.press("Control+Alt+P")
    box = palette(page).locator(".dsh-goto-input")
    box.fill("hdl")
    page.wait_for_timeout(300)  # its request is sent, its answer held
    box.fill("handling")
    status = palette(page).locator(".dsh-goto-status")
    expect()(status).to_have_text("1 file matches")
    page.wait_for_timeout(2000)  # the held answer for "hdl" arrives now, and is dropped
    expect()(status).to_have_text("1 file matches")
    paths = palette(page).locator('[role="option"]').evaluate_all("els => els.map(e => e.dataset.path)")
    assert paths == ["docs/handling.md"]
    page.keyboard.press("Escape")


def test_a_dialog_opened_over_go_to_file_keeps_the_keyboard(page, lab):
    """Go to File holds the focus against the page behind it, but not against a JupyterLab dialog
    opened over it: the dialog's button has the focus, Escape closes the dialog, and the palette's
    box has the focus again."""
    open_sidebar(page, lab)
    page.keyboard.press("Control+Alt+P")
    box = palette(page).locator(".dsh-goto-input")
    expect()(box).to_be_focused()
    box.evaluate(  # on the window, before the dialog's own listener on the document can stop the event
        "el => { window.dshBoxFocus = 0; window.addEventListener('focusin', e => { if (e.target === el) window.dshBoxFocus += 1; }, true); }"
    )
    # not awaited: the command's promise ends only when the dialog is closed
    page.evaluate("() => { window.jupyterapp.commands.execute('help:about'); }")
    dialog = page.locator(".jp-Dialog")
    expect()(dialog).to_be_visible()
    page.wait_for_timeout(500)  # time for the palette to take the focus back, if it still did
    assert page.evaluate("() => !!document.activeElement.closest('.jp-Dialog')"), page.evaluate(
        "() => document.activeElement.outerHTML.slice(0, 200)"
    )
    # the palette never pulled the focus back (the dialog's own hold would take it again: a tug of war)
    assert page.evaluate("() => window.dshBoxFocus") == 0
    page.keyboard.press("Escape")
    expect()(dialog).to_have_count(0)
    expect()(box).to_be_focused()
    page.keyboard.press("Escape")
    expect()(palette(page)).to_have_count(0)


def test_go_to_file_in_notebook_7_opens_the_file_in_a_tab_of_its_own(page, lab):
    page.goto(f"{lab.url}tree?token={lab.token}")
    expect()(page.locator(".jp-DirListing-item", has_text="workspace")).to_be_visible(timeout=90_000)
    page.locator(".jp-DirListing-item", has_text="workspace").click()
    page.keyboard.press("Control+Alt+P")
    box = palette(page).locator(".dsh-goto-input")
    expect()(box).to_be_focused()
    box.press_sequentially("wsp hdl", delay=60)
    expect()(palette(page).locator(".dsh-goto-status")).to_have_text("2 files match")
    page.keyboard.press("ArrowDown")
    with page.context.expect_page(timeout=90_000) as opened:
        page.keyboard.press("Enter")
    tab = opened.value
    try:
        tab.wait_for_url(re.compile(r"/edit/workspace/server/handlers\.py"))
    finally:
        tab.close()
