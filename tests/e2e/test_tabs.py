"""End to end, without real-time collaboration: an agent's change reaches a file open in a JupyterLab
tab, and nobody's work is lost.

JupyterLab runs in this process (``inprocess_lab.py``) with ``--YDocExtension.disable_rtc=True``;
Chromium plays the person: it opens files, types into the editor and a notebook cell, saves with
Ctrl+S, closes tabs and leaves the page. The test's own thread is the tool thread: it calls the
server's ``TabDocuments`` (``save_in_tabs``, ``moved``, ``presence``) as the tools do, and
every outcome is checked on disk and in the browser (the editor's text, the document model, the
tab's title, and that no "File Changed" dialog ever appears).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path

import nbformat
import pytest
from nbformat import v4

from dsh_jupyter.core.documents import DocumentChanged, OpenUnsaved, Presence
from dsh_jupyter.core.fs.files import file_version

from .helpers import expect, wait_for_kernel_idle
from .inprocess_lab import InProcessLab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTES = "first line\nsecond line\n"
DIALOG = ".jp-Dialog"
MAIN_TAB = "#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current"  # the current document's tab
EDITOR = ".jp-FileEditor:not(.lm-mod-hidden) .cm-content"
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}

# The document model of the file at `path` in this page (JupyterLab is exposed as window.jupyterapp).
CONTEXT = """(path) => {
  for (const w of window.jupyterapp.shell.widgets('main')) {
    if (w.context && w.context.path === path) { return w.context; }
  }
  return null;
}"""


def context_js(body: str) -> str:
    return f"(path) => {{ const c = ({CONTEXT})(path); return c && ({body}); }}"


TEXT = context_js("c.model.sharedModel.getSource()")
DIRTY = context_js("c.model.dirty")
HASH = context_js("c.contentsModel && c.contentsModel.hash")
PATH_OF_CURRENT = "() => window.jupyterapp.shell.currentWidget.context.path"


@pytest.fixture(scope="module")
def lab(tmp_path_factory, chromium):
    tmp = tmp_path_factory.mktemp("tabs-lab")
    root = Path(os.path.realpath(tmp / "root"))
    root.mkdir()
    # pages poll every 2 s (not 20), so a page that stops is forgotten after 6 s
    server = InProcessLab(tmp, root, ("--DshJupyter.tabs_poll_s=2",)).start()
    yield server
    server.stop()


def wait_until(predicate, timeout: float = 30.0, what: str = "the condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what} did not hold within {timeout} s")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def open_file(page, lab, rel: str, text: str | None = None, checkpoint: bool = False) -> None:
    """Open ``rel`` in this page's editor and wait until the server knows the page has it open.

    ``checkpoint``: wait too for the checkpoint JupyterLab makes of a file it opens (a request of
    its own, a moment later): a test that moves the file must not move it from under that request,
    which is JupyterLab's race, not the one under test."""
    page.goto(f"{lab.url}lab/tree/{rel}?reset&token={lab.token}")
    if text is not None:
        expect()(page.locator(EDITOR)).to_be_visible(timeout=90_000)
        wait_until(lambda: page.evaluate(TEXT, rel) == text, what=f"{rel} in the editor")
    wait_until(lambda: lab.tabs.presence(str(lab.root / rel)) is not None, what=f"the report of {rel}")
    if checkpoint:
        path = lab.root / rel
        made = path.parent / ".ipynb_checkpoints" / f"{path.stem}-checkpoint{path.suffix}"
        wait_until(made.exists, what=f"JupyterLab's checkpoint of {rel}")


# A promise of how the next save of the file at `path` ends ("completed" or "failed").
NEXT_SAVE = context_js("""window.__dshNextSave = new Promise(resolve => {
  const seen = (_, state) => {
    if (state === 'completed' || state === 'failed') { c.saveState.disconnect(seen); resolve(state); }
  };
  c.saveState.connect(seen);
}), true""")


def save(page, rel: str) -> None:
    """Ctrl+S, as a person saves, and wait until that save has written the file."""
    assert page.evaluate(NEXT_SAVE, rel) is True
    page.keyboard.press("Control+s")
    assert page.evaluate("() => window.__dshNextSave") == "completed"


def type_and_save(page, rel: str, typed: str) -> None:
    page.keyboard.type(typed)
    wait_until(lambda: page.evaluate(TEXT, rel).find(typed) >= 0, what="the typing")
    save(page, rel)


def version(path: Path) -> tuple[str, str]:
    """``(text, version)`` of a file, read from one descriptor (a save replaces the file: a new inode)."""
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        return fh.read().decode(), file_version(st)


def test_an_open_text_file_takes_the_change_at_once_and_the_persons_save_meets_no_dialog(page, lab):
    path = lab.root / "typed.txt"
    path.write_text(NOTES)
    open_file(page, lab, "typed.txt", NOTES)
    assert lab.tabs.presence(str(path)) == Presence(shared=False, unsaved=False, tabs=1)
    # the person's cursor sits at the end of the second line
    page.locator(EDITOR).click()
    page.keyboard.press("Control+End")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("End")

    text, at = version(path)
    assert lab.tabs.save_in_tabs(str(path), "agent line\n" + text, False, at) is True
    assert path.read_text() == "agent line\n" + NOTES  # saved by the tab, as its own save
    assert page.evaluate(TEXT, "typed.txt") == "agent line\n" + NOTES
    expect()(page.locator(EDITOR)).to_contain_text("agent line")
    assert page.evaluate(DIRTY, "typed.txt") is False
    assert page.evaluate(HASH, "typed.txt") == sha(path)

    type_and_save(page, "typed.txt", " (typed)")  # the cursor stayed at the end of its line
    expect()(page.locator(DIALOG)).to_have_count(0)
    assert path.read_text() == "agent line\nfirst line\nsecond line (typed)\n"


def test_an_emoji_and_crlf_line_endings_come_through_as_the_agent_wrote_them(page, lab):
    path = lab.root / "crlf.txt"
    path.write_bytes("caf\u00e9 \U0001f600 end\r\nsecond\r\n".encode())
    open_file(page, lab, "crlf.txt", "caf\u00e9 \U0001f600 end\nsecond\n")  # JupyterLab shows it with \n
    _, at = version(path)
    wanted = "caf\u00e9 \U0001f603 end\r\nsecond\r\nthird\r\n"  # one emoji for another: same first half
    assert lab.tabs.save_in_tabs(str(path), wanted, False, at) is True
    assert path.read_bytes() == wanted.encode()  # saved with the file's own CRLF
    assert page.evaluate(TEXT, "crlf.txt") == wanted.replace("\r\n", "\n")
    assert page.evaluate(DIRTY, "crlf.txt") is False


def test_unsaved_typing_refuses_the_change_and_stays(page, lab):
    path = lab.root / "unsaved.txt"
    path.write_text(NOTES)
    open_file(page, lab, "unsaved.txt", NOTES)
    page.locator(EDITOR).click()
    page.keyboard.press("Control+End")
    page.keyboard.type("not saved yet")
    wait_until(
        lambda: lab.tabs.presence(str(path)) == Presence(shared=False, unsaved=True, tabs=1), what="the unsaved report"
    )
    with pytest.raises(OpenUnsaved):
        lab.tabs.save_in_tabs(str(path), "agent line\n" + NOTES, False)
    assert path.read_text() == NOTES
    assert page.evaluate(TEXT, "unsaved.txt") == NOTES + "not saved yet"
    save(page, "unsaved.txt")
    expect()(page.locator(DIALOG)).to_have_count(0)
    assert path.read_text() == NOTES + "not saved yet"


def test_typing_during_a_save_stays_unsaved_and_the_change_is_refused(page, lab):
    """JupyterLab marks a document saved when its save's request returns, typing made while the
    request was under way included; the page keeps such a document unsaved, so that typing is
    neither reported clean nor written over by an agent's change."""
    path = lab.root / "during.txt"
    path.write_text(NOTES)
    open_file(page, lab, "during.txt", NOTES)
    page.locator(EDITOR).click()
    page.keyboard.press("Control+End")
    page.keyboard.type("before the save ")
    held = []  # the save's PUT, held until the person has typed on

    def hold(route) -> None:
        if route.request.method == "PUT":
            held.append(route)
        else:
            route.continue_()

    page.route("**/api/contents/during.txt*", hold)
    try:
        assert page.evaluate(NEXT_SAVE, "during.txt") is True
        page.keyboard.press("Control+s")
        # (Playwright hands a route to its handler only while the test calls into it)
        wait_until(lambda: held or page.wait_for_timeout(20), what="the save's request")
        page.keyboard.type("during the save")
        held[0].continue_()
        assert page.evaluate("() => window.__dshNextSave") == "completed"
    finally:
        page.unroute("**/api/contents/during.txt*")
    assert path.read_text() == NOTES + "before the save "
    assert page.evaluate(TEXT, "during.txt") == NOTES + "before the save during the save"
    assert page.evaluate(DIRTY, "during.txt") is True
    wait_until(
        lambda: lab.tabs.presence(str(path)) == Presence(shared=False, unsaved=True, tabs=1), what="the unsaved report"
    )
    text, at = version(path)
    with pytest.raises(OpenUnsaved):
        lab.tabs.save_in_tabs(str(path), "agent line\n" + text, False, at)
    assert page.evaluate(TEXT, "during.txt") == NOTES + "before the save during the save"
    save(page, "during.txt")
    expect()(page.locator(DIALOG)).to_have_count(0)
    assert path.read_text() == NOTES + "before the save during the save"
    assert page.evaluate(DIRTY, "during.txt") is False  # a save nobody typed during leaves it saved


def test_an_open_notebook_takes_changed_cells_and_new_cells(page, lab):
    path = lab.root / "cells.ipynb"
    nbformat.write(
        v4.new_notebook(
            metadata={"kernelspec": KERNELSPEC},
            cells=[
                v4.new_code_cell("threshold = 1\nprint(threshold)", id="first"),
                v4.new_code_cell("", id="second"),
            ],
        ),
        str(path),
    )
    page.goto(f"{lab.url}lab/tree/cells.ipynb?reset&token={lab.token}")
    cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell")
    expect()(cells.nth(0).locator(".cm-content")).to_contain_text("threshold = 1", timeout=90_000)
    wait_for_kernel_idle(page)
    save(page, "cells.ipynb")  # what the kernel added to the metadata is saved: the tab is clean
    wait_until(lambda: lab.tabs.presence(str(path)) == Presence(shared=False, unsaved=False, tabs=1), what="the report")

    text, at = version(path)
    nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    nb.cells[0].source = "threshold = 42\nprint(threshold)"
    page.evaluate(context_js("(window.__dshCells = [...c.model.sharedModel.cells], true)"), "cells.ipynb")
    assert lab.tabs.save_in_tabs(str(path), nbformat.writes(nb), True, at) is True
    expect()(cells.nth(0).locator(".cm-content")).to_contain_text("threshold = 42")
    # the changed cell's source was set in place: the same cell objects, not a notebook loaded anew
    assert (
        page.evaluate(
            context_js("c.model.sharedModel.cells.every((cell, i) => cell === window.__dshCells[i])"), "cells.ipynb"
        )
        is True
    )
    saved = nbformat.read(str(path), as_version=nbformat.NO_CONVERT)
    assert [c.source for c in saved.cells] == ["threshold = 42\nprint(threshold)", ""]
    assert [c.id for c in saved.cells] == ["first", "second"]
    # the kernel's language_info, which the person's save of it alone left out of the file (the
    # contents guard writes no save that changes nothing else), is kept and saved with the change
    assert "language_info" not in nb.metadata and saved.metadata.language_info.name == "python"
    assert page.evaluate(DIRTY, "cells.ipynb") is False

    cells.nth(1).locator(".cm-content").click()
    page.keyboard.type("# typed in a cell")
    save(page, "cells.ipynb")
    expect()(page.locator(DIALOG)).to_have_count(0)
    saved = nbformat.read(str(path), as_version=nbformat.NO_CONVERT)
    assert [c.source for c in saved.cells] == ["threshold = 42\nprint(threshold)", "# typed in a cell"]

    # a cell added: the notebook is loaded whole, still without a dialog
    text, at = version(path)
    nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    nb.cells.insert(0, v4.new_markdown_cell("# Added by the agent", id="title"))
    assert lab.tabs.save_in_tabs(str(path), nbformat.writes(nb), True, at) is True
    expect()(cells).to_have_count(3)
    expect()(cells.nth(0)).to_contain_text("Added by the agent")
    cells.nth(2).locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("!")
    save(page, "cells.ipynb")
    expect()(page.locator(DIALOG)).to_have_count(0)
    saved = nbformat.read(str(path), as_version=nbformat.NO_CONVERT)
    assert [c.source for c in saved.cells] == [
        "# Added by the agent",
        "threshold = 42\nprint(threshold)",
        "# typed in a cell!",
    ]
    nbformat.validate(saved)


def test_a_person_typing_on_loses_nothing_to_an_agent_writing_meanwhile(page, lab):
    """The person types in bursts and saves after each; meanwhile an agent keeps putting a line
    at the top, each time based on the file as it last read it. Every call is refused or
    taken; at the end every typed word and every taken line is in the file."""
    path = lab.root / "stream.txt"
    path.write_text("start\n")
    open_file(page, lab, "stream.txt", "start\n")
    page.locator(EDITOR).click()
    page.keyboard.press("Control+End")
    outcomes: list[tuple[str, str]] = []
    done = threading.Event()

    def agent() -> None:
        n = 0
        while not done.is_set():
            n += 1
            line = f"agent {n}\n"
            text, at = version(path)
            try:
                taken = lab.tabs.save_in_tabs(str(path), line + text, False, at)
                outcomes.append((line, "taken" if taken else "no tab"))
            except (OpenUnsaved, DocumentChanged) as exc:
                outcomes.append((line, type(exc).__name__))
            time.sleep(0.15)

    writer = threading.Thread(target=agent)
    writer.start()
    words = [f"word{i} " for i in range(12)]
    try:
        for i, word in enumerate(words):
            page.keyboard.type(word, delay=25)
            if i % 3 == 2:
                save(page, "stream.txt")
                time.sleep(0.4)  # a pause: the tab is clean, the agent's change can go in
    finally:
        done.set()
        writer.join(60)
    save(page, "stream.txt")
    expect()(page.locator(DIALOG)).to_have_count(0)
    final = path.read_text()
    assert final == page.evaluate(TEXT, "stream.txt")
    assert final.endswith("start\n" + "".join(words))  # every keystroke, in order, where it was typed
    taken = [line for line, outcome in outcomes if outcome == "taken"]
    assert {outcome for _, outcome in outcomes} <= {"taken", "OpenUnsaved", "DocumentChanged"}, outcomes
    assert taken and len(taken) < len(outcomes), outcomes  # some went in, some were refused
    assert final == "".join(reversed(taken)) + "start\n" + "".join(words), (final, outcomes)


def test_two_pages_take_the_change_and_each_goes_away_in_its_own_way(page, browser, lab):
    path = lab.root / "both.txt"
    path.write_text(NOTES)
    real = str(path)
    open_file(page, lab, "both.txt", NOTES)
    other = browser.new_page()
    try:
        open_file(other, lab, "both.txt", NOTES)
        wait_until(lambda: lab.tabs.presence(real) == Presence(shared=False, unsaved=False, tabs=2), what="two tabs")
        text, at = version(path)
        assert lab.tabs.save_in_tabs(real, "agent line\n" + text, False, at) is True
        assert path.read_text() == "agent line\n" + NOTES
        for tab in (page, other):  # both show it, both are clean, both know the saved file's hash
            assert tab.evaluate(TEXT, "both.txt") == "agent line\n" + NOTES
            assert tab.evaluate(DIRTY, "both.txt") is False
            assert tab.evaluate(HASH, "both.txt") == sha(path)
        # the page that did not save (the one that reported second) saves without a dialog
        other.locator(EDITOR).click()
        other.keyboard.press("Control+End")
        type_and_save(other, "both.txt", "typed in the other page\n")
        expect()(other.locator(DIALOG)).to_have_count(0)
        assert path.read_text() == "agent line\n" + NOTES + "typed in the other page\n"

        # the first page closes its tab: presence drops at once
        page.locator(f"{MAIN_TAB} .lm-TabBar-tabCloseIcon").click()
        wait_until(
            lambda: lab.tabs.presence(real) == Presence(shared=False, unsaved=False, tabs=1),
            timeout=5,
            what="the closed tab leaving the report",
        )

        # the other page goes away: its beacon says so (pages are not forgotten meanwhile)
        lab.tabs.registry.forget_s = 3600
        try:
            other.goto("about:blank")
            wait_until(lambda: lab.tabs.presence(real) is None, timeout=10, what="the beacon")
        finally:
            lab.tabs.registry.forget_s = 3 * lab.tabs.registry.poll_s
    finally:
        other.close()


def test_a_page_that_stops_polling_is_forgotten(page, lab):
    path = lab.root / "quiet.txt"
    path.write_text(NOTES)
    open_file(page, lab, "quiet.txt", NOTES)
    page.route("**/dsh/api/tabs/**", lambda route: route.abort())  # its network to the tab routes is gone
    try:
        wait_until(lambda: lab.tabs.presence(str(path)) is None, timeout=30, what="the page being forgotten")
        # the server does not ask a forgotten page: the tool writes the file itself
        assert lab.tabs.save_in_tabs(str(path), "agent\n", False) is False
    finally:
        page.unroute("**/dsh/api/tabs/**")
    # back on the network, the page is told it is unknown, reports again and is asked again
    wait_until(lambda: lab.tabs.presence(str(path)) is not None, timeout=60, what="the page reporting again")


def test_a_moved_file_and_a_moved_folder_take_their_tabs_along(page, lab):
    (lab.root / "drafts").mkdir()
    (lab.root / "drafts" / "plan.txt").write_text(NOTES)
    open_file(page, lab, "drafts/plan.txt", NOTES, checkpoint=True)
    page.locator(EDITOR).click()
    page.keyboard.press("Control+End")
    page.keyboard.type("typed before the move")  # unsaved when the file moves
    old, new = lab.root / "drafts" / "plan.txt", lab.root / "drafts" / "final.txt"
    os.rename(old, new)  # what the move tool does on disk
    lab.tabs.moved(str(old), str(new))
    assert page.evaluate(PATH_OF_CURRENT) == "drafts/final.txt"
    expect()(page.locator(f"{MAIN_TAB} .lm-TabBar-tabLabel")).to_have_text("final.txt")
    wait_until(
        lambda: (
            lab.tabs.presence(str(new)) == Presence(shared=False, unsaved=True, tabs=1)
            and lab.tabs.presence(str(old)) is None
        ),
        what="the moved file's report",
    )
    save(page, "drafts/final.txt")
    expect()(page.locator(DIALOG)).to_have_count(0)
    assert new.read_text() == NOTES + "typed before the move"
    # nothing re-created at the old path (JupyterLab's checkpoint folder aside)
    assert sorted(n for n in os.listdir(lab.root / "drafts") if not n.startswith(".")) == ["final.txt"]

    (lab.root / "notes").mkdir()
    (lab.root / "notes" / "n1.txt").write_text(NOTES)
    open_file(page, lab, "notes/n1.txt", NOTES, checkpoint=True)
    os.rename(lab.root / "notes", lab.root / "archive")
    lab.tabs.moved(str(lab.root / "notes"), str(lab.root / "archive"))
    assert page.evaluate(PATH_OF_CURRENT) == "archive/n1.txt"
    page.locator(EDITOR).click()
    page.keyboard.press("Control+End")
    type_and_save(page, "archive/n1.txt", "after the folder moved")
    expect()(page.locator(DIALOG)).to_have_count(0)
    assert (lab.root / "archive" / "n1.txt").read_text() == NOTES + "after the folder moved"
    assert not (lab.root / "notes").exists()  # not even the folder


def test_when_one_page_has_unsaved_typing_the_other_gives_the_change_back(page, browser, lab):
    path = lab.root / "split.txt"
    path.write_text(NOTES)
    real = str(path)
    open_file(page, lab, "split.txt", NOTES)
    other = browser.new_page()
    try:
        open_file(other, lab, "split.txt", NOTES)
        other.locator(EDITOR).click()
        other.keyboard.press("Control+End")
        other.keyboard.type("typed, not saved")
        wait_until(
            lambda: lab.tabs.presence(real) == Presence(shared=False, unsaved=True, tabs=2), what="the unsaved report"
        )
        text, at = version(path)
        with pytest.raises(OpenUnsaved):
            lab.tabs.save_in_tabs(real, "agent line\n" + text, False, at)
        assert path.read_text() == NOTES
        # the clean page took the change in its turn and gave it back: as it was, and clean
        wait_until(lambda: page.evaluate(TEXT, "split.txt") == NOTES, timeout=5, what="the change given back")
        assert page.evaluate(DIRTY, "split.txt") is False
        assert other.evaluate(TEXT, "split.txt") == NOTES + "typed, not saved"
        save(other, "split.txt")
        expect()(other.locator(DIALOG)).to_have_count(0)
        assert path.read_text() == NOTES + "typed, not saved"
    finally:
        other.close()
