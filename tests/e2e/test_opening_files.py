"""End to end: opening a file in JupyterLab leaves it as it was, with collaboration on and off.

A person opens a CRLF Python file, an LF text file and a notebook from the browser and closes them
again: every file keeps its bytes and its modification time (set to 2001 first, so no write can
hide in the clock's resolution), and collaboration leaves no state of its own in the workspace or
in the server's working folder. Typing into the CRLF file and saving writes the typed text with
CRLF line ends throughout. With collaboration on, the room's autosaves of what the front end sets
when it connects (for the notebook, the kernel's ``language_info``) reach the contents manager and
write nothing; with it off, the person's own Ctrl+S of an unchanged file writes nothing either.

Last, the configuration ``./dev demo`` runs (its ``jupyter lab`` arguments, read from ``dev``) over a
copy of ``notebooks/`` committed to a fresh git repository: opening notebook 01 leaves it byte for
byte as it was, with no new file, and ``git status`` clean.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbformat import v4
from servers import JupyterProcess, free_port, isolated_env

from .conftest import REPO, TOKEN, start_lab
from .helpers import expect, wait_for_kernel_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OLD_NS = 978_307_200_000_000_000  # 2001-01-01
CRLF = b"a = 1\r\nb = 2\r\n"
LF = b"first line\nsecond line\n"
EDITOR = ".jp-MainAreaWidget:not(.lm-mod-hidden) .jp-FileEditor .cm-content"
NOTEBOOK_CELL = ".jp-MainAreaWidget:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"


def seed(root: Path, prefix: str) -> dict[str, Path]:
    """A CRLF .py, an LF .txt and a notebook (its language_info as a person commits it: the name only)."""
    folder = root / prefix
    folder.mkdir()
    files = {"crlf": folder / "crlf.py", "lf": folder / "plain.txt", "nb": folder / "note.ipynb"}
    files["crlf"].write_bytes(CRLF)
    files["lf"].write_bytes(LF)
    kernelspec = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb = v4.new_notebook(
        metadata={"kernelspec": kernelspec, "language_info": {"name": "python"}},
        cells=[v4.new_markdown_cell("# Looked at", id="title"), v4.new_code_cell("x = 1", id="code")],
    )
    nbformat.write(nb, str(files["nb"]))
    for path in files.values():
        os.utime(path, ns=(OLD_NS, OLD_NS))
    return files


def tree(folder: Path) -> dict[str, tuple[bytes | None, int | None]]:
    """Every entry below ``folder``: a file's bytes and modification time, a folder's name only."""
    found = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        found[rel] = (path.read_bytes(), path.stat().st_mtime_ns) if path.is_file() else (None, None)
    return found


def rel(lab, path: Path) -> str:
    return str(path.relative_to(lab.root))


def open_file(page, lab, path: Path, text: str) -> None:
    page.goto(f"{lab.url}lab/tree/{rel(lab, path)}?reset&token={lab.token}")
    expect()(page.locator(EDITOR)).to_contain_text(text, timeout=90_000)


def open_notebook(page, lab, path: Path) -> None:
    page.goto(f"{lab.url}lab/tree/{rel(lab, path)}?reset&token={lab.token}")
    expect()(page.locator(NOTEBOOK_CELL).nth(1)).to_contain_text("x = 1", timeout=90_000)
    wait_for_kernel_idle(page)


def close_all(page) -> None:
    page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
    expect()(page.locator(".jp-Dialog")).to_have_count(0)


def log_has(lab, text: str, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in lab.log.read_text(errors="replace"):
            return True
        time.sleep(0.2)
    return False


def type_a_line_and_save(page, lab, path: Path) -> None:
    """Type ``c = 3`` as a new last line of the open file, then Ctrl+S; wait until the file has it
    and the page knows it is saved."""
    page.locator(EDITOR).click()
    page.keyboard.press("Control+End")
    page.keyboard.type("c = 3")
    page.keyboard.press("Enter")
    expect()(page.locator(EDITOR)).to_contain_text("c = 3")
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 30
    while b"c = 3" not in path.read_bytes() and time.monotonic() < deadline:
        time.sleep(0.2)
    # and until the page has the save's answer: a tab still marked unsaved asks before it closes
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget; return !!w && !w.context.model.dirty; }",
        timeout=30_000,
    )


@pytest.fixture(scope="module")
def plain_lab(tmp_path_factory, chromium):
    """A lab with collaboration off (``--YDocExtension.disable_rtc=True``), over an empty root."""
    tmp = tmp_path_factory.mktemp("plain-lab")
    root = tmp / "root"
    root.mkdir()
    server = start_lab(tmp, Path(os.path.realpath(root)), collaborative=False)
    yield server
    server.stop()


def test_with_collaboration_opening_changes_nothing_and_a_crlf_file_stays_crlf(page, collab_lab):
    lab = collab_lab
    files = seed(lab.root, "opened")
    before = tree(lab.root / "opened")

    open_file(page, lab, files["crlf"], "b = 2")
    open_file(page, lab, files["lf"], "second line")
    open_notebook(page, lab, files["nb"])
    # the front end copies the kernel's language_info into the shared notebook; its room saves it
    assert log_has(lab, "dsh_jupyter: opened/note.ipynb is saved unchanged; the file is left as it was")
    page.wait_for_timeout(3000)  # past document_save_delay (1 s): every save the rooms make has been made
    close_all(page)
    page.wait_for_timeout(2000)
    assert tree(lab.root / "opened") == before  # bytes and modification times; no checkpoint folder

    data = Path(lab.env["JUPYTER_DATA_DIR"]) / "dsh_jupyter"
    assert (data / "ystore.db").is_file() and (data / "collaboration_sessions.json").is_file()
    assert not (lab.root / ".jupyter").exists()
    assert not (lab.tmp / ".jupyter_ystore.db").exists()  # the server's working folder

    open_file(page, lab, files["crlf"], "b = 2")
    type_a_line_and_save(page, lab, files["crlf"])
    assert files["crlf"].read_bytes() == b"a = 1\r\nb = 2\r\nc = 3\r\n"
    close_all(page)


def test_without_collaboration_opening_and_saving_unchanged_changes_nothing(page, plain_lab):
    lab = plain_lab
    files = seed(lab.root, "opened")
    before = tree(lab.root / "opened")

    for key, text in (("crlf", "b = 2"), ("lf", "second line")):
        open_file(page, lab, files[key], text)
        page.keyboard.press("Control+s")  # a person's save of a file they did not change
        assert log_has(lab, f"dsh_jupyter: {rel(lab, files[key])} is saved unchanged; the file is left as it was")
    open_notebook(page, lab, files["nb"])
    page.locator(NOTEBOOK_CELL).first.click()
    page.keyboard.press("Control+s")
    assert log_has(lab, "dsh_jupyter: opened/note.ipynb is saved unchanged; the file is left as it was")
    page.wait_for_timeout(1000)
    close_all(page)

    after = tree(lab.root / "opened")
    # JupyterLab's own front end keeps a checkpoint (the version to revert to) of what it saved:
    # copies of the files as they are, beside them; the files themselves are untouched
    checkpoints = {name: value for name, value in after.items() if name.startswith(".ipynb_checkpoints")}
    assert {name: value for name, value in after.items() if name not in checkpoints} == before
    assert {name: value[0] for name, value in checkpoints.items()} == {
        ".ipynb_checkpoints": None,
        ".ipynb_checkpoints/crlf-checkpoint.py": CRLF,
        ".ipynb_checkpoints/plain-checkpoint.txt": LF,
        ".ipynb_checkpoints/note-checkpoint.ipynb": before["note.ipynb"][0],
    }
    assert not (lab.root / ".jupyter").exists() and not (lab.tmp / ".jupyter_ystore.db").exists()

    open_file(page, lab, files["crlf"], "b = 2")
    type_a_line_and_save(page, lab, files["crlf"])
    assert files["crlf"].read_bytes() == b"a = 1\r\nb = 2\r\nc = 3\r\n"
    close_all(page)


def demo_lab_args(clone: Path) -> list[str]:
    """The ``jupyter lab`` arguments ``./dev demo`` passes, as ``dev`` writes them, for a clone at ``clone``."""
    script = (REPO / "dev").read_text()
    found = re.search(r"lab_args=\((.*?)\)\n", script, re.S)
    assert found, "dev no longer sets lab_args=(...) for ./dev demo"
    args = shlex.split(found.group(1).replace("$PWD", str(clone)))
    assert [a.split("=")[0] for a in args] == ["--ServerApp.ip", "--ServerApp.root_dir", "--LabApp.default_url"], args
    return [*args, "--allow-root"]  # as dev adds for root, which the tests run as


def test_the_demo_configuration_leaves_the_notebooks_as_they_were(page, tmp_path, chromium):
    clone = tmp_path / "clone"
    shutil.copytree(REPO / "notebooks", clone / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    clone = Path(os.path.realpath(clone))
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "the clone"], check=True)
    before = tree(clone)
    home = tmp_path / "home"
    home.mkdir()
    env = {**isolated_env(tmp_path / "jupyter"), "HOME": str(home)}
    tmp = tmp_path / "jupyter"
    for attempt in range(3):  # a free port can be taken by a neighbour's kernel before the lab binds it
        port = free_port()
        argv = [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            *demo_lab_args(clone),
            "--no-browser",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={TOKEN}",
        ]
        with open(tmp / "jupyter.log", "wb") as log:
            # from the clone, as ./dev demo runs from the repository (collaboration's default files go there)
            proc = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=clone, start_new_session=True
            )
        lab = JupyterProcess(proc, f"http://127.0.0.1:{port}/", TOKEN, clone / "notebooks", tmp, env)
        try:
            lab.wait_until_up(120)
            break
        except RuntimeError:
            if attempt == 2 or proc.poll() is None:
                raise
    try:
        page.goto(f"{lab.url}?token={TOKEN}")  # the demo's default URL opens notebook 01
        expect()(page.locator(NOTEBOOK_CELL).first).to_contain_text("The seed failure", timeout=90_000)
        wait_for_kernel_idle(page)
        assert log_has(lab, "dsh_jupyter: 01-seed-failure.ipynb is saved unchanged; the file is left as it was")
        page.wait_for_timeout(3000)
        page.goto("about:blank")  # the person closes the tab (the demo's lab does not expose its app)
        page.wait_for_timeout(2000)
    finally:
        lab.stop()
    assert tree(clone) == before
    status = subprocess.run(
        [*git, "status", "--porcelain", "--ignored", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert status.stdout == ""  # nothing new, changed or ignored: no state of Jupyter's in the clone
