"""End to end: a file opened from the Workspace panel is left as it was, with collaboration on.

The panel opens files three ways: a search hit (a match, a file's name), the "Open" button of an
agent's call in the activity, and a row of the explorer; a notebook's ``%dsh grep`` widget opens a
match in JupyterLab's editor a fourth way. With jupyter-collaboration every one of
them makes the file a shared document whose room saves it, and plain jupyter-collaboration wrote
the file back: a new modification time, and a CRLF file made LF. Here a person opens a CRLF Python
file, an LF text file and a notebook from each view (every modification time set to 2001 first, so
no write can hide in the clock's resolution), waits past the rooms' saves, closes everything, and
every file keeps its bytes and its modification time. A person's own change is still saved: a line
typed into the CRLF file is written with CRLF, a notebook cell typed into is saved by the room.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import nbformat
import pytest
from nbformat import v4

from .helpers import expect, run_notebook, wait_for_kernel_idle, widget
from .test_opening_files import EDITOR, NOTEBOOK_CELL, OLD_NS, close_all, tree, type_a_line_and_save
from .test_sidebar import call_row, entry_names, explorer_settled, open_activity, open_explorer, open_sidebar, search

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CURRENT_TAB = ".lm-TabBar-tab.lm-mod-current"
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def seed(root: Path, folder_name: str, token: str) -> dict[str, Path]:
    """A CRLF .py, an LF .txt and a notebook in ``root/folder_name``, each holding ``token``."""
    folder = root / folder_name
    folder.mkdir()
    files = {"crlf": folder / "crlf.py", "lf": folder / "plain.txt", "nb": folder / "note.ipynb"}
    files["crlf"].write_bytes(f"a = 1\r\n{token} = 2\r\n".encode())
    files["lf"].write_bytes(f"first line\n{token} here\n".encode())
    nb = v4.new_notebook(
        metadata={"kernelspec": KERNELSPEC, "language_info": {"name": "python"}},
        cells=[v4.new_markdown_cell("# Looked at", id="title"), v4.new_code_cell(f"{token} = 1", id="code")],
    )
    nbformat.write(nb, str(files["nb"]))
    age(files)
    return files


def age(files: dict[str, Path]) -> None:
    for path in files.values():
        os.utime(path, ns=(OLD_NS, OLD_NS))


def current_tab(page, name: str) -> None:
    expect()(page.locator(CURRENT_TAB, has_text=name)).to_be_visible(timeout=60_000)


def shown_as_text(page, text: str) -> None:
    expect()(page.locator(EDITOR)).to_contain_text(text, timeout=60_000)


def shown_as_notebook(page, text: str) -> None:
    """The notebook opened in the notebook view (not as JSON), its kernel started and idle."""
    expect()(page.locator(NOTEBOOK_CELL).nth(1)).to_contain_text(text, timeout=60_000)
    wait_for_kernel_idle(page)


def left_as_they_were(page, lab, folder: Path, before: dict) -> None:
    """Past every save the rooms make (document_save_delay is 1 s), with every tab closed: the
    folder holds what it held, byte for byte and modification time for modification time."""
    page.wait_for_timeout(3000)
    close_all(page)
    page.wait_for_timeout(2000)
    assert tree(folder) == before


def wait_for(predicate, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_opening_from_search_changes_nothing_and_a_typed_cell_is_saved(page, collab_lab):
    lab = collab_lab
    files = seed(lab.root, "from-search", "seen_by_search")
    before = tree(lab.root / "from-search")
    panel = open_sidebar(page, lab)
    search(panel, "seen_by_search")
    heads = panel.locator(".dsh-sb-file-head")
    expect()(heads).to_have_count(3)

    panel.locator('.dsh-sb-file[data-path="from-search/crlf.py"] .dsh-sb-match').click()
    current_tab(page, "crlf.py")
    shown_as_text(page, "seen_by_search = 2")
    panel.locator('.dsh-sb-file[data-path="from-search/plain.txt"] .dsh-sb-file-head').click()
    current_tab(page, "plain.txt")
    shown_as_text(page, "seen_by_search here")
    panel.locator('.dsh-sb-file[data-path="from-search/note.ipynb"] .dsh-sb-match').click()
    current_tab(page, "note.ipynb")
    shown_as_notebook(page, "seen_by_search = 1")
    left_as_they_were(page, lab, lab.root / "from-search", before)

    # the person types into the cell the search found: the room saves it, as it should
    panel.locator('.dsh-sb-file[data-path="from-search/note.ipynb"] .dsh-sb-match').click()
    shown_as_notebook(page, "seen_by_search = 1")
    page.locator(NOTEBOOK_CELL).nth(1).locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("  # typed")
    wait_for(lambda: "# typed" in files["nb"].read_text(), "the room's save of the typed cell")
    saved = nbformat.read(str(files["nb"]), as_version=4)
    assert saved.cells[1].source == "seen_by_search = 1  # typed"
    # closed once the page knows the room saved it: a tab still marked dirty asks "Save your
    # work?", JupyterLab's own question, not this test's subject
    dirty = page.locator(".lm-TabBar-tab.jp-mod-dirty", has_text="note.ipynb")
    expect()(dirty).to_have_count(0, timeout=30_000)
    close_all(page)


def test_opening_from_the_activity_changes_nothing(page, collab_lab):
    lab = collab_lab
    files = seed(lab.root, "from-activity", "seen_by_activity")
    panel = open_activity(page, lab)
    # an agent reads and changes each file; the person then opens each from the call's "Open" button
    for path in files.values():
        assert not lab.tool("read", file_path=str(path.relative_to(lab.root)))["isError"]
    calls = {
        "crlf": lab.tool("edit", file_path="from-activity/crlf.py", old_string="a = 1", new_string="a = 10"),
        "lf": lab.tool("write", file_path="from-activity/plain.txt", content="first line\nseen_by_activity, written\n"),
        "nb": lab.tool(
            "edit_cells",
            file_path="from-activity/note.ipynb",
            operations=[{"op": "insert", "cell_type": "markdown", "source": "Added", "at": "end"}],
        ),
    }
    for call in calls.values():
        assert not call["isError"], call["text"]
    assert files["crlf"].read_bytes() == b"a = 10\r\nseen_by_activity = 2\r\n"  # the edit keeps CRLF
    age(files)
    before = tree(lab.root / "from-activity")

    shown = {"crlf": "seen_by_activity = 2", "lf": "seen_by_activity, written", "nb": "seen_by_activity = 1"}
    for key, call in calls.items():
        row = call_row(panel, call["callId"])
        expect()(row).to_be_visible(timeout=8_000)
        row.locator(".dsh-sb-call-head").click()
        row.locator(".dsh-sb-open").click()
        current_tab(page, files[key].name)
        if key == "nb":
            shown_as_notebook(page, shown[key])
        else:
            shown_as_text(page, shown[key])
    left_as_they_were(page, lab, lab.root / "from-activity", before)


def test_opening_from_the_explorer_changes_nothing_and_a_typed_line_keeps_crlf(page, collab_lab):
    lab = collab_lab
    files = seed(lab.root, "from-explorer", "seen_by_explorer")
    before = tree(lab.root / "from-explorer")
    panel = open_explorer(page, lab)
    explorer_settled(panel)
    panel.locator('.dsh-sb-entry[data-name="from-explorer"]').click()
    explorer_settled(panel)
    assert sorted(entry_names(panel)) == ["crlf.py", "note.ipynb", "plain.txt"]

    panel.locator('.dsh-sb-entry[data-name="crlf.py"]').click()
    current_tab(page, "crlf.py")
    shown_as_text(page, "seen_by_explorer = 2")
    panel.locator('.dsh-sb-entry[data-name="plain.txt"]').click()
    current_tab(page, "plain.txt")
    shown_as_text(page, "seen_by_explorer here")
    panel.locator('.dsh-sb-entry[data-name="note.ipynb"]').click()
    current_tab(page, "note.ipynb")
    shown_as_notebook(page, "seen_by_explorer = 1")
    left_as_they_were(page, lab, lab.root / "from-explorer", before)

    # the person types a line into the CRLF file and saves: written, with CRLF throughout
    panel.locator('.dsh-sb-entry[data-name="crlf.py"]').click()
    shown_as_text(page, "seen_by_explorer = 2")
    type_a_line_and_save(page, lab, files["crlf"])
    assert files["crlf"].read_bytes() == b"a = 1\r\nseen_by_explorer = 2\r\nc = 3\r\n"
    close_all(page)


def test_opening_from_a_grep_widget_changes_nothing(page, collab_lab):
    lab = collab_lab
    seed(lab.root, "from-widget", "seen_by_widget")
    before = tree(lab.root / "from-widget")
    driver = v4.new_notebook(
        metadata={"kernelspec": KERNELSPEC},
        cells=[v4.new_code_cell("%load_ext dsh_jupyter"), v4.new_code_cell("%dsh grep seen_by_widget from-widget")],
    )
    nbformat.write(driver, str(lab.root / "widget-driver.ipynb"))  # beside the folder: running it saves it
    run_notebook(page, lab, "widget-driver.ipynb")
    w = widget(page, 1)
    expect()(w.locator(".dsh-search-header")).to_have_text("Found 3 matches", timeout=60_000)
    for name, text in (("crlf.py", "seen_by_widget = 2"), ("plain.txt", "seen_by_widget here")):
        w.locator(".dsh-item", has_text=text).first.click()  # the match opens in the widget's window
        # once the window shows this file (the last file's window stays until the kernel answers,
        # and its button would open that file again) ...
        expect()(w.locator("#dsh-panel .dsh-subject")).to_contain_text(name, timeout=60_000)
        w.locator("#dsh-panel .dsh-editor").click()  # ... from there in JupyterLab's editor
        current_tab(page, name)
        shown_as_text(page, text)
        page.locator(CURRENT_TAB.replace(".lm-mod-current", ""), has_text="widget-driver.ipynb").click()
    left_as_they_were(page, lab, lab.root / "from-widget", before)
