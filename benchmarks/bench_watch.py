"""The index's file-event watcher: ``start()`` on a big tree and one ``drain()`` of 10,000 events.

    python benchmarks/bench_watch.py [--files 100000] [--folders 1000] [--runs 5] [--dir DIR]

Creates (once) a tree of ``files`` empty files spread over ``folders`` folders (``--files 1000000``
for the million-file tree), then prints the median of:

- ``start()``: a watch added on every folder before it is listed, beside its floor, a plain walk
  listing every folder with ``os.scandir`` (what any index build does anyway);
- ``drain()`` of 10,000 events (``os.utime`` of 10,000 files: one ``IN_ATTRIB`` each), beside its
  floor, reading the same events' bytes from a second inotify descriptor without parsing them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

from bigtrees import build_tree, built_once  # benchmarks/bigtrees.py
from timing import median_time  # benchmarks/timing.py

from dsh_jupyter.core.index.watch import Watcher

EVENTS = 10_000


def spread(files: int, folders: int) -> dict:
    """``files`` empty files in ``folders`` folders: ``folders // 50`` tops of 50 folders each."""
    return {f"top{k // 50:03d}/dir{k % 50:02d}/f{i:07d}.txt": "" for i in range(files) for k in (i % folders,)}


def walk(path: str) -> int:
    """The floor of start(): every folder listed once (os.scandir, no symlink followed)."""
    count, stack = 0, [path]
    while stack:
        with os.scandir(stack.pop()) as it:
            for entry in it:
                count += 1
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return count


def started(path: str) -> Watcher:
    w = Watcher(path)
    w.start()
    assert w.lost is None, w.lost
    return w


def time_start(path: str) -> None:
    started(path).close()


def time_drain(path: str, touched: list[str], runs: int) -> tuple[float, float]:
    """Median seconds of drain() of len(touched) events, and of reading their bytes raw."""
    drains, raws = [], []
    for _ in range(runs):
        w, raw = started(path), started(path)
        now = time.time()
        for p in touched:
            os.utime(p, (now, now))
        t0 = time.perf_counter()
        changes = w.drain()
        drains.append(time.perf_counter() - t0)
        assert changes.lost is None and len(changes.paths) == len(touched), (changes.lost, len(changes.paths))
        t0 = time.perf_counter()
        got = 0
        while True:
            try:
                got += len(os.read(raw._fd, 1 << 18))
            except BlockingIOError:
                break
        raws.append(time.perf_counter() - t0)
        assert got >= 16 * len(touched)
        w.close()
        raw.close()
    return statistics.median(drains), statistics.median(raws)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--folders", type=int, default=1_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir")
    opts = ap.parse_args()
    path = opts.dir or os.path.join(tempfile.gettempdir(), f"dsh-bench-watch-{opts.files}-{opts.folders}")
    t0 = time.perf_counter()
    if built_once(path + ".complete", lambda: build_tree(path, spread(opts.files, opts.folders))):
        print(f"built the tree in {time.perf_counter() - t0:.0f} s")
    walk(path)  # warm the kernel's caches once, for both
    t_walk = median_time(lambda: walk(path), opts.runs)
    t_start = median_time(lambda: time_start(path), opts.runs)
    touched = [os.path.join(path, p) for p in list(spread(opts.files, opts.folders))[:EVENTS]]
    t_drain, t_raw = time_drain(path, touched, opts.runs)
    tops = -(-opts.folders // 50)
    print(f"{opts.files} files in {opts.folders} folders (+ {tops} above them) in {path}; medians of {opts.runs}")
    print(f"{'work':<48}{'ms':>9}{'ratio':>8}")
    print(f"{'walk: os.scandir of every folder':<48}{t_walk * 1000:>9.1f}{1:>8.2f}")
    print(f"{'Watcher.start(): watch, then list, every folder':<48}{t_start * 1000:>9.1f}{t_start / t_walk:>8.2f}")
    print(f"{f'raw read of {len(touched)} events':<48}{t_raw * 1000:>9.1f}{1:>8.2f}")
    print(f"{f'Watcher.drain() of {len(touched)} events':<48}{t_drain * 1000:>9.1f}{t_drain / t_raw:>8.2f}")
    print(f"drain per event: {t_drain / len(touched) * 1e6:.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
