"""End to end: the Workspace panel's search on a large workspace, timed beside the same REST call.

A lab of its own, with the server's default limits, over a tree built once for the module: 50,000
generated files of 10 matching lines each (500,000 lines, ``gen/``), a ``node_modules/`` of three
minified one-line bundles of about 1.5 MB each that a ``.gitignore`` names, a guide and a source file.
A person types; the page records, from the keystroke on, every change of the status line and when
the first rows and the whole answer are on screen:

- the 500,000-line search is stopped at the output limit: its headline says ``at least``, and page
  2 has page 1's totals and the files after page 1's, none skipped in path order; the status line
  is never blank from the keystroke until the answer;
- the ``.gitignore`` toggle leaves the bundles out, and, turned off, shows them with their one
  line cut around the match (never the whole line);
- Stop on a search of those lines says how far it got, and the server's rg is gone;
- the time from the last keystroke to the first rows and to the whole answer, beside the same
  search over REST (timed from here with the server's token, in turns, medians of 3), printed
  and held to the target, first rows within 1.5× the REST call plus the panel's typing pause,
  when the machine is quiet (a load average below its number of cores): on a 2-core machine
  shared with others the same REST call took 1.5 s in one run and 4.2 s in another. Whatever the
  load, a broad search's first rows must be on screen before its answer, and the figures are
  printed (docs/performance.md has them).
"""

from __future__ import annotations

import os
import re
import statistics
import time
from pathlib import Path

import pytest

from .conftest import REPO, start_lab
from .helpers import expect
from .test_sidebar import SIDEBAR_SESSION, group, open_sidebar, set_toggle, settle, status

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GEN_FILES = 50_000
LINES = 10  # matching lines per generated file: 500,000 in all
GUIDE_HITS = 3  # and a guide before them in path order
NEEDLE = "needleFn"
BUNDLES = [f"node_modules/pkg-{n}/dist/pkg-{n}.min.js" for n in range(3)]
OUTPUT_LIMIT = 20_000_000  # the server's raw_output_max_bytes, its default

# The panel's typing pause, read from its source so that the target names the pause it waits.
DEBOUNCE_MS = int(
    re.search(
        r"export const DEBOUNCE_MS = (\d+);", (REPO / "labextension_shim" / "src" / "search.ts").read_text()
    ).group(1)
)


def gen_line(i: int, k: int) -> str:
    return f"hit {k} in generated file {i:05d}, a line of text\n"


def bundle(n: int) -> str:
    """A minified bundle: one line of about 1.5 MB, the needle about 1,000 characters in and again
    in its middle (rg previews a line's first 2,000 bytes, so the first match is in the page)."""
    body = "".join(f"var a{j}=function(b){{return b+{j}}};" for j in range(40_000))
    first, middle = 1_000 + 37 * n, len(body) // 2
    return body[:first] + f"var {NEEDLE}=1;" + body[first:middle] + f"{NEEDLE}(a{n});" + body[middle:] + "\n"


def build(root: Path) -> None:
    """The tree, written with plain os calls: one open and one write per generated file."""
    gen = root / "gen"
    gen.mkdir(parents=True)
    folder = os.open(gen, os.O_RDONLY | os.O_DIRECTORY)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    try:
        for i in range(GEN_FILES):
            fd = os.open(f"file-{i:05d}.txt", flags, 0o644, dir_fd=folder)
            try:
                os.write(fd, "".join(gen_line(i, k) for k in range(LINES)).encode())
            finally:
                os.close(fd)
    finally:
        os.close(folder)
    for n, rel in enumerate(BUNDLES):
        path = root / rel
        path.parent.mkdir(parents=True)
        path.write_text(bundle(n))
    (root / ".gitignore").write_text("node_modules/\n")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("".join(f"A hit of the guide, number {k}.\n" for k in range(1, 4)))
    (root / "src").mkdir()
    (root / "src" / "needle.py").write_text(f"{NEEDLE} = 'the only one outside node_modules'\n")


@pytest.fixture(scope="module")
def lab(tmp_path_factory, chromium):
    tmp = tmp_path_factory.mktemp("large-lab")
    root = tmp / "root"
    build(root)
    server = start_lab(tmp, Path(os.path.realpath(root)))
    yield server
    server.stop()


def paths(panel) -> list[str]:
    return panel.locator(".dsh-sb-file").evaluate_all("els => els.map(e => e.dataset.path)")


def gen_paths(first: int, count: int) -> list[str]:
    return [f"gen/file-{i:05d}.txt" for i in range(first, first + count)]


# What the page saw from the first keystroke of a search until its answer was on screen: every
# text of the status line (a MutationObserver sees each change), when rows the last
# keystroke had not seen were first shown and when the whole answer was, in ms after that keystroke.
WATCH = """() => {
  window.__unwatch?.();
  const panel = document.querySelector('.dsh-sb-search');
  const input = panel.querySelector('.dsh-sb-pattern');
  const status = panel.querySelector('.dsh-sb-status');
  const files = () => [...panel.querySelectorAll('.dsh-sb-results .dsh-sb-file')];
  const seen = {keys: [], texts: [], firstRows: null, done: null};
  window.__seen = seen;
  let before = new Set();
  const key = () => {
    seen.keys.push(performance.now());
    seen.firstRows = seen.done = null;  // what an earlier key's search showed does not count
    before = new Set(files());
  };
  const take = () => {
    if (!seen.keys.length || seen.done !== null) return;
    const now = performance.now();
    seen.texts.push(status.textContent);
    if (seen.firstRows === null && files().some(file => !before.has(file))) seen.firstRows = now;
    if (panel.getAttribute('aria-busy') !== 'true' && !status.textContent.startsWith('Searching')) seen.done = now;
  };
  const observer = new MutationObserver(take);
  observer.observe(panel, {childList: true, subtree: true, characterData: true, attributes: true});
  input.addEventListener('keydown', key, {capture: true});
  window.__unwatch = () => {
    observer.disconnect();
    input.removeEventListener('keydown', key, {capture: true});
  };
}"""

SEEN = """() => {
  const seen = window.__seen, last = seen.keys[seen.keys.length - 1];
  return {texts: seen.texts, firstRows: seen.firstRows - last, done: seen.done - last};
}"""


def typed(panel, text: str) -> dict:
    """Clear the box, then type ``text`` key by key and wait for its answer: what the page saw."""
    page = panel.page
    box = panel.locator(".dsh-sb-pattern")
    box.fill("")
    expect()(status(panel)).to_have_text("")
    page.evaluate(WATCH)
    box.press_sequentially(text)
    page.wait_for_function("() => window.__seen.done !== null", timeout=60_000)
    return page.evaluate(SEEN)


def never_blank(seen: dict) -> None:
    texts = seen["texts"]
    assert texts and all(t.strip() for t in texts), [t for t in texts if not t.strip()][:3]
    assert texts[0].startswith("Searching…"), texts[0]


PARTIAL = re.compile(
    rf"^at least ([\d,]+) matches in ([\d,]+)\+ files — stopped at the output limit \({OUTPUT_LIMIT:,} bytes of matches\)$"
)


def test_the_500000_line_search_says_at_least_and_its_pages_are_stable(page, lab):
    panel = open_sidebar(page, lab)
    seen = typed(panel, "hit")
    never_blank(seen)
    expect()(status(panel)).to_have_text(PARTIAL)
    first = status(panel).inner_text()
    print(f"\n{first}")
    total, files = (int(n.replace(",", "")) for n in PARTIAL.match(first).groups())
    assert 0 < files < GEN_FILES and total == GUIDE_HITS + LINES * (files - 1), first
    # page 1 in path order: every matching file from the first on, none skipped; the 25th
    # generated file's last 3 lines are page 2's first
    assert paths(panel) == ["docs/guide.md", *gen_paths(0, 25)]
    expect()(panel.locator(".dsh-sb-match")).to_have_count(250)
    expect()(panel.locator(".dsh-sb-actions")).to_contain_text("Other files may match too.")
    panel.locator(".dsh-sb-next").click()
    settle(panel)
    expect()(status(panel)).to_have_text(first)  # the same totals on page 2
    assert paths(panel) == gen_paths(24, 26)
    lines = group(panel, "gen/file-00024.txt").locator(".dsh-sb-match")
    assert lines.evaluate_all("els => els.map(e => e.dataset.line)") == ["8", "9", "10"]
    panel.locator(".dsh-sb-prev").click()
    settle(panel)
    expect()(status(panel)).to_have_text(first)
    assert paths(panel) == ["docs/guide.md", *gen_paths(0, 25)]


def test_gitignore_leaves_the_minified_bundles_out_and_their_lines_are_cut_around_the_match(page, lab):
    panel = open_sidebar(page, lab)
    expect()(panel.locator(".dsh-sb-gitignore")).to_have_attribute("aria-pressed", "true")
    never_blank(typed(panel, NEEDLE))
    expect()(status(panel)).to_have_text("1 match in 1 file")
    assert paths(panel) == ["src/needle.py"]
    set_toggle(panel, "gitignore", False)
    expect()(status(panel)).to_have_text("4 matches in 4 files")
    assert paths(panel) == [*BUNDLES, "src/needle.py"]
    for rel in BUNDLES:
        row = group(panel, rel).locator(".dsh-sb-match")
        expect()(row).to_have_attribute("data-line", "1")
        text = row.locator(".dsh-sb-text").inner_text()
        # cut on both sides around the match, as wide as the panel: not 1.5 MB, not rg's 2,000 bytes
        assert text.startswith("…") and text.endswith("…") and len(text) < 120, (rel, len(text), text[:200])
        expect()(row.locator(".dsh-sb-text mark")).to_have_text(NEEDLE)
        fits = row.evaluate(
            "el => el.querySelector('mark').getBoundingClientRect().right <= el.getBoundingClientRect().right"
        )
        assert fits, rel
    # nothing of a bundle's line beyond what is shown and a tooltip's 500 characters is in the page
    assert len(panel.evaluate("el => el.outerHTML")) < 20_000
    set_toggle(panel, "gitignore", True)
    expect()(status(panel)).to_have_text("1 match in 1 file")


def rg_under(pid: int) -> list[int]:
    """The rg processes descended from ``pid`` (the lab's searches)."""
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                head, rest = fh.read().rsplit(b")", 1)
        except OSError:
            continue
        fields = rest.split()
        if fields[0] in (b"Z", b"X"):
            continue
        parents[int(entry)] = int(fields[1])
        names[int(entry)] = head.split(b"(", 1)[1].decode(errors="replace")
    found = []
    for proc, name in names.items():
        up = parents.get(proc)
        while up and up != pid:
            up = parents.get(up)
        if name == "rg" and up == pid:
            found.append(proc)
    return found


SO_FAR = re.compile(r"^Searching… ([\d,]+ matches in [\d,]+ files) so far$")


def test_stop_on_the_long_search_keeps_its_counts_and_ends_rg(page, lab):
    # the page's clock is the test's: "■ Stop" shows after a second of searching, and that second
    # is skipped once the search has said how far it got: the click does not wait through a second
    # that the search may not last on a quick machine
    page.clock.install()
    panel = open_sidebar(page, lab)
    page.evaluate(WATCH)
    panel.locator(".dsh-sb-pattern").press_sequentially("in generated")
    expect()(status(panel)).to_have_text(SO_FAR, timeout=30_000)
    page.clock.fast_forward(1_000)
    stop = panel.locator(".dsh-sb-stop")
    stop.click()
    expect()(status(panel)).to_have_text(re.compile(r"^Stopped after [\d,]+ matches in [\d,]+ files$"))
    said = status(panel).inner_text()
    reports = {m.group(1) for t in page.evaluate(SEEN)["texts"] if (m := SO_FAR.match(t))}
    assert said.removeprefix("Stopped after ") in reports, (said, reports)
    expect()(panel.locator(".dsh-sb-search")).not_to_have_attribute("aria-busy", "true")
    expect()(panel.locator(".dsh-sb-file")).to_have_count(0)
    deadline = time.monotonic() + 5
    while rg_under(lab.proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert rg_under(lab.proc.pid) == []
    # the server was told: the call is logged as cancelled, not answered
    calls: list = []
    while time.monotonic() < deadline + 5:
        _, data = lab.request("GET", f"dsh/api/sessions/{SIDEBAR_SESSION}/calls?offset=0&limit=1000")
        calls = [c for c in data["calls"] if c["args"].get("pattern") == "in generated"]
        if calls:
            break
        time.sleep(0.1)
    assert [c["text"] for c in calls] == ["Error: grep was cancelled before it finished"]


def rest_ms(lab, pattern: str) -> float:
    """One search as the panel posts it (first page, any case, .gitignore on), over REST."""
    body = {
        "session": SIDEBAR_SESSION,
        "args": {"pattern": pattern, "ignore_case": True, "offset": 1},
        "respect_ignore_files": True,
    }
    started = time.perf_counter()
    code, data = lab.request("POST", "dsh/api/tools/grep", body, timeout=60)
    took = (time.perf_counter() - started) * 1000
    assert code == 200 and not data["isError"], (code, data)
    return took


@pytest.mark.parametrize(
    ("pattern", "shape", "early"),
    [
        pytest.param("hit", "500,003 matching lines in 50,001 files (partial)", True, id="500000-lines"),
        # rg's one row comes as it ends
        pytest.param(NEEDLE, "1 match, 50,002 files searched", False, id="one-match"),
    ],
)
def test_first_rows_beside_the_same_rest_call(page, lab, pattern, shape, early):
    panel = open_sidebar(page, lab)
    rest_ms(lab, pattern)  # the session and the page cache warm, for both
    rest, first, done = [], [], []
    for turn in range(3):  # in turns, the order swapped each turn
        if turn % 2:
            rest.append(rest_ms(lab, pattern))
        seen = typed(panel, pattern)
        never_blank(seen)
        first.append(seen["firstRows"])
        done.append(seen["done"])
        if not turn % 2:
            rest.append(rest_ms(lab, pattern))
    rest_m, first_m, done_m = (statistics.median(x) for x in (rest, first, done))
    target = 1.5 * rest_m + DEBOUNCE_MS
    print(
        f"\n{shape}: REST {rest_m:.0f} ms; the panel's first rows {first_m:.0f} ms and whole answer "
        f"{done_m:.0f} ms after the last keystroke ({DEBOUNCE_MS} ms of it the typing pause); "
        f"target for the first rows {target:.0f} ms (1.5 × REST + the pause); medians of 3, "
        f"REST {[round(x) for x in rest]}, first rows {[round(x) for x in first]}, whole {[round(x) for x in done]}"
    )
    if early:  # whatever the load, a broad search's first rows are shown while it runs
        assert all(f < d for f, d in zip(first, done)), (first, done)
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    if load < cores:
        assert first_m <= target, (first_m, target)
    else:
        print(f"(the target not held: load average {load:.1f} on {cores} cores)")
