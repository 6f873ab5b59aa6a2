"""The rename journal of ``replace``: a change a killed process left is completed or rolled back
when the next Workspace starts (real files, the real state file, real child processes killed)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dsh_jupyter.core.fs.files import temp_name
from dsh_jupyter.core.notebooks.format import parse_notebook
from dsh_jupyter.core.state.journal import identity, process_mark
from dsh_jupyter.core.state.store import StateStore


def _journal(state: Path, root: Path, entries, ready: bool, pid: int = 999_999_999) -> None:
    """A journal recorded by process ``pid`` (by default one that is gone)."""
    with StateStore(state).write_gate() as gate:
        gate.add_journal("j1", str(root), entries, pid, process_mark(pid))
        if ready:
            gate.journal_ready("j1")


def _prepared(root: Path, rel: str, new: bytes) -> tuple[str, str, str, str]:
    p = root / rel
    tmp = temp_name(p.name)
    (p.parent / tmp).write_bytes(new)
    folder = os.path.dirname(rel)
    return folder, p.name, tmp, identity(os.stat(p))


def test_a_ready_journal_is_completed_at_the_next_start(root, state_file, make_ws):
    (root / "d").mkdir()
    (root / "a.txt").write_text("old\n")
    (root / "d" / "b.txt").write_text("old\n")
    state_file.parent.mkdir(parents=True, exist_ok=True)
    entries = [_prepared(root, "a.txt", b"new\n"), _prepared(root, "d/b.txt", b"new\n")]
    os.rename(root / "a.txt", root / "moved")  # killed after the first rename: a.txt is new already
    os.rename(root / entries[0][2], root / "a.txt")
    _journal(state_file, root, entries, ready=True)
    make_ws()
    assert (root / "a.txt").read_text() == "new\n" and (root / "d" / "b.txt").read_text() == "new\n"
    assert not list(root.rglob("*.dsh-tmp"))
    assert StateStore(state_file).journals(str(root)) == {}


def test_a_journal_not_ready_is_rolled_back_at_the_next_start(root, state_file, make_ws):
    (root / "a.txt").write_text("old\n")
    state_file.parent.mkdir(parents=True, exist_ok=True)
    _journal(state_file, root, [_prepared(root, "a.txt", b"half")], ready=False)
    make_ws()
    assert (root / "a.txt").read_text() == "old\n" and not list(root.rglob("*.dsh-tmp"))


def test_a_file_changed_after_the_kill_is_left_as_it_is(root, state_file, make_ws):
    (root / "a.txt").write_text("old\n")
    state_file.parent.mkdir(parents=True, exist_ok=True)
    entry = _prepared(root, "a.txt", b"new\n")
    (root / "a.txt").write_text("someone else's\n")
    _journal(state_file, root, [entry], ready=True)
    make_ws()
    assert (root / "a.txt").read_text() == "someone else's\n" and not list(root.rglob("*.dsh-tmp"))


def test_a_journal_of_this_very_process_is_left_alone(root, state_file, make_ws):
    (root / "a.txt").write_text("old\n")
    state_file.parent.mkdir(parents=True, exist_ok=True)
    _journal(state_file, root, [_prepared(root, "a.txt", b"new\n")], ready=True, pid=os.getpid())
    make_ws()  # another Workspace of this process: the journal may be another thread's, between its steps
    assert (root / "a.txt").read_text() == "old\n" and StateStore(state_file).journals(str(root))


def test_a_journal_whose_process_number_was_taken_by_another_process_is_completed(root, state_file, make_ws):
    (root / "a.txt").write_text("old\n")
    state_file.parent.mkdir(parents=True, exist_ok=True)
    _journal(state_file, root, [_prepared(root, "a.txt", b"new\n")], ready=True, pid=os.getpid())
    StateStore(state_file)._conn().execute("UPDATE rename_journal SET host = host || '0'")  # started at another time
    make_ws()
    assert (root / "a.txt").read_text() == "new\n" and not StateStore(state_file).journals(str(root))


def test_a_journal_of_a_process_still_running_is_left_alone(root, state_file, make_ws):
    (root / "a.txt").write_text("old\n")
    state_file.parent.mkdir(parents=True, exist_ok=True)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        _journal(state_file, root, [_prepared(root, "a.txt", b"new\n")], ready=True, pid=sleeper.pid)
        make_ws()
        assert (root / "a.txt").read_text() == "old\n" and StateStore(state_file).journals(str(root))
    finally:
        sleeper.kill()
        sleeper.wait()


OLD, NEW = "value = old_name\n" * 20, "value = new_name\n" * 20
CHILD = textwrap.dedent(
    """
    import sys
    from dsh_jupyter import Workspace
    ws = Workspace(sys.argv[1], session="k", state_path=sys.argv[2])
    r = ws.run("replace", pattern="old_name", replacement="new_name")
    assert not r.is_error, r.text
    print("ready", flush=True)
    sys.stdin.readline()
    done = ws.run("replace", pattern="old_name", replacement="new_name", occurrences="all",
                  expected_count=r.value["totalOccurrences"])
    assert not done.is_error, done.text
    print("done", flush=True)
    """
)


def _nb(source: str) -> str:
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "id": "c1",
        "metadata": {},
        "outputs": [],
        "source": source.splitlines(keepends=True),
    }
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


@pytest.mark.slow
def test_killed_at_random_points_every_file_is_all_old_or_all_new(tmp_path, root, make_ws):
    rng = random.Random(20261205)
    files = [f"f{i:03d}.py" for i in range(60)] + [f"sub/n{i}.ipynb" for i in range(6)]
    (root / "sub").mkdir()
    kills = completed = 0
    outcomes = []

    def start(state):
        for rel in files:
            (root / rel).write_text(_nb(OLD) if rel.endswith(".ipynb") else OLD)
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(root), str(state)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout.readline().strip() == "ready"
        child.stdin.write("go\n")
        child.stdin.flush()
        return child

    # how long a whole apply takes on this machine now, so the kills fall across all of it
    took = []
    for i in range(3):
        child = start(tmp_path / f"whole{i}.sqlite")
        began = time.monotonic()
        assert child.stdout.readline().strip() == "done"
        took.append(time.monotonic() - began)
        child.wait()
    whole = sorted(took)[1]
    # The machine's load changes as the rounds go, so the span the kills fall in follows it: a
    # round the apply finished shortens the span, and a kill lengthens it a little. About one
    # round in seven then ends on its own, so the kills fall across the whole apply, its last part
    # (after the journal is ready) included.
    rounds = 0
    while kills < 50 or not (True in outcomes and False in outcomes):  # killed before the journal was ready, and after
        assert rounds < 150, f"{kills} kills, {completed} finished, outcomes {outcomes}, span {whole:.3f} s, {took}"
        state = tmp_path / f"state{rounds}.sqlite"
        rounds += 1
        child = start(state)
        time.sleep(rng.uniform(0, whole))
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
        child.wait()
        # a kill after "done" met the process on its way out, not the apply
        killed = child.stdout.read().strip() != "done"
        child.stdout.close()
        if killed:
            kills += 1
            whole *= 1.03
        else:
            completed += 1
            whole *= 0.85
        make_ws(state_path=state, session="after")  # the restart completes or rolls back
        states = set()
        for rel in files:
            raw = (root / rel).read_text()
            if rel.endswith(".ipynb"):
                source = parse_notebook(raw.encode()).cells[0].source  # still a valid notebook
                assert source in (OLD, NEW), rel
                states.add(source == NEW)
            else:
                assert raw in (OLD, NEW), rel
                states.add(raw == NEW)
        assert len(states) == 1, f"round {rounds}: some files old, some new"
        if killed:  # all new after a kill: the journal was ready, and the restart completed it
            outcomes.append(states.pop())
        else:
            assert states == {True}, f"round {rounds}: the apply ended, yet the files are old"
        assert not list(root.rglob("*.dsh-tmp"))
