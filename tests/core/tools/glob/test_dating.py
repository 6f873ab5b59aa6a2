"""glob on a tree whose times do not follow its folders: the dated walk, and the choice of it.

Real trees with modification times set one by one, real rg; the answer is compared with rg's own
single sorted walk, and what the dating keeps is checked against symlinks on disk.
"""

from __future__ import annotations

import itertools
import logging
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dsh_jupyter.core.rg.runner import find_rg
from dsh_jupyter.core.tools.glob import dating as dating_module
from dsh_jupyter.core.tools.glob.dating import Dating, times_follow_folders
from dsh_jupyter.core.tools.glob.helper import START_AFTER
from dsh_jupyter.core.tools.glob.split import DATE_ALL_AFTER, merge_by_mtime

from .test_split import BASE_NS, build, rg_sorted, ws_for

FOLDERS = [f"pkg{i:02d}/mod{j}" for i in range(8) for j in range(2)]


def root_fd(root: Path) -> int:
    return os.open(root, os.O_RDONLY | os.O_DIRECTORY)


@pytest.mark.parametrize(
    "times, follows",
    [
        ("by-folder", True),
        ("random", False),
        ("by-folder-then-a-few-edits", True),
    ],
)
def test_the_sample_tells_a_tree_made_folder_by_folder_from_one_edited_over_time(tmp_path, times, follows):
    root = tmp_path / "root"
    rng = random.Random(5)
    n_files = len(FOLDERS) * 20
    order = {
        "by-folder": lambda n: [i * 1000 for i in range(n)],
        "random": lambda n: rng.sample(range(10 * n), n),
        # a checkout, then one file in four folders edited much later
        "by-folder-then-a-few-edits": lambda n: [i * 1000 + (10**12 if i % 80 == 3 else 0) for i in range(n)],
    }[times]
    build(root, FOLDERS, 20, order)
    assert n_files == 320
    fd = root_fd(root)
    try:
        assert times_follow_folders(fd, [f"pkg{i:02d}" for i in range(1, 8, 2)]) is follows
    finally:
        os.close(fd)


@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "descriptors-only"])
def test_the_dated_walk_answers_what_one_sorted_walk_answers(tmp_path, landlock):
    root = tmp_path / "root"
    rng = random.Random(9)
    build(root, FOLDERS, 20, lambda n: rng.sample(range(10 * n), n))
    fd = root_fd(root)
    try:
        assert not times_follow_folders(fd, [f"pkg{i:02d}" for i in range(1, 8, 2)])
    finally:
        os.close(fd)
    r = ws_for(root, tmp_path, landlock=landlock).run("glob", pattern="*.py")
    assert r.value["paths"] == rg_sorted(root, "*.py") and len(r.value["paths"]) == 320


def test_equal_times_are_ordered_by_path(tmp_path):
    root = tmp_path / "root"
    build(root, FOLDERS, 20, lambda n: [(i % 7) * 10**9 for i in range(n)])  # seven times, shared by many
    r = ws_for(root, tmp_path).run("glob", pattern="*.py")
    paths = r.value["paths"]
    stamps = [os.stat(root / p).st_mtime_ns for p in paths]
    assert [(t, p) for t, p in zip(stamps, paths)] == sorted(zip(stamps, paths))
    assert r.value["paths"] == ws_for(root, tmp_path).run("glob", pattern="*.py").value["paths"]


@pytest.mark.parametrize("native", [True, False], ids=["compiled", "python"])
def test_dating_orders_by_time_then_each_run_of_equal_times_by_path(tmp_path, native):
    """The dated walk's own sort: runs of equal times at the start, middle and end, fed out of order."""
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    times = {
        "d/e.py": 5,
        "d/b.py": 1,
        "d/a.py": 1,
        "c.py": 3,
        "d/f.py": 9,
        "b.py": 5,
        "a.py": 5,
        "d/z.py": 9,
        "y.py": 2,
    }
    for rel, t in times.items():
        (root / rel).write_text("x\n")
        os.utime(root / rel, ns=(BASE_NS + t, BASE_NS + t))
    fd = root_fd(root)
    try:
        with Dating(fd, native=native) as dating:
            assert dating.native is native
            dating.feed(b"".join(b"./" + rel.encode() + b"\0" for rel in times))
            assert dating.finish() == ["d/a.py", "d/b.py", "y.py", "c.py", "a.py", "b.py", "d/e.py", "d/f.py", "d/z.py"]
    finally:
        os.close(fd)


def rg_files(root: Path) -> bytes:
    """rg's unsorted walk as glob's dated walk asks for it: NUL-ended "./…" paths."""
    argv = [find_rg(), "--no-config", "--files", "--null", "-j1", "--", "."]
    return subprocess.run(argv, cwd=root, capture_output=True, check=True).stdout


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory) -> Path:
    """Enough paths for the helper: 5,000 files in 50 folders, dated at random."""
    root = tmp_path_factory.mktemp("big") / "root"
    rng = random.Random(3)
    build(root, [f"pkg{i:02d}" for i in range(50)], 100, lambda n: rng.sample(range(10 * n), n))
    assert START_AFTER <= 5000
    return root


def dated(
    root: Path, pieces: list[bytes], helper: bool, kill_helper: bool = False, native: bool = False
) -> tuple[list[str], bool]:
    """glob's dated answer for rg output fed in ``pieces``, and whether a helper dated part of it
    (the helper tests date in Python, where the helper works; ``native``: the compiled dater)."""
    fd = root_fd(root)
    try:
        with Dating(fd, helper=helper, native=native) as dating:
            for piece in pieces:
                dating.feed(piece)
            helped = dating.helper is not None and bool(dating.held)
            if kill_helper and dating.helper is not None:
                while dating.helper._proc is None:  # started by its writer thread
                    time.sleep(0.001)
                dating.helper._proc.kill()  # gone before its answer is asked for
            return dating.finish(), helped
    finally:
        os.close(fd)


def test_a_big_walk_is_dated_by_two_processes_with_the_answer_of_one(big_tree):
    out = rg_files(big_tree)
    cut = out.index(b"\0", len(out) // 3) + 1
    pieces = [out[:cut], out[cut:]]
    alone, helped_alone = dated(big_tree, pieces, helper=False)
    together, helped = dated(big_tree, pieces, helper=True)
    assert (helped_alone, helped) == (False, True)
    assert together == alone and len(alone) == 5000
    stamps = [os.stat(big_tree / p).st_mtime_ns for p in together]
    assert stamps == sorted(stamps)


def test_the_compiled_dater_gives_the_answer_of_python_and_starts_no_helper(big_tree):
    out = rg_files(big_tree)
    cuts = [0, out.index(b"\0", 1000) + 5, out.index(b"\0", len(out) // 2) + 1, len(out)]  # one cut inside a path
    pieces = [out[a:b] for a, b in itertools.pairwise(cuts)]
    fast, helped = dated(big_tree, pieces, helper=True, native=True)
    assert not helped and fast == dated(big_tree, pieces, helper=True)[0] and len(fast) == 5000


def test_a_small_walk_starts_no_helper(tmp_path):
    root = tmp_path / "root"
    build(root, FOLDERS, 20, lambda n: list(range(n)))
    assert dated(root, [rg_files(root)], helper=True)[1] is False


@pytest.fixture(autouse=True)
def helper_not_given_up(monkeypatch):
    """Each test starts as a fresh process does: no helper has failed yet."""
    from dsh_jupyter.core.tools.glob import helper as helper_module

    monkeypatch.setattr(helper_module, "_broken", False)


def test_a_helper_that_dies_leaves_the_answer_unchanged_and_none_is_started_again(big_tree, caplog):
    out = rg_files(big_tree)
    with caplog.at_level(logging.WARNING, logger="dsh_jupyter.core.tools.glob.helper"):
        answer, helped = dated(big_tree, [out], helper=True, kill_helper=True)
        again, helped_again = dated(big_tree, [out], helper=True)
    assert helped and answer == dated(big_tree, [out], helper=False)[0]
    # how many of its pieces it was handed before it died depends on timing: at most all 2,500 paths
    assert len(caplog.messages) == 1
    said = re.fullmatch(
        r"dsh_jupyter: glob's dating helper answered 0 of (\d+) bytes \(exit -9\); "
        r"glob dates in this process from now on",
        caplog.messages[0],
    )
    # (9 bytes a path, then 8 for the count of paths it could not date)
    assert said is not None and (int(said[1]) - 8) % 9 == 0 and int(said[1]) <= 2500 * 9 + 8
    assert not helped_again and again == answer


def test_a_helper_that_cannot_start_leaves_the_answer_unchanged(big_tree, caplog, monkeypatch):
    from dsh_jupyter.core.tools.glob import helper as helper_module

    monkeypatch.setattr(helper_module.sys, "executable", str(big_tree / "no-such-python"))
    out = rg_files(big_tree)
    with caplog.at_level(logging.WARNING, logger="dsh_jupyter.core.tools.glob.helper"):
        answer, helped = dated(big_tree, [out], helper=True)
    assert helped and answer == dated(big_tree, [out], helper=False)[0]
    assert caplog.messages[0].startswith(
        "dsh_jupyter: glob's dating helper could not start ([Errno 2] No such file or directory"
    )


@pytest.mark.parametrize(
    "helper, native", [(False, False), (True, False), (False, True)], ids=["here", "helper", "compiled"]
)
def test_dating_keeps_only_regular_files_beneath_the_root(tmp_path, helper, native, monkeypatch):
    """A folder that became a symlink to outside, a symlinked file and a file that left are not kept."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "a").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.py").write_text("s\n")
    (root / "a" / "kept.py").write_text("k\n")
    (root / "a" / "link.py").symlink_to(outside / "secret.py")
    (root / "swapped").symlink_to(outside, target_is_directory=True)
    os.utime(root / "a" / "kept.py", ns=(BASE_NS, BASE_NS))
    if helper:
        monkeypatch.setattr(dating_module, "START_AFTER", 1)
        monkeypatch.setattr(dating_module, "SPLIT_AT", 2)
    fd = root_fd(root)
    try:
        with Dating(fd, native=native) as dating:
            dating.feed(b"./a/kept.py\0./a/link.py\0./swap")
            dating.feed(b"ped/secret.py\0./a/gone.py\0./a/kep")
            dating.feed(b"t.py\0")
            assert bool(dating.held) is helper  # the first piece went to the helper, or not
            assert dating.finish() == ["a/kept.py", "a/kept.py"]
    finally:
        os.close(fd)


def test_a_merge_whose_runs_are_short_dates_the_rest_at_once():
    calls: dict[str, int] = {}

    class Stamp:
        def __call__(self, path: str) -> int:
            calls[path] = calls.get(path, 0) + 1
            return int(path.split(":")[1])

        def many(self, paths: list[str]) -> list[int]:
            return [self(p) for p in paths]

    n = 3 * DATE_ALL_AFTER
    a = [f"a{i}:{2 * i}" for i in range(n)]
    b = [f"b{i}:{2 * i + 1}" for i in range(n)]
    merged = merge_by_mtime(a, b, Stamp())
    assert merged == sorted(a + b, key=lambda p: int(p.split(":")[1]))
    assert max(calls.values()) == 1 and len(calls) == 2 * n
    ties = merge_by_mtime([f"a{i}:{i}" for i in range(n)], [f"b{i}:{i}" for i in range(n)], Stamp())
    assert ties[:4] == ["a0:0", "b0:0", "a1:1", "b1:1"]  # part A first on equal times


def test_a_walk_that_fails_ends_its_helper(big_tree):
    out = rg_files(big_tree)
    fd = root_fd(big_tree)
    try:
        with pytest.raises(RuntimeError), Dating(fd, native=False) as dating:
            dating.feed(out)
            helper = dating.helper
            assert helper is not None
            raise RuntimeError("the walk failed")
        assert helper._proc is not None and helper._proc.returncode is not None  # ended and reaped
        assert not helper._writer.is_alive()
    finally:
        os.close(fd)


def test_the_helper_and_the_compiled_dater_date_names_that_are_not_utf8_or_hold_a_newline(tmp_path):
    root = tmp_path / "root"
    rng = random.Random(4)
    build(root, [f"pkg{i:02d}" for i in range(41)], 100, lambda n: rng.sample(range(10 * n), n))
    odd = [os.path.join(os.fsencode(root), b"pkg00", b"bad\xffname.py"), os.fsencode(root / "pkg00" / "new\nline.py")]
    for path in odd:
        with open(path, "wb") as fh:
            fh.write(b"x\n")
        os.utime(path, ns=(BASE_NS - 1, BASE_NS - 1))  # the oldest two
    names = [b"./pkg00/bad\xffname.py", b"./pkg00/new\nline.py"]
    rest = [p for p in rg_files(root).split(b"\0")[:-1] if p not in names]
    out = b"\0".join(names + rest) + b"\0"  # one piece: its first half, these two names included, goes to the helper
    together, helped = dated(root, [out], helper=True)
    assert helped and together == dated(root, [out], helper=False)[0] == dated(root, [out], False, native=True)[0]
    assert together[:2] == ["pkg00/bad\udcffname.py", "pkg00/new\nline.py"] and len(together) == 4102


def test_pieces_the_helper_was_not_handed_by_the_end_are_taken_back_and_dated_here(big_tree):
    """The helper is stopped (SIGSTOP) while the walk is fed, so its pipe fills and the writer
    holds the rest of its share; at the end those pieces come back and are dated here, the helper
    answers what it was handed, and the answer equals dating everything in one process."""
    out = rg_files(big_tree)
    pieces = [out] * 41  # the same paths again and again: the helper's share outgrows its pipe
    fd = root_fd(big_tree)
    try:
        with Dating(fd, native=False) as dating:
            dating.feed(pieces[0])  # 5,000 paths: the helper starts
            helper = dating.helper
            assert helper is not None
            while helper._proc is None:  # started by its writer thread
                time.sleep(0.001)
            os.kill(helper._proc.pid, signal.SIGSTOP)
            try:
                for piece in pieces[1:]:
                    dating.feed(piece)
                share = sum(count for _, count in dating.held)
                queued = len(helper._pending)
                held = list(dating.held)
                back: list[int] = []
                take_back = helper.take_back
                helper.take_back = lambda: back.append(take_back()) or back[0]  # type: ignore[method-assign]
            finally:
                os.kill(helper._proc.pid, signal.SIGCONT)
            together = dating.finish()
        assert share == 41 * 2500 and queued > 0  # pieces were still waiting for the helper
        # the last pieces came back; the helper answered exactly the others
        assert back[0] > 0 and helper.sent == sum(count for _, count in held[: len(held) - back[0]])
    finally:
        os.close(fd)
    assert together == dated(big_tree, pieces, helper=False)[0] and len(together) == 41 * 5000


def test_runs_of_equal_times_of_every_length_end_in_path_order():
    """The tie pass against a plain sort by (time, path), on times with runs of one to many."""
    import numpy as np

    from dsh_jupyter.core.tools.glob.dating import _ties_by_path

    rng = random.Random(11)
    for n in (2, 3, 5, 50, 2000):
        for spread in (1, 2, 3, n):
            times = np.array([rng.randrange(spread) for _ in range(n)], dtype=np.int64)
            paths = [f"p{rng.randrange(10 * n):06d}/{i}" for i in range(n)]
            order = np.argsort(times)
            ranked = times[order]
            same = np.flatnonzero(ranked[1:] == ranked[:-1])
            got = _ties_by_path(order.tolist(), same, paths) if len(same) else order.tolist()
            assert got == sorted(range(n), key=lambda i: (int(times[i]), paths[i])), (n, spread)


def spy_on_dated_walks(monkeypatch) -> list[int]:
    """How many times glob took two dated walks (its ``finish_together``)."""
    from dsh_jupyter.core.tools.glob import tool as glob_module

    calls: list[int] = []
    real = glob_module.finish_together
    monkeypatch.setattr(glob_module, "finish_together", lambda *a: calls.append(1) or real(*a))
    return calls


@pytest.mark.parametrize("dater", ["compiled", "python"])
def test_the_dated_walks_answer_what_one_sorted_walk_answers_with_either_dater(tmp_path, dater, monkeypatch):
    """With the compiled dater, one dated walk per part of the cut at once; in Python, one walk."""
    from dsh_jupyter.core.fs import mtimes as compiled

    calls = spy_on_dated_walks(monkeypatch)
    root = tmp_path / "root"
    rng = random.Random(21)
    build(root, [*FOLDERS, "odd {x,y}", "pkg03/deep/er"], 15, lambda n: rng.sample(range(3 * n), n))
    (root / "top.py").write_text("x\n")
    expected = rg_sorted(root, "*.py")
    assert len(expected) == 18 * 15 + 1
    if dater == "compiled":
        r = ws_for(root, tmp_path).run("glob", pattern="*.py")
    else:
        with compiled.python_only():
            r = ws_for(root, tmp_path).run("glob", pattern="*.py")
    assert r.value["paths"] == expected
    assert len(calls) == (1 if dater == "compiled" else 0)


def test_two_dated_walks_keep_of_part_b_only_what_lies_in_its_folders(tmp_path):
    """A folder made after the cut was planned is walked by part A too: B's copy is dropped."""
    from dsh_jupyter.core.tools.glob.dating import finish_together

    root = tmp_path / "root"
    for rel, t in {"a/1.py": 3, "b/2.py": 1, "new/3.py": 2, "b/4.py": 2}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
        os.utime(root / rel, ns=(BASE_NS + t, BASE_NS + t))
    fd = root_fd(root)
    try:
        with Dating(fd) as a, Dating(fd) as b:
            a.feed(b"./a/1.py\0./new/3.py\0")
            b.feed(b"./b/2.py\0./new/3.py\0./b/4.py\0")
            assert finish_together(a, b, ("b/",)) == ["b/2.py", "b/4.py", "new/3.py", "a/1.py"]
    finally:
        os.close(fd)


def test_the_raw_output_cap_holds_for_the_two_dated_walks_together(tmp_path, monkeypatch):
    calls = spy_on_dated_walks(monkeypatch)
    root = tmp_path / "root"
    rng = random.Random(8)
    build(root, [f"d{i}" for i in range(4)], 40, lambda n: rng.sample(range(3 * n), n))
    total = sum(len(f"./{p}\0".encode()) for p in rg_sorted(root, "*.py"))
    r = ws_for(root, tmp_path, raw_output_max_bytes=total * 3 // 4).run("glob", pattern="*.py")  # each part fits
    assert r.text == (
        f"Error: glob produced more than {total * 3 // 4} bytes of raw output and was stopped; "
        "narrow the pattern, path or include"
    )
    assert r.value["code"] == "SEARCH_RAW_OUTPUT_OVERFLOW"
    assert not ws_for(root, tmp_path, raw_output_max_bytes=total + 10).run("glob", pattern="*.py").is_error
    assert len(calls) == 1  # the first call stopped before its merge


def test_files_it_may_not_look_up_are_counted_alike_here_by_the_helper_and_in_c(tmp_path):
    """Three folders of 100 files may be read but not entered (mode 444, root's override dropped
    with setpriv): rg lists their files, no dater can look them up. Each way of dating (this
    process alone, with the helper, the compiled dater) leaves those 300 out and counts them."""
    root = tmp_path / "root"
    rng = random.Random(6)
    build(root, [f"pkg{i:02d}" for i in range(50)], 100, lambda n: rng.sample(range(10 * n), n))
    out = rg_files(root)
    script = textwrap.dedent(
        f"""
        import os
        from dsh_jupyter.core.tools.glob.dating import Dating
        fd = os.open({str(root)!r}, os.O_RDONLY | os.O_DIRECTORY)
        out = {out!r}
        for helper, native in ((False, False), (True, False), (False, True)):
            with Dating(fd, helper=helper, native=native) as dating:
                dating.feed(out)
                helped = dating.helper is not None and bool(dating.held)
                paths = dating.finish()
                print(helped, len(paths), dating.undated, any(p.startswith("pkg07/") for p in paths))
        """
    )
    argv = [sys.executable, "-c", script]
    if os.geteuid() == 0:  # root ignores file modes; this child may not
        argv = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all", *argv]
    for name in ("pkg07", "pkg21", "pkg49"):
        (root / name).chmod(0o444)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    finally:
        for name in ("pkg07", "pkg21", "pkg49"):
            (root / name).chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["False 4700 300 False", "True 4700 300 False", "False 4700 300 False"]
