"""The index file's own rules, read back from a real SQLite file."""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3

import pytest

from dsh_jupyter.core.index import native
from dsh_jupyter.core.index import store as store_module
from dsh_jupyter.core.index.store import FileRow, IndexStore, _ext


def _many_rows(count: int, seed: int = 7) -> list[tuple]:
    rng = random.Random(seed)
    rows = []
    for i in range(count):
        ending = rng.choice([".py", ".md", ".txt", ""])
        path = f"folder-{rng.randrange(300)}/below/a-name-long-enough-to-fill-runs-{i}{ending}".encode()
        mtime = rng.choice([5, 5, rng.randrange(10**12)])  # many equal times: the path decides
        rows.append((i + 1, path, 1, mtime, 0, 0, _ext(path)))
    return rows


def _built(tmp_path, rows: list[tuple], name: str = "i.sqlite") -> IndexStore:
    store = IndexStore(str(tmp_path / name), building=True)
    assert store.reserve(len(rows)) == 1  # the ids the rows carry, as the keeper reserves them
    store.begin()
    store.add(rows, [])
    store.commit()
    store.built()
    return store


def _in_time_order(store: IndexStore, prefix: str = "", endings: tuple[str, ...] = ("",)) -> list[bytes]:
    """The rows' paths as Python sorts them, by time and then by the path's bytes: the order glob lists."""
    rows = sorted(store.db.execute("SELECT mtime_ns, path FROM files"))
    cut = len(prefix) + 1 if prefix else 0
    return [
        p[cut:]
        for _, p in rows
        if p.startswith(prefix.encode() + b"/" if prefix else b"") and p.endswith(tuple(e.encode() for e in endings))
    ]


@pytest.mark.parametrize("compiled", [True, False], ids=["time-order", "sql-indexes"])
def test_the_time_order_and_the_indexes_read_every_row_as_a_sort_in_python(tmp_path, compiled):
    """``built`` sorts the path index on SQLite's helper thread in 4 MiB runs (120,000 rows of
    60-byte paths are several runs, so the helper sorts some and the runs are merged), and makes
    glob's time order: as blocks sorted by the compiled library (several of them: 9 MB of
    entries), or without it as the time and extension indexes. Either must read back in exactly
    the order Python sorts the rows in, equal times by path, and the connection must be back on
    one thread and its usual cache afterwards (a later change's sort runs as before)."""
    rows = _many_rows(120_000)
    with contextlib.nullcontext() if compiled else native.python_only():
        store = _built(tmp_path, rows)

    names = {r[0] for r in store.db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"by_path", "by_gram"} <= names
    if compiled:
        assert not names & {"by_time", "by_ext"}
        with sqlite3.connect(store.times_path) as db:  # a file of its own
            assert db.execute("SELECT count(*) FROM times").fetchone()[0] >= 8
        assert store.get("times_max") == 120_000
    else:
        assert {"by_time", "by_ext"} <= names and store.get("times_max") is None
    assert store.db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    in_order = [r[1] for r in sorted(rows, key=lambda r: (r[3], r[1]))]
    assert store.paths(by_time=True) == [p.decode() for p in in_order]
    listed = store.listed_by_time("", (".py",), 400)
    py = [p for p in in_order if p.endswith(b".py")]
    assert listed is not None and listed.rows == len(py) and listed.joined == b"\n".join(py)
    assert listed.groups is not None and sum(n for _, n in listed.groups) == len(py)
    with store.reader() as db:
        assert store.joined_by_time(db, "", (".py",)) == (len(py), b"\n".join(py))  # SQLite's own way
    by_path = [p for (p,) in store.db.execute("SELECT path FROM files INDEXED BY by_path ORDER BY path")]
    assert by_path == sorted(r[1] for r in rows)

    assert store.db.execute("PRAGMA threads").fetchone() == (0,)
    assert store.db.execute("PRAGMA cache_size").fetchone() == (-16384,)
    assert store.db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    store.close()
    with sqlite3.connect(tmp_path / "i.sqlite") as db:  # what was made is in the file, not in memory
        assert db.execute("SELECT count(*) FROM files INDEXED BY by_path").fetchone() == (120_000,)
    if compiled:
        with sqlite3.connect(tmp_path / "i.sqlite.times") as db:
            assert db.execute("SELECT sum(length(block)) FROM times").fetchone()[0] == sum(16 + len(r[1]) for r in rows)
            assert db.execute("SELECT value FROM info WHERE key = 'times_max'").fetchone() == (120_000,)


def _change(store: IndexStore, rng: random.Random, count: int) -> None:
    """Rows replaced (new times, some equal to others'), added, deleted one by one and a folder
    at a time, as the keeper changes them."""
    paths = [p for (p,) in store.db.execute("SELECT path FROM files")]
    store.begin()
    replaced = rng.sample(paths, count)
    store.upsert(
        (FileRow(p.decode(), 2, rng.choice([5, 10**12 + 1, rng.randrange(10**12)]), 0, False), None) for p in replaced
    )
    store.upsert(
        (FileRow(f"folder-{rng.randrange(300)}/new-{rng.randrange(10**9)}.py", 1, rng.choice([5, 7]), 0, False), None)
        for _ in range(count)
    )
    store.delete(p.decode() for p in rng.sample(paths, count) if p not in replaced)
    store.delete_below(f"folder-{rng.randrange(300)}")
    store.commit()


@pytest.mark.parametrize("seed", range(4))
def test_changes_since_the_time_order_are_merged_in_as_it_is_read(tmp_path, seed):
    """Rows replaced, added and deleted after the time order was made: every read (all files, one
    extension, several endings, below a folder) is the table sorted in Python, and the same as
    SQLite's sorted rows; once made again the order holds no change to merge and reads the same."""
    rng = random.Random(seed)
    store = _built(tmp_path, _many_rows(3_000, seed))
    try:
        for _ in range(3):
            _change(store, rng, 150)
            assert 0 < store.changed_since_times() < 3_000
            assert store.db.execute("SELECT count(*) FROM gone").fetchone()[0] > 0
            _same_reads(store)
        store.refresh_times()  # 900 changes, under the bound of 4,096: nothing made again
        assert store.changed_since_times() > 0
        assert store.make_times()
        assert store.changed_since_times() == 0
        assert store.get("times_max") == store.db.execute("SELECT max(id) FROM files").fetchone()[0]
        _same_reads(store)
    finally:
        store.close()


def _same_reads(store: IndexStore) -> None:
    with store.reader() as db:
        for prefix, endings in [
            ("", ("",)),
            ("", (".py",)),
            ("", (".md", ".txt")),
            ("folder-7", (".py",)),
            ("x", (".py",)),
        ]:
            want = _in_time_order(store, prefix, endings)
            listed = store.listed_by_time(prefix, endings, 400)
            assert listed is not None and listed.rows == len(want), (prefix, endings)
            assert listed.joined == b"\n".join(want), (prefix, endings)
            assert store.joined_by_time(db, prefix, endings) == (len(want), b"\n".join(want))
            assert store.paths(prefix, endings, by_time=True) == [p.decode() for p in want]


def test_the_time_order_is_made_again_once_its_changes_pass_the_bound(tmp_path, monkeypatch):
    store = _built(tmp_path, _many_rows(2_000))
    try:
        monkeypatch.setattr(store_module, "TIMES_REMAKE_MIN", 200)  # a 32nd of the files is 62
        _change(store, random.Random(1), 30)  # about 130 changes: not past the bound
        changed = store.changed_since_times()
        assert changed is not None and 62 < changed <= 200
        store.refresh_times()
        assert store.changed_since_times() == changed
        _change(store, random.Random(2), 60)
        store.refresh_times()
        assert store.changed_since_times() == 0 and store.db.execute("SELECT count(*) FROM gone").fetchone() == (0,)
        _same_reads(store)
    finally:
        store.close()


@pytest.mark.parametrize("damage", ["cut", "other-time", "removed"])
def test_a_time_order_that_does_not_read_whole_is_left_for_sqlites_rows(tmp_path, damage):
    """The time order's file with a block cut short (not what the library wrote), made for another
    state of the index (its ``times_max`` is not the index's), or removed: the pass over it
    fails, and glob's list comes from SQLite's rows in time order, the same list."""
    store = _built(tmp_path, _many_rows(2_000))
    try:
        want = _in_time_order(store, "", (".py",))
        top = store.get("times_max")
        assert native.join_times(store.times_path, top, b"", [b".py"], b"", b"", 10) is not None
        if damage == "removed":
            os.unlink(store.times_path)
        else:
            with sqlite3.connect(store.times_path) as db:
                if damage == "cut":
                    db.execute("UPDATE times SET block = substr(block, 1, 100) WHERE seq = 0")
                else:
                    db.execute("UPDATE info SET value = value - 1 WHERE key = 'times_max'")
        assert native.join_times(store.times_path, top, b"", [b".py"], b"", b"", 10) is None
        listed = store.listed_by_time("", (".py",), 400)
        assert listed is not None and listed.joined == b"\n".join(want)
        assert store.paths("", (".py",), by_time=True) == [p.decode() for p in want]
    finally:
        store.close()
