"""End to end: the Workspace panel as a whole, on a JupyterLab of its own that starts with no session.

- Activity follows the sessions that exist: with none, it asks for no call log (no 404 in the
  server's log or the page's requests) and says so; an agent's first call shows its session and
  calls with no click; the newest active session is shown until the person picks one from the
  list, which then stays; the panel's own session is listed apart, after the agents'.
- Where the panel is and what it is: right under the file browser in the left area, with
  JupyterLab's search icon, a labelled region whose tabs follow the ARIA tabs pattern; the
  command `dsh-jupyter:open-panel` shows it, from notebook 01's link too.
- The explorer's words and controls: counts with separators and plurals, the order named as it
  is (reversed included), the "Follow the file browser" checkbox beside its label, the order
  control on a row of its own, rows one tab stop with the arrow keys between them.

Screenshots: docs/screenshots/sidebar-sessions.png and sidebar-explorer.png.
"""

from __future__ import annotations

import json
import re

import pytest
from trees import build_tree  # tests/trees.py

from .conftest import REPO, start_lab
from .helpers import expect, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PANEL = '[id="dsh-jupyter:sidebar"]'
TAB = '.jp-SideBar .lm-TabBar-tab[data-id="dsh-jupyter:sidebar"]'
POLL = 8_000  # ms: the activity polls every 2 s
MANY = 1_500
NO_SESSIONS = "No agent sessions yet: the first call over REST or MCP makes one."


def notebook_with(markdown: str) -> str:
    nb = {
        "cells": [{"cell_type": "markdown", "id": "intro", "metadata": {}, "source": markdown}],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(nb)


@pytest.fixture(scope="module")
def fresh_lab(tmp_path_factory, chromium):
    """A lab over a small root, no session in its state: one folder of 1 file, one of 1,500."""
    tmp = tmp_path_factory.mktemp("fresh-lab")
    first_cell = json.loads((REPO / "notebooks" / "01-seed-failure.ipynb").read_text())["cells"][0]
    tree = {
        "one": {"only.txt": "the only file\n"},
        "many": {f"f-{i:04d}.txt": f"file {i}\n" for i in range(1, MANY + 1)},
        "README.md": "# a fresh workspace\nTODO: nothing yet\n",
        "intro.ipynb": notebook_with("".join(first_cell["source"])),
    }
    server = start_lab(tmp, build_tree(tmp / "root", tree))
    yield server
    server.stop()


def open_panel(page, lab):
    page.goto(f"{lab.url}lab?reset&token={lab.token}")
    page.locator(TAB).wait_for(timeout=90_000)
    page.evaluate("() => window.jupyterapp.restored")
    expect()(page.locator(".jp-Launcher")).to_be_visible(timeout=90_000)
    page.locator(TAB).click()
    panel = page.locator(PANEL)
    expect()(panel).to_be_visible()
    return panel


def dsh_404s_in_log(lab) -> list[str]:
    return [line for line in lab.log.read_text(errors="replace").splitlines() if re.search(r"404 \w+ /dsh/", line)]


def options(picker) -> list[tuple[str, str]]:
    """The picker's options as (group label or '', value), in order."""
    return [
        tuple(o)
        for o in picker.evaluate(
            "el => Array.from(el.options).map(o => [o.parentElement.tagName === 'OPTGROUP' ? o.parentElement.label : '', o.value])"
        )
    ]


def test_activity_follows_the_sessions_that_exist(page, fresh_lab, screenshot_dir):
    lab = fresh_lab
    missing = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 and "/dsh/" in r.url else None)
    panel = open_panel(page, lab)
    panel.locator(".dsh-sb-tab", has_text="Activity").click()
    status = panel.locator(".dsh-sb-activity .dsh-sb-status")
    expect()(status).to_have_text(NO_SESSIONS)
    picker = panel.locator(".dsh-sb-session")
    page.wait_for_timeout(5_000)  # two polls and more: none of them asks for a session that does not exist
    assert missing == []
    assert dsh_404s_in_log(lab) == []
    assert options(picker) == [("", "")]  # the placeholder only
    expect()(picker.locator("option")).to_have_text("No agent sessions yet")

    first = lab.tool("glob", session="agent-one", pattern="*.md")  # an agent's first call makes its session
    expect()(picker).to_have_value("agent-one", timeout=POLL)  # shown with no click
    row = panel.locator(f'.dsh-sb-call[data-call-id="{first["callId"]}"]')
    expect()(row).to_be_visible(timeout=POLL)
    expect()(status).to_have_text("1 call in session agent-one")

    second = lab.tool("list", session="agent-two")  # a newer session becomes active: it is followed
    expect()(picker).to_have_value("agent-two", timeout=POLL)
    expect()(panel.locator(f'.dsh-sb-call[data-call-id="{second["callId"]}"]')).to_be_visible(timeout=POLL)
    code, _ = lab.request("POST", "dsh/api/tools/list", {"session": "jupyterlab-sidebar", "args": {}})
    assert code == 200  # the panel's own session: listed apart, never followed
    picker.focus()  # the list is read again on focus
    expect()(picker.locator("optgroup")).to_have_attribute("label", "Internal: the panel's own and explorer consoles")
    assert options(picker) == [
        ("", "agent-two"),
        ("", "agent-one"),
        ("Internal: the panel's own and explorer consoles", "jupyterlab-sidebar"),
    ]
    expect()(picker).to_have_value("agent-two")

    picker.select_option("agent-one")  # the person picks: it stays, whoever acts next
    expect()(status).to_have_text("1 call in session agent-one", timeout=POLL)
    later = lab.tool("grep", session="agent-one", pattern="TODO")
    expect()(panel.locator(f'.dsh-sb-call[data-call-id="{later["callId"]}"]')).to_be_visible(timeout=POLL)
    expect()(status).to_have_text("2 calls in session agent-one")
    heads = panel.locator(".dsh-sb-call-head")  # the calls are one tab stop, the arrows move between them
    assert heads.evaluate_all("els => els.map(e => e.tabIndex)") == [0, -1]
    heads.first.focus()
    page.keyboard.press("ArrowDown")
    expect()(heads.nth(1)).to_be_focused()
    assert heads.evaluate_all("els => els.map(e => e.tabIndex)") == [-1, 0]
    lab.tool("list", session="agent-two")
    picker.evaluate("el => el.blur()")  # the list is redrawn when due, not while the picker has the focus
    expect()(picker.locator("option").first).to_have_attribute("value", "agent-two", timeout=15_000)
    expect()(picker).to_have_value("agent-one")  # picked: not moved to the newer one
    panel.locator(f'.dsh-sb-call[data-call-id="{later["callId"]}"] .dsh-sb-call-head').click()
    screenshot(page, panel, screenshot_dir / "sidebar-sessions.png")

    code, _ = lab.request("DELETE", "dsh/api/sessions/agent-one")  # the picked session goes away
    assert code == 204
    expect()(picker).to_have_value("agent-two", timeout=POLL)
    # at most the poll in flight as it went, of that session's calls: never a session that never existed
    assert all("/dsh/api/sessions/agent-one/calls" in line for line in dsh_404s_in_log(lab)), dsh_404s_in_log(lab)
    assert all("/dsh/api/sessions/agent-one/calls" in url for url in missing), missing


def test_panel_sits_under_the_file_browser_and_is_a_labelled_region_of_tabs(page, fresh_lab):
    panel = open_panel(page, fresh_lab)
    ids = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab").evaluate_all("els => els.map(e => e.dataset.id)")
    assert ids[:2] == ["filebrowser", "dsh-jupyter:sidebar"], ids
    icon = page.locator(f"{TAB} svg")
    expect()(icon).to_have_attribute("data-icon", "ui-components:search")

    expect()(panel).to_have_attribute("role", "region")
    expect()(panel).to_have_attribute("aria-label", "Workspace: search, agent activity and explorer")
    expect()(panel.locator('[role="tablist"]')).to_have_attribute("aria-label", "Workspace sections")
    tabs = panel.locator('[role="tab"]')
    expect()(tabs).to_have_count(3)
    described = tabs.evaluate_all(
        "els => els.map(t => [t.textContent, t.id, t.getAttribute('aria-controls'), t.getAttribute('aria-selected'), t.tabIndex])"
    )
    assert described == [
        ["Search", "dsh-sb-tab-search", "dsh-sb-tabpanel-search", "true", 0],
        ["Activity", "dsh-sb-tab-activity", "dsh-sb-tabpanel-activity", "false", -1],
        ["Explorer", "dsh-sb-tab-explorer", "dsh-sb-tabpanel-explorer", "false", -1],
    ]
    shown = panel.locator('[role="tabpanel"]')
    expect()(shown).to_have_count(1)
    expect()(shown).to_have_attribute("id", "dsh-sb-tabpanel-search")
    expect()(shown).to_have_attribute("aria-labelledby", "dsh-sb-tab-search")

    tabs.first.focus()
    page.keyboard.press("ArrowRight")  # the tabs pattern: arrows move to the next tab and show it
    expect()(tabs.nth(1)).to_be_focused()
    expect()(tabs.nth(1)).to_have_attribute("aria-selected", "true")
    expect()(shown).to_have_attribute("id", "dsh-sb-tabpanel-activity")
    page.keyboard.press("End")
    expect()(shown).to_have_attribute("id", "dsh-sb-tabpanel-explorer")
    page.keyboard.press("ArrowRight")  # wraps round
    expect()(shown).to_have_attribute("id", "dsh-sb-tabpanel-search")
    expect()(tabs.first).to_be_focused()


def test_notebook_01s_link_opens_the_panel(page, fresh_lab):
    lab = fresh_lab
    page.goto(f"{lab.url}lab/tree/intro.ipynb?reset&token={lab.token}")
    page.locator(TAB).wait_for(timeout=90_000)
    page.evaluate("() => window.jupyterapp.restored")
    page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab[data-id='filebrowser']").click()  # the panel is not shown
    expect()(page.locator(PANEL)).to_be_hidden()
    link = page.locator(".jp-MarkdownOutput button", has_text="Open the Workspace panel")
    expect()(link).to_be_visible(timeout=60_000)
    assert link.get_attribute("data-commandlinker-command") == "dsh-jupyter:open-panel"
    link.click()
    # a link in a notebook that is not trusted runs its command once the person says so
    dialog = page.locator(".jp-Dialog")
    expect()(dialog).to_contain_text("Run Command?")
    expect()(dialog).to_contain_text("Open the Workspace Panel (dsh)")
    dialog.locator("button", has_text=re.compile(r"^Run( Once)?$")).click()
    expect()(page.locator(PANEL)).to_be_visible()
    expect()(page.locator(TAB)).to_have_class(re.compile(r"\blm-mod-current\b"))


def explorer_status(panel):
    return panel.locator(".dsh-sb-explorer .dsh-sb-status")


def settled(panel) -> None:
    expect()(panel.locator(".dsh-sb-explorer")).not_to_have_attribute("aria-busy", "true", timeout=30_000)


def test_explorer_words_counts_and_controls(page, fresh_lab, screenshot_dir):
    panel = open_panel(page, fresh_lab)
    panel.locator(".dsh-sb-tab", has_text="Explorer").click()
    settled(panel)
    status = explorer_status(panel)
    expect()(status).to_have_text("4 entries: 2 folders, 2 files")
    panel.locator('.dsh-sb-entry[data-name="one"]').click()
    settled(panel)
    expect()(status).to_have_text("1 entry: 1 file")
    panel.locator('.dsh-sb-crumb[data-path=""]').click()
    settled(panel)
    panel.locator('.dsh-sb-entry[data-name="many"]').click()
    settled(panel)
    expect()(status).to_have_text("1,500 entries: 1,500 files")
    first = panel.locator(".dsh-sb-entry").first
    expect()(first).to_have_attribute("data-name", "f-0001.txt")

    panel.locator(".dsh-sb-direction").click()  # the model's order, reversed: and said so
    settled(panel)
    expect()(status).to_have_text("entries 1-200 of 1,500, by the model's order, reversed")
    expect()(first).to_have_attribute("data-name", "f-1500.txt")
    expect()(panel.locator(".dsh-sb-direction")).to_have_attribute("aria-pressed", "true")
    panel.locator(".dsh-sb-sort").select_option("name")
    settled(panel)
    expect()(status).to_have_text("entries 1-200 of 1,500, by name, descending")
    panel.locator(".dsh-sb-filter").fill("f-150")
    expect()(status).to_have_text('entry 1 of 1 matching "f-150", by name, descending', timeout=10_000)
    panel.locator(".dsh-sb-filter").fill("")
    expect()(status).to_have_text("entries 1-200 of 1,500, by name, descending", timeout=10_000)

    # the checkbox sits beside its own label, on one line; the controls are not squeezed
    box = panel.locator(".dsh-sb-follow").bounding_box()
    label = panel.locator("label.dsh-sb-follow-label").bounding_box()
    assert 0 <= label["x"] - (box["x"] + box["width"]) <= 10, (box, label)
    assert abs((label["y"] + label["height"] / 2) - (box["y"] + box["height"] / 2)) <= 3, (box, label)
    assert panel.locator("label.dsh-sb-follow-label").get_attribute("for") == "dsh-sb-follow"
    width = panel.locator(".dsh-sb-explorer").bounding_box()["width"]
    assert panel.locator(".dsh-sb-filter").bounding_box()["width"] >= width - 4  # a row of its own
    assert panel.locator(".dsh-sb-sort").bounding_box()["width"] >= 100

    # rows are one tab stop: the arrows move between them, Tab leaves the list for the pager
    rows = panel.locator(".dsh-sb-entry")
    assert rows.evaluate_all("els => els.map(e => e.tabIndex).filter(t => t === 0).length") == 1
    rows.first.focus()
    page.keyboard.press("ArrowDown")
    expect()(rows.nth(1)).to_be_focused()
    page.keyboard.press("End")
    expect()(rows.last).to_be_focused()
    page.keyboard.press("Tab")
    expect()(panel.locator(".dsh-sb-explorer .dsh-sb-next")).to_be_focused()
    panel.locator(".dsh-sb-sort").select_option("model")
    panel.locator(".dsh-sb-direction").click()
    settled(panel)
    expect()(status).to_have_text("1,500 entries: 1,500 files")
    screenshot(page, panel, screenshot_dir / "sidebar-explorer.png")
