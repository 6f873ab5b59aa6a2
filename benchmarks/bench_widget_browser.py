"""Click to rendered rows in the listing widget, measured in a real JupyterLab and Chromium.

    python benchmarks/bench_widget_browser.py [--runs 15] [--entries 400]

Starts ``jupyter lab`` (127.0.0.1, a token, temporary folders, as the browser tests do) on a root
holding ``big/`` (N files, so a page holds 200 rows) and a few other folders, opens a notebook
with ``%dsh list`` in the system Chromium, and times in the page, from the click to the frame
after the new rows are in the document (a requestAnimationFrame after the status changed):
  - "next" / "previous" on a 200-row page of big/ (alternating, so every click fetches);
  - a click on the big/ row of the top listing (then the breadcrumb back, not timed).
It prints the median and the slowest click of each. Needs the test extra (Playwright) and a
Chromium (``DSH_CHROMIUM``, ``/usr/bin/chromium`` or one on PATH). Not run by the tests.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from servers import JupyterProcess  # noqa: E402 (tests/servers.py)
from trees import build_tree  # noqa: E402 (tests/trees.py)

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]

# Click, then resolve with [total, until the rows are in the document, from there to the next
# frame] in milliseconds: the second part is the kernel round trip plus drawing the rows, the
# third the browser's style, layout and paint of them.
_TIMED_CLICK = """([root, target]) => new Promise(resolve => {
  const statusText = () => root.querySelector('.dsh-controls .dsh-status').textContent;
  const before = statusText();
  const observer = new MutationObserver(() => {
    if (statusText() === before) return;
    observer.disconnect();
    const changed = performance.now();
    requestAnimationFrame(() => setTimeout(() => {
      const now = performance.now();
      resolve([now - t0, changed - t0, now - changed]);
    }, 0));
  });
  observer.observe(root, {subtree: true, childList: true, characterData: true});
  const t0 = performance.now();
  target.click();
})"""


def build(root: Path, entries: int) -> None:
    build_tree(
        root, {"big": {f"file-{i:05d}.txt": f"{i}\n" for i in range(entries)}, "docs": {}, "src": {}, "tests": {}}
    )
    nb = nbformat.v4.new_notebook(
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    )
    nb.cells = [nbformat.v4.new_code_cell("%load_ext dsh_jupyter\n%dsh list")]
    nbformat.write(nb, root / "bench.ipynb")


def find_chromium() -> str:
    import importlib.util

    spec = importlib.util.spec_from_file_location("e2e_conftest", HERE.parent / "tests" / "e2e" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = module.find_chromium()
    if path is None:
        sys.exit("no Chromium found (set DSH_CHROMIUM)")
    return path


def summary(name: str, samples: list[list[float]]) -> str:
    total, rows, frame = ([s[i] for s in samples] for i in range(3))
    return (
        f"  {name:<36} median {statistics.median(total):6.1f} ms (rows in the page {statistics.median(rows):5.1f}"
        f" + frame {statistics.median(frame):5.1f}), slowest {max(total):6.1f} ms, {len(samples)} clicks"
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--entries", type=int, default=400)
    opts = ap.parse_args()
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="dsh-bench-browser-"))
    build(tmp / "root", opts.entries)
    settings = tmp / "jupyter" / "lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    server = JupyterProcess.start(tmp / "jupyter", tmp / "root", app="lab", token="bench")
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=find_chromium(), headless=True, args=ARGS)
            page = browser.new_page(viewport={"width": 1200, "height": 800})
            page.set_default_timeout(90_000)
            page.goto(f"{server.url}lab/tree/bench.ipynb?reset&token=bench")
            page.wait_for_function(
                "() => /\\| Idle/.test(document.querySelector('#jp-main-statusbar')?.innerText || '')"
            )
            page.keyboard.press("Shift+Enter")
            root = page.locator(".dsh").first
            root.locator("[data-row]").first.wait_for()
            big = lambda: root.locator("[data-row]", has_text="big/").element_handle()  # noqa: E731
            directory, paging = [], []
            for _ in range(opts.runs):
                directory.append(page.evaluate(_TIMED_CLICK, [root.element_handle(), big()]))
                page.wait_for_function("el => !el.hasAttribute('aria-busy')", arg=root.element_handle())
                crumb = root.locator(".dsh-crumb").first
                crumb.click()
                page.wait_for_function("el => !el.hasAttribute('aria-busy')", arg=root.element_handle())
            root.locator("[data-row]", has_text="big/").click()
            page.wait_for_function("el => !el.hasAttribute('aria-busy')", arg=root.element_handle())
            for i in range(opts.runs):
                button = root.locator(".dsh-controls .dsh-next" if i % 2 == 0 else ".dsh-controls .dsh-prev")
                paging.append(page.evaluate(_TIMED_CLICK, [root.element_handle(), button.element_handle()]))
                page.wait_for_function("el => !el.hasAttribute('aria-busy')", arg=root.element_handle())
            rows = root.locator(".dsh-grid .dsh-row").count()
            browser.close()
    finally:
        server.stop()
    print(f"listing widget in JupyterLab + Chromium, {opts.entries} entries in big/ ({rows} rows a page)")
    print(summary("click on a directory -> rows drawn", directory))
    print(summary("next/previous on a 200-row page", paging))
    return 0


if __name__ == "__main__":
    sys.exit(main())
