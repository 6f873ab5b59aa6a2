"""glob, grep and recursive list_dir on trees of several shapes, each beside its floor in one run.

    python benchmarks/bench_shapes.py [--runs 5] [--dir DIR] [--only folders-small,...]

The trees (``bigtrees.build_shaped``, built once into DIR, default ``$TMPDIR/dsh-bench-shapes``):
100,000 files laid out and dated three ways — ``folders`` (written folder by folder: times
follow the folders), ``spread`` (the same folders, each file dated at random over a year),
``huge`` (one folder of 50,000 files beside 2,500 small folders, dated at random) — in two
file-size mixes, ``small`` (a few hundred bytes each) and ``mixed`` (200 B to 20 KB,
log-uniform). Every tree holds 60,101 ``*.py`` files and 44,453 ``perf_needle`` lines in 11,113 files.

Per tree, in turns (floor, tool, floor, tool, ...: a change in the shared machine's load falls on
both), medians of ``--runs``, the floor's output read through a pipe as anyone running rg reads it:

- ``glob("*.py")``                   vs ``rg --files --sort=modified --glob=*.py``   target <= 1.0
  (and, for the record, the same with glob's dater in Python, as without a C compiler)
- ``grep("perf_needle")``            vs ``rg --json --regexp=perf_needle``           target <= 1.2
  (and, for the record, rg's heading form with the same flags)
- ``grep(..., output_mode="files_with_matches")`` vs ``rg --files-with-matches``     target <= 1.0
  (and, for the record, ``rg --files-with-matches --null``: with --null rg buffers its output
  instead of writing each path as it finds it)

and once, on one folder of 101,000 entries (1 in 100 a subfolder), a recursive ``list_dir``
through each stdio MCP server, ours and the reference filesystem server's ``list_directory``
(``@modelcontextprotocol/server-filesystem``, installed by npm into benchmarks/node on first
use), each a long-lived process answering ``tools/call`` — target <= 1.0 — and, for the record,
a plain ``os.scandir`` walk in this process.

The tool figures include everything a caller of the Python API pays: argument checks,
confinement, rg, parsing, sampling, rendering, the spill file and the call log.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench_mcp_startup import INIT, INITIALIZED, reference_server  # benchmarks/bench_mcp_startup.py
from bigtrees import MIXES, SHAPES, build_listing, build_shaped  # benchmarks/bigtrees.py

from dsh_jupyter import Workspace
from dsh_jupyter.core.fs import mtimes as compiled
from dsh_jupyter.core.rg.runner import find_rg, scrubbed_env
from dsh_jupyter.core.tools.search.flags import DISCOVERY, VCS_EXCLUDES

NEEDLE = "perf_needle"


def paired(tool, floor, runs: int) -> tuple[float, float]:
    """Median seconds of ``tool`` and ``floor``, taken in turns after one untimed call of each."""
    tool(), floor()
    tool_times, floor_times = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        floor()
        floor_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        tool()
        tool_times.append(time.perf_counter() - t0)
    return statistics.median(tool_times), statistics.median(floor_times)


def rg_floor(rg: str, args: list[str], cwd: str):
    argv = [rg, "--no-config", *DISCOVERY, *VCS_EXCLUDES, *args, "--", "."]

    def run() -> int:
        out = subprocess.run(
            argv,
            cwd=cwd,
            env=scrubbed_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        return len(out.stdout)

    return run


def tree_rows(tree: str, runs: int, rg: str) -> list[tuple[str, float, float, float]]:
    ws = Workspace(
        tree,
        state_path=os.path.join(tempfile.mkdtemp(prefix="dsh-bench-"), "s.sqlite"),
        raw_output_max_bytes=200_000_000,
    )
    glob = ws.run("glob", pattern="*.py")
    grep = ws.run("grep", pattern=NEEDLE)
    files = ws.run("grep", pattern=NEEDLE, output_mode="files_with_matches")
    assert glob.value["totalPaths"] == 60_101, glob.text[:300]
    assert grep.value["totalMatches"] == 44_453, grep.text[:300]
    assert files.value["filesTotal"] == 11_113, files.text[:300]
    rows = []
    t, f = paired(
        lambda: ws.run("glob", pattern="*.py"),
        rg_floor(rg, ["--files", "--null", "--sort=modified", "--glob=*.py"], tree),
        runs,
    )
    rows.append(("glob *.py", t, f, 1.0))
    # for the record: what an install without a C compiler gets (glob's dater in Python)
    with compiled.python_only():
        t, f = paired(
            lambda: ws.run("glob", pattern="*.py"),
            rg_floor(rg, ["--files", "--null", "--sort=modified", "--glob=*.py"], tree),
            runs,
        )
    rows.append(("  dated in Python", t, f, 0.0))
    heading = rg_floor(rg, ["--heading", "--line-number", "--no-column", f"--regexp={NEEDLE}"], tree)
    t, f = paired(lambda: ws.run("grep", pattern=NEEDLE), rg_floor(rg, ["--json", f"--regexp={NEEDLE}"], tree), runs)
    rows.append(("grep (rg --json)", t, f, 1.2))
    t2, f2 = paired(lambda: ws.run("grep", pattern=NEEDLE), heading, runs)
    rows.append(("grep (rg heading)", t2, f2, 0.0))
    files_call = lambda: ws.run("grep", pattern=NEEDLE, output_mode="files_with_matches")  # noqa: E731
    t, f = paired(files_call, rg_floor(rg, ["--files-with-matches", f"--regexp={NEEDLE}"], tree), runs)
    rows.append(("grep files_with_matches", t, f, 1.0))
    # rg flushes each path it prints with -l unless --null is given (11,113 writes here, one per
    # matching file); the tool reads rg's --count --null form, so for the record that form too.
    t, f = paired(files_call, rg_floor(rg, ["--files-with-matches", "--null", f"--regexp={NEEDLE}"], tree), runs)
    rows.append(("  vs rg -l --null", t, f, 0.0))
    return rows


class Stdio:
    """A long-lived stdio MCP server: one handshake, then timed ``tools/call`` requests."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 1
        self.send(INIT)
        self.send(INITIALIZED, reply=False)

    def send(self, message: dict, reply: bool = True) -> dict | None:
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()
        if not reply:
            return None
        answer = json.loads(self.proc.stdout.readline())
        assert "result" in answer and not answer["result"].get("isError"), str(answer)[:500]
        return answer

    def call(self, name: str, arguments: dict) -> dict:
        self.next_id += 1
        return self.send(
            {
                "jsonrpc": "2.0",
                "id": self.next_id,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
        )

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def scandir_walk(path: str) -> int:
    """Every entry below ``path`` with its kind, as one text (the floor of a recursive listing)."""
    lines: list[str] = []
    stack = [path]
    while stack:
        folder = stack.pop()
        with os.scandir(folder) as it:
            for entry in it:
                is_dir = entry.is_dir(follow_symlinks=False)
                lines.append(("[DIR] " if is_dir else "[FILE] ") + entry.path)
                if is_dir:
                    stack.append(entry.path)
    lines.sort()
    return len("\n".join(lines))


def list_dir_rows(top: str, runs: int) -> list[tuple[str, float, float, float]]:
    folder = build_listing(top)
    state = os.path.join(tempfile.mkdtemp(prefix="dsh-bench-"), "s.sqlite")
    ours = Stdio(
        [os.path.join(os.path.dirname(sys.executable), "dsh-jupyter-mcp"), "--root", folder, "--state-path", state]
    )
    rows = []
    try:
        ours_call = lambda: ours.call("list_dir", {"path": ".", "recursive": True})  # noqa: E731
        value = ours_call()["result"]["structuredContent"]
        listed = len(value["entries"])
        assert listed == 101_000 or value["truncated"], str(value)[-300:]
        ref_argv = reference_server()
        if ref_argv is not None:
            theirs = Stdio([*ref_argv, folder])
            try:
                t, f = paired(ours_call, lambda: theirs.call("list_directory", {"path": folder}), runs)
                rows.append((f"list_dir recursive (MCP, {listed:,})", t, f, 1.0))
            finally:
                theirs.close()
        t, f = paired(ours_call, lambda: scandir_walk(folder), runs)
        rows.append(("list_dir vs os.scandir walk", t, f, 0.0))
    finally:
        ours.close()
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "dsh-bench-shapes"))
    ap.add_argument("--only", help="comma-separated trees such as spread-small (default: all six)")
    opts = ap.parse_args()
    rg = find_rg()
    trees = [f"{s}-{m}" for s in SHAPES for m in MIXES]
    if opts.only:
        trees = [t for t in trees if t in opts.only.split(",")]
    print(f"{'tree':<15}{'work':<30}{'tool ms':>9}{'floor ms':>10}{'ratio':>8}{'target':>8}")
    for name in trees:
        shape, mix = name.split("-")
        t0 = time.perf_counter()
        tree = build_shaped(opts.dir, shape, mix)
        built = time.perf_counter() - t0
        for work, tool, floor, target in tree_rows(tree, opts.runs, rg):
            goal = f"<={target:.1f}" if target else ""
            print(
                f"{name:<15}{work:<30}{tool * 1000:>9.0f}{floor * 1000:>10.0f}{tool / floor:>8.2f}{goal:>8}", flush=True
            )
        if built > 1:
            print(f"{'':<15}(tree built in {built:.0f} s)")
    for work, tool, floor, target in list_dir_rows(opts.dir, opts.runs):
        goal = f"<={target:.1f}" if target else ""
        print(f"{'listing-101k':<15}{work:<30}{tool * 1000:>9.0f}{floor * 1000:>10.0f}{tool / floor:>8.2f}{goal:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
