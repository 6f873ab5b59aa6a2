"""The index's ``--glob`` decision (``core/index/globs.py``) over 1,000,000 paths, beside its floor.

    python benchmarks/bench_globs.py [--runs 5] [--paths 1000000]

The paths are made in memory, seeded: folders 0 to 6 deep (some named ``src``, ``docs``,
``build``, ``node_modules``), names with the usual extensions, one in 50 not ASCII. Per glob, in
turns (floor, select, floor, select, ...), medians of ``--runs``:

- ``select(paths, glob, [])``, everyday includes, and an include with three excludes
- the floor: one list comprehension over the same paths with ``str.endswith`` (the cheapest pass
  Python makes over a million strings)

Target: well under one second per million paths for every glob.
"""

from __future__ import annotations

import argparse
import random
import time

from timing import medians_in_turns  # benchmarks/timing.py

from dsh_jupyter.core.index.globs import compile_glob, select

FOLDERS = ["src", "docs", "build", "node_modules", "lib", "tests", "pkg", "util", "app", "data", "a.b", "ünï"]
EXTS = [".py", ".ts", ".js", ".md", ".json", ".txt", ".min.js", ".ipynb", ""]
GLOBS = ["*.py", "src/**/*.ts", "**/test_*.py", "*.{js,ts}", "docs/*", "node_modules", "build/", "?.py", "[a-c]*.md"]
COMBO = ("*.py", ["node_modules", "build/", "tests/**"])


def make_paths(n: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)

    def part() -> str:
        return rng.choice(FOLDERS) + (str(rng.randint(0, 3)) if rng.random() < 0.5 else "")

    folders = ["/".join(part() for _ in range(rng.randint(0, 6))) for _ in range(n // 20)]
    out = []
    for i in range(n):
        name = rng.choice(["test_", "", "a", "c", "main", "é"] if i % 50 == 0 else ["test_", "", "a", "c", "main"])
        name += str(i) if rng.random() < 0.95 or not name else ""
        folder = rng.choice(folders)
        out.append(f"{folder}/{name}{rng.choice(EXTS)}" if folder else f"{name}{rng.choice(EXTS)}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--paths", type=int, default=1_000_000)
    args = parser.parse_args()
    paths = make_paths(args.paths)
    t0 = time.perf_counter()
    for g in GLOBS:
        compile_glob(g)
    compiled_ms = (time.perf_counter() - t0) * 1000 / len(GLOBS)
    print(f"{len(paths):,} paths; compile_glob: {compiled_ms:.2f} ms a glob (first compile, re's cache cold)")
    print(f"{'glob':<40} {'select':>9} {'floor':>9} {'ratio':>6} {'selected':>10}")
    cases = [(g, g, []) for g in GLOBS] + [(f"{COMBO[0]} minus {', '.join(COMBO[1])}", *COMBO)]
    for label, include, excludes in cases:
        result = select(paths, include, excludes)
        assert result is not None, label
        times = medians_in_turns(
            {
                "floor": lambda: [p for p in paths if p.endswith(".py")],
                "select": lambda include=include, excludes=excludes: select(paths, include, excludes),
            },
            args.runs,
        )
        ratio = times["select"] / times["floor"]
        print(f"{label:<40} {times['select']:>8.3f}s {times['floor']:>8.3f}s {ratio:>5.1f}× {len(result):>10,}")


if __name__ == "__main__":
    main()
