"""``shifted_ranges``: a replace's occurrences found again in a live document a person typed in.

    python benchmarks/bench_shifts.py [--lines 40000] [--runs 5]

Makes a text of ``--lines`` lines (one occurrence each), then a version with a line typed above
every 7th line and a word typed into every 11th, and prints, as medians of ``--runs`` in turns:
  - the floor: comparing the two line lists alone (``text.linediff.opcodes``), which any mapping
    needs,
  - ``shifted_ranges`` of every occurrence (lines compared, changed runs compared by character,
    each range found by bisection),
and the ratio between them. A replace of a live document pays this once per document per try.
"""

from __future__ import annotations

import argparse

from timing import medians_in_turns

from dsh_jupyter.core.text.linediff import opcodes
from dsh_jupyter.core.text.shifts import shifted_ranges


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=40_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    lines = [f"value_{i} = old_name(x, {i})\n" for i in range(args.lines)]
    before = "".join(lines)
    edited = []
    for i, line in enumerate(lines):
        if i % 7 == 0:
            edited.append("# typed by the person\n")
        edited.append(line.replace(" = ", " = typed + ") if i % 11 == 0 else line)
    after = "".join(edited)
    ranges, at = [], before.find("old_name")
    while at >= 0:
        ranges.append((at, at + len("old_name")))
        at = before.find("old_name", at + 1)
    a, b = before.splitlines(True), after.splitlines(True)
    found = shifted_ranges(before, after, ranges)
    assert all(r is not None and after[r[0] : r[1]] == "old_name" for r in found)
    times = medians_in_turns(
        {"floor": lambda: opcodes(a, b), "shifted": lambda: shifted_ranges(before, after, ranges)}, args.runs
    )
    typed = len(after) - len(before)
    print(f"{args.lines} lines ({len(before) / 1e6:.1f} MB), {len(ranges)} occurrences, {typed} characters typed")
    print(f"  floor (line comparison alone): {times['floor'] * 1000:.0f} ms")
    ratio = times["shifted"] / times["floor"]
    print(f"  shifted_ranges:                {times['shifted'] * 1000:.0f} ms ({ratio:.2f}x the floor)")


if __name__ == "__main__":
    main()
