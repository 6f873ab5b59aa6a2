"""The workspace index on a million small files: its build, then grep, glob and find answered from it.

    python benchmarks/bench_index.py [--files 1000000] [--runs 5] [--dir /tmp/dsh-bench-index]

The tree (built once under ``--dir``, reused while its marker exists): ``--files`` small text
files (a few hundred bytes each) in folders of 1,000 (``pkgNN/modNNN``), 60 % ``*.py``, the
literal ``zq_index_needle`` in 0.5 % of them, each file dated at random over a year.

Measured, beside the baseline each target names (docs/performance.md, "index"):

- the build: a workspace with ``index_min_files=1`` from ``start()`` to ``state`` "ready",
  beside one ``rg -c LITERAL`` pass over the tree (the median of three); the index's size on disk; this process's peak
  resident memory (``VmHWM``: the index is kept in this process) before and after the build, and
  after one indexed grep, regex, glob and find (before any call with the index off);
- then in turns, as medians of wall time and of CPU time (this process and the rg it started):
  grep of the literal from the index (``source`` "index") beside bare ``rg`` and beside a
  workspace with the index off; a regex with no three characters every match holds, indexed
  beside off; glob ``*.py`` beside ``rg --files --sort=modified`` and beside off; find beside
  ``rg --files`` and beside off.

``--build-only`` builds the tree and measures nothing; ``--index-build-only`` measures the index's
build and nothing after it; ``--python-reader`` builds without the compiled trigram reader (as a
package built with no C compiler does).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import random
import resource
import shutil
import statistics
import subprocess
import tempfile
import time

from bigtrees import built_once  # benchmarks/bigtrees.py
from timing import cpu_seconds, wall_and_cpu_in_turns  # benchmarks/timing.py

from dsh_jupyter import Workspace
from dsh_jupyter.core.index import native
from dsh_jupyter.core.rg.runner import find_rg, scrubbed_env

LITERAL = "zq_index_needle"
_YEAR = 365 * 24 * 3600
_FILLER = "    value = compute(value, step) + offset  # an ordinary line of code, about this long\n"


def _needle(i: int) -> bool:
    return i % 200 == 7  # 0.5 % of the files


def _is_py(i: int) -> bool:
    return i % 5 < 3  # 60 %


def write_tree(path: str, files: int) -> None:
    """``files`` small files in ``files // 1000`` folders of 1,000 (pkgNN/modNNN), each dated at random over a year."""
    rng = random.Random(files)
    now = time.time()
    per = 1000
    for d in range(max(1, files // per)):
        folder = os.path.join(path, f"pkg{d // 100:02d}", f"mod{d % 100:03d}")
        os.makedirs(folder, exist_ok=True)
        for k in range(per):
            i = d * per + k
            body = f"# file {i}\nimport os\n\ndef f{i}(value, step, offset):\n" + _FILLER * 3
            if _needle(i):
                body += f"    {LITERAL} = configure(value, retries=3)\n"
            body += "    return value\n"
            name = os.path.join(folder, f"file{i:07d}.{'py' if _is_py(i) else 'txt'}")
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.write(fd, body.encode())
            os.close(fd)
            stamp = now - rng.uniform(0, _YEAR)
            os.utime(name, (stamp, stamp))


def tree(top: str, files: int) -> str:
    path = os.path.join(top, f"index-{files}")
    built_once(os.path.join(top, f".index-{files}-complete"), lambda: write_tree(path, files))
    return path


def peak_rss_mib() -> float:
    """This process's peak resident memory (``VmHWM``), MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rg_run(rg: str, cwd: str, *args: str):
    argv = [rg, "--no-config", *args]

    def run() -> int:
        out = subprocess.run(argv, cwd=cwd, env=scrubbed_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return len(out.stdout)

    return run


def workspace(path: str, index: bool) -> Workspace:
    state = tempfile.mkdtemp(prefix="dsh-bench-")
    atexit.register(shutil.rmtree, state, True)  # its index and saved results: hundreds of MiB
    return Workspace(
        path,
        state_path=os.path.join(state, "s.sqlite"),
        raw_output_max_bytes=500_000_000,
        index_min_files=1 if index else 0,
    )


def call(ws: Workspace, tool: str, source: str | None, **args):
    def run():
        r = ws.run(tool, **args)
        assert not r.is_error, r.text
        if source is not None:
            assert r.value.get("source") == source, (tool, args, r.value.get("source"), r.value.get("index_note"))
        return r

    return run


def row(label: str, t: dict, c: dict, name: str, base: str) -> None:
    print(
        f"  {label:<34} {t[name] * 1000:>8.0f} ms {t[base] * 1000:>8.0f} ms {t[name] / t[base]:>6.3f}x"
        f"   {c[name] * 1000:>8.0f} ms {c[base] * 1000:>8.0f} ms {c[name] / c[base]:>6.3f}x"
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "dsh-bench-index"))
    ap.add_argument("--build-only", action="store_true", help="build the tree, measure nothing")
    ap.add_argument("--index-build-only", action="store_true", help="measure the index's build alone")
    ap.add_argument("--python-reader", action="store_true", help="build without the compiled trigram reader")
    opts = ap.parse_args()
    os.makedirs(opts.dir, exist_ok=True)
    path = tree(opts.dir, opts.files)
    if opts.build_only:
        return 0
    rg = find_rg()
    assert rg, "no rg"
    print(f"tree {path}: {opts.files:,} files; load {os.getloadavg()[0]:.2f}")

    # -- the build, beside one rg pass -----------------------------------------------------------
    rg_pass = rg_run(rg, path, "-c", LITERAL)
    rg_pass()  # the page cache warm, as it is for the build
    passes = []  # one pass varies by nearly 2x on a shared machine: the median of three
    for _ in range(3):
        c0, t0 = cpu_seconds(), time.perf_counter()
        rg_pass()
        passes.append((time.perf_counter() - t0, cpu_seconds() - c0))
    rg_wall, rg_cpu = statistics.median(w for w, _ in passes), statistics.median(c for _, c in passes)
    print("rg passes: " + ", ".join(f"{w:.1f} s wall / {c:.1f} s CPU" for w, c in passes))
    rss0 = peak_rss_mib()
    ws = workspace(path, True)
    assert ws.index is not None
    with native.python_only() if opts.python_reader else contextlib.nullcontext():
        print(f"the compiled trigram reader: {'used' if native.available() else 'not used'}")
        c0, t0 = cpu_seconds(), time.perf_counter()
        ws.index.start()
        while ws.index.status()["state"] in ("idle", "counting", "building"):
            time.sleep(0.02)
        build_wall, build_cpu = time.perf_counter() - t0, cpu_seconds() - c0
    status = ws.index.status()
    assert status["state"] == "ready", status
    print(
        f"build: {build_wall:.1f} s wall, {build_cpu:.1f} s CPU;"
        f" one rg pass (median) {rg_wall:.1f} s wall, {rg_cpu:.1f} s CPU;"
        f" {build_wall / rg_wall:.2f}x wall, {build_cpu / rg_cpu:.2f}x CPU (target <= 2x)"
    )
    print(
        f"index: {status['files']:,} files, {status['diskBytes'] / 2**20:.0f} MiB on disk;"
        f" peak RSS {rss0:.0f} MiB before the build, {peak_rss_mib():.0f} MiB after it (target <= 256 MiB)"
    )
    if opts.index_build_only:
        return 0

    regex = r"\d{3}77$"  # 1 % of the files; no three characters every match holds
    calls = {
        "grep": call(ws, "grep", "index", pattern=LITERAL, output_mode="files_with_matches"),
        "regex": call(ws, "grep", "rg", pattern=regex, output_mode="count"),
        "glob": call(ws, "glob", "index", pattern="*.py"),
        "find": call(ws, "find", "index", query="f42py"),
    }
    for fn in calls.values():
        fn()
    print(f"peak RSS after one indexed grep, regex, glob and find: {peak_rss_mib():.0f} MiB (index-off runs follow)")

    off = workspace(path, False)
    print(f"\n  {'':<34} {'wall':>11} {'baseline':>11} {'ratio':>7}   {'CPU':>11} {'baseline':>11} {'ratio':>7}")
    t, c = wall_and_cpu_in_turns(
        {
            "indexed": calls["grep"],
            "off": call(off, "grep", None, pattern=LITERAL, output_mode="files_with_matches"),
            "rg": rg_run(rg, path, "-l", LITERAL),
        },
        opts.runs,
    )
    row(f"grep {LITERAL} vs rg -l", t, c, "indexed", "rg")
    row(f"grep {LITERAL} vs index off", t, c, "indexed", "off")
    t, c = wall_and_cpu_in_turns(
        {
            "indexed": calls["regex"],
            "off": call(off, "grep", None, pattern=regex, output_mode="count"),
        },
        opts.runs,
    )
    row(f"grep {regex} vs index off", t, c, "indexed", "off")
    t, c = wall_and_cpu_in_turns(
        {
            "indexed": calls["glob"],
            "off": call(off, "glob", None, pattern="*.py"),
            "rg": rg_run(rg, path, "--files", "--null", "--sort=modified", "--glob=*.py"),
        },
        opts.runs,
    )
    row("glob *.py vs rg --files --sort=modified", t, c, "indexed", "rg")
    row("glob *.py vs index off", t, c, "indexed", "off")
    t, c = wall_and_cpu_in_turns(
        {
            "indexed": calls["find"],
            "off": call(off, "find", None, query="f42py"),
            "rg": rg_run(rg, path, "--files", "--null"),
        },
        opts.runs,
    )
    row("find f42py vs rg --files", t, c, "indexed", "rg")
    row("find f42py vs index off", t, c, "indexed", "off")
    print(f"\nload after: {os.getloadavg()[0]:.2f}")
    ws.close()
    off.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
