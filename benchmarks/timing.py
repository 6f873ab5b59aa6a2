"""The timing helpers the benchmark scripts share: the median of repeated calls, alone or in turns."""

from __future__ import annotations

import resource
import statistics
import time
from collections.abc import Callable


def median_time(fn: Callable[[], object], runs: int) -> float:
    """Median wall time of ``runs`` calls of ``fn``, in seconds."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def medians_in_turns(
    fns: dict[str, Callable[[], object]], runs: int, clock: Callable[[], float] = time.perf_counter
) -> dict[str, float]:
    """Median wall time of each of ``fns``, called in turns (one of each per round), in seconds.

    In turns, a change in the machine's load during the run reaches every function alike, so the
    ratios between them hold where separate blocks of runs would drift apart. ``clock`` may be
    ``time.thread_time``: the CPU time the calls took, which waiting for a busy machine's cores
    does not lengthen (for work done on the calling thread alone).
    """
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            t0 = clock()
            fn()
            times[name].append(clock() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


def cpu_seconds() -> float:
    """CPU time of this process (all its threads) and of its children that ended (the rg processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def wall_and_cpu_in_turns(fns: dict[str, Callable[[], object]], runs: int) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall time and median CPU time (``cpu_seconds``: rg's too) of each of ``fns``, called
    in turns after one untimed call of each (caches warm alike)."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    cpu: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            c0, t0 = cpu_seconds(), time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(cpu_seconds() - c0)
    return (
        {name: statistics.median(t) for name, t in times.items()},
        {name: statistics.median(t) for name, t in cpu.items()},
    )
