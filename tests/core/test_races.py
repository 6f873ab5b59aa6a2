"""Hostile neighbours, for real: a second process swaps names while the tools run.

The racer is a separate process that flips an in-root file and an in-root folder with a symlink
to outside, atomically (``renameat2(RENAME_EXCHANGE)`` through ctypes), as fast as it can. Each
tool then runs thousands of times against the flipping names, in every confinement mode (Landlock
on and off, openat2 and the plain walk), and the safety property is checked on disk and in every
answer: not one outside byte or name is shown, nothing outside is created or changed, and no call
ends in ``INTERNAL_ERROR`` or a false ``FS_SYMLINK_LOOP``.

``DSH_RACE_ITERATIONS`` (default 2000) sets the iterations per tool and Landlock mode; they are
shared between the tool's path variants and the two path resolvers (openat2, walk).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dsh_jupyter import Workspace
from dsh_jupyter.core.fs import syscalls

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not syscalls.renameat2_available(), reason="renameat2(RENAME_EXCHANGE) is Linux-only"),
]

ITERATIONS = int(os.environ.get("DSH_RACE_ITERATIONS", "2000"))
SECRET = "OUTSIDE-SECRET"
OUT_NAME = "outside-only-name.txt"
INSIDE = "INSIDE-TEXT"
# A tool may refuse while names flip; these are honest refusals. Anything else fails the test.
ALLOWED = {
    "FS_OUTSIDE_ROOT",
    "FS_ERROR",
    "FS_NOT_OBSERVED",
    "FS_NOT_FOUND",
    "FS_NOT_DIRECTORY",
    "FS_NOT_REGULAR_FILE",
    "FS_EXISTS",
    "not-found",
    "not-a-dir",
    "fs-error",
}

RACER = textwrap.dedent(f"""
    import importlib.util, sys
    spec = importlib.util.spec_from_file_location("sc", {str(Path(syscalls.__file__))!r})
    sc = importlib.util.module_from_spec(spec); spec.loader.exec_module(sc)
    pairs = [tuple(p.split("|")) for p in sys.argv[1:]]
    print("racing", flush=True)
    while True:
        for a, b in pairs:
            try:
                sc.renameat2(-100, a, -100, b, sc.RENAME_EXCHANGE)
            except FileNotFoundError:
                pass  # a move took one of the names away for a moment; it comes back
""")


@pytest.fixture
def arena(tmp_path: Path):
    """root/{flip, flipdir/} flipping with root/{flip_link, flipdir_link} that point outside."""
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    (outside / "outdir").mkdir(parents=True)
    (outside / "secret.txt").write_text(f"{SECRET} file\n")
    (outside / "outdir" / "f.txt").write_text(f"{SECRET} in folder\n")
    (outside / "outdir" / OUT_NAME).write_text(f"{SECRET} named\n")
    (root / "flipdir").mkdir(parents=True)
    (root / "flipdir" / "f.txt").write_text(f"{INSIDE} in folder\n")
    (root / "flip").write_text(f"{INSIDE} file\n")
    (root / "plain.txt").write_text(f"{INSIDE} plain\n")
    os.symlink(outside / "secret.txt", root / "flip_link")
    os.symlink(outside / "outdir", root / "flipdir_link")
    return root, outside


def snapshot(folder: Path) -> dict:
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            out[p] = (st.st_ino, st.st_size, st.st_mtime_ns, Path(p).read_bytes() if os.path.isfile(p) else None)
    return out


def start_racer(root: Path) -> subprocess.Popen:
    pairs = [f"{root / 'flip'}|{root / 'flip_link'}", f"{root / 'flipdir'}|{root / 'flipdir_link'}"]
    proc = subprocess.Popen([sys.executable, "-c", RACER, *pairs], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "racing"
    return proc


def stop_racer(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait(10)


def check(result, seen: dict) -> None:
    """No outside byte or name in an answer, and no refusal but the honest ones."""
    blob = result.text + repr(result.value)
    assert SECRET not in blob, result.text
    assert OUT_NAME not in blob, result.text
    if result.is_error:
        code = result.value["code"]
        assert code in ALLOWED, result.text
        seen[code] = seen.get(code, 0) + 1
    else:
        seen["ok"] = seen.get("ok", 0) + 1


MODES = [
    pytest.param({"landlock": True, "openat2": True}, id="landlock-openat2"),
    pytest.param({"landlock": False, "openat2": True}, id="descriptors-openat2"),
    pytest.param({"landlock": True, "openat2": False}, id="landlock-walk"),
    pytest.param({"landlock": False, "openat2": False}, id="descriptors-walk"),
]

READ_ONLY_CALLS = {
    "read-file": ("read", {"file_path": "flip"}),
    "read-in-folder": ("read", {"file_path": "flipdir/f.txt"}),
    "list": ("list", {"path": "flipdir"}),
    "list_dir": ("list_dir", {"path": ".", "recursive": True}),
    "grep-root": ("grep", {"pattern": "TEXT|SECRET"}),
    "grep-folder": ("grep", {"pattern": "TEXT|SECRET", "path": "flipdir"}),
    "grep-file": ("grep", {"pattern": "TEXT|SECRET", "path": "flip"}),
    "grep-count": ("grep", {"pattern": "TEXT|SECRET", "output_mode": "count"}),  # rg counts under Landlock
    "grep-context": ("grep", {"pattern": "TEXT|SECRET", "context": 2, "path": "flipdir"}),
    "glob-root": ("glob", {"pattern": "*"}),
    "glob-folder": ("glob", {"pattern": "*", "path": "flipdir"}),
    "find-root": ("find", {"query": "f"}),
    "find-folder": ("find", {"query": "f", "path": "flipdir"}),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("call", list(READ_ONLY_CALLS))
def test_reading_tools_never_show_outside(arena, tmp_path, mode, call):
    root, outside = arena
    ws = Workspace(root, session="race", state_path=tmp_path / "state.sqlite", **mode)
    tool, args = READ_ONLY_CALLS[call]
    before = snapshot(outside)
    variants = sum(1 for t, _ in READ_ONLY_CALLS.values() if t == tool)
    n = -(-ITERATIONS // (variants * 2))  # this tool's share: its variants times the two resolvers
    seen: dict = {}
    racer = start_racer(root)
    try:
        for _ in range(n):
            check(ws.run(tool, **args), seen)
    finally:
        stop_racer(racer)
    assert snapshot(outside) == before
    assert seen.get("ok", 0) > 0, seen  # the race did not simply make the tool refuse everything


@pytest.mark.parametrize("helper", [False, True], ids=["dated-here", "helper-process"])
@pytest.mark.parametrize("mode", MODES)
def test_the_dated_glob_walk_never_shows_outside(arena, tmp_path, mode, helper, monkeypatch):
    """glob's one dated walk (times spread across folders) against the same racer: the dating is
    the recheck, through folder descriptors opened beneath the root with no symlink followed, in
    this process and in the helper process that dates half of a big walk (made to take part here)."""
    import random

    from dsh_jupyter.core.tools.glob import dating as dating_module
    from dsh_jupyter.core.tools.glob.dating import times_follow_folders
    from dsh_jupyter.core.tools.glob.split import plan_split

    if helper:
        monkeypatch.setattr(dating_module, "START_AFTER", 1)
        monkeypatch.setattr(dating_module, "SPLIT_AT", 2)
        monkeypatch.setattr(dating_module.helper_process, "_broken", False)

    root, outside = arena
    rng = random.Random(7)
    for k in range(4):
        for i in range(8):
            path = root / f"pkg{k}" / f"f{i}.txt"
            path.parent.mkdir(exist_ok=True)
            path.write_text(f"{INSIDE} {k} {i}\n")
            stamp = 1_700_000_000 + rng.randrange(10**7)
            os.utime(path, (stamp, stamp))
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        split = plan_split(fd, lambda rel: False)
        assert split is not None and not times_follow_folders(fd, split.b_dirs)  # glob takes the dated walk
    finally:
        os.close(fd)
    ws = Workspace(root, session="race", state_path=tmp_path / "state.sqlite", glob_max_results=1000, **mode)
    before = snapshot(outside)
    seen: dict = {}
    racer = start_racer(root)
    try:
        for _ in range(-(-ITERATIONS // 4)):
            result = ws.run("glob", pattern="*")
            check(result, seen)
    finally:
        stop_racer(racer)
    assert snapshot(outside) == before
    assert seen.get("ok", 0) > 0, seen


@pytest.mark.parametrize("mode", MODES)
def test_write_never_creates_or_changes_anything_outside(arena, tmp_path, mode):
    root, outside = arena
    ws = Workspace(root, session="race", state_path=tmp_path / "state.sqlite", **mode)
    before = snapshot(outside)
    seen: dict = {}
    racer = start_racer(root)
    try:
        for i in range(-(-ITERATIONS // 2)):
            check(ws.run("write", file_path=f"flipdir/new-{i}.txt", content=f"{INSIDE} {i}\n"), seen)
            check(ws.run("write", file_path=f"flipdir/sub{i}/deep.txt", content="deep\n"), seen)
            r = ws.run("read", file_path="flip")
            check(r, seen)
            check(ws.run("write", file_path="flip", content=f"{INSIDE} rewritten {i}\n"), seen)
    finally:
        stop_racer(racer)
    assert snapshot(outside) == before, "a write reached outside the root"
    assert seen.get("ok", 0) > 0, seen
    # nothing was left half-written: no temporary files anywhere in the root
    leftovers = [p for p in Path(root).rglob("*") if p.name.endswith(".dsh-tmp")]
    assert leftovers == []


@pytest.mark.parametrize("mode", MODES)
def test_edit_never_changes_anything_outside(arena, tmp_path, mode):
    root, outside = arena
    ws = Workspace(root, session="race", state_path=tmp_path / "state.sqlite", **mode)
    before = snapshot(outside)
    seen: dict = {}
    racer = start_racer(root)
    try:
        for i in range(-(-ITERATIONS // 4)):
            for path in ("flipdir/f.txt", "flip"):
                check(ws.run("read", file_path=path), seen)
                old, new = ("TEXT", "TEXt") if i % 2 == 0 else ("TEXt", "TEXT")
                r = ws.run("edit", file_path=path, old_string=old, new_string=new)
                if not (r.is_error and r.value["code"] == "EDIT_NOT_FOUND"):
                    check(r, seen)
    finally:
        stop_racer(racer)
    assert snapshot(outside) == before, "an edit reached outside the root"
    assert seen.get("ok", 0) > 0, seen
    assert [p for p in Path(root).rglob("*") if p.name.endswith(".dsh-tmp")] == []


@pytest.mark.parametrize("mode", MODES)
def test_move_never_creates_changes_or_removes_anything_outside(arena, tmp_path, mode):
    """Files and folders move into, out of and within the flipping folder, and over a file read
    through it: every name is resolved beneath the root, so the folder swapped for a link to
    outside at any moment is refused or is the in-root one, never the outside one."""
    root, outside = arena
    ws = Workspace(root, session="race", state_path=tmp_path / "state.sqlite", **mode)
    before = snapshot(outside)
    seen: dict = {}
    moved: dict[str, int] = {}
    racer = start_racer(root)
    try:
        for i in range(-(-ITERATIONS // 4)):
            (root / f"m{i}.txt").write_text(f"{INSIDE} {i}\n")
            (root / f"box{i}").mkdir()
            (root / f"box{i}" / "f.txt").write_text(f"{INSIDE} box {i}\n")
            for source, destination in [
                (f"m{i}.txt", f"flipdir/m{i}.txt"),  # into the flipping folder
                (f"flipdir/m{i}.txt", f"flipdir/sub{i}/m{i}.txt"),  # within it, parents made
                (f"flipdir/sub{i}/m{i}.txt", f"back{i}.txt"),  # out of it
                (f"box{i}", f"flipdir/box{i}"),  # a folder into it
                ("flipdir/f.txt", f"f{i}.txt"),  # the flipping folder's own file, out and back
                (f"f{i}.txt", "flipdir/f.txt"),
                ("flip", f"flip{i}"),  # the flipping file: refused while it is the link
            ]:
                r = ws.run("move", source=source, destination=destination)
                check(r, seen)
                if not r.is_error and source in ("flip", "flipdir/f.txt"):
                    moved[source] = moved.get(source, 0) + 1
                    if source == "flip":  # put the racer's name back at once
                        os.rename(root / f"flip{i}", root / "flip")
            for target in ("flipdir/f.txt", "flip"):  # over a file read through the flipping names
                check(ws.run("read", file_path=target), seen)
                (root / f"o{i}.txt").write_text(f"{INSIDE} over {i}\n")
                check(ws.run("move", source=f"o{i}.txt", destination=target, overwrite=True), seen)
        assert racer.poll() is None  # the names kept flipping all along
    finally:
        stop_racer(racer)
    assert snapshot(outside) == before, "a move reached outside the root"
    assert seen.get("ok", 0) > 0, seen
    assert set(moved) >= {"flip", "flipdir/f.txt"}, moved  # the race did not make every move refuse


WATCHER = textwrap.dedent("""
    import os, sys
    folder = sys.argv[1]
    print("ready", flush=True)
    for line in sys.stdin:
        name = line.strip()
        while True:
            names = os.listdir(folder)
            if name in names or any(n.endswith(".dsh-tmp") for n in names):
                break  # the tool has written its temporary file (or is done): create the name now
        try:
            fd = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            print("late", flush=True)
            continue
        os.write(fd, b"theirs\\n")
        os.close(fd)
        print("created", flush=True)
""")


def test_a_file_created_meanwhile_is_never_replaced(tmp_path):
    """A neighbour creates the file (O_EXCL) between the write's check and its move: it is kept."""
    root = tmp_path / "root"
    root.mkdir()
    ws = Workspace(root, session="race", state_path=tmp_path / "state.sqlite")
    watcher = subprocess.Popen(
        [sys.executable, "-c", WATCHER, str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert watcher.stdout.readline().strip() == "ready"
    outcomes = {"created": 0, "late": 0}
    try:
        for i in range(100):
            name = f"c{i}.txt"
            watcher.stdin.write(name + "\n")
            watcher.stdin.flush()
            r = ws.run("write", file_path=name, content="ours\n")
            outcome = watcher.stdout.readline().strip()
            outcomes[outcome] += 1
            data = (root / name).read_text()
            if outcome == "created":  # theirs was there first: kept, and the tool says so
                assert r.value == {
                    "name": "FsError",
                    "code": "FS_NOT_OBSERVED",
                    "message": (
                        f'cannot write "{name}": it was created by someone else since this session looked; read it first'
                    ),
                }
                assert data == "theirs\n"
            else:
                assert r.text.endswith("Created file\n</content>") and data == "ours\n"
    finally:
        watcher.kill()
        watcher.wait(10)
    assert outcomes["created"] > 50, outcomes  # the race was really run, most times won by the neighbour
    assert [p for p in root.iterdir() if p.name.endswith(".dsh-tmp")] == []


def test_create_race_in_the_move_itself(tmp_path):
    """The neighbour's file appears after the temporary file is written: NOREPLACE/link refuse the move."""
    from dsh_jupyter.core.fs.files import create_file

    folder = tmp_path / "f"
    folder.mkdir()
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        (folder / "x.txt").write_text("theirs\n")
        with pytest.raises(FileExistsError):
            create_file(fd, "x.txt", b"ours\n")
    finally:
        os.close(fd)
    assert (folder / "x.txt").read_text() == "theirs\n"
    assert sorted(p.name for p in folder.iterdir()) == ["x.txt"]


def test_a_replacement_that_lost_a_race_puts_the_other_file_back(tmp_path):
    """The checked file was replaced by a neighbour before the move: the neighbour's file stays."""
    from dsh_jupyter.core.fs.files import Changed, replace_file

    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "x.txt").write_text("checked\n")
    checked = os.stat(folder / "x.txt")
    (folder / "other.tmp").write_text("neighbour\n")
    os.replace(folder / "other.tmp", folder / "x.txt")  # a new inode under the same name
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(Changed):
            replace_file(fd, "x.txt", b"ours\n", checked)
    finally:
        os.close(fd)
    assert (folder / "x.txt").read_text() == "neighbour\n"
    assert sorted(p.name for p in folder.iterdir()) == ["x.txt"]
