"""Saved full results stay within limits: per session, in total, by age; oldest removed first.

Real searches make real spill files; the state is a real SQLite file (the age test moves a spill's
creation time back in it, as time passing would).
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from dsh_jupyter import Workspace

EVICTED = "the saved result was removed (spill limits); run the search again"


def tree(root: Path, n: int = 40) -> None:
    for i in range(n):
        (root / f"f{i:03}.txt").write_text("hit\n")


def spill(ws: Workspace, session: str = "s1") -> str:
    r = ws.call("grep", {"pattern": "hit"}, session=session)
    assert r.value["spill"], r.text
    return r.value["spill"]


def make(root: Path, tmp_path: Path, **settings) -> Workspace:
    return Workspace(root, session="s1", state_path=tmp_path / "state" / "s.sqlite", grep_max_matches=1, **settings)


def test_oldest_spills_of_a_session_go_first(root, tmp_path):
    tree(root)
    size = os.path.getsize(make(root, tmp_path / "probe").run("grep", pattern="hit").value["spill"])
    ws = make(root, tmp_path, spill_max_bytes_per_session=2 * size + size // 2)
    first, second, third = spill(ws), spill(ws), spill(ws)
    assert [s["locator"] for s in ws.spill_list()] == [second, third]
    assert not os.path.exists(first) and os.path.exists(second) and os.path.exists(third)
    for tool, args in (("read", {"file_path": first}), ("grep", {"pattern": "hit", "path": first})):
        r = ws.run(tool, **args)
        assert r.value == {"name": "FsError", "code": "FS_NOT_FOUND", "message": f'cannot {tool} "{first}": {EVICTED}'}
    assert not ws.run("read", file_path=second).is_error
    # another session's spills do not count against this one's limit
    other = spill(ws, "s2")
    assert os.path.exists(other) and os.path.exists(second)


def test_the_total_limit_spans_sessions(root, tmp_path):
    tree(root)
    probe = make(root, tmp_path / "probe")
    size = os.path.getsize(probe.run("grep", pattern="hit").value["spill"])
    ws = make(root, tmp_path, spill_max_bytes_total=2 * size + size // 2)
    a, b, c = spill(ws, "a"), spill(ws, "b"), spill(ws, "c")
    assert not os.path.exists(a) and os.path.exists(b) and os.path.exists(c)
    r = ws.call("read", {"file_path": a}, session="a")
    assert r.value["message"] == f'cannot read "{a}": {EVICTED}'


def test_old_spills_are_removed_by_age(root, tmp_path):
    tree(root)
    ws = make(root, tmp_path, spill_max_age_hours=1)
    old = spill(ws)
    con = sqlite3.connect(ws.state_path)
    con.execute("UPDATE spills SET created = created - 7200 WHERE locator = ?", (old,))
    con.commit()
    con.close()
    new = spill(ws)
    assert not os.path.exists(old) and os.path.exists(new)
    assert [s["locator"] for s in ws.spill_list()] == [new]


def test_a_result_larger_than_the_limit_is_not_saved(root, tmp_path):
    tree(root)
    ws = make(root, tmp_path, spill_max_bytes_per_session=10)
    r = ws.run("grep", pattern="hit")
    assert r.value["spill"] is None
    assert r.text.endswith("(The full result could not be saved.)")
    assert ws.spill_list() == []


def test_spill_files_are_private_and_go_with_their_session(root, tmp_path):
    tree(root)
    ws = make(root, tmp_path)
    loc = spill(ws)
    assert stat.S_IMODE(os.stat(loc).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(loc)).st_mode) == 0o700
    assert ws.spill_list()[0]["label"] == "grep hit"
    assert ws.delete_session("s1") is True
    assert not os.path.exists(loc) and not os.path.exists(os.path.dirname(loc))


def big_tree(root: Path, n: int = 2500) -> list[str]:
    names = [f"{i:05}-{'x' * 120}.txt" for i in range(n)]
    for name in names:
        (root / name).write_text("x\n")
    return names


def test_a_big_glob_spill_is_written_on_a_thread_and_indexed_like_any_other(root, tmp_path, monkeypatch):
    """A spill of more than BACKGROUND_FROM bytes is written by the writer thread while the page
    is sampled; the file, its mode and its index entry are what a spill written at once has."""
    import threading

    from dsh_jupyter.core.state import spills

    names = big_tree(root)
    writers: list[str] = []
    write = spills.SpillStore._write

    def spy(self, rel, data):
        writers.append(threading.current_thread().name)
        return write(self, rel, data)

    monkeypatch.setattr(spills.SpillStore, "_write", spy)
    ws = make(root, tmp_path)
    r = ws.run("glob", pattern="*.txt")
    loc = r.value["spill"]
    assert writers == ["dsh-spill-writer"] and r.value["totalPaths"] == len(names)
    assert os.path.getsize(loc) >= spills.BACKGROUND_FROM
    with open(loc) as fh:
        assert sorted(fh.read().splitlines()) == names
    assert stat.S_IMODE(os.stat(loc).st_mode) == 0o600
    assert [(s["locator"], s["label"]) for s in ws.spill_list()] == [(loc, "glob *.txt")]
    assert r.text.endswith(
        f"Full sorted result stored at: {loc}. Use read with offset/limit, or grep this path to search within it.)"
    )


def test_a_spill_whose_writer_thread_fails_leaves_the_page_and_says_so(root, tmp_path):
    """The session's spill folder replaced by a file: the thread's write fails, the glob still
    answers its page, the footer says the full result could not be saved, and nothing is indexed."""
    big_tree(root)
    ws = make(root, tmp_path)
    first = ws.run("glob", pattern="*.txt").value["spill"]
    folder = os.path.dirname(first)
    assert ws.delete_session("s1") is True and not os.path.exists(folder)
    Path(folder).write_text("not a folder\n")
    r = ws.run("glob", pattern="*.txt")
    assert not r.is_error and r.value["spill"] is None and len(r.value["paths"]) == 100
    assert r.text.splitlines()[-1] == "(Showing 100 of 2500 paths. The full result could not be saved.)"
    assert ws.spill_list() == []
    assert Path(folder).read_text() == "not a folder\n"


def test_a_spill_with_no_thread_to_write_it_is_written_at_once(root, tmp_path, monkeypatch, caplog):
    """When no thread can be started (the process is at its limit), the big spill is written
    before the answer, as a small one is, and the search answers as usual."""
    import logging
    import threading
    from types import SimpleNamespace

    from dsh_jupyter.core.state import spills

    names = big_tree(root)

    class NoThread(threading.Thread):
        def start(self) -> None:
            raise RuntimeError("can't start new thread")

    # the spill store's threads only: the rest of the process starts its own as usual
    monkeypatch.setattr(spills, "threading", SimpleNamespace(Thread=NoThread, Lock=threading.Lock))
    ws = make(root, tmp_path)
    with caplog.at_level(logging.WARNING, logger="dsh_jupyter.core.state.spills"):
        r = ws.run("glob", pattern="*.txt")
    loc = r.value["spill"]
    with open(loc) as fh:
        assert sorted(fh.read().splitlines()) == names
    assert [s["locator"] for s in ws.spill_list()] == [loc]
    assert caplog.messages == [
        "could not start a thread for the full glob result (can't start new thread); writing it now"
    ]
