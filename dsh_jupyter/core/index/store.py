"""The index's SQLite file: the visible files with their size and time, and their text's trigrams.

Why SQLite: it is in every Python here already, and a file of its own can be thrown away and
built again at any time. The trigrams are kept two ways, and a file's text is in exactly one:

- ``postings``: the build's, written by the compiled trigram reader (``native``, ``grams.c``):
  for each ASCII trigram (folded to lower case) the ids of the files that hold it, as blocks of
  delta-coded varints, a block per gram per flush, in id order. FTS5 took 15 s of one thread to
  index a million files' text; the reader gathers it on the reading thread for a second or two.
- ``grams``: FTS5 with its ``trigram`` tokenizer, for every file indexed after the build (a
  change) and those the reader leaves to Python (UTF-16, or a build without the library). The
  table is contentless (the text is not kept twice) with ``detail=none`` (no positions: a third of
  the size).

A substring is asked as the AND of its trigrams in both, which is what ``plan`` needs (a superset
of the files that hold it); the plan asks only for ASCII trigrams, the ones ``postings`` keeps.

glob lists its files oldest first, equal times by path. Where the compiled library is here that
order is the time order: every file as blocks of entries the library sorted, in a file of its
own beside this one (``times_path``; ``native.make_times``, ``native.Writer.times``), with
``gone`` (the ids of rows deleted or replaced since, kept by a trigger) and the rows added since
(ids past ``times_max``) merged in as it is read; the keeper makes it again once the changes pass
a ``TIMES_REMAKE``th of the files. Why not SQLite indexes on (time, path) and (extension, time, path):
on a million files they took 2.1 s of the build's 3.1 s after the reading (SQLite's sorter
compares whole records where the first field ties, as an extension does for nearly every pair),
where the library sorts the rows in 0.1 s and a pass over the blocks keeps one extension's files
as quickly as that index gave them. Without the library the two indexes are made as before.

A contentless table in the SQLite 3.40 here cannot delete a row (nor can a block of postings lose
one id), so a file's new text gets a new row id and the old one is left behind, unreachable:
candidates are the ``files`` rows whose id the trigram query answers. ``orphans`` counts what was
left behind; the keeper builds the index again when they outweigh the files.

What it must never do: answer a file it was not told about, or leave a changed file's old text
reachable (its ``files`` row is replaced before the call that changed it answers).
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from operator import itemgetter

from . import native
from .plan import Query

log = logging.getLogger(__name__)

__all__ = ["BIG", "TEXT", "UNREAD", "FileRow", "IndexStore", "TooMany", "file_row", "fts_query", "posted_ids"]

SCHEMA_VERSION = 4  # a build always starts from a new file; the number says what a file holds
TEXT = 0  # the text's trigrams are in the index
BIG = 1  # over the size setting: not read, always a candidate
UNREAD = 2  # could not be read: always a candidate (rg says why)


@dataclass(frozen=True)
class FileRow:
    path: str  # relative to the workspace root, "/"-separated (surrogate escapes for non-UTF-8 bytes)
    size: int
    mtime_ns: int
    kind: int  # TEXT, BIG or UNREAD
    nul: bool  # the file holds a NUL byte (rg searches it differently when it meets it walking)


def _blob(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")  # os.fsencode on Linux, without its Python call


def _ext(path: bytes) -> bytes:
    """A name's extension: from its last dot on (``a.tar.gz``: ``.gz``; ``.bashrc``: itself), or
    empty (grams.c's ``ext_at`` says the same for the build's rows). A path ending in ``E`` has
    the extension of ``E`` when ``E`` holds a dot (an ending holds no slash), so a glob of
    endings that share one reads the ``by_ext`` run of it."""
    dot = path.rfind(b".")
    return path[dot:] if dot >= 0 and path.find(b"/", dot) < 0 else b""


def fts_query(query: Query) -> str | None:
    """``query`` as an FTS5 MATCH over a ``detail=none`` trigram table: each literal is the AND of
    its trigrams (no phrases without positions); None: ``ALL``."""
    kind = query[0]
    if kind == "all":
        return None
    if kind == "lit":
        s = query[1]
        grams = dict.fromkeys(s[i : i + 3] for i in range(len(s) - 2))
        return "(" + " AND ".join('"' + g.replace('"', '""') + '"' for g in grams) + ")"
    parts = [fts_query(q) for q in query[1]]
    joiner = " AND " if kind == "and" else " OR "
    return "(" + joiner.join(p for p in parts if p is not None) + ")"


class TooMany(Exception):
    """``IndexStore.candidates`` would hold more files than asked: at least ``at_least``."""

    def __init__(self, at_least: int) -> None:
        super().__init__(at_least)
        self.at_least = at_least


def file_row(rowid: int, row: FileRow) -> tuple:
    """``IndexStore.add``'s row of one file."""
    path = _blob(row.path)
    return (rowid, path, row.size, row.mtime_ns, row.kind, int(row.nul), _ext(path))


def posted_ids(db: sqlite3.Connection, query: Query, lists: dict | None = None):
    """The ids of the files whose build-time postings answer ``query`` (numpy uint32, each once);
    None: every file (the query asks nothing the postings can check). ``lists``: the lists
    decoded so far for this query (a trigram asked twice is read once)."""
    import numpy as np  # a core dependency (through pandas); imported where it is needed

    lists = {} if lists is None else lists
    kind = query[0]
    if kind == "all":
        return None
    if kind == "lit":
        s = query[1]
        grams = {s[i : i + 3] for i in range(len(s) - 2)}
        parts = [_list(db, g, lists) for g in grams if g.isascii()]
    else:
        parts = [posted_ids(db, q, lists) for q in query[1]]
        if kind == "or":
            if any(p is None for p in parts):
                return None
            return np.unique(np.concatenate(parts)) if parts else np.empty(0, np.uint32)
    known = sorted((p for p in parts if p is not None), key=len)
    if not known:
        return None
    out = known[0]
    for more in known[1:]:
        if not len(out):
            break
        out = np.intersect1d(out, more, assume_unique=True)
    return out


def _list(db: sqlite3.Connection, g: str, lists: dict):
    """The ids of the files whose postings hold trigram ``g``: its blocks, each in id order
    (not the whole: a build's reading threads each write their own; an id is in one block)."""
    import numpy as np

    got = lists.get(g)
    if got is None:
        parts = [
            native.decode(blob) for (blob,) in db.execute("SELECT ids FROM postings WHERE gram = ?", (native.gram(g),))
        ]
        got = lists[g] = np.concatenate(parts) if len(parts) > 1 else parts[0] if parts else np.empty(0, np.uint32)
    return got


class IndexStore:
    """One index file. Not thread-safe: the keeper serialises every use under its lock."""

    def __init__(self, path: str, building: bool = False) -> None:
        """``building``: a new file the build fills (``built`` ends it): its pages go straight into
        the file, with no write-ahead log to copy them from (a crash loses a build either way)."""
        self.path = path
        self.times_path = path + TIMES_SUFFIX  # glob's time order: a file of its own (``built`` says why)
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=" + ("MEMORY" if building else "WAL"))
        self.db.execute("PRAGMA synchronous=OFF")  # a crash loses the index, which is built again
        # 16 MiB of pages: on a million files a build as quick as with 64, and 100 MiB less at its peak
        self.db.execute(f"PRAGMA cache_size={_CACHE}")
        self.db.executescript(
            """
            CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value);
            CREATE TABLE IF NOT EXISTS files(
                id INTEGER PRIMARY KEY, path BLOB NOT NULL, size INTEGER NOT NULL,
                mtime_ns INTEGER NOT NULL, kind INTEGER NOT NULL, nul INTEGER NOT NULL,
                ext BLOB NOT NULL);
            CREATE INDEX IF NOT EXISTS unindexed ON files(kind) WHERE kind != 0;
            CREATE VIRTUAL TABLE IF NOT EXISTS grams USING fts5(
                body, tokenize='trigram', content='', detail='none');
            CREATE TABLE IF NOT EXISTS postings(gram INTEGER NOT NULL, ids BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS gone(id INTEGER PRIMARY KEY);
            CREATE TRIGGER IF NOT EXISTS gone_rows AFTER DELETE ON files
                WHEN old.id <= (SELECT value FROM meta WHERE key = 'times_max')
                BEGIN INSERT OR IGNORE INTO gone(id) VALUES (old.id); END;
            """
        )
        # FTS5 merges its segments 8 at a time, not 4: about a seventh less CPU in a build, and a
        # query no slower that can be measured (benchmarks/bench_index.py)
        self.db.execute("INSERT INTO grams(grams, rank) VALUES('automerge', 8)")
        if not building:
            self.db.execute(_BY_PATH)
        self._next_id = (self.db.execute("SELECT max(id) FROM files").fetchone()[0] or 0) + 1
        self._times_max: int | None = self.get("times_max")  # None: no time order (glob asks SQLite)

    def close(self) -> None:
        self.db.close()

    # -- meta --------------------------------------------------------------------------------------

    def get(self, key: str):
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def put(self, key: str, value) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # -- writing -----------------------------------------------------------------------------------

    def built(self, order: Callable[[str, int], int | None] | None = None) -> None:
        """The build's rows are all in: index them by path (each once), and make glob's time order
        (the module docstring says why it is not an index), so glob reads its files oldest first
        without a sort, and a glob of one extension only its own files. Without the compiled
        library, SQLite indexes by time and path and by extension, time and path do that instead.
        Made once after the bulk inserts, not kept up through them: a tenth less CPU for the path
        index alone; SQLite keeps its indexes from then on. ``order(times_path, block_bytes)``
        makes the time order from rows the build kept (``native.Writer.times``), or gives None:
        it is made from the rows in the file then.

        The time order is a file of its own (``times_path``, SQLite's too): written there, its
        blocks are written while SQLite makes the path index, where in the index file they waited
        for it (on a million files 0.2 s after the index's 0.8 s).

        SQLite sorts its indexes on two threads (``PRAGMA threads=1``: one helper beside this one)
        in runs of 4 MiB: on a million files the path, time and extension indexes took 3.2 s where
        one thread took 4.9 s (16 MiB runs on two threads: 3.7 s). Both settings go back once the
        indexes are made."""
        made: list[int | BaseException | None] = []

        def make() -> None:
            try:
                got = order(self.times_path, _TIMES_BLOCK) if order is not None else None
                if got is None:  # from the rows in the file
                    got = native.make_times(self.path, self.times_path, _TIMES_BLOCK)
                made.append(got)
            except BaseException as exc:  # raised below, on the caller's thread
                made.append(exc)

        # the time order is sorted and written while SQLite makes the path index (both let go of
        # the interpreter; only its last step, in this file, waits for the index's commit)
        timer = threading.Thread(target=make, name="dsh-index-times", daemon=True) if native.available() else None
        self.db.execute(f"PRAGMA threads={_SORT_HELPERS}")
        self.db.execute(f"PRAGMA cache_size={_SORT_CACHE}")
        try:
            if timer is not None:
                timer.start()
            try:
                self.db.execute(_BY_PATH)
            finally:
                if timer is not None:
                    timer.join()
            if made and isinstance(made[0], BaseException):
                raise made[0]
            self.db.execute("CREATE INDEX IF NOT EXISTS by_gram ON postings(gram)")
            self._times_max = self.get("times_max")
            if self._times_max is None:  # no library, or it could not: SQLite's indexes serve glob
                self.db.execute("CREATE INDEX IF NOT EXISTS by_time ON files(mtime_ns, path)")
                self.db.execute("CREATE INDEX IF NOT EXISTS by_ext ON files(ext, mtime_ns, path)")
        finally:
            self.db.execute("PRAGMA threads=0")
            self.db.execute(f"PRAGMA cache_size={_CACHE}")
        self.db.execute("PRAGMA journal_mode=WAL")  # from now on read on other threads while written

    def make_times(self) -> bool:
        """glob's time order made again from every row (``native.make_times``, on a connection of
        the library's own: this one must hold no transaction); False where the library cannot."""
        if native.make_times(self.path, self.times_path, _TIMES_BLOCK) is None:
            return False
        self._times_max = self.get("times_max")
        return self._times_max is not None

    def changed_since_times(self) -> int | None:
        """Rows deleted, replaced or added since the time order was made (None: there is none)."""
        if self._times_max is None:
            return None
        (gone,) = self.db.execute("SELECT count(*) FROM gone").fetchone()
        (added,) = self.db.execute("SELECT count(*) FROM files WHERE id > ?", (self._times_max,)).fetchone()
        return gone + added

    def refresh_times(self) -> None:
        """Make the time order again once the changes merged into each read pass ``TIMES_REMAKE``
        (a fraction of the files, and at least ``TIMES_REMAKE_MIN``): each read sorts them in Python."""
        changed = self.changed_since_times()
        if changed is not None and changed > max(TIMES_REMAKE_MIN, self.count() // TIMES_REMAKE):
            try:
                self.make_times()
            except MemoryError:  # the order stays as it was, its changes merged in as before
                log.warning("dsh_jupyter: the index's time order could not be made again (out of memory)")

    def begin(self) -> None:
        self.db.execute("BEGIN")

    def commit(self) -> None:
        self.db.execute("COMMIT")

    def upsert(self, rows: Iterable[tuple[FileRow, str | None]]) -> None:
        """Add or replace files; a TEXT row comes with its text (decoded as ``read_text`` does)."""
        files, grams = [], []
        for row, text in rows:
            rowid = self._next_id
            self._next_id += 1
            path = _blob(row.path)
            files.append((rowid, path, row.size, row.mtime_ns, row.kind, int(row.nul), _ext(path)))
            if row.kind == TEXT and text:
                grams.append((rowid, text))
        if not files:
            return
        self.db.executemany("DELETE FROM files WHERE path = ?", ((f[1],) for f in files))
        self.db.executemany("INSERT INTO files(id, path, size, mtime_ns, kind, nul, ext) VALUES (?,?,?,?,?,?,?)", files)
        if grams:
            self.db.executemany("INSERT INTO grams(rowid, body) VALUES (?, ?)", grams)

    def reserve(self, count: int) -> int:
        """The first of ``count`` new ids, for rows ``add`` writes later (a build reads a batch's
        files, with their ids, while the batch before is written)."""
        first = self._next_id
        self._next_id += count
        return first

    def add(self, rows: list[tuple], texts: list[tuple[int, str]]) -> None:
        """New files under ids from ``reserve`` (a build's: none of them is in the index yet), each
        row ``(id, path, size, mtime_ns, kind, nul, ext)`` with the path and its extension in
        bytes (``file_row`` makes one; the compiled reader's come whole); ``texts`` go to FTS5:
        those the build's reader left to Python (the others' trigrams are in the postings
        ``add_postings`` writes)."""
        self.db.executemany("INSERT INTO files(id, path, size, mtime_ns, kind, nul, ext) VALUES (?,?,?,?,?,?,?)", rows)
        if texts:
            self.db.executemany("INSERT INTO grams(rowid, body) VALUES (?, ?)", texts)

    def add_postings(self, flushed: bytearray) -> None:
        """The lists of one ``native.Gatherer.flush``, a row per gram."""
        self.db.executemany("INSERT INTO postings(gram, ids) VALUES (?, ?)", native.records(flushed))

    def delete(self, paths: Iterable[str]) -> None:
        self.db.executemany("DELETE FROM files WHERE path = ?", ((_blob(p),) for p in paths))

    def delete_below(self, folder: str) -> None:
        """Every file below ``folder`` (a relative path)."""
        low = _blob(folder + "/")
        high = _blob(folder + "0")  # "/" + 1: every path that starts with folder + "/"
        self.db.execute("DELETE FROM files WHERE path >= ? AND path < ?", (low, high))

    # -- reading -----------------------------------------------------------------------------------

    def row(self, path: str) -> FileRow | None:
        got = self.db.execute(
            "SELECT path, size, mtime_ns, kind, nul FROM files WHERE path = ?", (_blob(path),)
        ).fetchone()
        return None if got is None else _row(got)

    def rows(self, prefix: str = "") -> Iterator[FileRow]:
        """Every file, or those below ``prefix`` (a relative folder path, "" for all)."""
        if not prefix:
            cur = self.db.execute("SELECT path, size, mtime_ns, kind, nul FROM files")
        else:
            cur = self.db.execute(
                "SELECT path, size, mtime_ns, kind, nul FROM files WHERE path >= ? AND path < ?",
                (_blob(prefix + "/"), _blob(prefix + "0")),
            )
        return map(_row, cur)

    def paths_and_times(self, prefix: str = "") -> tuple[list[bytes], list[int]]:
        """The raw paths (bytes) and modification times below ``prefix``, in one pass."""
        if not prefix:
            got = self.db.execute("SELECT path, mtime_ns FROM files").fetchall()
        else:
            got = self.db.execute(
                "SELECT path, mtime_ns FROM files WHERE path >= ? AND path < ?",
                (_blob(prefix + "/"), _blob(prefix + "0")),
            ).fetchall()
        return [p for p, _ in got], [t for _, t in got]

    def paths(
        self, prefix: str = "", endings: tuple[str, ...] | None = None, by_time: bool = False
    ) -> list[str] | None:
        """The paths below ``prefix``, relative to it: those ending in one of ``endings`` (None:
        all), oldest first and equal times by path when ``by_time`` (else in the table's order).
        None: ``by_time`` and a path is not UTF-8 (the index orders its bytes, Python its
        surrogate escapes: the caller sorts).

        In time order they come from the time order in one pass in C where it is here; else the
        rows come a block at a time, each block's paths joined, decoded and split in C: no Python
        loop over a million paths, and no more than a block of row objects at once."""
        if by_time:
            listed = self._timed(prefix, endings, 0, b"\0")
            if listed is not None:
                if not listed.rows:
                    return []
                text = listed.joined.decode("utf-8", "surrogateescape")
                if not listed.ascii and _ESCAPED.search(text):
                    return None
                return text.split("\0")
        cut, where, params = self._where(prefix, endings)
        sql = "SELECT substr(path, ?) FROM files" + where + (" ORDER BY mtime_ns, path" if by_time else "")
        cur = self.db.execute(sql, [cut, *params])
        out: list[str] = []
        while rows := cur.fetchmany(_BLOCK):
            text = b"\0".join(map(itemgetter(0), rows)).decode("utf-8", "surrogateescape")
            if by_time and not text.isascii() and _ESCAPED.search(text):
                return None
            out += text.split("\0")
        return out

    def joined(self, prefix: str = "") -> str:
        """The paths below ``prefix``, relative to it, joined by NULs in no set order: one string
        read in one pass in C (``native.join``), or where it cannot be, one string SQLite makes;
        never a row object per path."""
        cut, where, params = self._where(prefix, None)
        listed = native.join(self.path, "SELECT path FROM files" + where, params, cut - 1, 0, b"\0")
        if listed is not None:
            return listed.joined.decode("utf-8", "surrogateescape")
        sql = "SELECT CAST(group_concat(substr(path, ?), X'00') AS BLOB) FROM files" + where
        got = self.db.execute(sql, [cut, *params]).fetchone()[0]
        return got.decode("utf-8", "surrogateescape") if got else ""

    def reader(self) -> sqlite3.Connection:
        """A connection of its own to this file, for a read on another thread while the keeper's
        lock keeps writers out (WAL: it reads what the keeper's connection committed)."""
        uri = "file:" + urllib.parse.quote(self.path) + "?mode=ro"
        return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)

    def joined_by_time(self, db: sqlite3.Connection, prefix: str, endings: tuple[str, ...]) -> tuple[int, bytes]:
        """How many paths below ``prefix`` end in one of ``endings``, and those paths (relative to
        it) oldest first, equal times by path, joined by newlines: one string SQLite makes from
        its rows in time order (``db``: this file's ``reader``), no row object per path.

        The order is the sorted subquery's, which SQLite hands to the aggregate as it made it
        (3.40's ``group_concat`` has no ``ORDER BY`` of its own): through the time or extension
        index where the build made them, else sorted."""
        cut, source, params = self._by_time(prefix, endings)
        name = "path" if cut == 1 else "substr(path, ?)"  # the whole path: no copy of each made first
        sql = f"SELECT count(*), CAST(group_concat(p, X'0a') AS BLOB) FROM (SELECT {name} AS p {source})"
        count, blob = db.execute(sql, [*([] if cut == 1 else [cut]), *params]).fetchone()
        return count, blob or b""

    def listed_by_time(self, prefix: str, endings: tuple[str, ...], most: int) -> native.Listed | None:
        """What ``joined_by_time`` and ``groups`` give, read in one pass in C: the paths joined
        oldest first, their count, and each top-level entry's count (None past ``most`` entries),
        with what the pass saw of the lines; from the time order (``native.join_times``) where it
        is here, else from SQLite's rows in time order (``native.join``, on a connection of its
        own). None where the compiled library cannot read it: the caller asks those two."""
        listed = self._timed(prefix, endings, most)
        if listed is not None:
            return listed
        cut, source, params = self._by_time(prefix, endings)
        return native.join(self.path, "SELECT path " + source, params, cut - 1, most)

    def _timed(
        self, prefix: str, endings: tuple[str, ...] | None, most: int, sep: bytes = b"\n"
    ) -> native.Listed | None:
        """``native.join_times`` of the paths below ``prefix`` ending in one of ``endings``: the
        time order's blocks but the rows gone since, merged with the rows added since (sorted
        here, as the blocks are: by time, then by the path's bytes). None: no time order, or the
        library cannot read it."""
        top = self._times_max
        if top is None:
            return None
        ends = [] if endings is None else [_blob(e) for e in endings]
        if not all(ends):
            ends = []  # an empty ending holds every path
        gone = bytearray((top >> 3) + 1)
        for (i,) in self.db.execute("SELECT id FROM gone WHERE id <= ?", (top,)):
            gone[i >> 3] |= 1 << (i & 7)
        where, params = self._below(prefix)
        sql = "SELECT mtime_ns, path FROM files WHERE id > ?" + "".join(" AND " + w for w in where)
        rows = sorted(self.db.execute(sql, [top, *params]).fetchall())
        head = native.TIMES_HEAD.pack
        added = b"".join(head(t, 0, len(p)) + p for t, p in rows)
        base = _blob(prefix + "/") if prefix else b""
        return native.join_times(self.times_path, top, base, ends, bytes(gone), added, most, sep)

    def _by_time(self, prefix: str, endings: tuple[str, ...]) -> tuple[int, str, list]:
        """Where a path starts below ``prefix`` (as ``_where`` says), and the FROM, WHERE and
        ORDER BY of the paths below it with one of ``endings`` in time order, with its parameters:
        by extension when the endings share one (the extension index serves it where the build
        made one, without the library)."""
        cut, where, params = self._where(prefix, endings)
        ends = [_blob(e) for e in endings]
        exts = {_ext(e) for e in ends}
        if len(exts) == 1 and b"" not in exts:  # one extension: read its own run of the table
            same = all(e == next(iter(exts)) for e in ends)  # the extension alone decides (*.py)
            cut, where, params = self._where(prefix, None if same else endings)
            where = " WHERE ext = ?" + (" AND" + where[len(" WHERE") :] if where else "")
            params = [*exts, *params]
        return cut, "FROM files" + where + " ORDER BY mtime_ns, path", params

    def groups(self, prefix: str, endings: tuple[str, ...], most: int) -> list[tuple[str, int]] | None:
        """The entries right below ``prefix`` (top-level names, relative to it) that hold paths
        ending in one of ``endings``, in path order, with how many each holds; None past ``most``
        entries. A skip over the path index: one seek to the next entry and one count of its
        range (``name/`` up to ``name0``; a file's range is its own path), so a million paths in
        ten folders cost ten seeks and one pass over the index, never a sort."""
        base = _blob(prefix + "/") if prefix else b""
        stop = _blob(prefix + "0") if prefix else None
        ends = [_blob(e) for e in endings]
        if not all(ends):
            ends = []  # an empty ending holds every path
        match = " OR ".join("substr(path, ?) = ?" for _ in ends)
        count_sql = "SELECT count(*) FROM files WHERE path >= ? AND path < ?" + (f" AND ({match})" if ends else "")
        end_params = [x for e in ends for x in (-len(e), e)]
        bound = " AND path < ?" if stop else ""
        seek_sql = f"SELECT path FROM files WHERE path >= ?{bound} ORDER BY path LIMIT 1"
        out: list[tuple[str, int]] = []
        low, seeks = base, 0
        while True:
            seeks += 1
            if seeks > most:
                return None
            got = self.db.execute(seek_sql, (low, stop) if stop else (low,)).fetchone()
            if got is None:
                return out
            path: bytes = got[0]
            slash = path.find(b"/", len(base))
            if slash >= 0:
                lo, hi = path[: slash + 1], path[:slash] + b"0"  # "/" + 1: everything below the folder
            else:
                lo, hi = path, path + b"\0"  # a file of its own: only its own path sorts in between
            (count,) = self.db.execute(count_sql, (lo, hi, *end_params)).fetchone()
            if count:
                out.append((lo[len(base) :].rstrip(b"/").decode("utf-8", "surrogateescape"), count))
            low = hi

    def _where(self, prefix: str, endings: tuple[str, ...] | None) -> tuple[int, str, list]:
        """Where a path starts once ``prefix/`` is cut (1-based, as ``substr`` counts), and the
        WHERE clause and parameters of the paths below ``prefix`` with one of ``endings``."""
        where, params = self._below(prefix)
        if endings is not None:
            ends = [_blob(e) for e in endings]
            if all(ends):  # an empty ending holds every path
                where.append("(" + " OR ".join("substr(path, ?) = ?" for _ in ends) + ")")
                for e in ends:
                    params += [-len(e), e]
        cut = len(_blob(prefix)) + 2 if prefix else 1
        return cut, (" WHERE " + " AND ".join(where) if where else ""), params

    def _below(self, prefix: str) -> tuple[list[str], list]:
        if not prefix:
            return [], []
        return ["path >= ? AND path < ?"], [_blob(prefix + "/"), _blob(prefix + "0")]

    def candidates(self, query: Query, prefix: str = "", most: int | None = None) -> list[FileRow] | None:
        """The files below ``prefix`` that may hold a match: those whose text answers ``query``, and
        every file whose text is not in the index. None: the query narrows nothing (``ALL``).

        ``most``: raise ``TooMany`` instead when the build's posting lists alone show more files
        than that over the whole workspace, before their rows are read. Why: a broad literal
        posts to most of a million files, and reading their rows (through a list of every id)
        costs a few tenths of a second for an answer rg gives anyway. Every posted id is a file's
        now or one no file has any more (``orphans``), so the posted count less the orphans is a
        count of files the answer surely holds."""
        match = fts_query(query)
        if match is None:
            return None
        posted = posted_ids(self.db, query)
        if posted is None:  # the postings cannot narrow it (FTS5 would, with every ALL part dropped)
            return None
        if most is not None and not prefix and len(posted) > most:
            surely = len(posted) - self.orphans()  # a count of the rows, only when it may decide
            if surely > most:
                raise TooMany(surely)
        where, params = "", []
        if prefix:
            where, params = " AND path >= ? AND path < ?", [_blob(prefix + "/"), _blob(prefix + "0")]
        columns = "SELECT path, size, mtime_ns, kind, nul FROM files WHERE "
        sql = (
            columns
            + "id IN (SELECT rowid FROM grams WHERE grams MATCH ?)"
            + where
            + " UNION ALL "
            + columns
            + "kind != 0"
            + where
        )
        got = [_row(r) for r in self.db.execute(sql, [match, *params, *params])]
        if len(posted):  # a file's text is in FTS5 or in the postings, never both: no file twice
            ids = "[" + ",".join(map(str, posted.tolist())) + "]"
            sql = columns + "id IN (SELECT value FROM json_each(?))" + where
            got += map(_row, self.db.execute(sql, [ids, *params]))
        return got

    def count(self) -> int:
        return self.db.execute("SELECT count(*) FROM files").fetchone()[0]

    def orphans(self) -> int:
        """Row ids of text no file has any more (see the module docstring)."""
        made = self._next_id - 1
        return max(0, made - self.count())

    def disk_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm", TIMES_SUFFIX):
            try:
                total += os.stat(self.path + suffix).st_size
            except OSError:
                pass
        return total

    def check(self) -> bool:
        """Whether the file still reads as an index (the keeper asks before it trusts one)."""
        try:
            self.db.execute("SELECT count(*) FROM files").fetchone()
            self.db.execute("SELECT rowid FROM grams WHERE grams MATCH '\"abc\"' LIMIT 1").fetchall()
            self.db.execute("SELECT ids FROM postings WHERE gram = 0 LIMIT 1").fetchall()
            return True
        except sqlite3.DatabaseError:
            return False


_CACHE = -16384  # KiB of page cache (negative: KiB, as SQLite's pragma reads it)
_SORT_HELPERS = 1  # SQLite's sorting threads beside the caller's while ``built`` makes the indexes
_SORT_CACHE = -4096  # KiB: the sorter's runs while it does (each run sorted on a thread of its own)
_BLOCK = 50_000  # rows fetched at a time when paths come in order
TIMES_SUFFIX = ".times"  # the time order's file: the index file's path and this
COMPANIONS = ("-wal", "-shm", "-journal", TIMES_SUFFIX, TIMES_SUFFIX + "-journal")  # removed with the index file
_TIMES_BLOCK = 1 << 20  # bytes of the time order's entries to a row of ``times``
TIMES_REMAKE = 32  # the time order is made again once the changes since pass a 32nd of the files
TIMES_REMAKE_MIN = 4096  # ... and this many
_BY_PATH = "CREATE UNIQUE INDEX IF NOT EXISTS by_path ON files(path)"  # a path is in the index once
_ESCAPED = re.compile("[\udc80-\udcff]")  # a byte that is not UTF-8, as surrogateescape decodes it


def _row(got) -> FileRow:
    path, size, mtime_ns, kind, nul = got
    return FileRow(os.fsdecode(path), size, mtime_ns, kind, bool(nul))
