"""End to end: the sidebar's activity shows the files open in JupyterLab beside the agent's calls.

JupyterLab without real-time collaboration (the package's ``lab``), Chromium as the person: a file
opened in a tab shows under "Open in JupyterLab" within a poll, with a dot while the tab holds
unsaved typing, and leaves the list when its tab closes; an agent's calls over REST on the open
file show as calls on an open file (its edit taken and saved by the tab, its read of the unsaved
copy marked so), and a call on a file nobody has open is not marked. With collaboration on
(``collab_lab``) the same file is a shared document: listed as one, with no dot while the person
types, the agent's edit going through it, and gone from the list once its tab closed.
"""

from __future__ import annotations

import re
import time

import pytest

from .helpers import expect, screenshot
from .test_sidebar import call_row, open_activity

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NAME = "open-me.txt"
REL = f"activity/{NAME}"
EDITOR = ".jp-FileEditor:not(.lm-mod-hidden) .cm-content"
POLL = 8_000  # ms: the activity polls every 2 s


def test_activity_lists_the_open_files_and_marks_the_agents_calls_on_them(page, lab, screenshot_dir):
    (lab.root / "activity").mkdir(exist_ok=True)
    (lab.root / REL).write_text("first line\nsecond line\n")
    panel = open_activity(page, lab)
    listed = panel.locator(f'.dsh-sb-open-file[data-path="{REL}"]')
    expect()(listed).to_have_count(0)

    page.evaluate("p => window.jupyterapp.commands.execute('docmanager:open', {path: p})", REL)
    expect()(page.locator(EDITOR)).to_contain_text("second line", timeout=60_000)
    expect()(listed).to_be_visible(timeout=POLL)  # the page reported its tab; the poll brought it
    expect()(listed.locator(".dsh-sb-path")).to_have_text(REL)
    expect()(listed.locator(".dsh-sb-unsaved")).to_have_count(0)

    # the agent reads and edits the open file: the tab takes the change and saves it itself
    lab.tool("read", file_path=REL)
    edit = lab.tool("edit", file_path=REL, old_string="second line", new_string="second line, by the agent")
    assert not edit["isError"] and edit["value"]["open"] == "tab", edit["text"]
    assert (lab.root / REL).read_text() == "first line\nsecond line, by the agent\n"
    expect()(page.locator(EDITOR)).to_contain_text("by the agent")
    edited = call_row(panel, edit["callId"])
    expect()(edited).to_have_attribute("data-open", "tab", timeout=POLL)
    expect()(edited.locator(".dsh-sb-badge-open")).to_have_text("open")

    # the person types without saving: the list marks it, and the agent's read of it says so
    page.locator(EDITOR).click()
    page.keyboard.press("Control+End")
    page.keyboard.type("typed by the person")
    expect()(listed.locator(".dsh-sb-unsaved")).to_have_text("●", timeout=POLL)
    read = lab.tool("read", file_path=REL)
    assert read["value"]["open"] == "unsaved"
    unsaved = call_row(panel, read["callId"])
    expect()(unsaved.locator(".dsh-sb-badge-open")).to_have_text("open, unsaved", timeout=POLL)
    elsewhere = lab.tool("read", file_path="notes.txt")  # nobody has it open: no mark
    expect()(call_row(panel, elsewhere["callId"])).to_be_visible(timeout=POLL)
    expect()(call_row(panel, elsewhere["callId"]).locator(".dsh-sb-badge-open")).to_have_count(0)
    screenshot(page, panel, screenshot_dir / "sidebar-open.png")

    page.locator(EDITOR).click()
    page.keyboard.press("Control+s")  # saved: the dot goes
    expect()(listed.locator(".dsh-sb-unsaved")).to_have_count(0, timeout=POLL)
    assert (lab.root / REL).read_text().endswith("typed by the person")

    tab = page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text=NAME)
    tab.locator(".lm-TabBar-tabCloseIcon").click()
    expect()(tab).to_have_count(0)
    expect()(listed).to_have_count(0, timeout=POLL)  # the tab closed: the file left the list
    assert not page.locator(".jp-Dialog").count()  # no "File Changed" dialog at any point


def test_with_collaboration_a_shared_document_is_listed_and_the_agents_edit_goes_through_it(page, collab_lab):
    lab = collab_lab
    (lab.root / "shared.txt").write_text("alpha\nbeta\n")
    panel = open_activity(page, lab)
    listed = panel.locator('.dsh-sb-open-file[data-path="shared.txt"]')

    page.evaluate("p => window.jupyterapp.commands.execute('docmanager:open', {path: p})", "shared.txt")
    expect()(page.locator(EDITOR)).to_contain_text("beta", timeout=60_000)
    expect()(listed).to_have_attribute("data-shared", "true", timeout=POLL)  # its room has this page connected
    expect()(listed).to_have_attribute("title", "shared.txt: open in a shared document (1 connection)")
    page.locator(EDITOR).click()
    page.keyboard.press("Control+End")
    page.keyboard.type("gamma")  # typing in a shared document: saved by the room, never a dot
    lab.tool("read", file_path="shared.txt")
    edit = lab.tool("edit", file_path="shared.txt", old_string="alpha", new_string="ALPHA")
    assert not edit["isError"] and edit["value"]["open"] == "shared", edit["text"]
    expect()(page.locator(EDITOR)).to_contain_text("ALPHA")
    expect()(call_row(panel, edit["callId"]).locator(".dsh-sb-badge-open")).to_have_text("open", timeout=POLL)
    expect()(listed.locator(".dsh-sb-unsaved")).to_have_count(0)

    tab = page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text="shared.txt")
    # closed once the room has saved the typing and the edit (about a second after them): a tab
    # closed before asks "Save your work?", JupyterLab's own question, not this test's subject
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not {"ALPHA", "gamma"} <= set(
        re.findall(r"[A-Za-z]+", (lab.root / "shared.txt").read_text())
    ):
        time.sleep(0.1)
    expect()(tab).not_to_have_class(re.compile(r"\bjp-mod-dirty\b"), timeout=POLL)
    tab.locator(".lm-TabBar-tabCloseIcon").click()
    expect()(tab).to_have_count(0)
    expect()(listed).to_have_count(0, timeout=POLL)  # no page is connected to its room any more
