"""Every row of the performance targets in one run: each tool beside its floor, medians, ratios.

    python benchmarks/bench_targets.py [--runs 7] [--dir DIR]

Uses the trees of ``bigtrees.py`` (built once into DIR, default ``$TMPDIR/dsh-bench-targets``)
and times, through ``Workspace.run``, side by side with the floor in the same run (in turns: floor,
tool, floor, tool, ..., so a change in the shared machine's load falls on both):

- ``glob("*.py")`` over 100,000 files  vs  ``rg --files --sort=modified --glob=*.py`` (the tool's
  discovery flags), and, for the record, the alternative glob could take: rg's parallel unsorted
  walk plus an ``fstatat`` of every path and a sort (each stat costs a system call, which is what
  rg's sorted mode spends its time on too);
- ``grep("perf_needle")``, 44,453 matches  vs  ``rg --json --regexp=perf_needle`` (same flags);
- ``read`` of lines 5,000,001-5,002,000 of a 1 GiB file, the first deep read of that file (the
  line index emptied before each run)  vs  ``tail -n +S FILE | head -n 2000``; and the memory
  growth of a process doing one such read;
- the next window (offset 5,002,001) right after that read  vs  the same floor;
- ``list`` page 2 of the 101,000-entry folder right after page 1 (the folder cache emptied before
  each page 1)  vs  ``os.scandir`` + sort + 200.

The tool figures include everything a caller pays: argument checks, confinement, rg, parsing,
sampling, rendering, the spill file and the call log.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bigtrees import DEFAULT_DIR, build_all  # benchmarks/bigtrees.py

from dsh_jupyter import Workspace
from dsh_jupyter.core.rg.recheck import Rechecker
from dsh_jupyter.core.rg.runner import find_rg, scrubbed_env
from dsh_jupyter.core.tools.search.flags import DISCOVERY, VCS_EXCLUDES

START = 5_000_001
WINDOW = 2000


def paired(tool, floor, runs: int, before=None) -> tuple[float, float]:
    """Median wall times (s) of ``runs`` calls of ``tool`` and of ``floor``, taken in turns (floor,
    tool, floor, tool, ...) so that a change in the shared machine's load falls on both alike;
    ``before()`` runs untimed ahead of each tool call."""
    tool_times, floor_times = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        floor()
        floor_times.append(time.perf_counter() - t0)
        if before is not None:
            before()
        t0 = time.perf_counter()
        tool()
        tool_times.append(time.perf_counter() - t0)
    return statistics.median(tool_times), statistics.median(floor_times)


def rg_raw(rg: str, args: list[str], cwd: str) -> None:
    subprocess.run(
        [rg, *args],
        cwd=cwd,
        env=scrubbed_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def unsorted_and_stat(rg: str, args: list[str], cwd: str) -> None:
    """The alternative glob was measured against: rg's parallel unsorted walk, then our own
    ``fstatat`` of every path (beneath the root, no symlink followed) and a sort by mtime."""
    out = subprocess.run(
        [rg, *args],
        cwd=cwd,
        env=scrubbed_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        check=False,
    ).stdout
    paths = out.decode("utf-8", "surrogateescape").split("\0")[:-1]
    root = os.open(cwd, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with Rechecker(root) as check:
            stamps = []
            for p in paths:
                folder, name = check._split(p[2:])
                stamps.append(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mtime_ns)
    finally:
        os.close(root)
    sorted(range(len(paths)), key=stamps.__getitem__)


def tail_head(path: str, start: int) -> None:
    subprocess.run(f"tail -n +{start} '{path}' | head -n {WINDOW}", shell=True, stdout=subprocess.DEVNULL, check=True)


def scandir_floor(path: str) -> list[str]:
    with os.scandir(path) as it:
        names = sorted(e.name for e in it)
    return names[200:400]


def read_memory(folder: str, name: str) -> float:
    """Peak RSS growth (MiB) of a fresh process doing one deep read."""
    probe = (
        "from dsh_jupyter import Workspace\n"
        f"ws = Workspace({folder!r}, state_path={os.path.join(tempfile.mkdtemp(), 's.sqlite')!r})\n"
        "ws.run('list')\n"
        "before = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])\n"
        f"r = ws.run('read', file_path={name!r}, offset={START})\n"
        f"r2 = ws.run('read', file_path={name!r}, offset={START + WINDOW})\n"
        "assert not r.is_error and not r2.is_error\n"
        "print(before, int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    before, after = map(int, out.stdout.split())
    return (after - before) / 1024


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--dir", default=DEFAULT_DIR)
    ap.add_argument("--only", default="", help="run only the rows whose name holds this text")
    opts = ap.parse_args()
    trees = build_all(opts.dir)
    rg = find_rg()
    runs = opts.runs
    state = tempfile.mkdtemp(prefix="dsh-bench-state-")
    big_folder, big_name = os.path.split(trees["big"])
    search, listing = trees["search"], trees["listing"]
    ws_search = Workspace(search, state_path=os.path.join(state, "s.sqlite"), raw_output_max_bytes=200_000_000)
    ws_big = Workspace(big_folder, state_path=os.path.join(state, "b.sqlite"))
    ws_list = Workspace(listing, state_path=os.path.join(state, "l.sqlite"))

    glob_args = ["--files", "--sort=modified", *DISCOVERY, "--glob=*.py", *VCS_EXCLUDES, "--", "."]
    unsorted_args = ["--files", "--null", *DISCOVERY, "--glob=*.py", *VCS_EXCLUDES, "--", "."]
    grep_args = ["--json", *DISCOVERY, *VCS_EXCLUDES, "--regexp=perf_needle", "--", "."]
    g = ws_search.run("glob", pattern="*.py")
    m = ws_search.run("grep", pattern="perf_needle")
    r = ws_big.run("read", file_path=big_name, offset=START)
    r2 = ws_big.run("read", file_path=big_name, offset=START + WINDOW)
    p2 = ws_list.run("list", offset=201)
    assert not (g.is_error or m.is_error or r.is_error or r2.is_error or p2.is_error)
    assert g.value["totalPaths"] == 60_101 and m.value["totalMatches"] == 44_453, (
        g.value["totalPaths"],
        m.value["totalMatches"],
    )
    assert r.value["lines"][0]["number"] == START and r2.value["lines"][0]["number"] == START + WINDOW
    assert len(p2.value["entries"]) == 200

    def fresh_read():
        ws_big.lines.clear()

    def first_window():
        ws_big.lines.clear()
        ws_big.run("read", file_path=big_name, offset=START)

    def page_one():
        ws_list.folders.clear()
        ws_list.run("list")

    rows = [
        (
            "glob *.py, 100k files",
            lambda: ws_search.run("glob", pattern="*.py"),
            None,
            "rg --files --sort=modified",
            lambda: rg_raw(rg, glob_args, search),
            1.0,
        ),
        (
            "(glob alternative: rg unsorted + stat)",
            lambda: unsorted_and_stat(rg, unsorted_args, search),
            None,
            "rg --files --sort=modified",
            lambda: rg_raw(rg, glob_args, search),
            None,
        ),
        (
            "grep perf_needle, 44k matches",
            lambda: ws_search.run("grep", pattern="perf_needle"),
            None,
            "rg --json",
            lambda: rg_raw(rg, grep_args, search),
            1.2,
        ),
        (
            "read 5,000,001+2000 of 1 GiB",
            lambda: ws_big.run("read", file_path=big_name, offset=START),
            fresh_read,
            "tail | head",
            lambda: tail_head(trees["big"], START),
            1.5,
        ),
        (
            "read next window 5,002,001",
            lambda: ws_big.run("read", file_path=big_name, offset=START + WINDOW),
            first_window,
            "tail | head",
            lambda: tail_head(trees["big"], START + WINDOW),
            0.1,
        ),
        (
            "list page 2 after page 1",
            lambda: ws_list.run("list", offset=201),
            page_one,
            "scandir + sort + 200",
            lambda: scandir_floor(listing),
            0.2,
        ),
    ]
    print(f"trees in {opts.dir}; medians of {runs}; load average {os.getloadavg()[0]:.2f}")
    print(f"{'work':<32}{'tool ms':>9}  {'floor':<28}{'ms':>7}{'ratio':>8}{'target':>8}")
    met = True
    for name, tool, before, floor_name, floor, target in rows:
        if opts.only not in name:
            continue
        tool()
        floor()
        t_tool, t_floor = paired(tool, floor, runs, before)
        ratio = t_tool / t_floor
        if target is None:  # a measured alternative, not a target
            print(f"{name:<32}{t_tool * 1000:>9.1f}  {floor_name:<28}{t_floor * 1000:>7.1f}{ratio:>8.2f}")
            continue
        met &= ratio <= target
        print(
            f"{name:<32}{t_tool * 1000:>9.1f}  {floor_name:<28}{t_floor * 1000:>7.1f}{ratio:>8.2f}"
            f"{'≤' + format(target, '.1f'):>8}{'' if ratio <= target else '  MISSED'}"
        )
    growth = read_memory(big_folder, big_name) if opts.only in "read" else 0.0
    met &= growth < 64
    print(f"memory growth of a process doing both deep reads: {growth:.1f} MiB (target < 64)")
    print(f"load average after: {os.getloadavg()[0]:.2f}; every target {'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
