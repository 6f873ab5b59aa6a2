"""A deep ``read`` window of a big file beside ``tail | head`` and ``sed``.

    python benchmarks/bench_read.py [--size-mib 1024] [--start 5000001] [--runs 5] [--file F]

Generates (once) a file of short numbered lines, then times, as medians in one run, the window
of 2,000 lines starting at line ``--start``:
  - ``tail -n +S FILE | head -n 2000`` (the floor),
  - ``sed -n 'S,Ep;Eq' FILE``,
  - ``Workspace.run("read", file_path=…, offset=S)`` through the Python API,
and the file's last 2,000 lines:
  - ``tail -n 2000 FILE`` with its output read through a pipe (the floor),
  - ``Workspace.run("read", file_path=…, offset=-2000)``, timed in turns with the floor,
and prints the ratios and the peak memory of a process that does one such read.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

from bigtrees import numbered_lines  # benchmarks/bigtrees.py
from timing import median_time  # benchmarks/timing.py

from dsh_jupyter import Workspace


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--start", type=int, default=5_000_001)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--file")
    opts = ap.parse_args()
    path = opts.file or os.path.join(tempfile.gettempdir(), f"dsh-bench-read-{opts.size_mib}.txt")
    if not (os.path.exists(path) and os.path.getsize(path) >= opts.size_mib << 20):
        numbered_lines(path, opts.size_mib << 20)
    folder, name = os.path.split(path)
    start, end = opts.start, opts.start + 1999
    ws = Workspace(folder, state_path=os.path.join(tempfile.mkdtemp(), "s.sqlite"))
    r = ws.run("read", file_path=name, offset=start)
    assert not r.is_error and r.value["lines"][0]["number"] == start, r.text[-300:]

    t_tail = median_time(
        lambda: subprocess.run(
            f"tail -n +{start} '{path}' | head -n 2000", shell=True, stdout=subprocess.DEVNULL, check=True
        ),
        opts.runs,
    )
    t_sed = median_time(
        lambda: subprocess.run(["sed", "-n", f"{start},{end}p;{end}q", path], stdout=subprocess.DEVNULL, check=True),
        opts.runs,
    )
    t_tool = median_time(lambda: ws.run("read", file_path=name, offset=start), opts.runs)

    # The last 2,000 lines, in turns (tail, read, tail, read, ...) so both meet the same machine.
    # The byte cap is raised so that read shows all 2,000 lines, as tail prints them.
    ws = Workspace(folder, state_path=os.path.join(tempfile.mkdtemp(), "s.sqlite"), read_max_bytes=1 << 20)
    last = ws.run("read", file_path=name, offset=-2000)
    assert not last.is_error and len(last.value["lines"]) == 2000, last.text[-300:]
    assert last.value["lines"][-1]["number"] == -1, last.text[-300:]
    tails, reads = [], []
    for _ in range(max(opts.runs, 21)):
        tails.append(
            median_time(lambda: subprocess.run(["tail", "-n", "2000", path], stdout=subprocess.PIPE, check=True), 1)
        )
        reads.append(median_time(lambda: ws.run("read", file_path=name, offset=-2000), 1))
    t_last_floor, t_last = statistics.median(tails), statistics.median(reads)

    probe = (
        "import sys\n"
        "from dsh_jupyter import Workspace\n"
        f"ws = Workspace({folder!r}, state_path={os.path.join(tempfile.mkdtemp(), 's.sqlite')!r})\n"
        "before = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])\n"
        f"ws.run('read', file_path={name!r}, offset={start})\n"
        "print(before, int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    before_kib, after_kib = map(int, out.stdout.split())
    print(f"{os.path.getsize(path) / (1 << 30):.2f} GiB file {path}; lines {start}-{end}")
    print(f"{'work':<28}{'ms':>8}{'ratio':>8}")
    print(f"{'tail | head':<28}{t_tail * 1000:>8.0f}{1:>8.2f}")
    print(f"{'sed -n':<28}{t_sed * 1000:>8.0f}{t_sed / t_tail:>8.2f}")
    print(f"{'read (Python API)':<28}{t_tool * 1000:>8.0f}{t_tool / t_tail:>8.2f}")
    print("the last 2,000 lines")
    print(f"{'tail -n 2000 (pipe)':<28}{t_last_floor * 1000:>8.1f}{1:>8.2f}")
    print(f"{'read offset=-2000':<28}{t_last * 1000:>8.1f}{t_last / t_last_floor:>8.2f}")
    with open("/proc/self/status") as status:
        own_peak_kib = int(status.read().split("VmHWM:")[1].split()[0])
    print(
        f"peak memory growth of one read: {(after_kib - before_kib) / 1024:.1f} MiB "
        f"(process peak {after_kib / 1024:.0f} MiB; this process {own_peak_kib / 1024:.0f} MiB)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
