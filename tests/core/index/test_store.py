"""The index file's own rules, read back from a real SQLite file."""

from __future__ import annotations

import random
import sqlite3

from dsh_jupyter.core.index.store import IndexStore, _ext


def test_indexes_sorted_on_two_threads_order_every_row_as_a_sort_in_python(tmp_path):
    """``built`` sorts on SQLite's helper thread in 4 MiB runs: 120,000 rows of 60-byte paths are
    several runs, so the helper sorts some of them and the runs are merged. Each index must still
    read back in exactly the order Python sorts the rows in, equal times by path, and the connection must be
    back on one thread and its usual cache afterwards (a later change's sort runs as before)."""
    rng = random.Random(7)
    store = IndexStore(str(tmp_path / "i.sqlite"), building=True)
    rows = []
    for i in range(120_000):
        ending = rng.choice([".py", ".md", ".txt", ""])
        path = f"folder-{rng.randrange(300)}/below/a-name-long-enough-to-fill-runs-{i}{ending}".encode()
        mtime = rng.choice([5, 5, rng.randrange(10**12)])  # many equal times: the path decides
        rows.append((i + 1, path, 1, mtime, 0, 0, _ext(path)))
    store.begin()
    store.add(rows, [])
    store.commit()
    store.built()

    names = {r[0] for r in store.db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"by_path", "by_time", "by_ext", "by_gram"} <= names
    assert store.db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    by_time = [p for (p,) in store.db.execute("SELECT path FROM files INDEXED BY by_time ORDER BY mtime_ns, path")]
    assert by_time == [r[1] for r in sorted(rows, key=lambda r: (r[3], r[1]))]
    py = [p for (p,) in store.db.execute("SELECT path FROM files INDEXED BY by_ext WHERE ext = ?", (b".py",))]
    assert py == [r[1] for r in sorted(rows, key=lambda r: (r[3], r[1])) if r[6] == b".py"]
    by_path = [p for (p,) in store.db.execute("SELECT path FROM files INDEXED BY by_path ORDER BY path")]
    assert by_path == sorted(r[1] for r in rows)

    assert store.db.execute("PRAGMA threads").fetchone() == (0,)
    assert store.db.execute("PRAGMA cache_size").fetchone() == (-16384,)
    assert store.db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    store.close()
    with sqlite3.connect(tmp_path / "i.sqlite") as db:  # what was made is in the file, not in memory
        assert db.execute("SELECT count(*) FROM files INDEXED BY by_ext").fetchone() == (120_000,)
