"""A tool's change handed to JupyterLab tabs without collaboration, measured in a real JupyterLab and Chromium.

    python benchmarks/bench_tabs_browser.py [--runs 15] [--lines 2000] [--cells 50]

Starts JupyterLab in this process (``tests/e2e/inprocess_lab.py``, as the browser tests do, no
real-time collaboration), opens a text file of N lines in one Chromium page (then in a second
page too) and a notebook of M cells, and times ``TabDocuments.save_in_tabs`` from this thread, as
a tool thread calls it: one line added at the top of the text file, one cell's source changed.
Each call is the whole round: the file described from disk, the page's long poll answered, the
page's check and change in one turn, JupyterLab's own save (a PUT and a look at the new hash),
the answers. Beside it, the baseline: the same content saved through Jupyter's contents API
(``PUT /api/contents``) from this process, what any save costs. Medians and the slowest call.
Needs the test extra (Playwright) and a Chromium. Not run by the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))

from inprocess_lab import InProcessLab  # noqa: E402 (tests/e2e/inprocess_lab.py)

from dsh_jupyter.core.fs.files import file_version  # noqa: E402

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def find_chromium() -> str:
    import importlib.util

    spec = importlib.util.spec_from_file_location("e2e_conftest", HERE.parent / "tests" / "e2e" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = module.find_chromium()
    if path is None:
        sys.exit("no Chromium found (set DSH_CHROMIUM)")
    return path


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def line(name: str, samples: list[float]) -> str:
    median = statistics.median(samples)
    return f"  {name:<58} median {median:7.1f} ms, slowest {max(samples):7.1f} ms, {len(samples)} calls"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--cells", type=int, default=50)
    opts = ap.parse_args()
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="dsh-bench-tabs-"))
    root = Path(os.path.realpath(tmp / "root"))
    root.mkdir()
    text = root / "text.txt"
    text.write_text("".join(f"line {i}: some text to carry\n" for i in range(opts.lines)))
    book = root / "book.ipynb"
    kernelspec = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(
        nbformat.v4.new_notebook(
            metadata={"kernelspec": kernelspec},
            cells=[nbformat.v4.new_markdown_cell(f"cell {i}") for i in range(opts.cells)],
        ),
        str(book),
    )
    lab = InProcessLab(tmp, root).start()
    tabs = lab.tabs
    n = 0

    def add_a_line() -> None:
        nonlocal n
        n += 1
        with open(text, "rb") as fh:
            at, content = file_version(os.fstat(fh.fileno())), fh.read().decode()
        assert tabs.save_in_tabs(str(text), f"agent {n}\n" + content, False, at) is True

    def change_a_cell() -> None:
        nonlocal n
        n += 1
        with open(book, "rb") as fh:
            at, content = file_version(os.fstat(fh.fileno())), fh.read().decode()
        nb = nbformat.reads(content, as_version=nbformat.NO_CONVERT)
        nb.cells[opts.cells // 2].source = f"changed {n}"
        assert tabs.save_in_tabs(str(book), nbformat.writes(nb), True, at) is True

    def put_the_file() -> None:
        nonlocal n
        n += 1
        body = json.dumps({"type": "file", "format": "text", "content": f"agent {n}\n" + text.read_text()}).encode()
        request = urllib.request.Request(
            f"{lab.url}api/contents/text.txt",
            data=body,
            method="PUT",
            headers={"Authorization": f"token {lab.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request) as reply:
            reply.read()

    def wait_open(real: str, tabs_open: int) -> None:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            found = tabs.presence(real)
            if found is not None and found.tabs == tabs_open and not found.unsaved:
                return
            time.sleep(0.05)
        sys.exit(f"the page did not report {real}")

    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=find_chromium(), headless=True, args=ARGS)
            first = browser.new_page(viewport={"width": 1200, "height": 800})
            first.set_default_timeout(90_000)
            first.goto(f"{lab.url}lab/tree/text.txt?reset&token={lab.token}")
            wait_open(str(text), 1)
            one_page = timed(add_a_line, opts.runs)
            put = timed(put_the_file, opts.runs)
            first.goto(f"{lab.url}lab/tree/text.txt?reset&token={lab.token}")  # again: the file changed under it
            second = browser.new_page(viewport={"width": 1200, "height": 800})
            second.set_default_timeout(90_000)
            second.goto(f"{lab.url}lab/tree/text.txt?reset&token={lab.token}")
            wait_open(str(text), 2)
            two_pages = timed(add_a_line, opts.runs)
            second.close()
            first.goto(f"{lab.url}lab/tree/book.ipynb?reset&token={lab.token}")
            first.wait_for_function(
                "() => /\\| Idle/.test(document.querySelector('#jp-main-statusbar')?.innerText || '')"
            )
            first.keyboard.press("Control+s")  # what the kernel added to the metadata, saved: the tab is clean
            wait_open(str(book), 1)
            notebook = timed(change_a_cell, opts.runs)
            browser.close()
    finally:
        lab.stop()
    print(
        "save_in_tabs in JupyterLab + Chromium (no collaboration), "
        f"a {opts.lines}-line file, a {opts.cells}-cell notebook"
    )
    print(line("baseline: PUT /api/contents of the file (any save)", put))
    print(line("save_in_tabs, one page (take and save in one turn)", one_page))
    print(line("save_in_tabs, two pages (take, save, learn)", two_pages))
    print(line("save_in_tabs, one page, one notebook cell changed", notebook))
    return 0


if __name__ == "__main__":
    sys.exit(main())
