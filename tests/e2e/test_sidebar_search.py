"""End to end: what the Workspace panel's search says and how it fits, in Chromium.

A lab of its own over a generated tree, with rg's raw output capped at 60,000 bytes
(``raw_output_max_bytes``) so that one search (``hit`` in 300 generated files) is stopped early: the
headline of each state (complete, a page of a larger result, partial, stopped by the person,
failed), pages of a partial result in path order with the same totals, the ways to go on, the
``.gitignore`` toggle (on for a person), the notebook scope, the first-run hint, paths shortened in
the middle and lines cut around their match in a narrow panel, a match centred in the editor, the
ARIA names, focusable file rows and the skip to the pager. The time to the first rows is printed
beside the same REST call's.
"""

from __future__ import annotations

import re
import time

import nbformat
import pytest
from servers import JupyterProcess

from .conftest import TOKEN
from .helpers import expect, screenshot
from .test_sidebar import PANEL, group, open_sidebar, search, set_toggle, settle, status

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RAW_CAP = 60_000
GEN_FILES = 300
HITS = 30  # matching lines per generated file
DEEP = "a-rather-long-folder-name/with-another-long-folder/and-one-more-level/target_file_name.py"
LONG_LINE = "x = '" + "y" * 300 + " farmatch " + "z" * 300 + "'\n"


def build(root) -> None:
    files = {
        **{f"gen/file-{i:05d}.txt": f"hit number {i} in a generated file\n" * HITS for i in range(GEN_FILES)},
        "src/app.py": "# TODO one\n",
        "src/util.py": "# TODO two\n# TODO three\n",
        "logs/lines.txt": "".join(f"entry {k}\n" for k in range(1, 301)),
        ".gitignore": "node_modules/\n",
        "node_modules/pkg/index.js": "var needle = 'in a module';\n",
        "lib/needle.py": "needle = 'here'\n",
        DEEP: LONG_LINE,
        "long/centre.py": "".join("centremark = 1\n" if k == 200 else f"line_{k} = {k}\n" for k in range(1, 401)),
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print('sourcepart')")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="an outputneedle printed\n")]
    nb.cells = [cell]
    nbformat.write(nb, root / "outputs.ipynb")


@pytest.fixture(scope="module")
def lab(tmp_path_factory, chromium):
    tmp = tmp_path_factory.mktemp("search-lab")
    root = tmp / "root"
    build(root)
    home = tmp / "jupyter"
    settings = home / "lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    server = JupyterProcess.start(
        home,
        root,
        app="lab",
        token=TOKEN,
        extra_args=[
            "--LabApp.expose_app_in_browser=True",
            "--YDocExtension.disable_rtc=True",
            f"--DshJupyter.raw_output_max_bytes={RAW_CAP}",
        ],
    )
    yield server
    server.stop()


def paths(panel) -> list[str]:
    return panel.locator(".dsh-sb-file").evaluate_all("els => els.map(e => e.dataset.path)")


PARTIAL = re.compile(
    r"^at least ([\d,]+) matches in ([\d,]+)\+ files — stopped at the output limit \(60,000 bytes of matches\)$"
)


def test_the_headline_says_what_the_counts_are_in_every_state(page, lab, screenshot_dir):
    panel = open_sidebar(page, lab)
    search(panel, "TODO")  # complete
    expect()(status(panel)).to_have_text("3 matches in 2 files")
    expect()(panel.locator(".dsh-sb-actions")).to_be_hidden()

    search(panel, "entry")  # a page of a larger result
    expect()(status(panel)).to_have_text("300 matches in 1 file — showing 1–250")

    search(panel, "hit number")  # stopped at the output limit: at least, with the limit and ways on
    expect()(status(panel)).to_have_text(PARTIAL)
    first = status(panel).inner_text()
    total, files = (int(n.replace(",", "")) for n in PARTIAL.match(first).groups())
    assert 0 < files < GEN_FILES and total == HITS * files
    # in path order, from the first file on: none skipped (rg's threads no longer pick the files)
    shown = paths(panel)
    assert shown == [f"gen/file-{i:05d}.txt" for i in range(len(shown))]
    expect()(panel.locator(".dsh-sb-actions")).to_contain_text("Other files may match too.")
    expect()(panel.locator(".dsh-sb-narrow")).to_have_text("Narrow the search")
    expect()(panel.locator(".dsh-sb-count-all")).to_have_text("Count in every file")
    screenshot(page, panel, screenshot_dir / "sidebar-partial.png")
    panel.locator(".dsh-sb-next").click()  # page 2: the same totals, the files after page 1's
    settle(panel)
    expect()(status(panel)).to_have_text(first)
    second = paths(panel)
    assert second[0] in (shown[-1], f"gen/file-{len(shown):05d}.txt")
    panel.locator(".dsh-sb-narrow").click()
    expect()(panel.locator(".dsh-sb-include")).to_be_focused()
    panel.locator(".dsh-sb-count-all").click()  # every file counted: the whole result
    settle(panel)
    expect()(panel.locator(".dsh-sb-mode")).to_have_value("files_with_matches")
    expect()(status(panel)).to_have_text(f"{GEN_FILES * HITS:,} matches in {GEN_FILES} files — showing files 1–250")
    panel.locator(".dsh-sb-mode").select_option("content")
    settle(panel)

    set_toggle(panel, "regex", True)  # failed: the tool's error under the headline
    search(panel, "(")
    expect()(status(panel)).to_have_text("Search failed")
    error = panel.locator(".dsh-sb-error")
    expect()(error).to_contain_text("Error: invalid pattern: regex parse error:")
    # rg's diagram keeps its lines, in the code font
    assert (
        error.evaluate("el => el.innerText")
        == "Error: invalid pattern: regex parse error:\n    (\nerror: unclosed group"
    )
    assert "monospace" in error.evaluate("el => getComputedStyle(el).fontFamily")
    set_toggle(panel, "regex", False)


# The tree is searched in milliseconds; a search the person stops is made by holding its answer
# back in the page, and the server's progress for it is answered in the page in the server's own
# words (the real reports are tested in tests/server/test_server_progress.py).
HELD = """() => {
  const real = window.fetch;
  window.fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url.includes('/dsh/api/progress/sidebar-') && window.__holding) {
      return new Response(JSON.stringify({running: true, progress: '23,730 matches in 5,120 files so far'}),
                          {headers: {'Content-Type': 'application/json'}});
    }
    if (input instanceof Request && url.includes('/dsh/api/tools/grep')) {
      const body = await input.clone().text();
      if (body.includes('"pattern":"held"')) {
        window.__holding = true;
        await new Promise(done => setTimeout(done, 4000));
        window.__holding = false;
        return real(new Request(input, {signal: null}));
      }
    }
    return real(input, init);
  };
}"""


def test_a_stopped_search_says_how_far_it_got_and_the_status_is_never_blank(page, lab):
    panel = open_sidebar(page, lab)
    page.evaluate(HELD)
    # the keystroke itself says a search is coming, before any answer
    said = page.evaluate(
        """() => {
            const input = document.querySelector('.dsh-sb-pattern');
            input.value = 'held';
            input.dispatchEvent(new Event('input'));
            return document.querySelector('.dsh-sb-status').textContent;
        }"""
    )
    assert said == "Searching…"
    expect()(status(panel)).to_have_text("Searching… 23,730 matches in 5,120 files so far", timeout=3_000)
    expect()(panel.locator("progress.dsh-sb-progress")).to_be_visible()  # a bar while it runs
    panel.locator(".dsh-sb-stop").click()
    expect()(panel.locator("progress.dsh-sb-progress")).to_be_hidden()
    expect()(status(panel)).to_have_text("Stopped after 23,730 matches in 5,120 files")
    expect()(panel.locator(".dsh-sb-search")).not_to_have_attribute("aria-busy", "true")


# The server's early rows come in its own form (tests/server/test_server_progress.py shows a real
# search giving them); here the answer is held back in the page and the progress answered in the
# page, to see what the panel does with them: the first files shown in path order at once, the
# status line counting, and the answer's page replacing them.
EARLY = """() => {
  const real = window.fetch;
  window.fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url.includes('/dsh/api/progress/sidebar-') && window.__holding) {
      const rows = [
        {path: 'src/util.py', line: 1, text: '# TODO two'},
        {path: 'src/app.py', line: 1, text: '# TODO one'},
      ];
      return new Response(JSON.stringify({running: true, progress: '2 matches in 2 files so far', rows}),
                          {headers: {'Content-Type': 'application/json'}});
    }
    if (input instanceof Request && url.includes('/dsh/api/tools/grep')) {
      const body = await input.clone().text();
      if (body.includes('"pattern":"TODO"')) {
        window.__holding = true;
        await new Promise(done => setTimeout(done, 2500));
        window.__holding = false;
      }
    }
    return real(input, init);
  };
}"""


def test_a_searchs_first_rows_show_while_it_runs_then_its_page(page, lab):
    panel = open_sidebar(page, lab)
    page.evaluate(EARLY)
    panel.locator(".dsh-sb-pattern").fill("TODO")
    expect()(status(panel)).to_have_text("Searching… 2 matches in 2 files so far", timeout=2_000)
    expect()(panel.locator(".dsh-sb-results.dsh-sb-early")).to_be_visible()
    assert paths(panel) == ["src/app.py", "src/util.py"]  # in path order, as the page will be
    expect()(group(panel, "src/app.py").locator("mark")).to_have_text("TODO")
    settle(panel)
    expect()(status(panel)).to_have_text("3 matches in 2 files")
    expect()(panel.locator(".dsh-sb-results.dsh-sb-early")).to_have_count(0)
    expect()(group(panel, "src/util.py").locator(".dsh-sb-match")).to_have_count(2)


def test_gitignore_toggle_is_on_for_a_person_and_said_under_the_headline(page, lab):
    panel = open_sidebar(page, lab)
    toggle = panel.locator(".dsh-sb-gitignore")
    expect()(toggle).to_have_attribute("aria-pressed", "true")
    search(panel, "needle")
    expect()(status(panel)).to_have_text("1 match in 1 file")
    expect()(panel.locator(".dsh-sb-note")).to_have_text("Files named by .gitignore or .ignore rules were left out.")
    assert paths(panel) == ["lib/needle.py"]
    set_toggle(panel, "gitignore", False)
    expect()(status(panel)).to_have_text("2 matches in 2 files")
    expect()(panel.locator(".dsh-sb-note")).to_be_hidden()
    assert paths(panel) == ["lib/needle.py", "node_modules/pkg/index.js"]


def test_notebook_scope_searches_outputs_when_asked(page, lab):
    panel = open_sidebar(page, lab)
    search(panel, "outputneedle")
    expect()(status(panel)).to_have_text("No matches")
    panel.locator(".dsh-sb-scope").select_option("outputs")
    settle(panel)
    expect()(status(panel)).to_have_text("1 match in 1 file")
    expect()(group(panel, "outputs.ipynb").locator(".dsh-sb-line")).to_have_text("Cell 1, output 1, line 1")
    search(panel, "sourcepart")
    expect()(status(panel)).to_have_text("No matches")
    panel.locator(".dsh-sb-scope").select_option("all")
    settle(panel)
    expect()(status(panel)).to_have_text("1 match in 1 file")
    expect()(group(panel, "outputs.ipynb").locator(".dsh-sb-line")).to_have_text("Cell 1, line 1")


def test_the_empty_panel_says_what_to_type_and_the_controls_are_named(page, lab):
    panel = open_sidebar(page, lab)
    expect()(panel.locator(".dsh-sb-hint p")).to_have_text(
        [
            "Type a regular expression or plain text to search the lines of every file (ripgrep).",
            "Aa: match case · ab: whole word · .*: regular expression.",
            ".gitignore: leave out the files it names (on).",
            "Include / exclude take globs; the last list picks what a notebook search reads.",
            "Enter or a click on a row opens the file at the match.",
        ]
    )
    expect()(status(panel)).to_have_text("")
    names = panel.locator(".dsh-sb-search input, .dsh-sb-search select, .dsh-sb-search button.dsh-sb-toggle")
    labels = names.evaluate_all("els => els.map(e => e.getAttribute('aria-label'))")
    assert labels == [
        "Toggle Replace",
        "Search pattern",
        "Match case",
        "Match whole word",
        "Use regular expression",
        "Replace with",
        "Files to include",
        "Files to exclude",
        "Result mode",
        "Use .gitignore: leave out the files named by the workspace's .gitignore and .ignore files",
        "Notebook cells searched",
    ]
    expect()(panel.locator(".dsh-sb-search")).to_have_attribute("role", "search")
    expect()(panel.locator(".dsh-sb-include")).to_have_attribute("title", "Files to include: one glob, e.g. *.{py,md}")
    search(panel, "TODO")
    expect()(panel.locator(".dsh-sb-hint")).to_have_count(0)


def test_file_rows_are_focusable_and_the_pager_is_one_key_away(page, lab):
    panel = open_sidebar(page, lab)
    search(panel, "TODO")
    head = group(panel, "src/util.py").locator(".dsh-sb-file-head")
    expect()(head).to_have_attribute("tabindex", "0")
    expect()(head).to_have_attribute("aria-label", "src/util.py, 2 matches on this page")
    head.focus()
    page.keyboard.press("Enter")
    expect()(page.locator(".lm-TabBar-tab.lm-mod-current", has_text="util.py")).to_be_visible()

    search(panel, "entry")  # 250 rows: the pager is Alt+End away, or the skip link's Enter
    panel.locator(".dsh-sb-pattern").focus()
    page.keyboard.press("Alt+End")
    expect()(panel.locator(".dsh-sb-next")).to_be_focused()
    skip = panel.locator(".dsh-sb-skip")
    expect()(skip).to_have_text("Skip to the pager")
    skip.focus()
    page.keyboard.press("Enter")
    expect()(panel.locator(".dsh-sb-next")).to_be_focused()


def test_a_narrow_panel_keeps_file_names_and_matches_in_view(page, lab):
    panel = open_sidebar(page, lab)
    search(panel, "farmatch")
    row = group(panel, DEEP)
    fit = row.evaluate(
        """el => {
            const name = el.querySelector('.dsh-sb-filename'), dir = el.querySelector('.dsh-sb-folders');
            const text = el.querySelector('.dsh-sb-text').getBoundingClientRect();
            const mark = el.querySelector('.dsh-sb-text mark').getBoundingClientRect();
            return {
                name: name.scrollWidth <= name.clientWidth, dirCut: dir.scrollWidth > dir.clientWidth,
                markIn: mark.left >= text.left && mark.right <= text.right + 0.5,
                panel: el.getBoundingClientRect().width,
            };
        }"""
    )
    assert fit["panel"] < 400, fit  # the left area as JupyterLab opens it
    assert fit == {**fit, "name": True, "dirCut": True, "markIn": True}, fit
    expect()(row.locator(".dsh-sb-filename")).to_have_text("target_file_name.py")
    expect()(row.locator(".dsh-sb-file-head")).to_have_attribute("title", DEEP)
    text = row.locator(".dsh-sb-text").inner_text()
    assert text.startswith("…") and text.endswith("…") and "farmatch" in text, text


def test_a_match_opened_from_the_panel_is_centred_in_the_editor(page, lab):
    panel = open_sidebar(page, lab)
    search(panel, "centremark")
    panel.locator(".dsh-sb-match").first.click()
    expect()(page.locator("#jp-main-statusbar")).to_contain_text("Ln 200, Col 11")
    page.wait_for_timeout(500)
    where = page.evaluate(
        """() => {
            const editor = window.jupyterapp.shell.currentWidget.content.editor.editor;
            const box = editor.scrollDOM.getBoundingClientRect();
            const line = editor.coordsAtPos(editor.state.selection.main.head);
            return {middle: (box.top + box.bottom) / 2, line: (line.top + line.bottom) / 2, height: box.height};
        }"""
    )
    assert abs(where["line"] - where["middle"]) < where["height"] * 0.1, where


def test_first_rows_beside_the_same_rest_call(page, lab):
    """Prints the time from the last keystroke to the first rows beside the same search over REST."""
    panel = open_sidebar(page, lab)
    started = time.monotonic()
    code, _ = lab.request(
        "POST",
        "dsh/api/tools/grep",
        {
            "session": "timing",
            "args": {"pattern": "hit", "ignore_case": True, "offset": 1},
            "respect_ignore_files": True,
        },
    )
    rest_ms = (time.monotonic() - started) * 1000
    assert code == 200
    shown_ms = page.evaluate(
        """() => new Promise(done => {
            const panel = document.querySelector('.dsh-sb-search');
            const input = panel.querySelector('.dsh-sb-pattern');
            const start = performance.now();
            const seen = new MutationObserver(() => {
                if (panel.querySelector('.dsh-sb-file')) { seen.disconnect(); done(performance.now() - start); }
            });
            seen.observe(panel, {childList: true, subtree: true});
            input.value = 'hit';
            input.dispatchEvent(new Event('input'));
        })"""
    )
    print(
        f"\nfirst rows {shown_ms:.0f} ms after the last keystroke (200 ms of it the typing pause); "
        f"the same grep over REST {rest_ms:.0f} ms"
    )
    expect()(panel.locator(".dsh-sb-file").first).to_be_visible()
    assert PANEL
