"""glob's compiled dater (core/fs/mtimes.c through core/fs/mtimes.py) against the Python one.

Real files, folders, symlinks and a FIFO on disk; the compiled answer is compared path for path
with ``Rechecker.mtimes``, the dater it stands in for, and a second process swaps a folder for a
symlink to outside while it dates.
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

from dsh_jupyter.core.fs import mtimes as compiled
from dsh_jupyter.core.rg.recheck import Rechecker

ROOT = Path(__file__).resolve().parents[3]
BASE_NS = 1_600_000_000 * 10**9


def fd_of(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY)


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def both(root_fd: int, rels: list[bytes]) -> tuple[list[int | None], list[int | None]]:
    """(compiled, Python) answers for the same paths, None where a path is not dated."""
    block = b"".join(rel + b"\0" for rel in rels)
    fast = compiled.mtimes(root_fd, block)
    assert fast is not None
    with Rechecker(root_fd) as check:
        slow = check.mtimes([rel.decode("utf-8", "surrogateescape").removeprefix("./") for rel in rels])
    return [None if t == compiled.NONE else int(t) for t in fast.tolist()], slow


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


def test_out_of_descriptors_it_answers_none_and_leaves_nothing_open(tmp_path):
    """A folder it cannot open for want of descriptors is not "no folder": the caller dates in
    Python, which raises as it always has. Run in a process of its own with a low descriptor limit."""
    deep = tmp_path / "a" / "b" / "c" / "d" / "e" / "f"
    deep.mkdir(parents=True)
    (deep / "x.py").write_text("x\n")
    script = textwrap.dedent(
        f"""
        import os, resource
        from dsh_jupyter.core.fs import mtimes
        from dsh_jupyter.core.rg.recheck import Rechecker
        fd = os.open({str(tmp_path)!r}, os.O_RDONLY | os.O_DIRECTORY)
        assert mtimes.available()
        before = sorted(os.listdir("/proc/self/fd"))
        highest = max(int(n) for n in before)
        resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 4, highest + 4))
        print(mtimes.mtimes(fd, b"a/b/c/d/e/f/x.py\\0"))
        print(sorted(os.listdir("/proc/self/fd")) == before)
        try:
            Rechecker(fd).mtimes(["a/b/c/d/e/f/x.py"])
        except OSError as exc:
            print("python raises", exc.errno == 24)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    # (the Python dater keeps the folders it opened, so the descriptors are counted before it runs)
    assert done.stdout.splitlines() == ["None", "True", "python raises True"]


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


def test_folders_it_may_not_enter_or_read_answer_as_in_python(tmp_path):
    """File modes enforced (root's override dropped with setpriv): below a folder it may not enter
    (mode 000), or may enter but not read (mode 111: both daters open folders for reading), no
    file is dated, and every other file is, as the Python dater answers."""
    root = tmp_path / "root"
    for rel in ("closed/a.py", "closed/deeper/b.py", "search_only/c.py", "open/d.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
        os.utime(root / rel, ns=(BASE_NS, BASE_NS))
    script = textwrap.dedent(
        f"""
        import os
        from dsh_jupyter.core.fs import mtimes
        from dsh_jupyter.core.rg.recheck import Rechecker
        rels = ["closed/a.py", "closed/deeper/b.py", "search_only/c.py", "open/d.py", "closed/a.py"]
        fd = os.open({str(root)!r}, os.O_RDONLY | os.O_DIRECTORY)
        fast = [None if t == mtimes.NONE else t for t in mtimes.mtimes(fd, "\\0".join(rels).encode() + b"\\0").tolist()]
        print(fast == Rechecker(fd).mtimes(rels), fast)
        """
    )
    argv = [sys.executable, "-c", script]
    if os.geteuid() == 0:  # root ignores file modes; this child may not
        argv = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all", *argv]
    (root / "closed").chmod(0)
    (root / "search_only").chmod(0o111)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    finally:
        (root / "closed").chmod(0o755)
        (root / "search_only").chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "[None,", "None,", "None,", f"{BASE_NS},", "None]"]


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
