"""One "next page" click in the listing widget, beside the core call and the filesystem floor.

    python benchmarks/bench_widget_paging.py [--entries 100000] [--runs 7] [--dir DIR]

Builds (once, reusing DIR if it already holds the tree) one directory of N entries (1 in 100 a
subdirectory), then times, in one run, the median of several:
  - ``os.scandir`` + sort (directories first, then files, each by name) + the first page: the floor;
  - ``Workspace.run("list", path=…, offset=…)``: the tool through the Python API;
  - one click on the listing widget's "next" button: the core call plus updating the widgets
    (row widgets reused: the default), with the widget's own update timed apart, and the same
    click with every row widget rebuilt per page (``ListingView.reuse_rows = False``), to show
    what reuse buys;
and after each click the number of rows the widget holds (one page) and the messages the click
would send to the browser (counted with a recording comm; no kernel or browser is involved).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import comm
from comm.base_comm import BaseComm

from dsh_jupyter import Workspace
from dsh_jupyter.kernel.widgets import ListingView

SENT: list = []


class CountingComm(BaseComm):
    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        SENT.append(msg_type)


def build_dir(path: str, entries: int) -> None:
    marker = os.path.join(os.path.dirname(path), f".bench-{entries}-complete")
    if os.path.exists(marker):
        return
    os.makedirs(path, exist_ok=True)
    for i in range(entries):
        name = os.path.join(path, f"entry{i:06d}")
        if i % 100 == 0:
            os.makedirs(name, exist_ok=True)
        else:
            with open(name + ".txt", "w") as f:
                f.write("x\n")
    open(marker, "w").close()


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


SHOW_TIMES: list = []


def timed_show(view: ListingView) -> None:
    """Record how long the widget spends updating itself (everything after the core call)."""
    show = view.show

    def wrapper(result):
        t0 = time.perf_counter()
        show(result)
        SHOW_TIMES.append(time.perf_counter() - t0)

    view.show = wrapper


def click(view: ListingView) -> tuple[float, int, int]:
    """One "next" click: (seconds, rows held afterwards, messages sent)."""
    SENT.clear()
    t0 = time.perf_counter()
    view.pager.next_button.click()
    seconds = time.perf_counter() - t0
    assert not view.error, view.error
    return seconds, len(view.rows), len(SENT)


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
    opened = SENT.count("comm_open")
    ListingView.reuse_rows = False
    rebuild_view = ListingView(ws, ws.session, path="big")
    ListingView.reuse_rows = True
    timed_show(view)

    # One round per run, each measuring all four the same way, so drift on a busy machine
    # affects them alike.
    floor_t, tool_t, reuse_t, rebuild_t = [], [], [], []
    held, messages, rebuild_held, rebuild_messages = [], [], [], []
    for offset in offsets:
        t = time.perf_counter()
        floor(target, offset, page)
        floor_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        r = ws.run("list", path="big", offset=offset)
        tool_t.append(time.perf_counter() - t)
        assert not r.is_error, r.text
        seconds, rows, sent = click(view)
        reuse_t.append(seconds), held.append(rows), messages.append(sent)
        ListingView.reuse_rows = False
        seconds, rows, sent = click(rebuild_view)
        ListingView.reuse_rows = True
        rebuild_t.append(seconds), rebuild_held.append(rows), rebuild_messages.append(sent)

    f, tool, reused, rebuild = (median_ms(x) for x in (floor_t, tool_t, reuse_t, rebuild_t))
    print(f"page size: {page} (list_max_entries); medians of {opts.runs} runs")
    print(f"  os.scandir + sort + page (floor)     {f:8.1f} ms")
    print(f"  Workspace.run('list', offset=…)      {tool:8.1f} ms   {tool / f:5.2f}x floor")
    print(f"  widget 'next' click (rows reused)    {reused:8.1f} ms   {reused / f:5.2f}x floor, "
          f"{reused - tool:+.1f} ms over the core call")
    print(f"    of which the widget's own update   {median_ms(SHOW_TIMES):8.1f} ms   (rows, footer, pager; the rest is "
          "the core call)")
    print(f"  widget 'next' click (rows rebuilt)   {rebuild:8.1f} ms   {rebuild / reused:5.2f}x the reused click")
    print(f"  first display of the widget          {build_s * 1000:8.1f} ms   ({opened} widget models opened)")
    print(f"  rows held after each click (reused):  {held}")
    print(f"  rows held after each click (rebuilt): {rebuild_held}")
    print(f"  messages per click (reused):          {messages}")
    print(f"  messages per click (rebuilt):         {rebuild_messages}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
