"""End to end: the JupyterLab extension's command, in JupyterLab and in Notebook 7, in a subfolder.

"Explore Folder with dsh" must open (or reuse) ``dsh-explorer.ipynb`` in the folder the file
browser shows, and that notebook's first cell must run and list that folder, in JupyterLab and
from Notebook 7's file tree, where the notebook opens in a new browser tab.
"""

from __future__ import annotations

import re

import pytest

from .helpers import ACTIVE, expect, labels, screenshot, wait_for_all_cells_run, wait_for_kernel_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LABEL = "Explore Folder with dsh"


def explorer_files(lab, folder: str) -> list[str]:
    status, listing = lab.request("GET", f"api/contents/{folder}")
    assert status == 200, listing
    return sorted(f["name"] for f in listing["content"] if f["name"].startswith("dsh-explorer"))


def run_from_palette(page) -> None:
    page.keyboard.press("Control+Shift+C")
    palette = page.locator(".jp-ModalCommandPalette, #command-palette").first
    palette.locator("input").fill(LABEL)
    item = palette.locator(".lm-CommandPalette-item", has_text=LABEL)
    expect()(item).to_have_count(1)
    return palette, item


def test_lab_command_opens_and_reuses_the_explorer_in_the_browsed_folder(page, lab, screenshot_dir):
    page.goto(f"{lab.url}lab/tree/src?reset&token={lab.token}")
    expect()(page.locator(".jp-BreadCrumbs")).to_contain_text("src", timeout=90_000)
    expect()(page.locator(".jp-LauncherCard", has_text=LABEL)).to_be_visible(timeout=90_000)
    palette, item = run_from_palette(page)
    headers = [h.strip().lower() for h in palette.locator(".lm-CommandPalette-header").all_inner_texts()]
    assert headers == ["dsh-jupyter"], headers
    assert not page.locator(".lm-CommandPalette-item", has_text=re.compile("Workspace", re.I)).count()
    screenshot(page, palette, screenshot_dir / "palette.png")
    item.click()

    nb = page.locator(f"{ACTIVE}")
    expect()(page.locator(".lm-TabBar-tab.lm-mod-current", has_text="dsh-explorer.ipynb")).to_be_visible(timeout=90_000)
    editor = nb.locator(".jp-Cell").first.locator(".jp-InputArea-editor")
    expect()(editor).to_contain_text("%load_ext dsh_jupyter")
    expect()(editor).to_contain_text("%dsh list src")
    w = nb.locator(".jp-Cell").first.locator(".dsh").first
    expect()(w.locator(".dsh-subject").first).to_have_text("src", timeout=90_000)
    assert {"app/", "lib/", "dsh-explorer.ipynb"} <= set(labels(w))  # src/, with the new notebook
    assert explorer_files(lab, "src") == ["dsh-explorer.ipynb"]

    wait_for_kernel_idle(page)
    _, item = run_from_palette(page)  # again: the same notebook, its cell run again
    item.click()
    expect()(page.locator(".lm-TabBar-tab", has_text="dsh-explorer.ipynb")).to_have_count(1)
    wait_for_all_cells_run(page)
    assert explorer_files(lab, "src") == ["dsh-explorer.ipynb"]
    expect()(nb.locator(".jp-Cell").first.locator(".dsh-subject").first).to_have_text("src")


def test_notebook7_command_from_the_tree_opens_a_notebook_whose_cell_runs(page, lab):
    page.goto(f"{lab.url}tree/docs?token={lab.token}")
    expect()(page.locator(".jp-DirListing-item", has_text="guide.md")).to_be_visible(timeout=90_000)
    _, item = run_from_palette(page)
    with page.context.expect_page(timeout=90_000) as opened:
        item.click()
    tab = opened.value
    try:
        tab.set_default_timeout(90_000)
        tab.wait_for_url(re.compile(r"/notebooks/docs/dsh-explorer\.ipynb"))
        w = tab.locator(".jp-Cell").first.locator(".dsh").first
        expect()(w.locator(".dsh-subject").first).to_have_text("docs", timeout=120_000)
        assert {"guide.md", "dsh-explorer.ipynb"} <= set(labels(w))
        expect()(tab.locator(".jp-Cell").first.locator(".jp-InputArea-editor")).to_contain_text("%dsh list docs")
        assert explorer_files(lab, "docs") == ["dsh-explorer.ipynb"]
    finally:
        tab.close()
