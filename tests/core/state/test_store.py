"""The shared state store: real SQLite files, real threads and real child processes.

Child processes import ``dsh_jupyter.core.state.store`` without running the package's ``__init__``
files (the state store and what it imports use only the standard library), so each starts in a
few tens of milliseconds instead of importing the whole package.
"""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from dsh_jupyter.core.state import store as state_module
from dsh_jupyter.core.state.store import CallRecord, SpillRecord, StateError, StateStore

_CORE = Path(state_module.__file__).resolve().parents[1]
_PRELUDE = f"""
import importlib, sys, time, types
for _name, _path in (("dsh_jupyter", {str(_CORE.parent)!r}), ("dsh_jupyter.core", {str(_CORE)!r}),
                     ("dsh_jupyter.core.state", {str(_CORE / "state")!r})):
    _pkg = types.ModuleType(_name)
    _pkg.__path__ = [_path]
    sys.modules[_name] = _pkg
state = importlib.import_module("dsh_jupyter.core.state.store")
"""


def spawn(code: str, *args: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _PRELUDE + textwrap.dedent(code), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 30) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return out


def call(call_id: str, session: str = "s", **overrides: object) -> CallRecord:
    fields = {
        "call_id": call_id,
        "session": session,
        "tool": "read",
        "args": {"path": "a.txt", "n": [1, 2]},
        "text": f"result of {call_id}",
        "is_error": False,
        "surface": "python",
        "started": 1000.0,
        "duration_ms": 1.5,
    }
    fields.update(overrides)
    return CallRecord(**fields)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> StateStore:
    return StateStore(tmp_path / "state.sqlite")


# -- creation ------------------------------------------------------------------------------------


def test_creation_makes_private_parents_wal_and_schema(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "state.sqlite"
    store = StateStore(path)
    assert store.path == str(path) and os.path.isabs(store.path)
    for folder in (tmp_path / "a", tmp_path / "a" / "b"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("PRAGMA user_version").fetchone()[0] == state_module.SCHEMA_VERSION
        tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        raw.close()
    assert {"sessions", "observations", "spills", "calls"} <= tables
    # Opening an existing store again is a no-op that keeps the data.
    store.ensure_session("default", "/w", "default", "/w")
    assert StateStore(path).get_session("default") is not None


def test_uncreatable_path_raises_one_sentence_state_error(tmp_path: Path) -> None:
    blocker = tmp_path / "plain-file"
    blocker.write_text("not a folder")
    for bad in (blocker / "sub" / "state.sqlite", blocker / "state.sqlite", tmp_path):
        with pytest.raises(StateError) as info:
            StateStore(bad)
        message = str(info.value)
        assert not isinstance(info.value, sqlite3.Error)
        assert message.startswith("The state store could not") and message.endswith(".")
        assert "\n" not in message and "Traceback" not in message


def test_newer_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    StateStore(path)
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA user_version = 99")
    raw.close()
    with pytest.raises(StateError, match="schema version 99"):
        StateStore(path)


def test_concurrent_creation_from_four_processes(tmp_path: Path) -> None:
    # All four start together and create the same 25 new files in the same order, back to back:
    # races over the folders, the file, the WAL switch and the schema.
    paths = [tmp_path / f"race{i}" / "nested" / "state.sqlite" for i in range(25)]
    start_at = time.time() + 0.4
    code = """
        name, start_at, paths = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
        time.sleep(max(0.0, start_at - time.time()))
        for path in paths:
            store = state.StateStore(path)
            store.ensure_session(name, "/w", name, "/" + name)
            store.record_observation(name, "/file", "v-" + name)
        print("ok")
    """
    procs = [spawn(code, f"p{i}", start_at, *paths) for i in range(4)]
    assert [finish(p).strip() for p in procs] == ["ok"] * 4
    for path in paths:
        store = StateStore(path)
        assert sorted(s.name for s in store.list_sessions("/w")) == ["p0", "p1", "p2", "p3"]
        assert store.observed_version("p2", "/file") == "v-p2"
        raw = sqlite3.connect(path)
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        raw.close()


@pytest.mark.parametrize(
    "begin, statement",
    [
        ("BEGIN", "SELECT * FROM unrelated"),  # a reader: SQLite reports the old mode
        ("BEGIN IMMEDIATE", "INSERT INTO unrelated VALUES (1)"),  # a writer: SQLite raises "locked"
    ],
)
def test_creation_retries_the_wal_switch_while_another_connection_blocks_it(
    tmp_path: Path, begin: str, statement: str
) -> None:
    # SQLite refuses a journal-mode switch at once, without the busy timeout, while another
    # connection has a transaction open; the store must wait it out, not fail or stay non-WAL.
    path = tmp_path / "state.sqlite"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE unrelated (x)")
    other.execute(begin)
    other.execute(statement).fetchall()
    releaser = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    releaser.start()
    started = time.monotonic()
    try:
        StateStore(path)
    finally:
        releaser.join()
        other.close()
    assert time.monotonic() - started >= 0.25
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()


# -- sessions, observations, spills, calls --------------------------------------------------------


def test_session_lifecycle(store: StateStore) -> None:
    assert store.get_session("k-default") is None
    info = store.ensure_session("k-default", "/work", "default", "/work/a", "alice")
    assert (info.key, info.name, info.root, info.cwd, info.user) == (
        "k-default",
        "default",
        "/work",
        "/work/a",
        "alice",
    )
    assert (info.observations, info.spills, info.calls) == (0, 0, 0)
    assert info.created <= time.time()
    # cwd (and user) are used only on creation
    assert store.ensure_session("k-default", "/work", "default", "/elsewhere", "bob") == info
    time.sleep(0.01)
    store.ensure_session("k-other", "/work", "other", "/work/b", "bob")
    store.ensure_session("k-else", "/elsewhere", "default", "/elsewhere", "alice")
    assert [s.name for s in store.list_sessions("/work")] == ["default", "other"]
    assert [s.name for s in store.list_sessions("/work", "bob")] == ["other"]
    assert [s.key for s in store.list_sessions("/elsewhere")] == ["k-else"]
    store.set_cwd("k-default", "/work/c")
    assert store.get_session("k-default").cwd == "/work/c"  # type: ignore[union-attr]
    with pytest.raises(StateError):
        store.set_cwd("missing", "/x")
    assert store.delete_session("missing") == []


def test_delete_session_removes_what_it_owns_only(store: StateStore) -> None:
    for sid in ("gone", "kept"):
        store.ensure_session(sid, "/w", sid, "/w")
        store.record_observation(sid, "/w/f.txt", "v1")
        store.add_spill(sid, f"/spills/{sid}-1.jsonl", "grep", 10, created=1.0)
        store.add_spill(sid, f"/spills/{sid}-2.jsonl", "glob", 20, created=2.0)
        store.append_call(call(f"{sid}-call", sid))
    info = store.get_session("gone")
    assert (info.observations, info.spills, info.calls) == (1, 2, 1)  # type: ignore[union-attr]

    assert store.delete_session("gone") == ["/spills/gone-1.jsonl", "/spills/gone-2.jsonl"]
    assert store.get_session("gone") is None
    assert store.observed_version("gone", "/w/f.txt") is None
    assert store.list_spills("gone") == [] and store.spill_owner("/spills/gone-1.jsonl") is None
    assert store.count_calls("gone") == 0
    kept = store.get_session("kept")
    assert (kept.observations, kept.spills, kept.calls) == (1, 2, 1)  # type: ignore[union-attr]


def test_observations_upsert_and_stay_per_session(store: StateStore) -> None:
    assert store.observed_version("a", "/w/f") is None
    store.record_observation("a", "/w/f", "v1")
    store.record_observation("a", "/w/f", "v2")
    store.record_observation("b", "/w/f", "other")
    assert store.observed_version("a", "/w/f") == "v2"
    assert store.observed_version("b", "/w/f") == "other"
    assert store.observed_version("a", "/w/g") is None


def test_spills_add_list_owner(store: StateStore) -> None:
    store.add_spill("s", "/sp/late.jsonl", "grep", 300, created=20.0)
    store.add_spill("s", "/sp/early.jsonl", "glob", 100, created=10.0)
    store.add_spill("t", "/sp/t.jsonl", "glob", 5)
    assert store.list_spills("s") == [
        SpillRecord("/sp/early.jsonl", "s", "glob", 100, 10.0),
        SpillRecord("/sp/late.jsonl", "s", "grep", 300, 20.0),
    ]
    assert store.spill_owner("/sp/t.jsonl") == "t"
    assert store.spill_owner("/sp/none.jsonl") is None
    with pytest.raises(StateError):  # locators are unique
        store.add_spill("t", "/sp/early.jsonl", "glob", 1)


def test_call_log_appends_pages_and_counts(store: StateStore) -> None:
    for i in range(7):
        store.append_call(
            call(
                f"c{i}",
                args={"i": i, "pattern": "é|ß", "nested": {"a": [None, True]}},
                is_error=(i == 3),
                surface="rest",
                started=2000.0 - i,
            )
        )
    store.append_call(call("x0", session="other"))
    assert [store.count_calls(s) for s in ("s", "other", "none")] == [7, 1, 0]
    everything = store.list_calls("s")
    assert [c.call_id for c in everything] == [f"c{i}" for i in range(7)]  # newest (last appended) last
    assert everything[3].is_error is True and everything[2].is_error is False
    assert everything[5].args == {"i": 5, "pattern": "é|ß", "nested": {"a": [None, True]}}
    assert everything[0] == call("c0", args=everything[0].args, surface="rest", started=2000.0)
    pages = [[c.call_id for c in store.list_calls("s", offset=o, limit=3)] for o in (0, 3, 6, 7)]
    assert pages == [["c0", "c1", "c2"], ["c3", "c4", "c5"], ["c6"], []]
    with pytest.raises(StateError):  # call ids are unique
        store.append_call(call("c0"))


def test_threads_share_one_store_object(store: StateStore) -> None:
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(25):
                store.append_call(call(f"t{t}-{i}"))
                store.record_observation("s", f"/f{t}", str(i))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert store.count_calls("s") == 200
    assert store.observed_version("s", "/f7") == "24"


# -- the write gate ------------------------------------------------------------------------------


def test_gate_commits_on_exit_and_rolls_back_on_exception(store: StateStore) -> None:
    with store.write_gate() as gate:
        assert gate.observed_version("s", "/f") is None
        gate.record_observation("s", "/f", "v1")
        assert gate.observed_version("s", "/f") == "v1"
    assert store.observed_version("s", "/f") == "v1"

    with pytest.raises(RuntimeError), store.write_gate() as gate:
        gate.record_observation("s", "/f", "v2")
        gate.record_observation("s", "/g", "v2")
        raise RuntimeError("the write failed")
    assert store.observed_version("s", "/f") == "v1" and store.observed_version("s", "/g") is None

    started = time.monotonic()
    with store.write_gate():  # the lock was released by the rollback
        pass
    assert time.monotonic() - started < 1.0
    with pytest.raises(StateError):
        gate.record_observation("s", "/f", "late")


def test_store_write_inside_own_gate_is_refused_at_once(store: StateStore) -> None:
    started = time.monotonic()
    with store.write_gate() as gate:
        gate.record_observation("s", "/f", "v1")
        assert store.observed_version("s", "/f") is None  # reads still work; not yet committed
        with pytest.raises(StateError, match="write gate"):
            store.record_observation("s", "/f", "v2")
    assert time.monotonic() - started < 1.0
    store.record_observation("s", "/g", "ok")  # writes work again once the gate is released
    assert store.observed_version("s", "/f") == "v1"


def test_observation_is_seen_by_another_process(store: StateStore) -> None:
    store.record_observation("s", "/w/parent.txt", "from-parent")
    out = finish(
        spawn(
            """
        store = state.StateStore(sys.argv[1])
        print(store.observed_version("s", "/w/parent.txt"))
        store.record_observation("s", "/w/child.txt", "from-child")
    """,
            store.path,
        )
    )
    assert out.strip() == "from-parent"
    assert store.observed_version("s", "/w/child.txt") == "from-child"


def _record_in_forked_child(store: StateStore) -> None:
    store.record_observation("s", "/w/forked.txt", "from-fork")
    with store.write_gate() as gate:
        gate.record_observation("s", "/w/gated.txt", "from-fork")


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_forked_child_uses_the_same_store_object_safely(store: StateStore) -> None:
    store.record_observation("s", "/w/parent.txt", "v")  # the parent now holds a connection
    child = multiprocessing.get_context("fork").Process(target=_record_in_forked_child, args=(store,))
    child.start()
    child.join(30)
    assert child.exitcode == 0
    assert store.observed_version("s", "/w/forked.txt") == "from-fork"
    assert store.observed_version("s", "/w/gated.txt") == "from-fork"
    store.record_observation("s", "/w/parent.txt", "v2")  # the parent's connection still works
    assert store.observed_version("s", "/w/parent.txt") == "v2"


def test_gate_excludes_another_process_but_not_its_readers(store: StateStore) -> None:
    child = spawn(
        """
        store = state.StateStore(sys.argv[1])
        with store.write_gate() as gate:
            gate.record_observation("s", "/held", "child")
            print("in", flush=True)
            time.sleep(1.0)
    """,
        store.path,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "in"
        started = time.monotonic()
        assert store.observed_version("s", "/held") is None  # WAL: a read does not wait
        assert time.monotonic() - started < 0.3
        with store.write_gate() as gate:
            waited = time.monotonic() - started
            assert gate.observed_version("s", "/held") == "child"
    finally:
        finish(child)
    assert waited >= 0.5


def test_gate_serialises_read_modify_write_across_processes(store: StateStore) -> None:
    start_at = time.time() + 0.3
    code = """
        store = state.StateStore(sys.argv[1])
        time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
        for _ in range(50):
            with store.write_gate() as gate:
                value = int(gate.observed_version("s", "/counter") or 0)
                time.sleep(0.001)  # widen the window a lost update would need
                gate.record_observation("s", "/counter", str(value + 1))
    """
    procs = [spawn(code, store.path, start_at) for _ in range(2)]
    for proc in procs:
        finish(proc)
    assert store.observed_version("s", "/counter") == "100"


# -- version 1 files, spill limits ---------------------------------------------------------------

_V1 = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE observations (session TEXT NOT NULL, real_path TEXT NOT NULL, version TEXT NOT NULL,
    observed_at REAL NOT NULL, PRIMARY KEY (session, real_path)) WITHOUT ROWID;
CREATE TABLE spills (locator TEXT PRIMARY KEY, session TEXT NOT NULL, tool TEXT NOT NULL,
    size INTEGER NOT NULL, created REAL NOT NULL);
CREATE TABLE calls (seq INTEGER PRIMARY KEY AUTOINCREMENT, call_id TEXT NOT NULL UNIQUE,
    session TEXT NOT NULL, tool TEXT NOT NULL, args TEXT NOT NULL, text TEXT NOT NULL,
    is_error INTEGER NOT NULL, surface TEXT NOT NULL, started REAL NOT NULL, duration_ms REAL NOT NULL);
INSERT INTO sessions VALUES ('default', '/old/root', 1.0);
INSERT INTO spills VALUES ('/spills/x.txt', 'default', 'grep', 10, 1.0);
INSERT INTO calls (call_id, session, tool, args, text, is_error, surface, started, duration_ms)
    VALUES ('c1', 'default', 'read', '{}', 'old text', 0, 'python', 1.0, 1.0);
PRAGMA user_version = 1;
"""


def test_a_version_1_file_is_upgraded_and_its_old_sessions_stay_out_of_the_way(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    raw = sqlite3.connect(path)
    raw.executescript(_V1)
    raw.close()
    store = StateStore(path)
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == state_module.SCHEMA_VERSION
    raw.close()
    # the old rows are there under a root no workspace has, with their data
    assert store.list_sessions("/old/root") == []
    old = store.get_session("default")
    assert (old.name, old.root, old.cwd, old.calls, old.spills) == ("default", "", "/old/root", 1, 1)
    assert [c.text for c in store.list_calls("default")] == ["old text"]
    # and the new columns work
    store.ensure_session("k", "/new", "default", "/new", "alice")
    store.append_call(call("c2", "k", user="alice"))
    assert [c.user for c in store.list_calls("k")] == ["alice"]


def test_a_version_3_file_gains_how_a_call_s_file_was_open(tmp_path: Path) -> None:
    """A state file a version 3 server wrote: its calls keep their rows (open unknown: None), and
    new calls record how their file was open."""
    path = tmp_path / "state.sqlite"
    old = StateStore(path)
    old.ensure_session("k", "/r", "default", "/r", "alice")
    old.append_call(call("c1", "k"))
    raw = sqlite3.connect(path)  # back to what version 3 made: no open column
    raw.executescript("ALTER TABLE calls DROP COLUMN open; PRAGMA user_version = 3;")
    raw.close()
    store = StateStore(path)
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == state_module.SCHEMA_VERSION == 5
    raw.close()
    store.append_call(call("c2", "k", open="unsaved"))
    assert [(c.call_id, c.text, c.open) for c in store.list_calls("k")] == [
        ("c1", "result of c1", None),
        ("c2", "result of c2", "unsaved"),
    ]


def test_spills_to_evict_keeps_every_limit(store: StateStore) -> None:
    for i, (key, user) in enumerate([("a", "u1"), ("a", "u1"), ("b", "u2"), ("a", "u1"), ("b", "u2")]):
        store.add_spill(key, f"/s/{i}", "grep", 100, created=1000.0 + i, user=user)
    # session a holds 300 bytes; cap 150: its two oldest go
    assert store.spills_to_evict(older_than=0, key="a", session_cap=150, total_cap=10_000) == ["/s/0", "/s/1"]
    # all together 500; cap 250: the three oldest anywhere
    assert store.spills_to_evict(older_than=0, key="a", session_cap=10_000, total_cap=250) == ["/s/0", "/s/1", "/s/2"]
    # by age first
    assert store.spills_to_evict(older_than=1002.5, key="a", session_cap=10_000, total_cap=10_000) == [
        "/s/0",
        "/s/1",
        "/s/2",
    ]
    # a user quota
    assert store.spills_to_evict(
        older_than=0, key="b", session_cap=10_000, total_cap=10_000, user="u2", user_cap=100
    ) == ["/s/2"]
    store.mark_evicted(["/s/0"])
    assert [s.locator for s in store.list_spills("a")] == ["/s/1", "/s/3"]
    assert store.spill_record("/s/0").evicted is not None and store.spill_owner("/s/0") is None
    assert store.spill_usage("a") == 200 and store.spill_usage() == 400 and store.spill_usage(user="u2") == 200


def test_the_default_state_path_is_jupyters_data_dir_for_every_process(monkeypatch, tmp_path: Path) -> None:
    from jupyter_core.paths import jupyter_data_dir

    from dsh_jupyter.core.locations import default_state_path
    from dsh_jupyter.core.locations import jupyter_data_dir as ours

    monkeypatch.delenv("DSH_STATE_PATH", raising=False)
    for env in (
        {},
        {"JUPYTER_DATA_DIR": str(tmp_path / "jd")},
        {"XDG_DATA_HOME": str(tmp_path / "xdg")},
        {"HOME": str(tmp_path / "home")},
    ):
        with monkeypatch.context() as m:
            for k in ("JUPYTER_DATA_DIR", "XDG_DATA_HOME"):
                m.delenv(k, raising=False)
            for k, v in env.items():
                m.setenv(k, v)
            assert ours() == jupyter_data_dir()
            assert default_state_path() == os.path.join(jupyter_data_dir(), "dsh_jupyter", "state.sqlite")
    monkeypatch.setenv("DSH_STATE_PATH", str(tmp_path / "x.sqlite"))
    assert default_state_path() == str(tmp_path / "x.sqlite")


# -- the journal: WAL on local disks, a rollback journal on network filesystems -------------------

MOUNTINFO = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
40 27 0:50 / /home rw,relatime - nfs4 server:/export/home rw,vers=4.2
41 40 0:51 / /home/alice/My\\040Drive rw - fuse.rclone remote: rw
42 27 0:52 / /mnt/share rw - cifs //nas/share rw
"""


def test_the_filesystem_under_the_state_file_is_found(tmp_path: Path) -> None:
    from dsh_jupyter.core.locations import filesystem_of, is_network_filesystem

    info = tmp_path / "mountinfo"
    info.write_text(MOUNTINFO)
    for path, fstype, network in [
        ("/home/alice/.local/share/jupyter", "nfs4", True),
        ("/home/alice/My Drive/x", "fuse.rclone", True),
        ("/mnt/share/state", "cifs", True),
        ("/srv/data", "ext4", False),
        ("/homeless", "ext4", False),
    ]:
        assert filesystem_of(path, str(info)) == fstype, path
        assert is_network_filesystem(fstype) is network
    assert filesystem_of("/x", str(tmp_path / "no-such-file")) == "unknown"
    assert filesystem_of(str(tmp_path)) not in ("", "unknown")  # this machine's own mountinfo


def test_a_rollback_journal_state_works_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    store = StateStore(path, journal="delete")
    assert store.journal == "delete"
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    raw.close()
    store.ensure_session("k", "/w", "k", "/w")
    code = """
        store = state.StateStore(sys.argv[1], journal="delete")
        with store.write_gate() as gate:
            gate.record_observation("k", "/w/f", "v-child")
        print(store.journal)
    """
    assert finish(spawn(code, path)).strip() == "delete"
    assert store.observed_version("k", "/w/f") == "v-child"
    with pytest.raises(StateError, match="auto, wal or delete"):
        StateStore(tmp_path / "other.sqlite", journal="memory")


def test_auto_picks_wal_on_a_local_disk(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state.sqlite")
    assert store.journal == "wal" and store.filesystem != "unknown"
