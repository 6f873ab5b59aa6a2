"""The index's compiled library (``grams.c``), loaded through ctypes: the trigram reader, and
glob's list read in one pass (``join``).

Why it exists: a build read every file in Python and gave its text to FTS5's ``trigram``
tokenizer; on a million small files that took ten times rg's pass over them, most of it in the
tokenizer on SQLite's one writing thread and in Python's per-file calls. ``grams.c`` reads a
batch of files and gathers their ASCII trigrams into posting lists in one call, with the
interpreter let go, so the keeper writes the files' rows meanwhile (``tools/indexing/keeper.py``).
Files it does not take (``PYTHON``: not a regular file, over the size setting, UTF-16, a failure)
are read in Python and indexed by FTS5 as before, and so is every file changed after the build.

``join`` serves glob of endings alone (``tools/glob/indexed.py``): the rows of one query of the
index joined by newlines, each top-level entry counted and the lines checked for what may need
quoting, in one pass, where SQLite's ``group_concat`` and a second counting pass took twice as
long on a million files. ``join_times`` does the same from glob's time order, which
``make_times`` and ``Writer.times`` make (``store.py`` says why it is not an SQLite index).

Where the library is missing (no compiler when the package was built, another platform) or cannot
be loaded, ``available()`` is False and the build reads every file in Python, and glob joins its
list in SQL: the same answers, slower. That is logged once per process, as a warning.

What it must never do: answer a list other than the one ``grams.c`` wrote, or hand the C code a
buffer shorter than it is told.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import struct
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import NamedTuple

__all__ = [
    "LIBRARY",
    "PYTHON",
    "SKIP",
    "TEXT",
    "Gatherer",
    "Listed",
    "Read",
    "Writer",
    "available",
    "decode",
    "give_back",
    "gram",
    "join",
    "join_times",
    "make_times",
    "python_only",
    "records",
]

log = logging.getLogger(__name__)

TEXT, SKIP, PYTHON = 0, 3, 4  # what ``Gatherer.read`` made of a path (grams.c's DSH_*)
ABI = 5  # what ``dsh_grams_abi()`` of a library built from this version's grams.c answers
LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"libgrams.so.{ABI}")

_loaded = False
_library = None  # the library, once loaded; None when it could not be
_loading = threading.Lock()
_off = False  # ``python_only``


def _load():
    if _loaded:
        return None if _off else _library
    with _loading:
        _load_once()
    return None if _off else _library


def _load_once() -> None:
    global _loaded, _library
    if _loaded:
        return
    try:
        library = ctypes.CDLL(LIBRARY)
        library.dsh_grams_abi.restype, library.dsh_grams_abi.argtypes = ctypes.c_int, []
        if library.dsh_grams_abi() != ABI:
            raise OSError(f"{LIBRARY} was built from another version of grams.c")
    except (OSError, AttributeError) as exc:
        log.warning(
            "dsh_jupyter: the index's compiled library could not be loaded (%s); the index reads and "
            "indexes files in Python and glob joins its list in SQL (the same answers, slower). Reinstall "
            "dsh-jupyter where a C compiler is found to build it.",
            exc,
        )
        _loaded = True
        return
    p, i64, u32, u64, long = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_long
    library.dsh_grams_new.restype, library.dsh_grams_new.argtypes = p, []
    library.dsh_grams_free.restype, library.dsh_grams_free.argtypes = None, [p]
    library.dsh_grams_bytes.restype, library.dsh_grams_bytes.argtypes = u64, [p]
    library.dsh_grams_count.restype, library.dsh_grams_count.argtypes = u32, [p]
    library.dsh_grams_read.restype = long
    library.dsh_grams_read.argtypes = [p, i64, i64, ctypes.c_char_p, long, long, u32, long, p, p, p, p, p, p]
    library.dsh_grams_flush.restype, library.dsh_grams_flush.argtypes = long, [p, p, long]
    library.dsh_grams_decode.restype, library.dsh_grams_decode.argtypes = long, [ctypes.c_char_p, long, p]
    library.dsh_grams_join.restype = long
    library.dsh_grams_join.argtypes = [
        p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        i64,
        p,
        p,
        p,
        p,
        long,
        i64,
        p,
        p,
        p,
        p,
        long,
        p,
        p,
        long,
        p,
    ]
    library.dsh_grams_join_times.restype = long
    library.dsh_grams_join_times.argtypes = [
        p, ctypes.c_char_p, ctypes.c_int64, ctypes.c_char_p, long, ctypes.c_char_p, p, i64, ctypes.c_char_p, long,
        ctypes.c_char_p, long, i64, p, p, p, p, long, p, p, long, p,
    ]  # fmt: skip
    library.dsh_grams_times_make.restype = long
    library.dsh_grams_times_make.argtypes = [p, ctypes.c_char_p, ctypes.c_char_p, long]
    library.dsh_grams_writer_times.restype = long
    library.dsh_grams_writer_times.argtypes = [p, ctypes.c_char_p, ctypes.c_char_p, long, long]
    library.dsh_grams_release.restype, library.dsh_grams_release.argtypes = None, [p]
    library.dsh_grams_writer_open.restype, library.dsh_grams_writer_open.argtypes = p, [p, ctypes.c_char_p]
    library.dsh_grams_writer_close.restype, library.dsh_grams_writer_close.argtypes = None, [p]
    library.dsh_grams_writer_insert.restype = long
    library.dsh_grams_writer_insert.argtypes = [p, ctypes.c_char_p, long, long, ctypes.c_int64, p, p, p, p, p]
    library.dsh_grams_writer_postings.restype, library.dsh_grams_writer_postings.argtypes = long, [p, p, long]
    _library = library
    _loaded = True  # after _library: a thread that sees it loaded sees the library too


def available() -> bool:
    """Whether the compiled reader is loaded (loading it on first use)."""
    return _load() is not None


@contextlib.contextmanager
def python_only() -> Iterator[None]:
    """Within the block, ``available()`` is False: builds read in Python (tests and benchmarks put
    the two ways side by side; not for use while a build runs)."""
    global _off
    _load()
    _off = True
    try:
        yield
    finally:
        _off = False


def gram(s: str) -> int:
    """The number ``grams.c`` gives the trigram ``s`` (three ASCII characters; A-Z as a-z)."""
    a, b, c = (ord(ch.lower()) if "A" <= ch <= "Z" else ord(ch) for ch in s)
    return (a << 14) | (b << 7) | c


class Read(NamedTuple):
    """What ``Gatherer.read`` made of a batch, a list item per path: what each is (``TEXT``,
    ``SKIP``, ``PYTHON``), and for ``TEXT`` its size, time (ns) and NUL flag (0 or 1); for every
    path its bytes and its extension (``store``'s rule, applied in C: a row needs no Python per
    path)."""

    kinds: list[int]
    sizes: list[int]
    mtimes: list[int]
    nuls: list[int]
    paths: list[bytes]
    exts: list[bytes]
    raw: tuple | None = None  # the C arrays these lists came from, for ``Writer.insert``


class Gatherer:
    """One ``dsh_grams``: reads batches of files and gathers their trigrams until ``flush``.
    For one thread at a time; ``close`` frees it."""

    def __init__(self) -> None:
        library = _load()
        if library is None:
            raise RuntimeError("the compiled trigram reader is not available")
        self._library = library
        self._handle = library.dsh_grams_new()
        if not self._handle:
            raise MemoryError("the trigram reader could not allocate its table")

    def close(self) -> None:
        if self._handle:
            self._library.dsh_grams_free(self._handle)
            self._handle = None

    def __enter__(self) -> Gatherer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def held(self) -> int:
        """Bytes of posting lists gathered since the last flush."""
        return self._library.dsh_grams_bytes(self._handle)

    def read(
        self, root_fd: int, beneath: bool, rels: Sequence[str], first_id: int, max_bytes: int, lists: bool = True
    ) -> Read:
        """Read ``rels`` (relative to ``root_fd``), path i as id ``first_id + i``. ``rels`` may
        carry its paths as bytes already (``block``: NUL-separated, as rg's list gives them).
        ``lists`` False: only ``raw`` (the arrays), for a caller that hands them to ``Writer``:
        the lists are six Python objects a file (0.2-0.3 s of CPU on a million files)."""
        import numpy as np  # a core dependency (through pandas); imported where it is needed

        n = len(rels)
        kinds = np.full(n, PYTHON, dtype=np.int8)
        sizes = np.zeros(n, dtype=np.int64)
        mtimes = np.zeros(n, dtype=np.int64)
        nuls = np.zeros(n, dtype=np.int8)
        block = getattr(rels, "block", None)
        if block is None:
            block = "\0".join(rels).encode("utf-8", "surrogateescape")
        if not n:
            return Read([], [], [], [], [], [])
        if block.count(b"\0") != n - 1:  # a NUL inside a name would shift every id after it
            raise ValueError("a path holds a NUL")
        exts = ctypes.create_string_buffer(len(block) + 1)
        exts_len = ctypes.c_long(0)
        done = self._library.dsh_grams_read(
            self._handle,
            root_fd,
            int(beneath),
            block,
            len(block),
            n,
            first_id,
            max_bytes,
            kinds.ctypes.data,
            sizes.ctypes.data,
            mtimes.ctypes.data,
            nuls.ctypes.data,
            exts,
            ctypes.byref(exts_len),
        )
        if done < 0:
            raise MemoryError("the trigram reader ran out of memory")
        if done != n:
            raise RuntimeError(f"the trigram reader read {done} of {n} paths")
        raw = (block, kinds, sizes, mtimes, nuls, exts)
        if not lists:
            return Read([], [], [], [], [], [], raw)
        return Read(
            kinds.tolist(),
            sizes.tolist(),
            mtimes.tolist(),
            nuls.tolist(),
            block.split(b"\0"),
            exts.raw[: exts_len.value - 1].split(b"\0"),
            raw,
        )

    def flush(self) -> bytearray:
        """The lists gathered (``records`` reads them), and an empty gatherer."""
        library = self._library
        cap = library.dsh_grams_bytes(self._handle) + 8 * library.dsh_grams_count(self._handle)
        out = bytearray(cap)
        wrote = library.dsh_grams_flush(self._handle, (ctypes.c_char * cap).from_buffer(out) if cap else None, cap)
        if wrote < 0:
            raise RuntimeError("the trigram reader's lists outgrew what it said they hold")
        del out[wrote:]
        return out


def records(flushed: bytearray) -> Iterator[tuple[int, bytes]]:
    """Each list of a ``flush``: its gram and its varints (grams.c writes both numbers in the
    machine's order)."""
    view = memoryview(flushed)
    at, end = 0, len(flushed)
    while at < end:
        gram_ = int.from_bytes(view[at : at + 4], sys.byteorder)
        size = int.from_bytes(view[at + 4 : at + 8], sys.byteorder)
        yield gram_, bytes(view[at + 8 : at + 8 + size])
        at += 8 + size


def decode(blob: bytes):
    """The ids of one list (numpy uint32, ascending)."""
    import numpy as np

    library = _load() or _library
    if library is None:
        raise RuntimeError("the compiled trigram reader is not available")
    out = np.empty(len(blob), dtype=np.uint32)
    n = library.dsh_grams_decode(blob, len(blob), out.ctypes.data)
    if n < 0:
        raise ValueError("a posting list is malformed")
    return out[:n]


def give_back() -> None:
    """Hand the memory a build freed back to the system (glibc's ``malloc_trim``): the reading
    threads' allocator arenas keep what the posting lists held otherwise, and SQLite's sorter
    what it sorted the indexes with, and the process would stay tens of MiB bigger for its whole
    life. Nothing where the C library has no such call."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim.restype, trim.argtypes = ctypes.c_int, [ctypes.c_size_t]
    trim(0)


# grams.c's JOIN_* bits
_NOT_ASCII, _LOOK, _LINE_BREAK, _MANY = 1, 2, 4, 8
_SQL_FUNCTIONS = (
    "sqlite3_open_v2",
    "sqlite3_close_v2",
    "sqlite3_prepare_v2",
    "sqlite3_bind_blob",
    "sqlite3_bind_int64",
    "sqlite3_step",
    "sqlite3_column_blob",
    "sqlite3_column_bytes",
    "sqlite3_finalize",
    "sqlite3_exec",
    "sqlite3_reset",
    "sqlite3_column_int64",
)
_sql_api: ctypes.Array | None = None
_sql_api_tried = False


def _sql_functions() -> ctypes.Array | None:
    """The addresses of the SQLite functions ``dsh_grams_join`` calls, from the library Python's
    ``sqlite3`` module loaded (a handle's symbols include its dependencies'): the same copy of
    SQLite, whose locks the module's connections share. None where they are not exported (a
    module with SQLite built in and hidden): glob then joins in SQL."""
    global _sql_api, _sql_api_tried
    if _sql_api_tried:
        return _sql_api
    with _loading:
        if not _sql_api_tried:
            try:
                import _sqlite3

                module = ctypes.CDLL(_sqlite3.__file__)
                addresses = [ctypes.cast(getattr(module, name), ctypes.c_void_p).value for name in _SQL_FUNCTIONS]
                _sql_api = (ctypes.c_void_p * len(addresses))(*addresses)
            except (ImportError, OSError, AttributeError) as exc:
                log.info("dsh_jupyter: glob's list is joined by SQLite (its functions are not reachable: %s)", exc)
            _sql_api_tried = True
    return _sql_api


class Listed(NamedTuple):
    """What ``join`` read: how many rows (``rows``), their paths joined by newlines (UTF-8 or not), and what
    the pass saw of them. ``groups``: each top-level entry (a line up to its first "/", or the
    whole line) with its count, folders as ``name/``, in the order first met; None past ``most``."""

    rows: int
    joined: bytes
    ascii: bool  # every byte below 0x80
    bare: bool  # no line needs a closer look to print bare (quoting.py's rules, for ASCII)
    line_break: bool  # a path holds a line break (or is empty below the cut): the lines lie
    groups: list[tuple[bytes, int]] | None


def join(db_path: str, sql: str, params: list, cut: int, most: int, sep: bytes = b"\n") -> Listed | None:
    """``sql`` (one column, a path as a BLOB; ``params`` bytes or ints) on the index file
    ``db_path``, each row from byte ``cut`` on, joined by ``sep`` (one byte) in one pass in C
    (``dsh_grams_join``); None when the compiled library or SQLite's functions are not here, or
    the query failed (the caller joins in SQL then)."""
    library = _load()
    api = _sql_functions() if library is not None else None
    if library is None or api is None:
        return None
    n = len(params)
    kinds = (ctypes.c_int * max(n, 1))()
    blobs = (ctypes.c_void_p * max(n, 1))()
    lens = (ctypes.c_int * max(n, 1))()
    ints = (ctypes.c_int64 * max(n, 1))()
    keep = []  # the parameters' buffers live until the call returns
    for i, value in enumerate(params):
        if isinstance(value, bytes):
            buf = ctypes.create_string_buffer(value, len(value))
            keep.append(buf)
            kinds[i], blobs[i], lens[i] = 0, ctypes.addressof(buf), len(value)
        else:
            kinds[i], ints[i] = 1, int(value)
    return _listed(
        library, most, lambda out: library.dsh_grams_join(
            api, os.fsencode(db_path), sql.encode(), n, kinds, blobs, lens, ints, cut, sep[0], *out
        )
    )  # fmt: skip


def _listed(library, most: int, call) -> Listed | None:
    """Calls a joining function of the library (``call`` given the output arguments they share:
    the list, its length, the flags, and the top-level entries' room, counts and number) and
    reads what it gave; None when it failed other than for memory."""
    out = ctypes.c_void_p()
    out_len = ctypes.c_long()
    flags = ctypes.c_int()
    keys_cap = most * 256 + 1  # a name is at most 255 bytes, and a NUL
    keys = ctypes.create_string_buffer(keys_cap)
    counts = (ctypes.c_int64 * max(most, 1))()
    dirs = (ctypes.c_int8 * max(most, 1))()
    nkeys = ctypes.c_long()
    rows = call(
        (ctypes.byref(out), ctypes.byref(out_len), ctypes.byref(flags), keys, keys_cap, counts, dirs, most,
         ctypes.byref(nkeys))
    )  # fmt: skip
    if rows < 0:
        if rows == -2:
            raise MemoryError("glob's list outgrew the memory")
        log.info("dsh_jupyter: glob's list could not be read in C; it is joined by SQLite")
        return None
    try:
        joined = ctypes.string_at(out, out_len.value) if out_len.value else b""
    finally:
        library.dsh_grams_release(out)
    f = flags.value
    groups = None
    if not f & _MANY:
        parts = keys.raw.split(b"\0", nkeys.value)[: nkeys.value]
        groups = [(name + b"/" if dirs[i] else name, counts[i]) for i, name in enumerate(parts)]
    return Listed(rows, joined, not f & _NOT_ASCII, not f & _LOOK, bool(f & _LINE_BREAK), groups)


TIMES_HEAD = struct.Struct("=qII")  # an entry of the time order: its time, row id and path length


def make_times(db_path: str, times_path: str, block_bytes: int) -> int | None:
    """The index file's time order made again (``dsh_grams_times_make``: every row of ``files``
    read and sorted in C, written as blocks of about ``block_bytes`` into the file ``times_path``,
    then ``gone`` emptied and ``times_max`` set, on connections of its own); how many files it
    holds. None where the library or SQLite's functions are not here, or it could not (the
    index's ``times_max`` is left as it was then)."""
    library = _load()
    api = _sql_functions() if library is not None else None
    if library is None or api is None:
        return None
    made = library.dsh_grams_times_make(api, os.fsencode(db_path), os.fsencode(times_path), block_bytes)
    return _time_order_made(made, "the index's time order could not be made (%d); glob sorts in SQLite")


def _time_order_made(made: int, failed: str) -> int | None:
    """The entries a time order was made with, or None (``failed`` logged with the code); raises
    where memory ran out."""
    if made == -2:
        raise MemoryError("the index's time order outgrew the memory")
    if made < 0:
        log.info("dsh_jupyter: " + failed, made)
        return None
    return made


def join_times(
    times_path: str,
    times_max: int,
    prefix: bytes,
    endings: list[bytes],
    gone: bytes,
    added: bytes,
    most: int,
    sep: bytes = b"\n",
) -> Listed | None:
    """What ``join`` gives of the files below ``prefix`` (bytes ending in "/", or empty) ending in
    one of ``endings`` (none: all), oldest first and equal times by path, read from the index's
    time order in ``times_path`` (``dsh_grams_join_times``), made when the index's largest id was
    ``times_max``: its entries but those whose id is set in the bitmap ``gone``, merged with
    ``added`` (entries of the rows since, in the same form and order). None where the library is
    not here, or the blocks are missing, of another ``times_max`` or cannot be read (the caller
    asks SQLite)."""
    library = _load()
    api = _sql_functions() if library is not None else None
    if library is None or api is None:
        return None
    ends = b"".join(endings)
    end_lens = (ctypes.c_long * max(len(endings), 1))(*map(len, endings))
    return _listed(
        library, most, lambda out: library.dsh_grams_join_times(
            api, os.fsencode(times_path), times_max, prefix, len(prefix), ends, end_lens, len(endings), gone, len(gone),
            added, len(added), sep[0], *out
        )
    )  # fmt: skip


class Writer:
    """A connection of C's own to an index file being built, that writes the rows of the files the
    compiled reader took straight from its arrays (``dsh_grams_writer_insert``), a batch a
    transaction, and the reading threads' posting lists straight from a flush's bytes
    (``postings``); the keeper's connection writes the rest in turn, on the same thread. Through
    ``executemany`` a row cost six times SQLite's own insert (binding seven parameters from
    Python objects). ``open`` gives None where the library or SQLite's functions are not here;
    ``close`` before the file is switched to its write-ahead log."""

    def __init__(self, library, handle: int) -> None:
        self._library = library
        self._handle: int | None = handle
        self._noted: list[bytes] = []  # entries of the rows the keeper's connection wrote

    @classmethod
    def open(cls, db_path: str) -> Writer | None:
        library = _load()
        api = _sql_functions() if library is not None else None
        if library is None or api is None:
            return None
        handle = library.dsh_grams_writer_open(api, os.fsencode(db_path))
        if not handle:
            log.info("dsh_jupyter: the index's rows could not be written from C; they go through Python")
            return None
        return cls(library, handle)

    def insert(self, read: Read, first_id: int) -> int:
        """The rows of ``read``'s ``TEXT`` paths (path i as id ``first_id + i``), in one transaction."""
        assert self._handle is not None and read.raw is not None
        block, kinds, sizes, mtimes, nuls, exts = read.raw
        done = self._library.dsh_grams_writer_insert(
            self._handle, block, len(block), len(kinds), first_id,
            kinds.ctypes.data, sizes.ctypes.data, mtimes.ctypes.data, nuls.ctypes.data, exts,
        )  # fmt: skip
        if done < 0:
            raise RuntimeError("the index's rows could not be written from C")
        return done

    def postings(self, flushed: bytearray) -> int:
        """The lists of one ``Gatherer.flush``, a row of ``postings`` per gram (as
        ``IndexStore.add_postings`` writes them), in one transaction; how many."""
        assert self._handle is not None
        if not flushed:
            return 0
        view = (ctypes.c_char * len(flushed)).from_buffer(flushed)
        done = self._library.dsh_grams_writer_postings(self._handle, ctypes.addressof(view), len(flushed))
        if done < 0:
            raise RuntimeError("the index's posting lists could not be written from C")
        return done

    def note(self, rows: list[tuple]) -> None:
        """Rows the keeper's connection wrote during the build (``IndexStore.add``'s tuples), for
        ``times``: the few files the compiled reader left to Python."""
        head = TIMES_HEAD.pack
        self._noted.append(b"".join(head(r[3], r[0], len(r[1])) + r[1] for r in rows))

    def times(self, times_path: str, block_bytes: int) -> int | None:
        """The build's time order (``IndexStore.built`` says what it is) from the rows this writer
        inserted and those ``note`` was given, sorted in C and written into ``times_path`` once
        the table holds exactly those rows (``make_times`` says how); how many. None where it
        could not (the caller reads the rows from the file instead)."""
        assert self._handle is not None
        extra = b"".join(self._noted)
        made = self._library.dsh_grams_writer_times(
            self._handle, os.fsencode(times_path), extra, len(extra), block_bytes
        )
        return _time_order_made(made, "the build's time order could not be made from its rows (%d)")

    def close(self) -> None:
        if self._handle:
            self._library.dsh_grams_writer_close(self._handle)
            self._handle = None
