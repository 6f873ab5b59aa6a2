"""The workspace index falls back to rg, and says why, whenever it cannot vouch for an answer.

Every case is made for real: a burst of files from another process overflows the kernel's event
queue, the watch limit is lowered below the folder count, a folder is moved in from outside, the
index file is deleted or overwritten while the workspace runs, a second keeper finds the lock
taken. Each time the answer is still rg's (compared with a workspace without an index), the
value says ``source: "rg"`` with the reason, and where the cause passes the index is built again
and answers once more.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dsh_jupyter import Workspace
from dsh_jupyter.core.tools.indexing import keeper


def _tree(root, files: int = 40, folders: int = 4) -> None:
    for i in range(files):
        folder = root / f"d{i % folders}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}.py").write_text(f"value_{i} = {i}\nneedle_{i % 5} = True\n")


def _ready(ws: Workspace, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while ws.index.status()["state"] != "ready":
        assert ws.index.status()["state"] not in ("failed", "elsewhere"), ws.index.status()
        assert time.monotonic() < deadline, ws.index.status()
        ws.run("glob", pattern="*.none")  # a search starts the build (again)
        time.sleep(0.05)


@pytest.fixture
def pair(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    _tree(root)
    indexed = Workspace(root, state_path=tmp_path / "a" / "s.sqlite", index_min_files=1)
    plain = Workspace(root, state_path=tmp_path / "b" / "s.sqlite", index_min_files=0)
    yield root, indexed, plain
    indexed.close()
    plain.close()


def _same(indexed: Workspace, plain: Workspace, tool: str, **args):
    got, want = indexed.run(tool, **args), plain.run(tool, **args)
    assert got.text == want.text
    assert {k: v for k, v in got.value.items() if k not in ("source", "index_note")} == want.value
    return got


def test_a_small_workspace_is_not_indexed_and_its_answers_say_nothing_of_an_index(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    _tree(root)
    ws = Workspace(root, state_path=tmp_path / "s" / "s.sqlite", index_min_files=1000)
    first = ws.run("grep", pattern="needle_1")
    deadline = time.monotonic() + 30
    while ws.index.status()["state"] in ("idle", "counting"):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    again = ws.run("grep", pattern="needle_1")
    assert ws.index.status() == {"state": "small"}
    assert "source" not in first.value and "source" not in again.value
    assert not os.path.exists(ws.index.path)
    ws.close()


def test_a_workspace_whose_rg_list_is_shorter_than_its_count_is_small_and_keeps_no_lock(tmp_path):
    """The quick count sees files rg leaves out (a VCS folder): the build starts, rg's own list decides."""
    root = tmp_path / "root"
    (root / ".git").mkdir(parents=True)
    for i in range(30):
        (root / f"f{i}.txt").write_text("shown\n")
    for i in range(100):
        (root / ".git" / f"c{i}.txt").write_text("hidden\n")
    ws = Workspace(root, state_path=tmp_path / "s" / "s.sqlite", index_min_files=50)
    try:
        first = ws.run("grep", pattern="shown")
        deadline = time.monotonic() + 30
        while ws.index.status()["state"] not in ("small", "ready", "failed"):
            assert time.monotonic() < deadline, ws.index.status()
            time.sleep(0.02)
        assert ws.index.status() == {"state": "small"}
        assert "source" not in ws.run("grep", pattern="shown").value
        assert first.text.startswith("Found 30 matches")
        assert not os.path.exists(ws.index.path)
        fd = os.open(ws.index.path + ".lock", os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # let go of: another process may keep an index
        finally:
            os.close(fd)
    finally:
        ws.close()


def test_answers_come_from_the_index_once_built_and_say_so(pair):
    _root, indexed, plain = pair
    building = indexed.run("grep", pattern="needle_1")
    _ready(indexed)
    assert building.value.get("source") in (None, "rg")
    got = _same(indexed, plain, "grep", pattern="needle_1")
    assert (got.value["source"], "index_note" in got.value) == ("index", False)
    assert got.value["files"] == 8
    assert _same(indexed, plain, "glob", pattern="d1/*.py").value["source"] == "index"
    assert _same(indexed, plain, "find", query="d2 f1").value["source"] == "index"
    no_trigram = _same(indexed, plain, "grep", pattern="v.")
    assert no_trigram.value["source"] == "rg"
    assert no_trigram.value["index_note"] == "the pattern has no three characters every match must hold"
    status = indexed.status()["index"]
    assert status["state"] == "ready" and status["files"] == 40 and status["diskBytes"] > 0
    assert status["buildSeconds"] >= 0


def test_too_many_candidates_are_left_to_rg_and_said_so_before_their_rows_are_read(pair, monkeypatch):
    """Over the cap, grep is rg's. With no glob and no folder, the posting lists alone decide it
    (the note says "at least": the posted files less those no file holds any more); with a glob
    or a folder, the rows are read and counted."""
    from dsh_jupyter.core.tools.grep import indexed as grep_indexed

    _root, indexed, plain = pair
    _ready(indexed)
    monkeypatch.setattr(grep_indexed, "MAX_CANDIDATES", 5)
    notes = {
        "whole": _same(indexed, plain, "grep", pattern="value_"),
        "glob": _same(indexed, plain, "grep", pattern="value_", include="*.py"),
        "folder": _same(indexed, plain, "grep", pattern="value_", path="d1"),
        "few": _same(indexed, plain, "grep", pattern="needle_1", path="d1"),
    }
    assert {k: (r.value["source"], r.value.get("index_note")) for k, r in notes.items()} == {
        "whole": ("rg", "too many candidate files (at least 40)"),
        "glob": ("rg", "too many candidate files (40)"),
        "folder": ("rg", "too many candidate files (10)"),
        "few": ("index", None),
    }
    assert not indexed.run("read", file_path="d0/f0.py").is_error
    done = indexed.run("write", file_path="d0/f0.py", content="value_0 = 'again'\n")  # a new id; the old posted
    assert not done.is_error, done.text
    assert (
        _same(indexed, plain, "grep", pattern="value_").value["index_note"] == "too many candidate files (at least 39)"
    )
    monkeypatch.setattr(grep_indexed, "MAX_CANDIDATES", 39)  # 40 posted, 1 of them no file's: counted in rows
    assert _same(indexed, plain, "grep", pattern="value_").value["index_note"] == "too many candidate files (40)"
    monkeypatch.setattr(grep_indexed, "MAX_CANDIDATES", 40)
    assert _same(indexed, plain, "grep", pattern="value_").value["source"] == "index"


def test_a_write_through_the_tools_is_in_the_index_before_it_answers(pair):
    _root, indexed, plain = pair
    _ready(indexed)
    before = indexed.status()["index"]["files"]
    done = indexed.run("write", file_path="d0/new.py", content="needle_9 = 1\n")
    assert not done.is_error, done.text
    assert indexed.status()["index"]["files"] == before + 1  # no search ran in between
    got = _same(indexed, plain, "grep", pattern="needle_9")
    assert (got.value["source"], got.value["files"]) == ("index", 1)


def test_a_burst_that_overflows_the_event_queue_falls_back_to_rg_then_the_index_is_built_again(pair, tmp_path):
    root, indexed, plain = pair
    _ready(indexed)
    queued = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    burst = (  # more files than the queue holds events, in a watched folder, before any drain
        "import os, sys\n"
        "top = sys.argv[1]\n"
        f"for i in range({queued + 100}):\n"
        "    open(os.path.join(top, 'd0', f'b{i}.txt'), 'w').close()\n"
        "open(os.path.join(top, 'd0', 'late.py'), 'w').write('needle_late = 1\\n')\n"
    )
    subprocess.run([sys.executable, "-c", burst, str(root)], check=True, timeout=120)
    got = _same(indexed, plain, "grep", pattern="needle_late")
    assert got.value["index_note"] == "file events were lost (the kernel's event queue overflowed)"
    assert got.value["files"] == 1
    _ready(indexed)
    again = _same(indexed, plain, "grep", pattern="needle_late")
    assert (again.value["source"], again.value["files"]) == ("index", 1)


def test_fewer_watches_allowed_than_folders_means_rg_for_good(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    _tree(root, folders=6)
    indexed = Workspace(root, state_path=tmp_path / "a" / "s.sqlite", index_min_files=1, index_max_watches=3)
    plain = Workspace(root, state_path=tmp_path / "b" / "s.sqlite", index_min_files=0)
    indexed.run("grep", pattern="needle_1")
    deadline = time.monotonic() + 30
    while indexed.index.status()["state"] != "failed":
        assert time.monotonic() < deadline, indexed.index.status()
        time.sleep(0.02)
    got = _same(indexed, plain, "grep", pattern="needle_1")
    assert (got.value["source"], got.value["index_note"]) == (
        "rg",
        "the workspace has more folders than max_watches (3)",
    )
    assert indexed.index.status() == {"state": "failed", "note": "the workspace has more folders than max_watches (3)"}
    indexed.close()
    plain.close()


def test_a_folder_moved_in_from_outside_falls_back_then_its_files_are_indexed(pair, tmp_path):
    root, indexed, plain = pair
    _ready(indexed)
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "x.py").write_text("needle_moved = 1\n")
    os.rename(outside, root / "d1" / "brought")
    got = _same(indexed, plain, "grep", pattern="needle_moved")
    assert (got.value["source"], got.value["index_note"]) == ("rg", "a folder was moved into the workspace")
    assert got.value["files"] == 1
    _ready(indexed)
    again = _same(indexed, plain, "grep", pattern="needle_moved")
    assert (again.value["source"], again.value["files"]) == ("index", 1)


@pytest.mark.parametrize("how", ["deleted", "overwritten"])
def test_the_index_file_deleted_or_damaged_while_the_workspace_runs(pair, how):
    root, indexed, plain = pair
    _ready(indexed)
    path = indexed.index.path
    if how == "deleted":
        os.unlink(path)
    else:
        with open(path, "r+b") as f:
            f.seek(4096)
            f.write(b"\xde\xad\xbe\xef" * 1024)
    (root / "d3" / "after.py").write_text("needle_after = 1\n")
    got = _same(indexed, plain, "grep", pattern="needle_after")
    assert got.value["source"] == "rg"
    assert (
        got.value["index_note"] == "the index file was changed or removed by another program; it is being built again"
    )
    _ready(indexed)
    again = _same(indexed, plain, "grep", pattern="needle_after")
    assert (again.value["source"], again.value["files"]) == ("index", 1)


def test_a_second_keeper_of_the_same_index_searches_with_rg_and_says_so(pair, tmp_path):
    root, indexed, plain = pair
    _ready(indexed)
    second = Workspace(root, state_path=tmp_path / "a" / "s.sqlite", index_min_files=1)
    second.run("grep", pattern="needle_1")
    deadline = time.monotonic() + 30
    while second.index.status()["state"] != "elsewhere":
        assert time.monotonic() < deadline, second.index.status()
        time.sleep(0.02)
    got = second.run("grep", pattern="needle_1")
    assert (got.value["source"], got.value["index_note"]) == ("rg", "another process keeps this workspace's index")
    assert got.text == plain.run("grep", pattern="needle_1").text
    # the keeper goes away (a kernel shut down): after a while the other process takes it on
    indexed.index.close()
    second.index._ask_again_at -= keeper.ASK_AGAIN_S
    second.run("glob", pattern="*.none")  # a search asks again
    _ready(second)
    assert second.run("grep", pattern="needle_1").value["source"] == "index"
    second.close()


def test_ignore_files_honoured_are_left_to_rg(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    _tree(root)
    (root / ".gitignore").write_text("d1/\n")
    indexed = Workspace(root, state_path=tmp_path / "a" / "s.sqlite", index_min_files=1, respect_ignore_files=True)
    _ready_or(indexed)
    got = indexed.run("grep", pattern="needle_1")
    assert (got.value["source"], got.value["index_note"]) == (
        "rg",
        "ignore files are honoured (respect_ignore_files): rg applies their rules",
    )
    indexed.close()


def _ready_or(ws: Workspace) -> None:
    ws.run("grep", pattern="x")
    deadline = time.monotonic() + 30
    while ws.index.status()["state"] != "ready":
        assert time.monotonic() < deadline, ws.index.status()
        time.sleep(0.02)


CLOSED_CHILD = """
import json, os, sys, time
from dsh_jupyter import Workspace
root, tmp = sys.argv[1], sys.argv[2]
indexed = Workspace(root, state_path=tmp + "/a/s.sqlite", index_min_files=1)
plain = Workspace(root, state_path=tmp + "/b/s.sqlite", index_min_files=0)
indexed.run("grep", pattern="start")
deadline = time.monotonic() + 60
while indexed.index.status()["state"] != "ready" and time.monotonic() < deadline:
    time.sleep(0.05)
out = []
def compare(label, pattern):
    got, want = indexed.run("grep", pattern=pattern), plain.run("grep", pattern=pattern)
    same = got.text == want.text and {
        k: v for k, v in got.value.items() if k not in ("source", "index_note")
    } == want.value
    out.append([label, same, got.value.get("source"), got.value.get("index_note"), want.value.get("unreadable")])
compare("before", "needle_1")
os.chmod(root + "/d1/f1.py", 0)
compare("a file closed", "needle_1")
os.chmod(root + "/d1/f1.py", 0o644)
compare("the file open again", "needle_1")
os.chmod(root + "/d2", 0)
compare("a folder closed", "needle_2")
os.chmod(root + "/d2", 0o755)
compare("the folder open again", "needle_2")
# whatever the build met while the folder was closed passes: a search after a while builds again
if indexed.index._ask_again_at is not None:
    indexed.index._ask_again_at -= 3600
deadline = time.monotonic() + 60
while indexed.index.status()["state"] != "ready" and time.monotonic() < deadline:
    indexed.run("glob", pattern="*.none")
    time.sleep(0.05)
compare("built again", "needle_2")
print(json.dumps(out))
"""


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv")
def test_permission_changes_with_roots_override_dropped_are_answered_as_rg_answers(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    _tree(root)
    argv = [sys.executable, "-c", CLOSED_CHILD, str(root), str(tmp_path)]
    if os.geteuid() == 0:  # root ignores file modes; this child may not
        argv = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all", *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [row[:2] for row in rows] == [[label, True] for label, *_ in rows]
    assert rows[0][2] == "index" and rows[1][2] == "index"
    assert rows[1][4] == 1  # rg could not read the closed file, and both answers say so
    assert rows[3][2:] == ["rg", "rg could not list a changed folder: a folder could not be read", 1]
    assert rows[5][2:4] == ["index", None]


def test_glob_and_find_from_the_index_order_and_pick_as_rg_does(pair):
    """The index filters by ending and sorts by time in SQLite: equal times fall back to path
    order, a name that is not UTF-8 sends the sort to Python, and endings that are not ASCII,
    excludes and a search root below the root still give rg's answer; find reads the same table."""
    root, indexed, plain = pair
    stamp = 1_700_000_000
    tied = [root / "t" / n for n in ("b.py", "a.py", "c.txt", "é.py", "a.é")]
    for path in tied:
        path.parent.mkdir(exist_ok=True)
        path.write_text("x\n")
        os.utime(path, (stamp, stamp))  # one time for all: path order decides
    os.utime(root / "d0" / "f0.py", (stamp - 10, stamp - 10))
    _ready(indexed)
    for args in (
        {"pattern": "*.py"},
        {"pattern": "**/*.py", "path": "t"},
        {"pattern": "*.é"},
        {"pattern": "*.{py,txt}", "exclude": ["d1/**"]},
        {"pattern": "t/*.py"},
    ):
        got = _same(indexed, plain, "glob", **args)
        assert got.value["source"] == "index", got.value
    oldest = indexed.run("glob", pattern="*.py")
    assert oldest.value["paths"][:4] == ["d0/f0.py", "t/a.py", "t/b.py", "t/é.py"]
    assert _same(indexed, plain, "find", query="t py").value["source"] == "index"
    assert _same(indexed, plain, "find", query="py", path="t").value["source"] == "index"
    bad = os.fsencode(root / "t") + b"/\xff.py"
    with open(bad, "wb") as f:
        f.write(b"x\n")
    os.utime(bad, (stamp, stamp))
    indexed.index.catch_up()
    got = _same(indexed, plain, "glob", pattern="*.py")
    assert got.value["source"] == "index"
    assert got.value["paths"][:5] == ["d0/f0.py", "t/a.py", "t/b.py", "t/é.py", "t/\udcff.py"]
    assert _same(indexed, plain, "find", query="t py").value["source"] == "index"  # the same test as the walk's


def test_changes_made_while_the_index_is_built_are_in_it_once_ready(tmp_path, monkeypatch):
    """Another process creates, appends to, removes and adds a folder while the build reads: once
    ready, the index holds every change. The build is held after its first batch until the other
    process has made its changes (a gate on the keeper's own step between batches), so they land
    while it reads however quick the build or slow the machine; nothing else of it changes."""
    root = tmp_path / "root"
    root.mkdir()
    _tree(root, files=20_000, folders=40)
    indexed = Workspace(root, state_path=tmp_path / "a" / "s.sqlite", index_min_files=1)
    plain = Workspace(root, state_path=tmp_path / "b" / "s.sqlite", index_min_files=0)
    reached, gate = threading.Event(), threading.Event()
    drain = keeper.IndexKeeper._drain_while_building

    def held(self):
        if not reached.is_set():  # after the first batch is written
            reached.set()
            assert gate.wait(60)
        return drain(self)

    monkeypatch.setattr(keeper.IndexKeeper, "_drain_while_building", held)
    change = (
        "import os, sys\n"
        "top = sys.argv[1]\n"
        "open(os.path.join(top, 'd7', 'during.py'), 'w').write('needle_during = 1\\n')\n"
        "open(os.path.join(top, 'd39', 'f39.py'), 'a').write('needle_during = 2\\n')\n"
        "os.unlink(os.path.join(top, 'd1', 'f1.py'))\n"
        "os.makedirs(os.path.join(top, 'fresh', 'deep'))\n"
        "open(os.path.join(top, 'fresh', 'deep', 'x.py'), 'w').write('needle_during = 3\\n')\n"
    )
    try:
        indexed.run("grep", pattern="start")
        assert reached.wait(60), indexed.index.status()
        assert indexed.index.status()["state"] == "building" and 0 < indexed.index.read < 20_000
        subprocess.run([sys.executable, "-c", change, str(root)], check=True, timeout=60)
        assert indexed.index.status()["state"] == "building"  # the changes came while it read
        gate.set()
        _ready(indexed)
        got = _same(indexed, plain, "grep", pattern="needle_during")
        assert (got.value["source"], got.value["files"]) == ("index", 3)
        assert _same(indexed, plain, "grep", pattern="value_1 =").value["source"] == "index"
    finally:
        gate.set()
        indexed.close()
        plain.close()


def test_a_changed_file_gone_between_its_look_and_its_read_loses_its_row_before_the_answer(pair, monkeypatch):
    # the race made certain: the file is removed for real just as the keeper reads it again, after
    # its look found it and before the removal's own event can be drained
    root, indexed, plain = pair
    _ready(indexed)
    target = root / "d0" / "f0.py"
    target.write_text("value_0 = 0\nzq_gone_marker = True\n")
    real_read = keeper.FileReader.read
    removed = []

    def read_after_removal(self, rel):
        if rel == "d0/f0.py" and not removed:
            target.unlink()
            removed.append(rel)
        return real_read(self, rel)

    monkeypatch.setattr(keeper.FileReader, "read", read_after_removal)
    got = _same(indexed, plain, "grep", pattern="zq_gone_marker")
    assert removed == ["d0/f0.py"]  # the keeper did read it again, and met it gone
    assert got.value["source"] == "index"
    assert got.text == "No matches found"
    db = sqlite3.connect(f"file:{indexed.index.path}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT path FROM files WHERE path = ?", (b"d0/f0.py",)).fetchall()
        others = db.execute("SELECT count(*) FROM files").fetchone()[0]
    finally:
        db.close()
    assert rows == [] and others == 39


def test_globs_time_order_is_made_again_once_its_changes_pass_the_bound(pair, monkeypatch):
    """After the build, glob's time order merges each change in as it is read; once the changes
    pass the bound (here 10), the keeper makes the order again as it takes them in, and glob
    answers as the walk does both before and after, oldest first."""
    from dsh_jupyter.core.index import store as store_module

    root, indexed, plain = pair
    _ready(indexed)
    monkeypatch.setattr(store_module, "TIMES_REMAKE_MIN", 10)
    store = indexed.index._store
    assert store is not None and store.changed_since_times() == 0
    stamp = time.time_ns() // 10**9 * 10**9
    for i in range(6):  # 12 changes: each file's old row gone and its new row added
        path = root / f"d{i % 4}" / f"f{i}.py"
        path.write_text(f"changed_{i} = True\n")
        os.utime(path, ns=(stamp, stamp + (5 - i)))  # the newest first: the order moves
    indexed.index.catch_up()
    assert store.changed_since_times() == 0  # made again: nothing left to merge
    assert _same(indexed, plain, "glob", pattern="*.py").value["source"] == "index"
    (root / "d1" / "late.py").write_text("late = True\n")
    indexed.index.catch_up()
    assert store.changed_since_times() == 1  # under the bound: merged in as it is read
    got = _same(indexed, plain, "glob", pattern="*.py")
    assert got.value["source"] == "index" and got.value["paths"][-1] == "d1/late.py"
