"""End to end: ``replace`` over REST changes lines of a text file and cells of a notebook open in
JupyterLab while a person types in another line, another cell, of the same file.

The lab runs jupyter-collaboration (the ``collab_lab`` fixture). Chromium plays the person
(``person.py``: Playwright's keyboard); the agent previews, then applies while the person is
typing (the call runs on a thread a moment after the first keys). The open document shows the
replacements without a reload and without a "File Changed" dialog, every character the person
typed is still there, and the file on disk, once the person saves, holds both; the file nobody has
open in the same call is changed on disk.
"""

from __future__ import annotations

import random
import threading
import time

import nbformat
import pytest
from nbformat import v4

from .person import Person
from .test_live_notebook import saved_when

pytestmark = [pytest.mark.browser, pytest.mark.slow]

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
TYPED = "the person types here"


def while_typing(person: Person, path: str, notebook: bool, call) -> dict:
    """``call()`` on a thread, 200 ms after the person starts typing ``TYPED`` at the end of the
    first line (the first cell) of ``path``: what it answered."""
    box: dict = {}

    def run() -> None:
        time.sleep(0.2)
        try:
            box["made"] = call()
        except BaseException as exc:  # raised again in the test's thread
            box["error"] = exc

    person.click_end_of(path, notebook, 0)
    worker = threading.Thread(target=run)
    worker.start()
    try:
        person.type(" " + TYPED, random.Random(36), pause=(0.05, 0.15))
    finally:
        worker.join(120)
    if "error" in box:
        raise box["error"]
    return box["made"]


def test_replace_changes_other_lines_of_an_open_text_file_while_the_person_types(page, collab_lab):
    lab = collab_lab
    (lab.root / "text").mkdir()
    (lab.root / "text" / "names.py").write_text("# notes\nold_name = 1\nprint(old_name)\n")
    (lab.root / "text" / "closed.py").write_text("old_name = 2\n")
    person = Person(page, lab)
    person.start()
    person.open("text/names.py", notebook=False)

    preview = lab.tool("replace", session="agent", pattern="old_name", replacement="new_name", path="text")
    assert preview["value"]["totalOccurrences"] == 3, preview
    done = while_typing(
        person,
        "text/names.py",
        False,
        lambda: lab.tool(
            "replace",
            session="agent",
            pattern="old_name",
            replacement="new_name",
            path="text",
            occurrences="all",
            expected_count=3,
        ),
    )
    assert done["text"] == (
        'Replaced 3 occurrences of "old_name" in 2 files:\n'
        "text/closed.py: 1\n"
        "text/names.py: 2 (open in JupyterLab: changed in its live document, which JupyterLab saves)"
    ), done
    want = f"# notes {TYPED}\nnew_name = 1\nprint(new_name)\n"
    person.wait(lambda: (person.seen("text/names.py") or {}).get("shown") == want, what="both changes in the editor")
    person.save("text/names.py", unanswered_ok=True)
    deadline = time.monotonic() + 30
    while (lab.root / "text" / "names.py").read_text() != want and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (lab.root / "text" / "names.py").read_text() == want
    assert (lab.root / "text" / "closed.py").read_text() == "new_name = 2\n"
    time.sleep(0.5)
    assert person.dialogs() == []


def test_replace_changes_other_cells_of_an_open_notebook_while_the_person_types(page, collab_lab):
    lab = collab_lab
    (lab.root / "nb").mkdir()
    path = lab.root / "nb" / "names.ipynb"
    nbformat.write(
        v4.new_notebook(
            metadata={"kernelspec": KERNELSPEC},
            cells=[
                v4.new_code_cell("# notes", id="notes"),
                v4.new_code_cell("old_name = 1", id="set"),
                v4.new_code_cell("print(old_name)", id="use"),
            ],
        ),
        str(path),
    )
    person = Person(page, lab)
    person.start()
    person.open("nb/names.ipynb", notebook=True)

    preview = lab.tool("replace", session="agent", pattern="old_name", replacement="new_name", path="nb")
    assert [(o["cell"], o["before"]) for o in preview["value"]["occurrences"]] == [
        (2, "old_name = 1"),
        (3, "print(old_name)"),
    ], preview
    ids = [o["id"] for o in preview["value"]["occurrences"]]
    done = while_typing(
        person,
        "nb/names.ipynb",
        True,
        lambda: lab.tool(
            "replace", session="agent", pattern="old_name", replacement="new_name", path="nb", occurrences=ids
        ),
    )
    assert done["value"]["changed"] == [
        {"path": "nb/names.ipynb", "replacements": 2, "open": "shared", "live": True}
    ], done
    want = [f"# notes {TYPED}", "new_name = 1", "print(new_name)"]
    person.wait(lambda: (person.seen("nb/names.ipynb") or {}).get("shown") == want, what="both changes in the cells")
    person.save("nb/names.ipynb", unanswered_ok=True)
    nb = saved_when(path, lambda nb: [c.source for c in nb.cells] == want)
    assert nb is not None and [c.source for c in nb.cells] == want, nb
    assert [c.id for c in nb.cells] == ["notes", "set", "use"]
    nbformat.validate(nb)
    time.sleep(0.5)
    assert person.dialogs() == []


def test_without_collaboration_a_clean_tab_takes_the_change_and_an_unsaved_one_refuses(page, lab):
    """No collaboration: the open tab with nothing unsaved takes the new version and saves it
    itself (no dialog); once the person has typed without saving, the next replace is refused
    whole and nothing changes anywhere."""
    (lab.root / "tabs").mkdir()
    (lab.root / "tabs" / "open.py").write_text("# notes\nold_name = 1\n")
    (lab.root / "tabs" / "closed.py").write_text("old_name = 2\n")
    person = Person(page, lab)
    person.start()
    person.open("tabs/open.py", notebook=False)
    person.wait(lambda: lab.tool("read", session="probe", file_path="tabs/open.py")["value"].get("open") == "tab")

    args = {"pattern": "old_name", "replacement": "new_name", "path": "tabs"}
    assert lab.tool("replace", session="agent", **args)["value"]["totalOccurrences"] == 2
    done = lab.tool("replace", session="agent", **args, occurrences="all", expected_count=2)
    assert done["text"] == (
        'Replaced 2 occurrences of "old_name" in 2 files:\n'
        "tabs/closed.py: 1\n"
        "tabs/open.py: 1 (open in JupyterLab: the tab took the change and saved it)"
    ), done
    want = "# notes\nnew_name = 1\n"
    seen = person.wait(lambda: (s := person.seen("tabs/open.py")) and s["shown"] == want and s, what="the tab")
    assert seen["dirty"] is False
    assert (lab.root / "tabs" / "open.py").read_text() == want
    assert (lab.root / "tabs" / "closed.py").read_text() == "new_name = 2\n"

    person.click_end_of("tabs/open.py", False, 0)
    person.type(" unsaved", random.Random(7))
    person.wait(lambda: lab.tool("read", session="probe", file_path="tabs/open.py")["value"].get("open") == "unsaved")
    back = {"pattern": "new_name", "replacement": "old_name", "path": "tabs"}
    assert lab.tool("replace", session="agent", **back)["value"]["totalOccurrences"] == 2
    refused = lab.tool("replace", session="agent", **back, occurrences="all", expected_count=2)
    assert refused["value"]["code"] == "FS_OPEN_UNSAVED", refused
    assert (lab.root / "tabs" / "open.py").read_text() == want
    assert (lab.root / "tabs" / "closed.py").read_text() == "new_name = 2\n"
    assert person.seen("tabs/open.py")["shown"] == "# notes unsaved\nnew_name = 1\n"
    person.save("tabs/open.py")
    assert (lab.root / "tabs" / "open.py").read_text() == "# notes unsaved\nnew_name = 1\n"
    assert person.dialogs() == []
