"""``edit`` on a big one-line file beside ``str.replace``, and what a write in another process waits meanwhile.

    python benchmarks/bench_edit.py [--mib 4] [--runs 5]

Writes a one-line file of ``a,`` repeated (4 MiB: 2,097,152 commas) in a temporary folder and
prints, as medians of ``--runs``:
  - ``str.replace(",", ";")`` on the text in memory (the floor), and the file read, replaced and
    written back by plain Python,
  - ``Workspace.run("edit", replace_all=True)`` of ``,`` by ``;`` (and back, in turns), its
    ``dry_run``, and the same line ending in CRLF split at every comma (``,`` by ``,\\n``: every
    new line break takes the line's CRLF), and joined again (an ``old_string`` with a line break),
  - the same replacement where every other line of a 400,000-line file changes (the diff's
    worst shape for ``difflib``).
Then a second process writes another file in a loop while this one runs the big edits again: the
writes' longest and median times beside the same writes with nothing else running, and how long
each edit held the write gate (``StateStore.write_gate`` timed from outside, in this process).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from contextlib import contextmanager

from timing import median_time  # benchmarks/timing.py

from dsh_jupyter import Workspace
from dsh_jupyter.core.state import store as store_module

_WRITER = textwrap.dedent(
    """
    import json, os, sys, time
    from dsh_jupyter import Workspace
    root, state, stop, log = sys.argv[1:5]
    ws = Workspace(root, session="writer", state_path=state)
    assert not ws.run("read", file_path="other.txt").is_error
    print("ready", flush=True)
    with open(log, "w") as out:
        i = 0
        while not os.path.exists(stop):
            t0 = time.time()
            r = ws.run("write", file_path="other.txt", content=f"write {i}\\n")
            out.write(json.dumps([t0, time.time(), r.is_error]) + "\\n")
            i += 1
    """
)


def writes_while(root: str, state: str, work) -> list[tuple[float, float, bool]]:
    """The writes another process made while ``work()`` ran: (start, end, failed)."""
    folder = tempfile.mkdtemp()
    stop, log = os.path.join(folder, "stop"), os.path.join(folder, "log")
    p = subprocess.Popen([sys.executable, "-c", _WRITER, root, state, stop, log], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "ready\n"
    time.sleep(0.2)
    started = time.time()
    work()
    ended = time.time()
    open(stop, "w").close()
    p.wait(timeout=120)
    with open(log) as fh:
        rows = [json.loads(line) for line in fh]
    return [(s, e, bad) for s, e, bad in rows if s < ended and e > started]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=4)
    ap.add_argument("--runs", type=int, default=5)
    opts = ap.parse_args()
    root = tempfile.mkdtemp(prefix="dsh-bench-edit-")
    state = os.path.join(tempfile.mkdtemp(), "s.sqlite")
    path = os.path.join(root, "big.csv")
    text = "a," * (opts.mib << 19)
    with open(path, "w") as fh:
        fh.write(text)
    with open(os.path.join(root, "other.txt"), "w") as fh:
        fh.write("other\n")
    ws = Workspace(root, session="bench", state_path=state)
    assert not ws.run("read", file_path="big.csv", limit=1).is_error

    t_floor = median_time(lambda: text.replace(",", ";"), opts.runs)

    plain_turn = [0]

    def plain() -> None:
        old, new = ((",", ";"), (";", ","))[plain_turn[0] % 2]  # and back, in turns
        plain_turn[0] += 1
        with open(path) as fh:
            data = fh.read()
        with open(path, "w") as fh:
            fh.write(data.replace(old, new))

    t_plain = median_time(plain, opts.runs * 2)
    assert not ws.run("read", file_path="big.csv", limit=1).is_error  # the plain write moved the version on

    turn = [0]

    def edit(pairs) -> None:
        old, new = pairs[turn[0] % 2]
        turn[0] += 1
        r = ws.run("edit", file_path="big.csv", old_string=old, new_string=new, replace_all=True)
        assert not r.is_error and r.value["replacements"] == len(text) // 2, r.text[:300]

    flip = ((",", ";"), (";", ","))
    t_edit = median_time(lambda: edit(flip), opts.runs * 2)
    t_dry = median_time(
        lambda: ws.run("edit", file_path="big.csv", old_string=",", new_string=";", replace_all=True, dry_run=True),
        opts.runs,
    )
    with open(path, "w", newline="") as fh:
        fh.write(text + "\r\n")
    assert not ws.run("read", file_path="big.csv", limit=1).is_error
    turn[0] = 0
    t_split = median_time(lambda: edit(((",", ",\n"), (",\n", ","))), opts.runs * 2)

    lines = "".join(f"line {i} {'x' if i % 2 else 'z'}\n" for i in range(400_000))
    with open(os.path.join(root, "rows.txt"), "w") as fh:
        fh.write(lines)
    assert not ws.run("read", file_path="rows.txt", limit=1).is_error
    t_rows_floor = median_time(lambda: lines.replace(" x", " y"), opts.runs)
    rows_turn = [0]

    def rows() -> None:
        old, new = ((" x", " y"), (" y", " x"))[rows_turn[0] % 2]
        rows_turn[0] += 1
        r = ws.run("edit", file_path="rows.txt", old_string=old, new_string=new, replace_all=True)
        assert not r.is_error and r.value["diffLines"] == 600_003, r.text[:300]

    t_rows = median_time(rows, opts.runs * 2)

    # The gate, timed from outside: how long each edit of this process held it.
    held: list[float] = []
    original = store_module.StateStore.write_gate

    @contextmanager
    def timed_gate(self):
        with original(self) as gate:
            t0 = time.perf_counter()
            try:
                yield gate
            finally:
                held.append(time.perf_counter() - t0)

    store_module.StateStore.write_gate = timed_gate  # type: ignore[method-assign]
    with open(path, "w") as fh:
        fh.write(text)
    assert not ws.run("read", file_path="big.csv", limit=1).is_error
    turn[0] = 0
    idle = writes_while(root, state, lambda: time.sleep(2))
    busy = writes_while(root, state, lambda: [edit(flip) for _ in range(opts.runs * 4)])
    store_module.StateStore.write_gate = original  # type: ignore[method-assign]
    assert not any(bad for *_t, bad in idle + busy), "a write failed"

    def ms(rows_: list) -> list[float]:
        return [(e - s) * 1000 for s, e, _bad in rows_]

    print(f"{len(text) / 2**20:.0f} MiB one-line file, {len(text) // 2:,} matches; medians of {opts.runs}")
    print(f"{'work':<52}{'ms':>9}{'ratio':>8}")
    print(f"{'str.replace in memory (floor)':<52}{t_floor * 1000:>9.1f}{1:>8.2f}")
    print(f"{'read, replace and write back, plain Python':<52}{t_plain * 1000:>9.1f}{t_plain / t_floor:>8.2f}")
    print(f"{'edit replace_all (Python API)':<52}{t_edit * 1000:>9.1f}{t_edit / t_floor:>8.2f}")
    print(f"{'edit replace_all, dry_run':<52}{t_dry * 1000:>9.1f}{t_dry / t_floor:>8.2f}")
    split = "edit on the line ending CRLF: , by ,\\n and back"
    print(f"{split:<52}{t_split * 1000:>9.1f}{t_split / t_floor:>8.2f}")
    print("every other line of 400,000 changed (diff of 600,003 lines)")
    print(f"{'str.replace in memory (floor)':<52}{t_rows_floor * 1000:>9.1f}{1:>8.2f}")
    print(f"{'edit replace_all':<52}{t_rows * 1000:>9.1f}{t_rows / t_rows_floor:>8.2f}")
    print(f"a write in another process, in a loop ({store_module.BUSY_TIMEOUT_S:g} s is the gate's timeout)")
    print(f"{'':<28}{'writes':>8}{'median ms':>11}{'longest ms':>12}")
    print(f"{'alone':<28}{len(idle):>8}{statistics.median(ms(idle)):>11.1f}{max(ms(idle)):>12.1f}")
    print(f"{'while the big edits run':<28}{len(busy):>8}{statistics.median(ms(busy)):>11.1f}{max(ms(busy)):>12.1f}")
    print(
        f"the write gate held by each big edit: median {statistics.median(held) * 1000:.1f} ms, "
        f"longest {max(held) * 1000:.1f} ms ({len(held)} edits)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
