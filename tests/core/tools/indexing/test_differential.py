"""Answers from the workspace index are rg's answers: seeded queries, another process changing the tree.

Two workspaces share one root: one with an index (``index_min_files=1``), one without (rg walks
as always). Between queries another process (a real one, through a pipe) creates, edits, appends
to, deletes, renames and chmods files, makes folders with files in them and now and then renames
a folder (which the watcher answers by giving up authority: the index is built again). After
each batch of changes every query goes to both workspaces: the text and the value (but for
``source``, ``index_note``) must be the same, and most greps must have come from the index.
"""

from __future__ import annotations

import contextlib
import random
import sqlite3
import subprocess
import sys
import time

import pytest

from dsh_jupyter import Workspace
from dsh_jupyter.core.index import native

WORDS = ["alpha", "beta", "gamma", "delta", "omega", "needle", "Needle", "NEEDLE", "kelvin", "sigma", "x.y", "a(b)"]

CHANGER = r"""
import os, random, sys
root, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
WORDS = WORDS_HERE

def text():
    lines = []
    for _ in range(rng.randint(1, 6)):
        line = " ".join(rng.choice(WORDS) + (str(rng.randint(0, 40)) if rng.random() < 0.4 else "")
                        for _ in range(rng.randint(1, 5)))
        lines.append(line)
    return "\n".join(lines) + "\n"

def files():
    out = []
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        out += [os.path.join(top, n) for n in names]
    return out

def folders():
    out = [root]
    for top, dirs, _ in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        out += [os.path.join(top, d) for d in dirs]
    return out

def write(path, data, mode="w"):
    with open(path, mode + ("b" if isinstance(data, bytes) else "")) as f:
        f.write(data)

def change():
    r = rng.random()
    existing = files()
    if r < 0.25 or not existing:
        folder = rng.choice(folders())
        name = rng.choice(["n", "m", "p", ".h"]) + str(rng.randint(0, 999)) + rng.choice([".py", ".txt", ".md", ""])
        kind = rng.random()
        if kind < 0.08:
            write(os.path.join(folder, name), b"needle7 head\0tail needle8\n")
        elif kind < 0.14:
            write(os.path.join(folder, name), b"\xff\xfe" + text().encode("utf-16-le"))
        elif kind < 0.18:
            write(os.path.join(folder, name), text() * 400)  # over index_max_file_bytes
        else:
            write(os.path.join(folder, name), text())
    elif r < 0.45:
        write(rng.choice(existing), text())
    elif r < 0.55:
        write(rng.choice(existing), text(), "a")
    elif r < 0.65:
        os.unlink(rng.choice(existing))
    elif r < 0.77:
        src = rng.choice(existing)
        dst = os.path.join(rng.choice(folders()), "r" + str(rng.randint(0, 999)) + rng.choice([".py", ".txt"]))
        os.rename(src, dst)
    elif r < 0.85:
        os.chmod(rng.choice(existing), rng.choice([0o644, 0o600, 0o000, 0o444]))
    elif r < 0.96:
        top = os.path.join(rng.choice(folders()), rng.choice(["new", "lib", ".cache", "__pycache__"]) + str(rng.randint(0, 99)))
        os.makedirs(os.path.join(top, "deep"), exist_ok=True)
        for i in range(rng.randint(1, 4)):
            write(os.path.join(top, "deep" if i % 2 else "", "k%d.py" % i), text())
    else:
        moved = [f for f in folders() if f != root]
        if moved:
            src = rng.choice(moved)
            dst = os.path.join(os.path.dirname(src), "moved" + str(rng.randint(0, 999)))
            if not os.path.exists(dst):
                os.rename(src, dst)

for line in sys.stdin:
    for _ in range(int(line)):
        try:
            change()
        except OSError:
            pass
    print("done", flush=True)
""".replace("WORDS_HERE", repr(WORDS))


def _tree(root, rng: random.Random) -> None:
    for d in ["src/pkg", "src/pkg/sub", "docs", "data", ".hidden", ".git/objects", "node_modules/lib", "__pycache__"]:
        (root / d).mkdir(parents=True, exist_ok=True)
    folders = ["", "src", "src/pkg", "src/pkg/sub", "docs", "data", ".hidden", "node_modules/lib", "__pycache__"]
    for i in range(180):
        folder = rng.choice(folders)
        name = f"f{i:03d}" + rng.choice([".py", ".txt", ".md", ".pyc", ""])
        lines = [
            " ".join(rng.choice(WORDS) + str(rng.randint(0, 40)) for _ in range(4)) for _ in range(rng.randint(1, 8))
        ]
        (root / folder / name).write_text("\n".join(lines) + "\n")
    (root / ".git" / "objects" / "x").write_text("needle1 in git\n")
    (root / "data" / "blob.bin").write_bytes(b"needle2 before\0after needle3\n")
    (root / "data" / "wide.txt").write_bytes(b"\xff\xfe" + "needle4 wide\n".encode("utf-16-le"))
    (root / "data" / "bad.txt").write_bytes(b"needle5 \xff\xfe bytes\n")


def _grep_args(rng: random.Random) -> dict:
    r = rng.random()
    word = rng.choice(WORDS)
    if r < 0.35:
        pattern = word + str(rng.randint(0, 40))
    elif r < 0.5:
        pattern = word
    elif r < 0.6:
        pattern = f"{rng.choice(WORDS)}[0-9]+ {rng.choice(WORDS)}"
    elif r < 0.7:
        pattern = f"({rng.choice(WORDS)}|{rng.choice(WORDS)})1"
    elif r < 0.78:
        pattern = rng.choice([r"\bgam+a\b", "n.edle", r"x\.y", r"a\(b\)", "ke?lvin", "[a-c]lpha", "o..ga"])
    elif r < 0.86:
        pattern = rng.choice(["e", "ab", r"\w+", "^$", ".*", "(?i)KELVIN", "[[:alpha:]]eta", r"\d{2}"])
    else:
        pattern = rng.choice(["needle2", "needle3", "needle4", "needle5", "needle7", "needle8", "(bad", "a{2"])
    args: dict = {"pattern": pattern}
    if rng.random() < 0.3:
        args["ignore_case"] = True
    if rng.random() < 0.4:
        args["output_mode"] = rng.choice(["files_with_matches", "count"])
    if rng.random() < 0.2:
        args["include"] = rng.choice(["*.py", "src/**", "*.{md,txt}", "f0*", "**/sub/*"])
    if rng.random() < 0.15:
        args["exclude"] = rng.choice([["*.txt"], ["docs"], ["src/pkg/**", "*.md"]])
    if rng.random() < 0.2:
        args["path"] = rng.choice(["src", "src/pkg", "data", "docs"])
    return args


def _query(rng: random.Random) -> tuple[str, dict]:
    r = rng.random()
    if r < 0.7:
        return "grep", _grep_args(rng)
    if r < 0.88:
        args = {"pattern": rng.choice(["*.py", "**/*.txt", "src/**", "*", "f1*", "*.{py,md}", "k*.py", "deep/*"])}
        if rng.random() < 0.2:
            args["exclude"] = rng.choice([["*.md"], ["src"]])
        if rng.random() < 0.2:
            args["path"] = rng.choice(["src", "data"])
        return "glob", args
    return "find", {"query": rng.choice(["f1", "pkg py", "n2", "deep k", "r", "sub f0"])}


def _comparable(result) -> tuple[str, dict]:
    value = {k: v for k, v in (result.value or {}).items() if k not in ("source", "index_note")}
    return result.text, value


def _wait_ready(ws: Workspace, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while ws.index.status()["state"] != "ready":
        assert time.monotonic() < deadline, ws.index.status()
        ws.run("glob", pattern="*.nothing")  # a search starts the build again after a loss
        time.sleep(0.05)


def _run(tmp_path, seed: int, queries: int, per_batch: int) -> dict:
    rng = random.Random(seed)
    root = tmp_path / "root"
    root.mkdir()
    _tree(root, rng)
    big = {"grep_max_matches": 100_000, "glob_max_results": 100_000, "index_max_file_bytes": 4096}
    indexed = Workspace(root, state_path=tmp_path / "a" / "s.sqlite", index_min_files=1, **big)
    plain = Workspace(root, state_path=tmp_path / "b" / "s.sqlite", index_min_files=0, **big)
    changer = subprocess.Popen(
        [sys.executable, "-c", CHANGER, str(root), str(seed)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    counts = {"grep": 0, "grep from index": 0, "glob from index": 0, "find from index": 0, "queries": 0}
    differences = []
    try:
        indexed.run("grep", pattern="start")
        _wait_ready(indexed)
        db = sqlite3.connect(f"file:{indexed.index.path}?mode=ro", uri=True)
        counts["postings"] = db.execute("SELECT count(*) FROM postings").fetchone()[0]  # the compiled reader's
        db.close()
        done = 0
        while done < queries:
            assert changer.stdin is not None and changer.stdout is not None
            changer.stdin.write(f"{rng.randint(1, per_batch)}\n")
            changer.stdin.flush()
            assert changer.stdout.readline().strip() == "done"
            if indexed.index.status()["state"] == "lost":
                _wait_ready(indexed)  # a folder renamed: built again before the next queries
            for _ in range(5):
                tool, args = _query(rng)
                got = indexed.run(tool, **args)
                want = plain.run(tool, **args)
                if _comparable(got) != _comparable(want):
                    differences.append((tool, args, got.value.get("source"), got.text[:300], want.text[:300]))
                source = (got.value or {}).get("source")
                counts["queries"] += 1
                counts[tool] = counts.get(tool, 0) + 1
                if source == "index":
                    counts[f"{tool} from index"] += 1
                done += 1
    finally:
        if changer.stdin is not None:
            changer.stdin.close()
        changer.wait(timeout=30)
        indexed.close()
        plain.close()
    assert differences == [], differences[:3]
    return counts


@pytest.mark.parametrize("reader", ["compiled", "python"])
def test_answers_from_the_index_are_rgs_while_another_process_changes_the_tree(tmp_path, reader):
    """Built by the compiled trigram reader, and by Python alone (a package built without a C
    compiler): the same answers."""
    if reader == "compiled" and not native.available():
        pytest.skip("the compiled trigram reader was not built here")
    with native.python_only() if reader == "python" else contextlib.nullcontext():
        counts = _run(tmp_path, seed=1, queries=60, per_batch=6)
    assert (counts["postings"] > 0) is (reader == "compiled"), counts
    assert counts["grep from index"] >= counts["grep"] // 3, counts
    assert counts["glob from index"] + counts["find from index"] > 0, counts


@pytest.mark.slow
def test_five_hundred_seeded_queries_interleaved_with_changes_differ_in_nothing(tmp_path):
    counts = _run(tmp_path, seed=2, queries=500, per_batch=8)
    assert counts["grep from index"] >= counts["grep"] // 3, counts
    assert counts["glob from index"] >= 10 and counts["find from index"] >= 5, counts
