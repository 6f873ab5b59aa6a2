"""Session state shared by every process that runs tools: one SQLite file, nothing else.

Why it exists: the Jupyter server and each of its kernels run tools against the same workspace,
so "which version of this file did the model see", "which saved search results belong to whom"
and "what was called" must agree across processes. Memory cannot do that; one SQLite file can.

What it must never do:

* hold the write gate longer than one check-and-write -- every writer in every process waits;
* be the reason a read fails: every sqlite3/OS failure surfaces as ``StateError`` and the caller
  decides whether to carry on without state (best effort) or refuse (fail closed);
* put a lock file, or anything else, in the user's folders: the gate lives in the database;
* share one sqlite3 connection between threads, or use one across a fork.

Why WAL: readers never wait for the one writer and the writer never waits for readers, so the
call log can be listed while a kernel records an observation. Why a busy timeout: writers in
different processes queue up for a while instead of failing at once with "database is locked".
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = ["CallRecord", "Gate", "SessionInfo", "SpillRecord", "StateError", "StateStore", "session_key"]

from ..locations import filesystem_of, is_network_filesystem

log = logging.getLogger(__name__)

SCHEMA_VERSION = 5
BUSY_TIMEOUT_S = 10.0

# A session is named within a workspace root: its ``key`` (``session_key(root, name)``) is what
# every other table refers to, so one name under two roots is two sessions that share nothing.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    key TEXT PRIMARY KEY, root TEXT NOT NULL, name TEXT NOT NULL, cwd TEXT NOT NULL,
    created REAL NOT NULL, user TEXT NOT NULL DEFAULT '', dropped_calls INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS sessions_by_root ON sessions (root, created);
CREATE TABLE IF NOT EXISTS observations (
    session TEXT NOT NULL, real_path TEXT NOT NULL, version TEXT NOT NULL,
    observed_at REAL NOT NULL, PRIMARY KEY (session, real_path)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS spills (
    locator TEXT PRIMARY KEY, session TEXT NOT NULL, tool TEXT NOT NULL,
    size INTEGER NOT NULL, created REAL NOT NULL, evicted REAL, label TEXT NOT NULL DEFAULT '',
    user TEXT NOT NULL DEFAULT '', visibility TEXT);
CREATE INDEX IF NOT EXISTS spills_by_session ON spills (session, created);
CREATE INDEX IF NOT EXISTS spills_by_age ON spills (created);
CREATE TABLE IF NOT EXISTS calls (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, call_id TEXT NOT NULL UNIQUE,
    session TEXT NOT NULL, tool TEXT NOT NULL, args TEXT NOT NULL, text TEXT NOT NULL,
    is_error INTEGER NOT NULL, surface TEXT NOT NULL, started REAL NOT NULL,
    duration_ms REAL NOT NULL, user TEXT NOT NULL DEFAULT '', read_only INTEGER NOT NULL DEFAULT 0,
    visibility TEXT, size INTEGER NOT NULL DEFAULT 0, open TEXT);
CREATE INDEX IF NOT EXISTS calls_by_session ON calls (session, seq);
CREATE INDEX IF NOT EXISTS calls_by_class ON calls (read_only, seq);
CREATE TABLE IF NOT EXISTS call_totals (read_only INTEGER PRIMARY KEY, bytes INTEGER NOT NULL);
INSERT OR IGNORE INTO call_totals (read_only, bytes) VALUES (0, 0), (1, 0);
CREATE TABLE IF NOT EXISTS rename_journal (
    journal TEXT NOT NULL, root TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, seq INTEGER NOT NULL,
    folder TEXT NOT NULL, name TEXT NOT NULL, tmp TEXT NOT NULL, old TEXT NOT NULL, ready INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (journal, seq)) WITHOUT ROWID
"""

# From version 1, where sessions were named without their root: the old rows are kept under a
# root of '' (no workspace has it), so they stay out of every workspace's way.
_MIGRATE_1_TO_2 = """
ALTER TABLE sessions RENAME TO sessions_v1;
CREATE TABLE sessions (
    key TEXT PRIMARY KEY, root TEXT NOT NULL, name TEXT NOT NULL, cwd TEXT NOT NULL,
    created REAL NOT NULL, user TEXT NOT NULL DEFAULT '');
INSERT INTO sessions (key, root, name, cwd, created) SELECT id, '', id, cwd, created FROM sessions_v1;
DROP TABLE sessions_v1;
ALTER TABLE spills ADD COLUMN evicted REAL;
ALTER TABLE spills ADD COLUMN label TEXT NOT NULL DEFAULT '';
ALTER TABLE spills ADD COLUMN user TEXT NOT NULL DEFAULT '';
ALTER TABLE calls ADD COLUMN user TEXT NOT NULL DEFAULT ''
"""

# From version 2: calls and spills remember the visibility they were made under (NULL for the
# older ones: unknown) and whether a read-only caller made them; the call log gets its bounds.
_MIGRATE_2_TO_3 = """
ALTER TABLE sessions ADD COLUMN dropped_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE spills ADD COLUMN visibility TEXT;
ALTER TABLE calls ADD COLUMN read_only INTEGER NOT NULL DEFAULT 0;
ALTER TABLE calls ADD COLUMN visibility TEXT;
ALTER TABLE calls ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
UPDATE calls SET size = length(CAST(text AS BLOB)) + length(CAST(args AS BLOB));
CREATE INDEX IF NOT EXISTS calls_by_class ON calls (read_only, seq);
CREATE TABLE IF NOT EXISTS call_totals (read_only INTEGER PRIMARY KEY, bytes INTEGER NOT NULL);
INSERT OR IGNORE INTO call_totals (read_only, bytes) VALUES (0, (SELECT COALESCE(SUM(size), 0) FROM calls)), (1, 0)
"""

# From version 3: a call on a file a person had open in JupyterLab remembers how it was open
# (``value["open"]``: shared, tab or unsaved), so a call log can mark it; NULL for the older ones.
_MIGRATE_3_TO_4 = """
ALTER TABLE calls ADD COLUMN open TEXT
"""

# From version 4: the renames of a change to several files (``replace``), recorded before the
# first one so that a process killed half-way is completed at the next start (``state.journal``).
_MIGRATE_4_TO_5 = """
CREATE TABLE IF NOT EXISTS rename_journal (
    journal TEXT NOT NULL, root TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, seq INTEGER NOT NULL,
    folder TEXT NOT NULL, name TEXT NOT NULL, tmp TEXT NOT NULL, old TEXT NOT NULL, ready INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (journal, seq)) WITHOUT ROWID
"""

_SESSION_INFO = """SELECT s.key, s.name, s.root, s.cwd, s.created, s.user,
    (SELECT COUNT(*) FROM observations o WHERE o.session = s.key),
    (SELECT COUNT(*) FROM spills p WHERE p.session = s.key AND p.evicted IS NULL),
    (SELECT COUNT(*) FROM calls c WHERE c.session = s.key),
    s.dropped_calls,
    (SELECT c.started FROM calls c WHERE c.session = s.key ORDER BY c.seq DESC LIMIT 1)
FROM sessions s"""

_CALL_COLUMNS = (
    "call_id, session, tool, args, text, is_error, surface, started, duration_ms, user, read_only, visibility, open"
)

# Connections a forked child inherited from its parent: kept referenced and never closed, because
# closing them in the child could drop POSIX locks the child's own connections hold on the file.
_INHERITED: list[sqlite3.Connection] = []


class StateError(Exception):
    """The state store could not do what was asked; the message is one sentence."""


def session_key(root: str, name: str) -> str:
    """The state's key for session ``name`` of the workspace rooted at ``root``."""
    digest = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return f"{digest}:{name}"


@dataclass(frozen=True)
class SessionInfo:
    key: str
    name: str
    root: str
    cwd: str
    created: float
    user: str
    observations: int
    spills: int
    calls: int
    dropped_calls: int = 0  # records the call log's bounds removed (oldest first)
    last_call: float | None = None  # when the newest call in its log started; None: no call


@dataclass(frozen=True)
class CallLogLimits:
    """The call log's bounds: records per session, and bytes in all (owners' and read-only callers')."""

    records_per_session: int
    max_bytes: int
    max_bytes_read_only: int


@dataclass(frozen=True)
class CallRecord:
    call_id: str
    session: str
    tool: str
    args: dict
    text: str
    is_error: bool
    surface: str
    started: float
    duration_ms: float
    user: str = ""
    read_only: bool = False  # made by a caller without contents:write
    visibility: str | None = None  # what the surface showed when it ran (``Visibility.stamp``); None: unknown
    open: str | None = None  # how a person had its file open in JupyterLab (``value["open"]``); None: not open


@dataclass(frozen=True)
class SpillRecord:
    locator: str
    session: str
    tool: str
    size: int
    created: float
    evicted: float | None = None
    label: str = ""
    user: str = ""
    visibility: str | None = None


@contextmanager
def _failures(what: str) -> Iterator[None]:
    """Re-raise sqlite3/OS failures as a one-sentence ``StateError`` naming what was attempted."""
    try:
        yield
    except (sqlite3.Error, OSError) as exc:
        detail = (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)).strip()
        if "locked" in detail or "busy" in detail:
            detail = f"another writer held the state file (waited up to {BUSY_TIMEOUT_S:g} s)"
        raise StateError(f"The state store could not {what}: {detail.rstrip('.') or type(exc).__name__}.") from exc


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open (SQLite ends some by itself after an error)."""
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass


class Gate:
    """A held write gate: reads and writes inside the gate's own transaction.

    (The store's own observation methods borrow this class over the thread's connection.)
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn: sqlite3.Connection | None = conn

    def _live(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StateError("The write gate was used after it had been released.")
        return self._conn

    def observed_version(self, session_id: str, real_path: str) -> str | None:
        with _failures("read an observation"):
            row = (
                self._live()
                .execute(
                    "SELECT version FROM observations WHERE session = ? AND real_path = ?", (session_id, real_path)
                )
                .fetchone()
            )
        return row[0] if row else None

    def record_observation(self, session_id: str, real_path: str, version: str) -> None:
        with _failures("record an observation"):
            self._live().execute(
                "INSERT INTO observations (session, real_path, version, observed_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (session, real_path) DO UPDATE SET version = excluded.version, "
                "observed_at = excluded.observed_at",
                (session_id, real_path, version, time.time()),
            )

    def move_observations(self, session_id: str, old: str, new: str) -> int:
        """Re-key ``session_id``'s observations of ``old`` and of everything below it to ``new``.

        What the session had observed at ``new`` (and below it) before is dropped: those names now
        hold what was moved there. The versions stay as they were (a rename keeps every inode, and
        a moved folder's files keep their ctimes). Returns how many observations moved.
        """
        below_old, below_new = old + "/", new + "/"
        with _failures("move observations"):
            conn = self._live()
            conn.execute(
                "DELETE FROM observations WHERE session = ? AND (real_path = ? OR substr(real_path, 1, ?) = ?)",
                (session_id, new, len(below_new), below_new),
            )
            cursor = conn.execute(
                "UPDATE observations SET real_path = ? || substr(real_path, ?) "
                "WHERE session = ? AND (real_path = ? OR substr(real_path, 1, ?) = ?)",
                (new, len(old) + 1, session_id, old, len(below_old), below_old),
            )
            return cursor.rowcount

    def observed_below(self, session_id: str, real_prefix: str) -> list[str]:
        """The paths ``session_id`` observed below the folder ``real_prefix``."""
        below = real_prefix.rstrip("/") + "/"
        with _failures("read observations"):
            rows = (
                self._live()
                .execute(
                    "SELECT real_path FROM observations WHERE session = ? AND substr(real_path, 1, ?) = ?",
                    (session_id, len(below), below),
                )
                .fetchall()
            )
        return [row[0] for row in rows]

    def checkpoint(self) -> None:
        """Commit what the gate wrote so far and take the gate again: what was written before is
        durable even if this process dies while it holds the gate after this."""
        with _failures("commit the write gate"):
            conn = self._live()
            conn.execute("COMMIT")
            conn.execute("BEGIN IMMEDIATE")

    def add_journal(
        self, journal: str, root: str, entries: list[tuple[str, str, str, str]], pid: int, host: str
    ) -> None:
        """Record the renames ``(folder, name, tmp, old identity)`` of one change below ``root``, made
        by process ``pid`` (``host`` tells that process from a later one with the same number)."""
        with _failures("record a rename journal"):
            self._live().executemany(
                "INSERT INTO rename_journal (journal, root, pid, host, seq, folder, name, tmp, old) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(journal, root, pid, host, i, *entry) for i, entry in enumerate(entries)],
            )

    def journal_ready(self, journal: str) -> None:
        """Mark the journal's temporary files as all written and synced: from now on it is completed."""
        with _failures("mark a rename journal ready"):
            self._live().execute("UPDATE rename_journal SET ready = 1 WHERE journal = ?", (journal,))

    def drop_journal(self, journal: str) -> None:
        with _failures("drop a rename journal"):
            self._live().execute("DELETE FROM rename_journal WHERE journal = ?", (journal,))

    def journals(self, root: str) -> dict[str, tuple[int, str, bool, list[tuple[str, str, str, str]]]]:
        """The rename journals left below ``root``: id -> (pid, host, ready, entries in order)."""
        with _failures("read the rename journals"):
            rows = (
                self._live()
                .execute(
                    "SELECT journal, pid, host, ready, folder, name, tmp, old FROM rename_journal WHERE root = ? "
                    "ORDER BY journal, seq",
                    (root,),
                )
                .fetchall()
            )
        out: dict[str, tuple[int, str, bool, list[tuple[str, str, str, str]]]] = {}
        for journal, pid, host, ready, folder, name, tmp, old in rows:
            out.setdefault(journal, (pid, host, bool(ready), []))[3].append((folder, name, tmp, old))
        return out


class StateStore:
    """One SQLite state file, safe to use from several threads and several processes at once.

    Why a connection per thread: a sqlite3 connection must not cross threads (nor a fork), and a
    tornado server calls in from a thread pool, so each thread of each process opens its own on
    first use. Why not one per call: when a process's last connection closes, SQLite checkpoints
    and removes the WAL, which would then happen on every call.
    """

    def __init__(self, path: str | os.PathLike, journal: str = "auto") -> None:
        self.path = os.path.abspath(os.fspath(path))
        self._local = threading.local()
        self.filesystem = filesystem_of(os.path.dirname(self.path) or ".")
        if journal == "auto":
            # WAL needs shared memory that every process sees alike; network and FUSE
            # filesystems do not promise that, so the state uses a rollback journal there.
            journal = "delete" if is_network_filesystem(self.filesystem) else "wal"
            if journal == "delete":
                log.warning(
                    "the state file %s is on a %s filesystem: using a rollback journal instead of WAL "
                    "(slower; point state_path at a local disk to avoid it)",
                    self.path,
                    self.filesystem,
                )
        if journal not in ("wal", "delete"):
            raise StateError(f"The state journal must be auto, wal or delete, not {journal!r}.")
        self.journal = journal
        with _failures(f"create the folder of the state file {self.path}"):
            _make_private_dirs(os.path.dirname(self.path))
        with _failures(f"create the state file {self.path}"):
            # 0600 because the call log holds file contents; SQLite gives -wal and -shm the same
            # mode. No O_EXCL: another process creating the file at the same moment is fine.
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        with _failures(f"initialise the state file {self.path}"):
            self._init_schema(self._conn())

    def _open(self) -> sqlite3.Connection:
        # Autocommit (isolation_level=None): multi-statement writes issue BEGIN IMMEDIATE themselves.
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        # Under WAL, NORMAL never corrupts the file; a power cut may lose only the latest commits.
        # A rollback journal needs FULL for the same guarantee.
        conn.execute("PRAGMA synchronous = NORMAL" if self.journal == "wal" else "PRAGMA synchronous = FULL")
        return conn

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection; a forked child opens its own instead of reusing its parent's."""
        local = self._local
        if getattr(local, "pid", None) != os.getpid():
            if getattr(local, "conn", None) is not None:
                _INHERITED.append(local.conn)
            local.conn, local.pid, local.gates = self._open(), os.getpid(), 0
        return local.conn

    def _writer(self) -> sqlite3.Connection:
        """This thread's connection for a write, refused at once if it would wait on our own gate."""
        conn = self._conn()
        if self._local.gates:
            raise StateError("The state store refused a write outside the write gate this thread holds.")
        return conn

    def _init_schema(self, conn: sqlite3.Connection) -> None:
        # While any other connection has a transaction open, SQLite refuses the switch to WAL at
        # once (raising "locked", or just reporting the old mode) without using the busy timeout;
        # a racing creator does exactly that, so retry until the deadline.
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                if conn.execute(f"PRAGMA journal_mode = {self.journal.upper()}").fetchone()[0].lower() == self.journal:
                    break
            except sqlite3.OperationalError:
                if time.monotonic() > deadline:
                    raise
            if time.monotonic() > deadline:
                raise StateError(f"The state file {self.path} could not be switched to {self.journal.upper()} mode.")
            time.sleep(0.005)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StateError(
                f"The state file {self.path} has schema version {version}, newer than "
                f"the {SCHEMA_VERSION} this version of dsh-jupyter understands."
            )
        if version < SCHEMA_VERSION:
            with self._transaction("create the schema") as tx:
                version = tx.execute("PRAGMA user_version").fetchone()[0]  # another process may have won
                if version == 1:
                    for statement in _MIGRATE_1_TO_2.split(";"):
                        tx.execute(statement)
                    version = 2
                if version == 2:
                    for statement in _MIGRATE_2_TO_3.split(";"):
                        tx.execute(statement)
                    version = 3
                if version == 3:
                    for statement in _MIGRATE_3_TO_4.split(";"):
                        tx.execute(statement)
                    version = 4
                if version == 4:
                    tx.execute(_MIGRATE_4_TO_5)
                if version < SCHEMA_VERSION:
                    for statement in _SCHEMA.split(";"):
                        tx.execute(statement)
                    tx.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextmanager
    def _transaction(self, what: str) -> Iterator[sqlite3.Connection]:
        with _failures(what):
            conn = self._writer()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                _rollback(conn)
                raise
            conn.execute("COMMIT")

    # -- sessions ---------------------------------------------------------------------------------

    def ensure_session(self, key: str, root: str, name: str, cwd: str, user: str = "") -> SessionInfo:
        with _failures(f"create session {name!r}"):
            self._writer().execute(
                "INSERT OR IGNORE INTO sessions (key, root, name, cwd, created, user) VALUES (?, ?, ?, ?, ?, ?)",
                (key, root, name, cwd, time.time(), user),
            )
        info = self.get_session(key)
        if info is None:  # another process deleted it between the two statements
            raise StateError(f"The state store lost session {name!r} while creating it.")
        return info

    def get_session(self, key: str) -> SessionInfo | None:
        with _failures("read a session"):
            row = self._conn().execute(f"{_SESSION_INFO} WHERE s.key = ?", (key,)).fetchone()
        return SessionInfo(*row) if row else None

    def list_sessions(self, root: str, user: str | None = None) -> list[SessionInfo]:
        """The sessions of the workspace at ``root`` (and, with ``user``, those that user created)."""
        with _failures("list sessions"):
            if user is None:
                rows = (
                    self._conn()
                    .execute(f"{_SESSION_INFO} WHERE s.root = ? ORDER BY s.created, s.name", (root,))
                    .fetchall()
                )
            else:
                rows = (
                    self._conn()
                    .execute(
                        f"{_SESSION_INFO} WHERE s.root = ? AND s.user = ? ORDER BY s.created, s.name", (root, user)
                    )
                    .fetchall()
                )
        return [SessionInfo(*row) for row in rows]

    def set_cwd(self, key: str, cwd: str) -> None:
        with _failures("set the working folder of a session"):
            cur = self._writer().execute("UPDATE sessions SET cwd = ? WHERE key = ?", (cwd, key))
        if cur.rowcount == 0:
            raise StateError("The state store has no such session to set the folder of.")

    def delete_session(self, key: str) -> list[str]:
        """Delete a session and all it owns; return its spill locators (the caller unlinks the files)."""
        with self._transaction("delete a session") as tx:
            rows = tx.execute(
                "SELECT locator FROM spills WHERE session = ? AND evicted IS NULL ORDER BY created, rowid", (key,)
            ).fetchall()
            for kind, freed in tx.execute(
                "SELECT read_only, COALESCE(SUM(size), 0) FROM calls WHERE session = ? GROUP BY read_only", (key,)
            ).fetchall():
                tx.execute("UPDATE call_totals SET bytes = MAX(0, bytes - ?) WHERE read_only = ?", (freed, kind))
            for table, column in (
                ("observations", "session"),
                ("spills", "session"),
                ("calls", "session"),
                ("sessions", "key"),
            ):
                tx.execute(f"DELETE FROM {table} WHERE {column} = ?", (key,))
        return [row[0] for row in rows]

    # -- observations -----------------------------------------------------------------------------

    def record_observation(self, session_id: str, real_path: str, version: str) -> None:
        with _failures("record an observation"):
            Gate(self._writer()).record_observation(session_id, real_path, version)

    def observed_version(self, session_id: str, real_path: str) -> str | None:
        with _failures("read an observation"):
            return Gate(self._conn()).observed_version(session_id, real_path)

    def observed_below(self, session_id: str, real_prefix: str) -> list[str]:
        with _failures("read observations"):
            return Gate(self._conn()).observed_below(session_id, real_prefix)

    def journals(self, root: str) -> dict[str, tuple[int, str, bool, list[tuple[str, str, str, str]]]]:
        """``Gate.journals``, read outside the gate."""
        return Gate(self._conn()).journals(root)

    @contextmanager
    def write_gate(self) -> Iterator[Gate]:
        """Hold SQLite's write lock for one check-and-write, excluding writers in every process.

        Why BEGIN IMMEDIATE: a plain BEGIN takes no lock until the first write, so two processes
        could both read "version unchanged" and then both write. IMMEDIATE takes the RESERVED lock
        up front, so a second gate (or any write) waits, up to the busy timeout, until this one
        commits (normal exit) or rolls back (any exception). Readers carry on meanwhile (WAL).

        The gate has a connection of its own. While it is held this thread must write through the
        gate: a write through the store would wait on its own lock, so it is refused at once.
        """
        with _failures("open the write gate"):
            self._conn()  # the per-thread bookkeeping, for this process
            conn = self._open()
            try:
                conn.execute("BEGIN IMMEDIATE")
            except BaseException:
                conn.close()
                raise
        gate = Gate(conn)
        self._local.gates += 1
        try:
            yield gate
            with _failures("commit the write gate"):
                conn.execute("COMMIT")
        finally:
            gate._conn = None
            self._local.gates -= 1
            try:  # an exception in the body or a failed COMMIT: never leave the lock held
                _rollback(conn)
            finally:
                conn.close()

    # -- spills -----------------------------------------------------------------------------------

    _SPILL_COLUMNS = "locator, session, tool, size, created, evicted, label, user, visibility"

    def add_spill(
        self,
        key: str,
        locator: str,
        tool: str,
        size: int,
        created: float | None = None,
        label: str = "",
        user: str = "",
        visibility: str | None = None,
    ) -> None:
        with _failures("index a saved result"):
            self._writer().execute(
                "INSERT INTO spills (locator, session, tool, size, created, label, user, visibility) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (locator, key, tool, int(size), time.time() if created is None else created, label, user, visibility),
            )

    def list_spills(self, key: str, user: str | None = None) -> list[SpillRecord]:
        """The session's saved results that are still there, oldest first."""
        query = f"SELECT {self._SPILL_COLUMNS} FROM spills WHERE session = ? AND evicted IS NULL"
        params: tuple = (key,)
        if user is not None:
            query += " AND user = ?"
            params = (key, user)
        with _failures("list saved results"):
            rows = self._conn().execute(query + " ORDER BY created, rowid", params).fetchall()
        return [SpillRecord(*row) for row in rows]

    def spill_record(self, locator: str) -> SpillRecord | None:
        with _failures("look up a saved result"):
            row = (
                self._conn()
                .execute(f"SELECT {self._SPILL_COLUMNS} FROM spills WHERE locator = ?", (locator,))
                .fetchone()
            )
        return SpillRecord(*row) if row else None

    def spill_owner(self, locator: str) -> str | None:
        record = self.spill_record(locator)
        return record.session if record is not None and record.evicted is None else None

    def spill_usage(self, key: str | None = None, user: str | None = None) -> int:
        """Bytes of live saved results: of one session, of one user, or (both None) in all."""
        query = "SELECT COALESCE(SUM(size), 0) FROM spills WHERE evicted IS NULL"
        params: tuple[str, ...] = ()
        if key is not None:
            query, params = query + " AND session = ?", (key,)
        elif user is not None:
            query, params = query + " AND user = ?", (user,)
        with _failures("measure saved results"):
            return int(self._conn().execute(query, params).fetchone()[0])

    def spills_to_evict(
        self,
        *,
        older_than: float,
        key: str,
        session_cap: int,
        total_cap: int,
        user: str | None = None,
        user_cap: int | None = None,
    ) -> list[str]:
        """Live saved results to remove, oldest first, so every limit holds again.

        Past the age limit anywhere; then the oldest of session ``key`` while it holds more than
        ``session_cap`` bytes; then (with ``user``) the oldest of that user past ``user_cap``; then
        the oldest anywhere while all together hold more than ``total_cap`` bytes.
        """
        conn = self._conn()
        with _failures("choose saved results to remove"):
            live = conn.execute(
                "SELECT locator, session, size, created, user FROM spills WHERE evicted IS NULL ORDER BY created, rowid"
            ).fetchall()
        out: list[str] = []
        gone: set[str] = set()

        def drop(row) -> None:
            gone.add(row[0])
            out.append(row[0])

        for row in live:
            if row[3] < older_than:
                drop(row)

        def trim(rows, cap: int) -> None:
            used = sum(r[2] for r in rows if r[0] not in gone)
            for r in rows:
                if used <= cap:
                    break
                if r[0] not in gone:
                    drop(r)
                    used -= r[2]

        trim([r for r in live if r[1] == key], session_cap)
        if user is not None and user_cap is not None:
            trim([r for r in live if r[4] == user], user_cap)
        trim(live, total_cap)
        return out

    def mark_evicted(self, locators: list[str], when: float | None = None) -> None:
        if not locators:
            return
        with self._transaction("mark saved results removed") as tx:
            tx.executemany(
                "UPDATE spills SET evicted = ? WHERE locator = ? AND evicted IS NULL",
                [(time.time() if when is None else when, loc) for loc in locators],
            )

    # -- call log ---------------------------------------------------------------------------------

    def append_call(self, record: CallRecord, limits: CallLogLimits | None = None) -> int:
        """Log one call, then hold the call log within ``limits``, oldest first; the records dropped.

        A read-only caller's records are bounded on their own (``max_bytes_read_only``), so such a
        caller can never push an owner's records out; each session's count bounds both kinds
        alike, the owner's kept first. What is dropped is counted on its session
        (``SessionInfo.dropped_calls``), so a listing can say that older calls are gone.
        """
        try:
            args = json.dumps(record.args, ensure_ascii=False, default=str)
        except (TypeError, ValueError) as exc:
            raise StateError(
                f"The state store could not log call {record.call_id!r}: its args are not JSON ({exc})."
            ) from exc
        size = len(record.text.encode("utf-8", "surrogatepass")) + len(args.encode("utf-8", "surrogatepass"))
        read_only = int(bool(record.read_only))
        with self._transaction(f"log call {record.call_id!r}") as tx:
            tx.execute(
                f"INSERT INTO calls ({_CALL_COLUMNS}, size) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.call_id,
                    record.session,
                    record.tool,
                    args,
                    record.text,
                    int(bool(record.is_error)),
                    record.surface,
                    record.started,
                    record.duration_ms,
                    record.user,
                    read_only,
                    record.visibility,
                    record.open,
                    size,
                ),
            )
            tx.execute("UPDATE call_totals SET bytes = bytes + ? WHERE read_only = ?", (size, read_only))
            return 0 if limits is None else self._trim_calls(tx, record.session, read_only, limits)

    def _trim_calls(self, tx: sqlite3.Connection, key: str, read_only: int, limits: CallLogLimits) -> int:
        doomed: list[tuple[int, str, int, int]] = []  # (seq, session, size, read_only)
        count = tx.execute("SELECT COUNT(*) FROM calls WHERE session = ?", (key,)).fetchone()[0]
        if count > limits.records_per_session:
            doomed += tx.execute(
                "SELECT seq, session, size, read_only FROM calls WHERE session = ? "
                "ORDER BY read_only DESC, seq LIMIT ?",
                (key, count - limits.records_per_session),
            ).fetchall()
        cap = limits.max_bytes_read_only if read_only else limits.max_bytes
        held = tx.execute("SELECT bytes FROM call_totals WHERE read_only = ?", (read_only,)).fetchone()[0]
        held -= sum(d[2] for d in doomed if d[3] == read_only)
        if held > cap:
            gone = {d[0] for d in doomed}
            for row in tx.execute(
                "SELECT seq, session, size, read_only FROM calls WHERE read_only = ? ORDER BY seq", (read_only,)
            ):
                if held <= cap:
                    break
                if row[0] not in gone:
                    doomed.append(row)
                    held -= row[2]
        if not doomed:
            return 0
        tx.executemany("DELETE FROM calls WHERE seq = ?", [(d[0],) for d in doomed])
        for kind in (0, 1):
            freed = sum(d[2] for d in doomed if d[3] == kind)
            if freed:
                tx.execute("UPDATE call_totals SET bytes = MAX(0, bytes - ?) WHERE read_only = ?", (freed, kind))
        per_session: dict[str, int] = {}
        for d in doomed:
            per_session[d[1]] = per_session.get(d[1], 0) + 1
        tx.executemany(
            "UPDATE sessions SET dropped_calls = dropped_calls + ? WHERE key = ?",
            [(n, k) for k, n in per_session.items()],
        )
        return len(doomed)

    def list_calls(self, key: str, offset: int = 0, limit: int = 100, user: str | None = None) -> list[CallRecord]:
        """Calls in the order they were appended, newest last, so pages never shift under a reader."""
        where, params = ("session = ?", (key,)) if user is None else ("session = ? AND user = ?", (key, user))
        with _failures("list the calls of a session"):
            rows = (
                self._conn()
                .execute(
                    f"SELECT {_CALL_COLUMNS} FROM calls WHERE {where} ORDER BY seq LIMIT ? OFFSET ?",
                    (*params, max(0, int(limit)), max(0, int(offset))),
                )
                .fetchall()
            )
            return [_call_from_row(row) for row in rows]

    def count_calls(self, key: str, user: str | None = None) -> int:
        where, params = ("session = ?", (key,)) if user is None else ("session = ? AND user = ?", (key, user))
        with _failures("count the calls of a session"):
            row = self._conn().execute(f"SELECT COUNT(*) FROM calls WHERE {where}", params).fetchone()
        return row[0]


def _call_from_row(row: tuple[Any, ...]) -> CallRecord:
    (
        call_id,
        session,
        tool,
        args,
        text,
        is_error,
        surface,
        started,
        duration_ms,
        user,
        read_only,
        visibility,
        opened,
    ) = row
    return CallRecord(
        call_id,
        session,
        tool,
        json.loads(args),
        text,
        bool(is_error),
        surface,
        started,
        duration_ms,
        user,
        bool(read_only),
        visibility,
        opened,
    )


def _make_private_dirs(folder: str) -> None:
    """Create ``folder`` and its missing parents, each 0700; a racing creator is fine."""
    missing = []
    while not os.path.isdir(folder) and os.path.dirname(folder) != folder:
        missing.append(folder)
        folder = os.path.dirname(folder)
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            if not os.path.isdir(path):
                raise NotADirectoryError(f"{path} exists and is not a folder") from None
