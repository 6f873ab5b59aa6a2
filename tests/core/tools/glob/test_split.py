"""glob's two sorted walks and their merge: the same answer as one ``rg --sort=modified``.

Real trees on disk with modification times set one by one, real rg. The order of the merged
result is compared with rg's own single sorted walk over the same tree, for times that follow the
folders (few stats) and times that alternate file by file (the worst case); the plan of the cut
is checked on the shapes that must not be cut. Each test runs twice: with the compiled dater
(glob then always takes dated walks, one per part of the same cut) and with dating in Python
(where the merge of two sorted walks and rg's one sorted walk are what glob takes).
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from dsh_jupyter import Workspace
from dsh_jupyter.core.rg.runner import find_rg
from dsh_jupyter.core.tools.glob.split import escape_glob, merge_by_mtime, plan_split

BASE_NS = 1_700_000_000 * 10**9


@pytest.fixture(autouse=True, params=["compiled", "python"])
def dater(request):
    from dsh_jupyter.core.fs import mtimes as compiled

    if request.param == "compiled":
        assert compiled.available()
        yield request.param
    else:
        with compiled.python_only():
            yield request.param


def rg_sorted(root: Path, pattern: str) -> list[str]:
    out = subprocess.run(
        [
            find_rg(),
            "--files",
            "--null",
            "--sort=modified",
            "--no-config",
            "--no-ignore",
            "--hidden",
            "--no-follow",
            f"--glob={pattern}",
            "--",
            ".",
        ],
        cwd=root,
        capture_output=True,
        check=True,
    )
    return [p[2:] for p in out.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def build(root: Path, folders: list[str], per: int, times) -> list[Path]:
    files = []
    for folder in folders:
        for k in range(per):
            path = root / folder / f"f{k:03d}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x\n")
            files.append(path)
    for n, path in zip(times(len(files)), files):
        os.utime(path, ns=(BASE_NS + n, BASE_NS + n))
    return files


def ws_for(root: Path, tmp_path: Path, **kw) -> Workspace:
    return Workspace(
        root,
        state_path=str(tmp_path / "state.sqlite"),
        spill_root=str(tmp_path / "spill"),
        glob_max_results=100_000,
        **kw,
    )


@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "descriptors-only"])
@pytest.mark.parametrize("times", ["by-folder", "alternating", "random"])
def test_the_merged_walks_answer_exactly_what_one_sorted_walk_answers(tmp_path, times, landlock):
    root = tmp_path / "root"
    folders = [f"pkg{i:02d}" for i in range(9)] + ["pkg03/deep/er", "odd {x,y}", "star*dir", "br[a]ck"]
    rng = random.Random(3)
    order = {
        "by-folder": lambda n: [i * 1000 for i in range(n)],
        "alternating": lambda n: [(i % 2) * 10**9 + i for i in range(n)],
        "random": lambda n: rng.sample(range(10 * n), n),
    }[times]
    build(root, folders, 12, order)
    (root / "top.py").write_text("x\n")
    os.utime(root / "top.py", ns=(BASE_NS + 5, BASE_NS + 5))
    plan = plan_split(os.open(root, os.O_RDONLY | os.O_DIRECTORY), lambda rel: False)
    assert plan is not None and len(plan.b_dirs) >= 2
    r = ws_for(root, tmp_path, landlock=landlock).run("glob", pattern="*.py")
    assert r.value["paths"] == rg_sorted(root, "*.py")
    assert len(r.value["paths"]) == 13 * 12 + 1
    # a pattern with a slash is anchored at the search root in both forms
    assert ws_for(root, tmp_path).run("glob", pattern="pkg03/**/*.py").value["paths"] == rg_sorted(
        root, "pkg03/**/*.py"
    )


def test_a_root_with_one_folder_is_cut_further_down(tmp_path):
    root = tmp_path / "root"
    build(root, [f"src/m{i}" for i in range(6)], 5, lambda n: [(i * 7919) % 1000 for i in range(n)])
    (root / "README.py").write_text("x\n")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        plan = plan_split(fd, lambda rel: False)
    finally:
        os.close(fd)
    assert plan.b_dirs == ["src/m1", "src/m3", "src/m5"]
    assert plan.a_flags == ["--glob=!/src/{m1,m3,m5}"]
    assert plan.b_flags == ["--glob=!/README.py", "--glob=!/src/{m0,m2,m4}"]
    assert ws_for(root, tmp_path).run("glob", pattern="*.py").value["paths"] == rg_sorted(root, "*.py")


@pytest.mark.parametrize("shape", ["flat", "one-folder-many-files", "dot-folders-only", "not-utf8"])
def test_shapes_that_are_not_cut(tmp_path, shape):
    root = tmp_path / "root"
    root.mkdir()
    if shape == "flat":
        for i in range(30):
            (root / f"f{i}.py").write_text("x\n")
    elif shape == "one-folder-many-files":
        (root / "d").mkdir()
        for i in range(20):
            (root / f"f{i}.py").write_text("x\n")
    elif shape == "dot-folders-only":
        for name in (".a", ".b", "c"):
            (root / name).mkdir()
            (root / name / "x.py").write_text("x\n")
    else:
        for name in ("a", "b"):
            (root / name).mkdir()
            (root / name / "x.py").write_text("x\n")
        (Path(os.fsdecode(os.path.join(os.fsencode(root), b"bad\xffname")))).mkdir()
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:

        def skip(rel):
            return rel.rpartition("/")[2].startswith(".")

        assert plan_split(fd, skip) is None
    finally:
        os.close(fd)
    assert ws_for(root, tmp_path).run("glob", pattern="*.py").value["paths"] == rg_sorted(root, "*.py")


def test_protected_and_hidden_folders_stay_out_of_part_b_and_out_of_the_answer(tmp_path):
    root = tmp_path / "root"
    build(root, ["a", "b", "c", "d", ".hid", "keep/.ipynb_checkpoints"], 3, lambda n: list(range(n)))
    state = root / "c" / "state"  # the state folder below the root is protected
    r = Workspace(
        root,
        state_path=str(state / "s.sqlite"),
        spill_root=str(tmp_path / "spill"),
        glob_max_results=1000,
        allow_hidden=False,
    ).run("glob", pattern="*.py")
    shown = r.value["paths"]
    assert not any(p.startswith((".hid/", "c/state/")) or "/." in p for p in shown)
    assert sorted(shown) == sorted(p for p in rg_sorted(root, "*.py") if not p.startswith(".") and "/." not in p)


def test_merge_gallops_and_keeps_part_a_first_on_equal_times():
    stamps = {}

    def stamp(p):
        stamps[p] = stamps.get(p, 0) + 1
        return int(p.split(":")[1])

    a = [f"a{i}:{t}" for i, t in enumerate([1, 2, 3, 5, 5, 8, 9, 10, 11, 12, 13, 14])]
    b = [f"b{i}:{t}" for i, t in enumerate([0, 5, 6, 7, 20])]
    merged = merge_by_mtime(a, b, stamp)
    assert [int(p.split(":")[1]) for p in merged] == sorted(int(p.split(":")[1]) for p in a + b)
    assert merged.index("a3:5") < merged.index("b1:5") and merged.index("a4:5") < merged.index("b1:5")
    assert max(stamps.values()) == 1  # each path statted at most once
    long_a = [f"a{i}:{i}" for i in range(10_000)]
    long_b = [f"b{i}:{10_000 + i}" for i in range(10_000)]
    stamps.clear()
    assert merge_by_mtime(long_a, long_b, stamp) == long_a + long_b
    assert len(stamps) < 60  # two runs: a few dozen probes, not 20,000 stats
    assert merge_by_mtime([], ["x:1"], stamp) == ["x:1"] and merge_by_mtime(["x:1"], [], stamp) == ["x:1"]


def test_random_merges_are_sorted_and_complete():
    rng = random.Random(11)
    for _ in range(300):
        a = sorted(rng.choices(range(20), k=rng.randint(0, 15)))
        b = sorted(rng.choices(range(20), k=rng.randint(0, 15)))
        pa, pb = [f"a{i}:{t}" for i, t in enumerate(a)], [f"b{i}:{t}" for i, t in enumerate(b)]
        merged = merge_by_mtime(pa, pb, lambda p: int(p.split(":")[1]))
        assert sorted(merged) == sorted(pa + pb)
        assert [int(p.split(":")[1]) for p in merged] == sorted(a + b)
        assert [p for p in merged if p[0] == "a"] == pa and [p for p in merged if p[0] == "b"] == pb


def test_with_the_compiled_dater_equal_times_are_in_path_order_on_every_shape(tmp_path, dater):
    """A flat folder (never cut) and a cut tree alike: the dated walks order equal times by path."""
    flat, tree = tmp_path / "flat", tmp_path / "tree"
    names = [f"n{(i * 37) % 50:02d}.py" for i in range(50)]
    for name in names:
        (flat / name).parent.mkdir(parents=True, exist_ok=True)
        (flat / name).write_text("x\n")
        os.utime(flat / name, ns=(BASE_NS, BASE_NS))
    build(tree, [f"pkg{i}" for i in range(4)], 10, lambda n: [(i % 3) * 10**9 for i in range(n)])
    by_time_then_path = lambda root, paths: sorted(paths, key=lambda p: (os.stat(root / p).st_mtime_ns, p))  # noqa: E731
    for root in (flat, tree):
        paths = ws_for(root, tmp_path).run("glob", pattern="*.py").value["paths"]
        assert len(paths) in (50, 40)
        if dater == "compiled":
            assert paths == by_time_then_path(root, paths)
        else:  # the merge keeps part A first on equal times; one sorted walk keeps rg's order
            assert [os.stat(root / p).st_mtime_ns for p in paths] == sorted(
                os.stat(root / p).st_mtime_ns for p in paths
            )


def test_names_are_escaped_into_globs_literally():
    assert escape_glob("odd {x,y}") == "odd \\{x\\,y\\}"
    assert escape_glob("a*b?[c]!\\") == "a\\*b\\?\\[c\\]\\!\\\\"
    assert escape_glob("plain-name.txt") == "plain-name.txt"


def test_the_raw_output_cap_holds_for_the_two_walks_together(tmp_path):
    root = tmp_path / "root"
    build(root, [f"d{i}" for i in range(4)], 40, lambda n: list(range(n)))
    total = sum(len(f"./{p}\0".encode()) for p in rg_sorted(root, "*.py"))
    ws = ws_for(root, tmp_path, raw_output_max_bytes=total * 3 // 4)  # each walk alone fits
    r = ws.run("glob", pattern="*.py")
    assert r.value["code"] == "SEARCH_RAW_OUTPUT_OVERFLOW"
    assert r.text == (
        f"Error: glob produced more than {total * 3 // 4} bytes of raw output and was stopped; "
        "narrow the pattern, path or include"
    )
    assert not ws_for(root, tmp_path, raw_output_max_bytes=total + 10).run("glob", pattern="*.py").is_error
