"""One "next page" request to the listing widget, beside the core call and the filesystem floor.

    python benchmarks/bench_widget_paging.py [--entries 100000] [--runs 7] [--dir DIR]

Builds (once, reusing DIR if it already holds the tree) one directory of N entries (1 in 100 a
subdirectory), then times, in one run, the median of several:
  - ``os.scandir`` + sort (directories first, then files, each by name) + the first page: the floor;
  - ``Workspace.run("list", path=…, offset=…)``: the tool through the Python API;
  - one "next" request handled by the listing widget in the kernel (the message the browser sends,
    the core call, the folder's change stamp, the one state update and the "done" answer);
and after each request the rows the widget holds (one page), the messages it sent and their size
(counted with a recording comm; no kernel or browser is involved). What the browser then takes
to draw the rows is measured by ``bench_widget_browser.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import comm
from bigtrees import build_tree, built_once, folder_of  # benchmarks/bigtrees.py
from comm.base_comm import BaseComm

from dsh_jupyter import Workspace
from dsh_jupyter.kernel.widgets import ListingView

SENT: list = []


class CountingComm(BaseComm):
    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        SENT.append((msg_type, len(json.dumps(data or {}))))


def build_dir(path: str, entries: int) -> None:
    marker = os.path.join(os.path.dirname(path), f".bench-{entries}-complete")
    built_once(marker, lambda: build_tree(path, folder_of(entries, suffix=".txt", text="x\n")))


def floor(path: str, offset: int, page: int) -> list:
    """The least a correct page costs: one scandir, names split by type, two sorts, a slice."""
    directories, files = [], []
    with os.scandir(path) as it:
        for e in it:
            (directories if e.is_dir(follow_symlinks=False) else files).append(e.name)
    directories.sort()
    files.sort()
    return (directories + files)[offset - 1 : offset - 1 + page]


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def click(view: ListingView) -> tuple[float, int, int, int]:
    """One "next" request as the browser sends it: (seconds, rows held, messages sent, bytes sent)."""
    SENT.clear()
    t0 = time.perf_counter()
    view._on_msg(view, {"action": "page", "seq": 1, "where": "next"}, [])
    seconds = time.perf_counter() - t0
    assert not view.error, view.error
    return seconds, len(view.rows), len(SENT), sum(size for _kind, size in SENT)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--dir", default=None, help="where to build the tree (default: a temporary folder)")
    opts = ap.parse_args()

    base = opts.dir or tempfile.mkdtemp(prefix="dsh-bench-widget-")
    root = os.path.join(base, "root")
    target = os.path.join(root, "big")
    t0 = time.perf_counter()
    build_dir(target, opts.entries)
    print(f"tree: {target} ({opts.entries:,} entries, built in {time.perf_counter() - t0:.1f} s)")

    comm.create_comm = lambda *a, **k: CountingComm(*a, **k)
    ws = Workspace(root, session="bench", state_path=os.path.join(base, "state.sqlite"))
    page = ws.settings.list_max_entries
    offsets = [1 + page * (i + 1) for i in range(opts.runs)]

    SENT.clear()
    t = time.perf_counter()
    view = ListingView(ws, ws.session, path="big")
    build_s = time.perf_counter() - t
    opened = sum(1 for kind, _ in SENT if kind == "comm_open")

    # One round per run, each measuring all three the same way, so drift on a busy machine
    # affects them alike.
    floor_t, tool_t, click_t, held, messages, sizes = [], [], [], [], [], []
    for offset in offsets:
        t = time.perf_counter()
        floor(target, offset, page)
        floor_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        r = ws.run("list", path="big", offset=offset)
        tool_t.append(time.perf_counter() - t)
        assert not r.is_error, r.text
        seconds, rows, sent, size = click(view)
        click_t.append(seconds), held.append(rows), messages.append(sent), sizes.append(size)

    f, tool, clicked = (median_ms(x) for x in (floor_t, tool_t, click_t))
    print(f"page size: {page} (list_max_entries); medians of {opts.runs} runs")
    print(f"  os.scandir + sort + page (floor)     {f:8.1f} ms")
    print(f"  Workspace.run('list', offset=…)      {tool:8.1f} ms   {tool / f:5.2f}x floor")
    print(
        f"  widget 'next' request (kernel side)  {clicked:8.1f} ms   {clicked / f:5.2f}x floor, "
        f"{clicked - tool:+.1f} ms over the core call (the change stamp and the state update)"
    )
    print(f"  first display of the widget          {build_s * 1000:8.1f} ms   ({opened} widget models opened)")
    print(f"  rows held after each request:         {held}")
    print(f"  messages per request:                 {messages}")
    print(f"  bytes per request:                    {sizes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
