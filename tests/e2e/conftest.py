"""A real JupyterLab in a real browser: the fixtures of the end-to-end tests.

- ``lab``: ``jupyter lab`` as a subprocess on 127.0.0.1 with a token, over a prepared root (a
  directory of 210 entries so a listing pages, files of known sizes up to a 16.4 MiB log, source
  files to grep, a 3,000-line log to read, one small notebook per test), with the dsh state and
  spills, Jupyter's folders and JupyterLab's settings under a temporary folder. News and update
  checks are off, so no notification covers the page; the app is exposed as ``window.jupyterapp``
  so a test can run a command (the theme) the way the menu does. The same server serves
  Notebook 7 at ``/tree``.
- ``browser``: Chromium driven by Playwright for Python, headless, with a fresh profile. Playwright's
  own browser download is never used. The Chromium is the system's: ``DSH_CHROMIUM`` if set, else
  ``/usr/bin/chromium``, else the first of chromium, chromium-browser, google-chrome on ``PATH``
  (``./dev test`` installs Debian's ``chromium`` when it can). Without one, every test here is
  skipped, and the skip says why.
- ``page``: a new tab per test, 1200×800, the size the screenshots are taken at.

The screenshots go to ``docs/screenshots/`` (``DSH_SCREENSHOT_DIR`` overrides it). The committed
copies are the ones the docs show.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import nbformat
import pytest
from servers import JupyterProcess
from trees import build_tree  # tests/trees.py

REPO = Path(__file__).resolve().parents[2]
VIEWPORT = {"width": 1200, "height": 800}
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TOKEN = "dsh-e2e-token"

# A listing whose "list" calls take 1.5 s: the busy state must show at once and clicks must not queue.
# The real call is kept on the workspace the first time, so running the cell again slows it once,
# not once more per run (a second run would otherwise wrap the first wrapper, and so on).
SLOW_LISTING = """import time
view = %dsh list big
_ws = view.workspace
_ws._real_call = _ws.__dict__.get("_real_call") or _ws.call
def _slow_call(tool, args=None, **kw):
    if tool == "list":
        time.sleep(1.5)
    return _ws._real_call(tool, args, **kw)
_ws.call = _slow_call
view"""

# A grep view whose searches report how far they got before they answer (1.5 s later): the
# report goes through the real widget channel to the busy line.
# A listing whose first "list" call after this cell takes 60 s unless stopped (the stop button
# must be clicked while the call runs, however slow the machine), and whose later calls do not wait.
STOPPABLE_LISTING = """import time
view = %dsh list big
_ws = view.workspace
_ws._real_call = _ws.__dict__.get("_real_call") or _ws.call
_waits = [60]
def _slow_call(tool, args=None, **kw):
    if tool == "list" and _waits:
        time.sleep(_waits.pop())
    return _ws._real_call(tool, args, **kw)
_ws.call = _slow_call
view"""

# A listing whose "done" comes 1.5 s after its state: a key pressed between the two is not lost.
LATE_DONE_LISTING = """import time
view = %dsh list
_w = view.widget()
_send = _w.send
def _late_send(content, buffers=None):
    if isinstance(content, dict) and "done" in content:
        time.sleep(1.5)
    _send(content, buffers)
_w.send = _late_send
view"""

TOLD_GREP = """import time
view = %dsh grep TODO src/lib
_ws = view.workspace
_ws._real_call = _ws.__dict__.get("_real_call") or _ws.call
def _told_call(tool, args=None, **kw):
    if tool == "grep" and kw.get("progress"):
        kw["progress"]("7 matches in 2 files so far")
        time.sleep(1.5)
    return _ws._real_call(tool, args, **kw)
_ws.call = _told_call
view"""

LOG_SIZE = 17_155_682  # shown as 16.4 MiB


# One notebook per test, each a few cells; they live in the lab's root.
NOTEBOOKS = {
    "explore.ipynb": ["%load_ext dsh_jupyter\n%dsh list", "# a second cell: the notebook's keys must not move to it"],
    "sizes.ipynb": ["%load_ext dsh_jupyter\n%dsh list sizes"],
    "long.ipynb": ["%load_ext dsh_jupyter\n%dsh read logs/long.txt"],
    "slow.ipynb": ["%load_ext dsh_jupyter\n%dsh session e2e-slow", SLOW_LISTING],
    "stop.ipynb": ["%load_ext dsh_jupyter\n%dsh session e2e-stop", STOPPABLE_LISTING],
    "late.ipynb": ["%load_ext dsh_jupyter\n%dsh session e2e-late", LATE_DONE_LISTING],
    "saved.ipynb": [
        "%load_ext dsh_jupyter\n%dsh session e2e-saved",
        "for i in range(50):\n    _ = get_ipython().run_line_magic('dsh', f'read src/app/main.py --offset {i % 30 + 1}')",
        "%dsh calls",
    ],
    "read.ipynb": ["%load_ext dsh_jupyter\n%dsh read src/app/main.py --limit 12"],
    "glob.ipynb": ["%load_ext dsh_jupyter\n%config DshMagics.glob_max_results = 12", "%dsh glob '*'"],
    "grep.ipynb": ["%load_ext dsh_jupyter\n%config DshMagics.grep_max_matches = 8", "%dsh grep TODO --include '*.py'"],
    "spaced.ipynb": ["%load_ext dsh_jupyter", "%dsh grep TODO src/lib/spaced.py"],
    "refine.ipynb": ["%load_ext dsh_jupyter\n%dsh grep todo src/lib"],
    # rg stopped by the raw-output guard after 1,500 bytes: a partial page, marked so
    "partial.ipynb": ["%load_ext dsh_jupyter\n%config DshMagics.raw_output_max_bytes = 1500", "%dsh grep file big"],
    "progress.ipynb": ["%load_ext dsh_jupyter\n%dsh session e2e-progress", TOLD_GREP],
    "calls.ipynb": ["%load_ext dsh_jupyter\n%dsh session e2e-calls", "%dsh list", "%dsh calls"],
}


def find_chromium() -> str | None:
    candidates = [os.environ.get("DSH_CHROMIUM"), "/usr/bin/chromium"]
    candidates += [shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")]
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def main_py() -> str:
    lines = ['"""A small app for the browser tests."""', ""]
    for i in range(1, 39):
        lines.append(f"value_{i} = {i}  # TODO check {i}" if i % 5 == 0 else f"value_{i} = {i}")
    return "\n".join(lines) + "\n"


def build_root(root: Path) -> Path:
    big = {**{f"dir-{d}": {} for d in range(1, 6)}, **{f"file-{i:03d}.txt": f"file {i}\n" for i in range(1, 206)}}
    files = {
        "big": big,
        "src/app/main.py": main_py(),
        "src/app/util.py": "def helper():\n    # TODO make it useful\n    return 1\n",
        "src/lib/strings.py": "def shout(s):\n    return s.upper()  # TODO unicode\n",
        "src/lib/numbers.py": "def double(n):\n    # TODO overflow\n    # TODO negative\n    return 2 * n\n",
        "docs/guide.md": "# Guide\n\nTODO: write the guide.\n",
        "src/lib/spaced.py": "x  =   1    # TODO   keep   spacing\n" + "y = '" + "z" * 1500 + " TODO late'\n",
        "notes.txt": "first line\nsecond line\n",
        "README.md": "# e2e workspace\n",
        "logs/long.txt": "".join(f"log line {i}: " + "." * (i % 50) + "\n" for i in range(1, 3001)),
        "sizes/small.txt": "x" * 100,
        "sizes/medium.bin": "m" * 5000,
        "sizes/tiny.txt": "t" * 10,
    }
    build_tree(root, files)
    with open(root / "sizes" / "app.log", "wb") as f:
        f.truncate(LOG_SIZE)  # sparse: 16.4 MiB on paper, nothing on disk
    kernelspec = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    for name, sources in NOTEBOOKS.items():
        nb = nbformat.v4.new_notebook(metadata={"kernelspec": kernelspec})
        nb.cells = [nbformat.v4.new_code_cell(src) for src in sources]
        nbformat.write(nb, root / name)
    return root


@pytest.fixture(scope="package")
def chromium() -> str:
    path = find_chromium()
    if path is None:
        pytest.skip(
            "no Chromium found for the browser tests (looked at $DSH_CHROMIUM, /usr/bin/chromium and PATH); "
            "install one, e.g. `apt-get install chromium` (./dev test does this when run as root)"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.fail('the browser tests need Playwright for Python: pip install -e ".[test]"')
    return path


@pytest.fixture(scope="package")
def screenshot_dir(tmp_path_factory) -> Path:
    """Where the tests' screenshots go: a temporary folder, or the docs' own with
    ``DSH_UPDATE_SCREENSHOTS=1`` (``./dev screenshots``), so a test run leaves the checkout clean."""
    if os.environ.get("DSH_SCREENSHOT_DIR"):
        folder = Path(os.environ["DSH_SCREENSHOT_DIR"])
    elif os.environ.get("DSH_UPDATE_SCREENSHOTS") == "1":
        folder = REPO / "docs" / "screenshots"
    else:
        folder = tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def start_lab(tmp: Path, root: Path, collaborative: bool = False) -> JupyterProcess:
    """``jupyter lab`` over ``root`` with news and update checks off; real-time collaboration only
    when ``collaborative`` (the widget tests were written for JupyterLab's plain document model:
    with collaboration on, a notebook's state lives on in its shared document between tests)."""
    home = tmp / "jupyter"
    settings = home / "lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)  # a restarted server keeps its folders
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    extra = ["--LabApp.expose_app_in_browser=True"]
    if not collaborative:
        extra.append("--YDocExtension.disable_rtc=True")
    return JupyterProcess.start(home, root, app="lab", token=TOKEN, extra_args=extra)


@pytest.fixture(scope="package")
def lab(tmp_path_factory, chromium):
    tmp = tmp_path_factory.mktemp("lab")
    server = start_lab(tmp, build_root(tmp / "root"))
    yield server
    server.stop()


@pytest.fixture(scope="package")
def collab_lab(tmp_path_factory, chromium):
    """A lab with real-time collaboration on (jupyter-collaboration), over an empty root."""
    tmp = tmp_path_factory.mktemp("collab-lab")
    root = tmp / "root"
    root.mkdir()
    server = start_lab(tmp, Path(os.path.realpath(root)), collaborative=True)
    yield server
    server.stop()


@pytest.fixture(scope="package")
def browser(chromium, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=chromium,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport=VIEWPORT,
        )
        yield context
        context.close()


@pytest.fixture
def page(browser):
    tab = browser.new_page()
    tab.set_default_timeout(60_000)
    yield tab
    tab.close()
