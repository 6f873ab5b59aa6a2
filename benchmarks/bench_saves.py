"""What the save check costs: a contents-manager save with ``server/contents_guard.py`` beside plain Jupyter's.

    python benchmarks/bench_saves.py [--mib 8] [--runs 7] [--dir DIR]

Makes a text file of about N MiB (CRLF lines) and a notebook of about N MiB (cells of source and
stream output) in a temporary folder, then prints the median time of ``FileContentsManager.save``
for each, plain (Jupyter writes every save) and guarded, with the content unchanged and changed.
A guarded save reads the file once before it decides; an unchanged one then writes nothing.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import tempfile

from jupyter_server.services.contents.filemanager import FileContentsManager
from nbformat import v4, writes
from timing import median_time  # benchmarks/timing.py

from dsh_jupyter.server.contents_guard import guard_contents


def build(folder: str, mib: int) -> None:
    line = "value = 'x' * 60  # a line of a generated module\r\n"
    with open(os.path.join(folder, "big.py"), "w", newline="") as f:
        f.write(line * (mib * 1024 * 1024 // len(line)))
    cells = []
    while sum(len(c.source) + len(c.outputs[0].text) for c in cells) < mib * 1024 * 1024:
        n = len(cells)
        cells.append(
            v4.new_code_cell(
                f"for i in range(100):\n    print({n}, i)",
                id=f"c{n}",
                outputs=[v4.new_output("stream", name="stdout", text=f"{n} line\n" * 400)],
            )
        )
    with open(os.path.join(folder, "big.ipynb"), "w", encoding="utf-8") as f:
        f.write(writes(v4.new_notebook(cells=cells)))


def timed_saves(cm, model: dict, name: str, path: str, original: bytes, runs: int) -> float:
    """Median time of ``cm.save(model, name)``, the file put back as it was (untimed) before each."""
    times = []
    for _ in range(runs):
        with open(path, "wb") as f:
            f.write(original)
        times.append(median_time(lambda: cm.save(model, name), 1))
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=8)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--dir")
    opts = ap.parse_args()
    folder = opts.dir or tempfile.mkdtemp(prefix="dsh-bench-saves-")
    os.environ.setdefault("JUPYTER_DATA_DIR", os.path.join(folder, "jupyter-data"))  # the notary's database
    build(folder, opts.mib)
    plain = FileContentsManager(root_dir=folder)
    guarded = FileContentsManager(root_dir=folder)
    guard_contents(guarded, logging.getLogger("bench_saves"))
    print(f"{opts.mib} MiB files in {folder}; medians of {opts.runs} saves")
    print(f"{'save':<28}{'plain ms':>10}{'guarded ms':>12}{'ratio':>8}")
    for name in ("big.py", "big.ipynb"):
        path = os.path.join(folder, name)
        with open(path, "rb") as f:
            original = f.read()
        model = plain.get(name)
        if name.endswith(".py"):
            model["content"] = model["content"].replace("\r\n", "\n")  # as the collaboration room sends it
            changed = {**model, "content": model["content"] + "x = 1\n"}
        else:
            changed = {**model, "content": {**model["content"], "cells": model["content"]["cells"][:-1]}}
        for label, m in (("unchanged", model), ("changed", changed)):
            t_plain = timed_saves(plain, m, name, path, original, opts.runs)
            t_guarded = timed_saves(guarded, m, name, path, original, opts.runs)
            print(
                f"{name + ', ' + label:<28}{t_plain * 1000:>10.1f}{t_guarded * 1000:>12.1f}{t_guarded / t_plain:>8.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
