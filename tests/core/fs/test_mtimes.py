"""glob's compiled dater (core/fs/mtimes.c through core/fs/mtimes.py) against the Python one.

Real files, folders, symlinks and a FIFO on disk; the compiled answer is compared path for path
with ``Rechecker.mtimes``, the dater it stands in for, and a second process swaps a folder for a
symlink to outside while it dates. Chains of folders deeper than the descriptor limit (made
through descriptors: no path string can name their bottom) are dated in a child process under
that limit, and the descriptors held while dating are counted from a second thread.
"""

from __future__ import annotations

import ctypes
import logging
import os
import random
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from deeptrees import make_chain, remove_tree  # tests/deeptrees.py

from dsh_jupyter.core.fs import mtimes as compiled
from dsh_jupyter.core.rg import recheck
from dsh_jupyter.core.rg.recheck import Rechecker

ROOT = Path(__file__).resolve().parents[3]
BASE_NS = 1_600_000_000 * 10**9
CHILD_PATH = [str(Path(__file__).parent), str(ROOT / "tests")]


def fd_of(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY)


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def both(root_fd: int, rels: list[bytes]) -> tuple[list[int | str | None], list[int | str | None]]:
    """(compiled, Python) answers for the same paths: the time, None where a path is not a
    regular file beneath the root, "undated" where it could not be looked at."""
    block = b"".join(rel + b"\0" for rel in rels)
    fast = compiled.mtimes(root_fd, block)
    assert fast is not None
    named = {compiled.NONE: None, compiled.UNDATED: "undated"}
    slow: list[int | str | None] = []
    with Rechecker(root_fd) as check:
        for rel in rels:  # one at a time, to see which ones it counts as undated
            before = check.undated
            (mtime,) = check.mtimes([rel.decode("utf-8", "surrogateescape").removeprefix("./")])
            slow.append("undated" if check.undated > before else mtime)
    with Rechecker(root_fd) as check:  # and all at once, as glob asks: the same answer
        at_once = check.mtimes([rel.decode("utf-8", "surrogateescape").removeprefix("./") for rel in rels])
        assert at_once == [None if t == "undated" else t for t in slow]
        assert check.undated == slow.count("undated")
    return [named.get(t, t) for t in fast.tolist()], slow


@pytest.fixture
def odd_tree(tmp_path) -> tuple[Path, list[bytes]]:
    """A tree with every kind of thing a path can name, and the paths to ask about."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("s\n")
    deep = root / "d1" / "d2" / "d3" / "d4" / "d5"
    deep.mkdir(parents=True)
    (root / "sib" / "x").mkdir(parents=True)
    files = [
        b"top.py",
        b"d1/a.py",
        b"d1/d2/b.py",
        b"d1/d2/d3/d4/d5/deep.py",
        b"sib/x/c.py",
        b"sib/y.py",
        b"d1/bad\xffname.py",
        b"d1/new\nline.py",
        b"d1/" + b"n" * 255,
    ]
    for i, rel in enumerate(files):
        path = os.path.join(os.fsencode(root), rel)
        with open(path, "wb") as fh:
            fh.write(b"x\n")
        os.utime(path, ns=(BASE_NS + i, BASE_NS + i * 1001))
    (root / "d1" / "to_file.py").symlink_to(root / "top.py")
    (root / "d1" / "to_secret.py").symlink_to(outside / "secret.py")
    (root / "swapped").symlink_to(outside, target_is_directory=True)
    (root / "d1" / "up").symlink_to(root / "sib", target_is_directory=True)
    os.mkfifo(root / "d1" / "pipe.py")
    asked = [
        *files,
        *(b"./" + rel for rel in files),
        b"d1/to_file.py",
        b"d1/to_secret.py",
        b"swapped/secret.py",
        b"d1/up/y.py",
        b"d1/pipe.py",
        b"d1",
        b"d1/d2",
        b"gone.py",
        b"d1/gone/x.py",
        b"top.py/x.py",
        b"",
        b".",
        b"./",
        b"..",
        b"d1/.",
        b"d1/..",
        b"d1/./a.py",
        b"d1/../top.py",
        b"d1//a.py",
        b"/top.py",
        b"/d1/a.py",
        b"//top.py",
        b"d1/a.py/",
        b"./d1/a.py",
        b"././top.py",
        b"d1/" + b"n" * 256,
        b"d" * 256 + b"/a.py",
        b"sib/x/../y.py",
    ]
    return root, asked


def test_the_compiled_dater_is_built_and_loaded():
    """The install (./dev, pip install) built it; a machine without a C compiler would log instead."""
    assert compiled.available(), f"{compiled.LIBRARY} is missing or could not be loaded"
    assert ctypes.CDLL(compiled.LIBRARY).dsh_mtimes_abi() == compiled.ABI


def test_it_answers_what_the_python_dater_answers_for_every_kind_of_path(odd_tree):
    root, asked = odd_tree
    fd = fd_of(root)
    try:
        fast, slow = both(fd, asked)
        assert fast == slow
        dated = dict(zip(asked, fast))
        assert dated[b"d1/d2/d3/d4/d5/deep.py"] == BASE_NS + 3 * 1001
        assert dated[b"d1/bad\xffname.py"] == BASE_NS + 6 * 1001 and dated[b"d1/new\nline.py"] == BASE_NS + 7 * 1001
        assert dated[b"/top.py"] == BASE_NS  # as Rechecker: an empty first component is the root
        for never in (b"d1/to_file.py", b"d1/to_secret.py", b"swapped/secret.py", b"d1/up/y.py", b"d1/pipe.py"):
            assert dated[never] is None, never
        # in random orders and mixes, so the folders it keeps open between paths are reused and dropped
        rng = random.Random(11)
        for _ in range(200):
            picked = [rng.choice(asked) for _ in range(rng.randint(1, 40))]
            assert both(fd, picked)[0] == both(fd, picked)[1], picked
    finally:
        os.close(fd)


def test_it_closes_every_folder_it_opened(odd_tree):
    root, asked = odd_tree
    fd = fd_of(root)
    try:
        before = open_fds()
        for _ in range(50):
            compiled.mtimes(fd, b"".join(rel + b"\0" for rel in asked))
        assert open_fds() == before
    finally:
        os.close(fd)


def test_an_empty_block_and_a_block_cut_inside_a_path(tmp_path):
    fd = fd_of(tmp_path)
    try:
        empty = compiled.mtimes(fd, b"")
        assert empty is not None and len(empty) == 0
        with pytest.raises(ValueError, match=r"^the block must end with a NUL: only whole paths are dated$"):
            compiled.mtimes(fd, b"a.py\0b.p")
    finally:
        os.close(fd)


def test_out_of_descriptors_it_goes_hand_over_hand_then_says_undated(tmp_path):
    """With two descriptors to spare, a path six folders deep is dated (each folder opened beneath
    the one before, which is then let go); with one, it is undated, never an error. Both daters
    alike, nothing left open. Run in a process of its own with a low descriptor limit."""
    deep = tmp_path / "a" / "b" / "c" / "d" / "e" / "f"
    deep.mkdir(parents=True)
    (deep / "x.py").write_text("x\n")
    os.utime(deep / "x.py", ns=(BASE_NS, BASE_NS))
    script = textwrap.dedent(
        f"""
        import os, resource
        import numpy
        from dsh_jupyter.core.fs import mtimes
        from dsh_jupyter.core.rg.recheck import Rechecker
        fd = os.open({str(tmp_path)!r}, os.O_RDONLY | os.O_DIRECTORY)
        assert mtimes.available()
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        before = sorted(os.listdir("/proc/self/fd"))

        def is_open(n):
            try:
                os.fstat(n)
                return True
            except OSError:
                return False

        def limit(spare):  # the lowest limit under which exactly spare more can be opened
            free, n = 0, 0
            while free < spare:
                free += not is_open(n)
                n += 1
            return n

        for spare in (2, 1):
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit(spare), hard))
            fast = mtimes.mtimes(fd, b"a/b/c/d/e/f/x.py\\0").tolist()
            check = Rechecker(fd)
            slow = check.mtimes(["a/b/c/d/e/f/x.py"])
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            held = len(os.listdir("/proc/self/fd")) - len(before)
            check.close()
            print(spare, fast == [mtimes.UNDATED], fast == [{BASE_NS}], slow, check.undated, held,
                  sorted(os.listdir("/proc/self/fd")) == before)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    # the Python dater holds what it opened until closed: two folders, then one (the spare)
    assert done.stdout.splitlines() == [
        f"2 False True [{BASE_NS}] 0 2 True",
        "1 True False [None] 1 1 True",
    ]


def test_a_missing_or_stale_library_is_logged_once_and_glob_dates_in_python(tmp_path, monkeypatch, caplog):
    stale = tmp_path / "stale.c"
    stale.write_text("int dsh_mtimes_abi(void) { return 0; }\nlong dsh_mtimes(void) { return 0; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(tmp_path / "stale.so"), str(stale)], check=True)
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.py").write_text("a\n")
    fd = fd_of(root)
    try:
        for library, reason in [
            (str(tmp_path / "absent.so"), "absent.so: cannot open shared object file"),
            (str(tmp_path / "stale.so"), "stale.so was built from another version of mtimes.c"),
        ]:
            monkeypatch.setattr(compiled, "LIBRARY", library)
            monkeypatch.setattr(compiled, "_loaded", False)
            monkeypatch.setattr(compiled, "_function", None)
            caplog.clear()
            with caplog.at_level(logging.WARNING, logger="dsh_jupyter.core.fs.mtimes"):
                assert compiled.mtimes(fd, b"a.py\0") is None
                assert compiled.mtimes(fd, b"a.py\0") is None and not compiled.available()
            assert len(caplog.messages) == 1
            message = caplog.messages[0]
            assert message.startswith("dsh_jupyter: glob's compiled dater could not be loaded (")
            assert reason in message
            assert message.endswith(
                "); glob dates its paths in Python (the same answer, slower on big trees). "
                "Reinstall dsh-jupyter where a C compiler is found to build it."
            )
    finally:
        os.close(fd)


def test_folders_it_may_not_enter_or_read_leave_their_files_undated_as_in_python(tmp_path):
    """File modes enforced (root's override dropped with setpriv): below a folder it may not enter
    (mode 000), may enter but not read (mode 111: both daters open folders for reading) or may read
    but not enter (mode 444: the folder opens, its files cannot be looked up), every file is
    undated (not "not there": glob says how many it left out), and every other file is dated, as
    the Python dater answers."""
    root = tmp_path / "root"
    for rel in ("closed/a.py", "closed/deeper/b.py", "search_only/c.py", "read_only/e.py", "open/d.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
        os.utime(root / rel, ns=(BASE_NS, BASE_NS))
    rels = [
        "closed/a.py",
        "closed/deeper/b.py",
        "search_only/c.py",
        "read_only/e.py",
        "open/d.py",
        "closed/a.py",
        "open/gone.py",
        "read_only/gone.py",
    ]
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path[:0] = {CHILD_PATH!r}  # to import both() from this module
        from test_mtimes import both
        fd = os.open({str(root)!r}, os.O_RDONLY | os.O_DIRECTORY)
        fast, slow = both(fd, [rel.encode() for rel in {rels!r}])
        print(fast == slow, fast)
        """
    )
    argv = [sys.executable, "-c", script]
    if os.geteuid() == 0:  # root ignores file modes; this child may not
        argv = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all", *argv]
    (root / "closed").chmod(0)
    (root / "search_only").chmod(0o111)
    (root / "read_only").chmod(0o444)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    finally:
        for folder in ("closed", "search_only", "read_only"):
            (root / folder).chmod(0o755)
    assert done.returncode == 0, done.stderr
    # a file that is gone below a folder it may read but not enter cannot be told from one that is there
    assert done.stdout.splitlines() == [
        f"True ['undated', 'undated', 'undated', 'undated', {BASE_NS}, 'undated', None, 'undated']"
    ]


@pytest.mark.parametrize("present", [True, False], ids=["built", "missing"])
def test_threads_asking_first_at_once_load_it_once_and_agree(tmp_path, monkeypatch, caplog, present):
    """Two globs starting together in a server's threads: one load, one warning, one answer."""
    import threading

    if not present:
        monkeypatch.setattr(compiled, "LIBRARY", str(tmp_path / "absent.so"))
    monkeypatch.setattr(compiled, "_loaded", False)
    monkeypatch.setattr(compiled, "_function", None)
    start = threading.Barrier(8)
    answers: list[bool] = []

    def ask() -> None:
        start.wait()
        answers.append(compiled.available())

    with caplog.at_level(logging.WARNING, logger="dsh_jupyter.core.fs.mtimes"):
        threads = [threading.Thread(target=ask) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert answers == [present] * 8
    assert len(caplog.messages) == (0 if present else 1)


def test_a_folder_swapped_for_a_symlink_to_outside_is_never_dated_through(tmp_path):
    """A second process swaps a folder for a symlink to outside and back, as fast as it can, while
    this one dates the file below it: every answer is the inside file's time or none, never the
    outside file's."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "box").mkdir(parents=True)
    (root / "box" / "f.py").write_text("in\n")
    outside.mkdir()
    (outside / "f.py").write_text("out\n")
    os.utime(root / "box" / "f.py", ns=(BASE_NS, BASE_NS))
    os.utime(outside / "f.py", ns=(BASE_NS + 777, BASE_NS + 777))
    swapper = textwrap.dedent(
        f"""
        import os, time
        root = {str(root)!r}
        real, link, aside = root + "/box", root + "/link", root + "/aside"
        os.symlink({str(outside)!r}, link)
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            os.rename(real, aside)
            os.rename(link, real)      # box is now a symlink to outside
            os.rename(real, link)
            os.rename(aside, real)     # box is the real folder again
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", swapper])
    fd = fd_of(root)
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 1.2
        while time.monotonic() < deadline:
            times = compiled.mtimes(fd, b"box/f.py\0" * 64)
            assert times is not None
            seen.update(times.tolist())
    finally:
        proc.wait(timeout=30)
        os.close(fd)
    assert proc.returncode == 0
    assert seen <= {BASE_NS, compiled.NONE} and BASE_NS in seen


@pytest.fixture
def chain(tmp_path):
    """``make(depth)``: a chain of ``depth`` folders named "dir" below a new folder, with top.py at
    the top, mid.py five folders down and bottom.py at the bottom (dated BASE_NS plus their
    depth); returns (top folder, bottom path). Removed through descriptors afterwards."""
    made: list[Path] = []

    def make(depth: int) -> tuple[Path, str]:
        top = tmp_path / f"chain{len(made)}"
        made.append(top)
        bottom = make_chain(top, depth, "dir", {0: "top.py", 5: "mid.py", depth: "bottom.py"}, BASE_NS)
        return top, bottom + "/bottom.py"

    yield make
    for top in made:
        remove_tree(top)
        assert not top.exists()


def test_the_budget_is_the_same_in_c_and_in_python():
    source = (ROOT / "dsh_jupyter" / "core" / "fs" / "mtimes.c").read_text()
    assert f"#define HELD_MAX {recheck.HELD}\n" in source and recheck.HELD == 64


@pytest.mark.parametrize("depth, limit", [(1100, 1024), (600, 512)])
def test_a_chain_deeper_than_the_descriptor_limit_is_dated_alike(chain, depth, limit):
    """Under a descriptor limit lower than the chain is deep, the top, the middle and the bottom
    (a path of more than 4,096 bytes) are dated by both daters, in any order, and the compiled one
    leaves nothing open."""
    top, bottom = chain(depth)
    mid = "dir/" * 5 + "mid.py"
    assert len(bottom) > 4096 or depth < 1024
    rng = random.Random(depth)
    rels = ["top.py", mid, bottom, bottom, mid, bottom + "x", "top.py", bottom]
    rels += [rng.choice(rels) for _ in range(20)]
    script = textwrap.dedent(
        f"""
        import os, resource, sys
        sys.path[:0] = {CHILD_PATH!r}  # to import both() from this module
        from test_mtimes import both
        resource.setrlimit(resource.RLIMIT_NOFILE, ({limit}, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        fd = os.open({str(top)!r}, os.O_RDONLY | os.O_DIRECTORY)
        before = sorted(os.listdir("/proc/self/fd"))
        fast, slow = both(fd, [rel.encode() for rel in {rels!r}])
        print(fast == slow, sorted(os.listdir("/proc/self/fd")) == before)
        print(fast)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    said = done.stdout.splitlines()
    assert said[0] == "True True"
    times = {"top.py": BASE_NS, mid: BASE_NS + 5, bottom: BASE_NS + depth, bottom + "x": None}
    assert said[1] == repr([times[rel] for rel in rels])


def test_it_holds_at_most_held_folders_at_once_however_deep(chain):
    """A second thread counts this process's descriptors while the compiled dater goes up and down
    a chain of 1,100 folders 100 times (ctypes lets the interpreter go during the call): never more than
    HELD above what was open before. The Python dater holds at most HELD between lookups."""
    import threading

    top, bottom = chain(1100)
    mid = "dir/" * 5 + "mid.py"
    fd = fd_of(top)
    baseline = len(os.listdir("/proc/self/fd"))
    counts: list[int] = []
    done = threading.Event()

    def count() -> None:
        while not done.is_set():
            counts.append(len(os.listdir("/proc/self/fd")))

    counter = threading.Thread(target=count)
    try:
        counter.start()
        # each bottom after mid opens 1,095 folders; each mid after bottom starts again from the top
        times = compiled.mtimes(fd, (bottom.encode() + b"\0" + mid.encode() + b"\0") * 100)
        done.set()
        counter.join()
        assert times is not None and set(times.tolist()) == {BASE_NS + 1100, BASE_NS + 5}
        assert counts and max(counts) <= baseline + recheck.HELD
        assert len(os.listdir("/proc/self/fd")) == baseline
        with Rechecker(fd) as check:
            assert check.mtimes([bottom, mid, bottom]) == [BASE_NS + 1100, BASE_NS + 5, BASE_NS + 1100]
            assert len(os.listdir("/proc/self/fd")) == baseline + recheck.HELD
        assert len(os.listdir("/proc/self/fd")) == baseline
    finally:
        done.set()
        os.close(fd)
