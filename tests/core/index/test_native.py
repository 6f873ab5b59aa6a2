"""The index's compiled trigram reader (grams.c) on real files: what it reads, what it leaves to
Python, and that its posting lists hold exactly the ASCII trigrams of the text Python would index.

The reference is written here from the rule, not from the C: the text as ``files.decode`` makes
it (the FTS5 way), a NUL as a space, folded to ASCII lower case, every window of three ASCII
characters.
"""

from __future__ import annotations

import os
import random

import pytest

from dsh_jupyter.core.index import native
from dsh_jupyter.core.index.store import FileRow, IndexStore, posted_ids
from dsh_jupyter.core.tools.indexing.files import FileReader, decode, read_batch

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled trigram reader was not built here")

MAX = 4096


def _reference(data: bytes) -> set[int]:
    text = decode(data).replace("\0", " ")
    folded = "".join(c.lower() if "A" <= c <= "Z" else c for c in text)
    return {native.gram(folded[i : i + 3]) for i in range(len(folded) - 2) if folded[i : i + 3].isascii()}


def _postings(flushed: bytearray) -> dict[int, set[int]]:
    """id -> its grams, from a flush."""
    out: dict[int, set[int]] = {}
    for gram, blob in native.records(flushed):
        ids = native.decode(blob)
        assert list(ids) == sorted(set(ids.tolist())), "a list's ids ascend, each once"
        for i in ids.tolist():
            out.setdefault(i, set()).add(gram)
    return out


def _lists(flushed: bytearray) -> int:
    return sum(1 for _ in native.records(flushed))


def _random_bytes(rng: random.Random) -> bytes:
    pieces = [b"Hello World ", b"caf\xc3\xa9 ", b"\x00", b"\xff\xfe"[rng.randrange(2) :], b"\xe2\x82\xac",
              b"ABCdef\n", b"\xc0A", b"\x80\x80", b"x" * rng.randrange(5), b"K\xe2\x84\xaaS"]  # fmt: skip
    return b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 40)))


def test_the_lists_hold_exactly_the_ascii_trigrams_of_the_text_python_would_index(tmp_path):
    rng = random.Random(7)
    contents = {}
    for i in range(300):
        data = _random_bytes(rng)
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            data = b" " + data  # a leading byte-order mark is Python's (below)
        contents[f"d{i % 7}/f{i}.txt"] = data
    for rel, data in contents.items():
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    rels = sorted(contents)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with native.Gatherer() as g:
            kinds, sizes, mtimes, nuls, *_ = g.read(fd, True, rels, 1, MAX)
            assert g.held() > 0
            got = _postings(g.flush())
            assert g.held() == 0 and g.flush() == bytearray()  # emptied
    finally:
        os.close(fd)
    assert kinds == [native.TEXT] * len(rels)
    for i, rel in enumerate(rels):
        data = contents[rel]
        st = os.stat(tmp_path / rel)
        assert (sizes[i], mtimes[i], nuls[i]) == (len(data), st.st_mtime_ns, int(b"\0" in data)), rel
        assert got.get(i + 1, set()) == _reference(data), rel
    assert any(b"\xc3\xa9" in d or b"\x00" in d for d in contents.values())


def test_what_it_leaves_to_python_and_what_it_skips(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "plain.txt").write_bytes(b"plain text\n")
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "utf16.txt").write_bytes("\ufeffhello".encode("utf-16-le"))
    (tmp_path / "big.txt").write_bytes(b"a" * (MAX + 1))
    (tmp_path / "exact.txt").write_bytes(b"b" * MAX)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "outside.txt").write_bytes(b"outside text")
    (tmp_path / "link.txt").symlink_to(tmp_path / "outside.txt")
    (tmp_path / "linkdir").symlink_to(tmp_path / "sub")
    (tmp_path / "sub" / "in.txt").write_bytes(b"inside")
    rels = ["plain.txt", "empty.txt", "utf16.txt", "big.txt", "exact.txt", "fifo", "link.txt", "sub",
            "linkdir/in.txt", "plain.txt/x", "gone/x.txt", "gone.txt", "sub/in.txt"]  # fmt: skip
    want = {
        "plain.txt": native.TEXT,
        "empty.txt": native.TEXT,
        "utf16.txt": native.PYTHON,  # transcoded in Python, as rg does
        "big.txt": native.PYTHON,  # over the size setting: Python records it unread
        "exact.txt": native.TEXT,
        "fifo": native.PYTHON,  # never opened for long (O_NONBLOCK), not a regular file
        "link.txt": native.PYTHON,  # a symlink is not followed; Python words it
        "sub": native.PYTHON,
        "linkdir/in.txt": native.SKIP,  # below a symlink: not a file rg's walk lists
        "plain.txt/x": native.SKIP,  # below a file
        "gone/x.txt": native.PYTHON,  # Python says it could not be read
        "gone.txt": native.PYTHON,
        "sub/in.txt": native.TEXT,
    }
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for beneath in (True, False):
            with native.Gatherer() as g:
                kinds, *_ = g.read(fd, beneath, rels, 10, MAX)
                assert dict(zip(rels, kinds, strict=True)) == want, beneath
                posted = _postings(g.flush())
            assert set(posted) == {10 + rels.index(r) for r in ("plain.txt", "exact.txt", "sub/in.txt")}
            with FileReader(fd, MAX, beneath) as reader:  # and what a build makes of them all
                files, _ = read_batch(reader, None, rels, 10)
                with native.Gatherer() as g2:
                    files2, texts2 = read_batch(reader, g2, rels, 10)
            assert files2 == files  # the same rows, under the same ids
            assert [t[0] for t in texts2] == [10 + rels.index("utf16.txt")]  # only Python's own go to FTS5
            assert {f[1] for f in files}.isdisjoint({b"linkdir/in.txt", b"plain.txt/x"})
    finally:
        os.close(fd)


def test_a_path_holding_a_nul_is_refused_and_a_bad_list_is_named(tmp_path):
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with native.Gatherer() as g, pytest.raises(ValueError, match="holds a NUL"):
            g.read(fd, True, ["a\0b", "c"], 1, MAX)
    finally:
        os.close(fd)
    with pytest.raises(ValueError, match="malformed"):
        native.decode(b"\x81")  # a varint that never ends
    assert native.decode(b"\x05\x01\x80\x01").tolist() == [5, 6, 134]


def test_the_store_answers_from_postings_and_fts5_alike(tmp_path):
    """The same files indexed both ways give the same candidates; a file changed after the build
    moves to FTS5 and its old postings reach nothing."""
    rng = random.Random(3)
    words = ["alpha", "Beta", "gamma", "DELTA", "zq_needle", "café", "naïve", "x\0y"]
    texts = {f"p{i // 50}/f{i}.txt": " ".join(rng.choice(words) for _ in range(6)) for i in range(400)}
    for rel, text in texts.items():
        (tmp_path / "t" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "t" / rel).write_text(text)
    rels = sorted(texts)
    fd = os.open(tmp_path / "t", os.O_RDONLY | os.O_DIRECTORY)
    stores = {}
    try:
        for way in ("native", "python"):
            store = stores[way] = IndexStore(str(tmp_path / f"{way}.sqlite"))
            with FileReader(fd, MAX, True) as reader, native.Gatherer() as g:
                files, fts = read_batch(reader, g if way == "native" else None, rels, store.reserve(len(rels)))
                store.begin()
                store.add(files, fts)
                store.add_postings(g.flush())
                store.commit()
            store.built()
    finally:
        os.close(fd)
    assert stores["native"].db.execute("SELECT count(*) FROM postings").fetchone()[0] > 0
    assert stores["python"].db.execute("SELECT count(*) FROM postings").fetchone()[0] == 0
    queries = [("lit", "alpha"), ("lit", "zq_needle"), ("lit", "beta gam"), ("lit", "caf"), ("lit", "x y"),
               ("and", (("lit", "alpha"), ("lit", "delta"))), ("or", (("lit", "gamma"), ("lit", "zq_"))),
               ("lit", "nope")]  # fmt: skip
    for q in queries:
        want = sorted(r.path for r in stores["python"].candidates(q))
        assert sorted(r.path for r in stores["native"].candidates(q)) == want, q
        assert want == sorted(r for r, t in texts.items() if _holds(t, q)), q
    store = stores["native"]
    changed = next(r for r in rels if "alpha" in texts[r].lower())
    store.begin()
    store.upsert([(FileRow(changed, 5, 1, 0, False), "other")])
    store.commit()
    assert changed not in {r.path for r in store.candidates(("lit", "alpha"))}
    assert [r.path for r in store.candidates(("lit", "other"))] == [changed]
    assert posted_ids(store.db, ("lit", "zzz")).tolist() == [] and posted_ids(store.db, ("all",)) is None
    for s in stores.values():
        s.close()


def _holds(text: str, q) -> bool:
    t = text.lower().replace("\0", " ")
    if q[0] == "lit":
        return all(q[1][i : i + 3] in t for i in range(len(q[1]) - 2) if q[1][i : i + 3].isascii())
    parts = [_holds(text, p) for p in q[1]]
    return all(parts) if q[0] == "and" else any(parts)


def test_python_only_turns_the_build_to_python(tmp_path):
    with native.python_only():
        assert not native.available()
    assert native.available()


def test_a_path_that_climbs_out_is_never_read(tmp_path):
    """rg never lists ``..``; were one handed over, neither way of opening a folder leaves the root."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "secret.txt").write_bytes(b"outside secret")
    rels = ["../secret.txt", "sub/../../secret.txt", "./../secret.txt"]
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for beneath in (True, False):
            with native.Gatherer() as g:
                kinds, *_ = g.read(fd, beneath, rels, 1, MAX)
                assert native.TEXT not in kinds, (beneath, kinds)
                assert g.flush() == bytearray()
    finally:
        os.close(fd)


def test_each_paths_extension_is_the_stores(tmp_path):
    """The rows the compiled reader makes carry the extension ``store._ext`` gives, byte for byte."""
    from dsh_jupyter.core.index.store import _ext

    rels = ["a.tar.gz", ".bashrc", "dir.d/file", "dir.d/.hidden", "noext", "x.", "b.c/d/e", "é.py",
            "sub/\udcff.bin", "sub/.", "deep/er/name.with.dots.txt", "a" * 200 + ".md"]  # fmt: skip
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with native.Gatherer() as g:
            got = g.read(fd, True, rels, 1, MAX)
    finally:
        os.close(fd)
    blobs = [os.fsencode(r) for r in rels]
    assert got.paths == blobs
    assert got.exts == [_ext(b) for b in blobs]
    assert got.exts[:4] == [b".gz", b".bashrc", b"", b".hidden"]


_NAMES = [
    "src/a.py", "src/b c.py", "src/x/y.py", "a.py", "a.b.py", "a/z.py", " lead.py", "trail .py", "mail@.py",
    'quo"te.py', "tag</b.py", "tag<b.py", "back\\slash.py", "café/é.py", "tab\tin.py", "new\nline.py",
    "docs/readme.md", "src/notes.md", "\udcff.py", "deep/er/still/more.py",
]  # fmt: skip


def _names_store(tmp_path, names, seed=0):
    rng = random.Random(seed)
    store = IndexStore(str(tmp_path / f"i{seed}.sqlite"))
    store.begin()
    store.upsert([(FileRow(n, 1, rng.choice([5, 5, rng.randrange(100)]), 0, False), "") for n in names])
    store.commit()
    store.built()
    return store


@pytest.mark.parametrize("seed", range(40))
def test_the_list_read_in_c_is_sqls_list_with_its_counts_and_flags(tmp_path, seed):
    """``listed_by_time`` (one pass in C) gives what ``joined_by_time`` and ``groups`` give in SQL,
    in the same order, and its flags say what Python's own checks say of the same lines."""
    from dsh_jupyter.core.text.quoting import _bare_block, needs_quoting

    rng = random.Random(seed)
    names = rng.sample(_NAMES, rng.randint(1, len(_NAMES)))
    names += [f"p{rng.randrange(4)}/f{i}.{rng.choice(['py', 'md'])}" for i in range(rng.randint(0, 60))]
    store = _names_store(tmp_path, names, seed)
    db = store.reader()
    try:
        for prefix, endings in [("", (".py",)), ("", (".py", ".md")), ("src", (".py",)), ("", ("",)), ("p1", (".md",))]:
            listed = store.listed_by_time(prefix, endings, 2000)
            assert listed is not None
            count, blob = store.joined_by_time(db, prefix, endings)
            assert (listed.rows, listed.joined) == (count, blob), (prefix, endings)
            groups = store.groups(prefix, endings, 2000)
            mine = [
                (name.removesuffix(b"/").decode("utf-8", "surrogateescape"), n) for name, n in sorted(listed.groups)
            ]
            assert mine == groups, (prefix, endings)
            lines = blob.decode("utf-8", "surrogateescape").split("\n") if count else []
            below = [
                n[len(prefix) + 1 :] if prefix else n for n in names if n.startswith(prefix + "/" if prefix else "")
            ]
            kept = [n for n in below if any(n.endswith(e) for e in endings)]
            assert listed.line_break == any("\n" in n for n in kept)
            assert listed.ascii == blob.isascii()
            if listed.ascii and not listed.line_break and count:
                # the same verdict as the check of a joined block, and never bare where a name is not
                assert listed.bare == _bare_block(lines_text := "\n".join(lines), count), lines
                assert not listed.bare or not any(needs_quoting(line) for line in lines_text.split("\n"))
    finally:
        db.close()
        store.close()


def test_a_list_of_more_entries_than_asked_counts_none_and_python_only_reads_it_in_sql(tmp_path):
    store = _names_store(tmp_path, [f"e{i}/f.py" for i in range(30)] + [f"top{i}.py" for i in range(5)])
    try:
        listed = store.listed_by_time("", (".py",), 34)
        assert listed is not None and listed.rows == 35 and listed.groups is None
        groups = store.listed_by_time("", (".py",), 35).groups
        assert sorted(groups) == sorted(
            [(f"e{i}/".encode(), 1) for i in range(30)] + [(f"top{i}.py".encode(), 1) for i in range(5)]
        )
        with native.python_only():
            assert store.listed_by_time("", (".py",), 35) is None  # glob joins in SQL then
    finally:
        store.close()


def test_finds_list_read_in_c_holds_what_sql_joins(tmp_path):
    """``IndexStore.joined`` (find's list, NUL-separated, in no set order) read in C holds the
    same paths as SQLite's ``group_concat``, line breaks and bytes past UTF-8 included."""
    names = [n for n in _NAMES if "\0" not in n] + [f"p{i % 3}/f{i}.txt" for i in range(50)]
    store = _names_store(tmp_path, names, 1)
    try:
        for prefix in ("", "src", "p2", "none"):
            mine = store.joined(prefix)
            with native.python_only():
                theirs = store.joined(prefix)
            assert sorted(mine.split("\0")) == sorted(theirs.split("\0")), prefix
            below = [n[len(prefix) + 1 :] if prefix else n for n in names if not prefix or n.startswith(prefix + "/")]
            assert sorted(mine.split("\0")) == sorted(below or [""]), prefix
    finally:
        store.close()


@pytest.mark.parametrize("count", [300, 64, 65, 63, 1, 0])
def test_rows_written_from_c_are_the_rows_python_writes(tmp_path, count):
    """A batch written by ``native.Writer`` (from the reader's arrays, on a connection of its own)
    leaves the same ``files`` rows as ``IndexStore.add`` of ``read_batch``'s tuples, with the
    files the reader leaves to Python (a FIFO, one over the size setting, UTF-16) written by the
    keeper's connection in turn; both connections commit, so the store sees every row. The writer
    inserts 64 rows a statement and the rest one at a time: counts of text files around 64, with
    the others among them, take both ways."""
    from dsh_jupyter.core.tools.indexing.files import read_batch_for_writer

    root = tmp_path / "t"
    (root / "d").mkdir(parents=True)
    rels = []
    for i in range(count):
        rel = f"d/f{i}.{'py' if i % 3 else 'txt'}"
        (root / rel).write_bytes(b"x\0y" if i % 50 == 7 else f"text {i}".encode())
        rels.append(rel)
    (root / "big.txt").write_bytes(b"z" * (MAX + 1))
    (root / "wide.txt").write_bytes("\ufeffhi".encode("utf-16"))
    os.mkfifo(root / "pipe")
    for at, rel in zip((count // 2, 1, count, 0), ["big.txt", "wide.txt", "pipe", "gone.txt"], strict=True):
        rels.insert(min(at, len(rels)), rel)  # the files left to Python among the text files
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    tables = {}
    try:
        for way in ("python", "c"):
            store = IndexStore(str(tmp_path / f"{way}.sqlite"), building=True)
            writer = native.Writer.open(store.path) if way == "c" else None
            assert (writer is not None) == (way == "c")
            with FileReader(fd, MAX, True) as reader, native.Gatherer() as g:
                first = store.reserve(len(rels))
                if writer is not None:
                    got, rows, texts = read_batch_for_writer(reader, g, rels, first)
                    assert got.kinds == [] and got.raw is not None  # the arrays alone: no list per file
                    assert writer.insert(got, first) == int((got.raw[1] == native.TEXT).sum()) == count
                    writer.close()
                else:
                    rows, texts = read_batch(reader, g, rels, first)
                store.begin()
                store.add(rows, texts)
                store.commit()
            store.built()
            tables[way] = store.db.execute("SELECT * FROM files ORDER BY id").fetchall()
            store.close()
    finally:
        os.close(fd)
    paths = {row[1] for row in tables["c"]}
    assert {b"big.txt", b"wide.txt", b"pipe"} <= paths and len(paths) == len(tables["c"]) == count + 3
    assert tables["c"] == tables["python"]


def _building_with_writer(tmp_path, root) -> tuple[IndexStore, native.Writer, int]:
    """A new index file being built, a ``Writer`` on it, and a descriptor of ``root``."""
    store = IndexStore(str(tmp_path / "i.sqlite"), building=True)
    writer = native.Writer.open(store.path)
    assert writer is not None
    return store, writer, os.open(root, os.O_RDONLY | os.O_DIRECTORY)


def test_a_batch_the_writer_cannot_write_leaves_no_row_of_it(tmp_path):
    """A statement that fails part way (here the same ids written again) rolls the whole batch
    back: none of its rows stays, whether it failed in a statement of 64 rows or of one."""
    from dsh_jupyter.core.tools.indexing.files import read_batch_for_writer

    root = tmp_path / "t"
    root.mkdir()
    rels = [f"f{i}.txt" for i in range(70)]
    for rel in rels:
        (root / rel).write_text(rel)
    store, writer, fd = _building_with_writer(tmp_path, root)
    try:
        with FileReader(fd, MAX, True) as reader, native.Gatherer() as g:
            got, _, _ = read_batch_for_writer(reader, g, rels, 1)
            assert writer.insert(got, 1) == 70
            later, _, _ = read_batch_for_writer(reader, g, rels[:6], 200)
            assert writer.insert(later, 200) == 6
            for first in (
                1,
                136,
                131,
            ):  # a clash in the statement of 64 rows, in the first row after it, in the last row
                with pytest.raises(RuntimeError):
                    writer.insert(got, first)
    finally:
        os.close(fd)
        writer.close()
    ids = [i for (i,) in store.db.execute("SELECT id FROM files ORDER BY id")]
    store.close()
    assert ids == [*range(1, 71), *range(200, 206)]


def test_posting_lists_written_from_c_are_the_rows_python_writes(tmp_path):
    """``Writer.postings`` writes a flush's lists as the rows ``IndexStore.add_postings`` writes:
    the same grams, the same varints, in the same order; and a query of the store reads the same
    files from them. Two flushes (a gatherer flushed part way, then at the end), as a build's."""
    root = tmp_path / "t"
    root.mkdir()
    rng = random.Random(3)
    rels = []
    for i in range(400):
        rels.append(f"f{i}.txt")
        (root / rels[-1]).write_bytes(b"x " + _random_bytes(rng) + f" needle{i % 7} ".encode())  # no BOM first
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    flushes = []
    try:
        with FileReader(fd, MAX, True) as reader, native.Gatherer() as g:
            read_batch(reader, g, rels[:250], 1)
            flushes.append(g.flush())
            read_batch(reader, g, rels[250:], 251)
            flushes.append(g.flush())
    finally:
        os.close(fd)
    assert all(flushes)
    tables = {}
    for way in ("python", "c"):
        store = IndexStore(str(tmp_path / f"{way}.sqlite"), building=True)
        writer = native.Writer.open(store.path) if way == "c" else None
        for flushed in flushes:
            if writer is not None:
                assert writer.postings(flushed) == _lists(flushed)
            else:
                store.begin()
                store.add_postings(flushed)
                store.commit()
        if writer is not None:
            assert writer.postings(bytearray()) == 0
            writer.close()
        store.built()
        tables[way] = store.db.execute("SELECT gram, ids FROM postings ORDER BY rowid").fetchall()
        ids = posted_ids(store.db, ("lit", "needle3"))
        assert sorted(ids.tolist()) == [i + 1 for i in range(400) if i % 7 == 3]
        store.close()
    assert len(tables["c"]) == sum(map(_lists, flushes))
    assert tables["c"] == tables["python"]


def test_a_flush_the_writer_cannot_read_whole_leaves_no_list_of_it(tmp_path):
    """A flush whose last list claims more bytes than it holds, or that ends inside a list's head,
    is refused whole: none of its lists is written, and the lists written before stay."""
    root = tmp_path / "t"
    root.mkdir()
    (root / "a.txt").write_text("alpha beta gamma")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with FileReader(fd, MAX, True) as reader, native.Gatherer() as g:
            read_batch(reader, g, ["a.txt"], 1)
            flushed = g.flush()
    finally:
        os.close(fd)
    store = IndexStore(str(tmp_path / "i.sqlite"), building=True)
    writer = native.Writer.open(store.path)
    assert writer is not None
    try:
        good = writer.postings(flushed)
        assert good == _lists(flushed) > 3
        for bad in (flushed[:-1], flushed[:-3], flushed + b"\1\0\0\0\1"):  # a list short, a head cut twice
            with pytest.raises(RuntimeError, match="posting lists could not be written"):
                writer.postings(bytearray(bad))
    finally:
        writer.close()
    (count,) = store.db.execute("SELECT count(*) FROM postings").fetchone()
    store.close()
    assert count == good


def test_no_writer_without_the_library():
    with native.python_only():
        assert native.Writer.open("/nonexistent/index.sqlite") is None


def _writer_build(tmp_path, note: bool):
    """A store built as the keeper builds one: text files written by ``Writer`` from the reader's
    arrays, the files left to Python (over the size setting, UTF-16, a FIFO) by the store's
    connection, and (``note``) those rows noted to the writer for the time order. Equal times
    for half the files: the path decides between them."""
    from dsh_jupyter.core.tools.indexing.files import read_batch_for_writer

    root = tmp_path / "t"
    (root / "d").mkdir(parents=True)
    rels = []
    for i in range(300):
        rel = f"d/f{i:03}.{'py' if i % 3 else 'txt'}"
        (root / rel).write_text(f"text {i}\n")
        os.utime(root / rel, ns=(0, 10**18 if i % 2 else 10**18 + (i * 7919) % 1000))
        rels.append(rel)
    (root / "big.txt").write_bytes(b"z" * (MAX + 1))
    (root / "wide.txt").write_bytes("\ufeffhi".encode("utf-16"))
    os.mkfifo(root / "pipe")
    rels[100:100] = ["big.txt", "wide.txt", "pipe"]
    store, writer, fd = _building_with_writer(tmp_path, root)
    try:
        with FileReader(fd, MAX, True) as reader, native.Gatherer() as g:
            for at in range(0, len(rels), 64):
                batch = rels[at : at + 64]
                first = store.reserve(len(batch))
                got, rows, texts = read_batch_for_writer(reader, g, batch, first)
                writer.insert(got, first)
                store.begin()
                store.add(rows, texts)
                store.commit()
                if note and rows:
                    writer.note(rows)
    finally:
        os.close(fd)
    return store, writer


@pytest.mark.parametrize("note", [True, False], ids=["noted", "not-noted"])
def test_the_builds_time_order_is_made_from_the_rows_the_writer_kept(tmp_path, monkeypatch, note):
    """``Writer.times`` sorts the rows it inserted and those noted to it, and writes the time
    order (into a file of its own) once the table holds exactly those rows: glob's list is then
    every file, by time and then by path. A row the store's connection wrote and nobody noted
    leaves the table with a row the writer did not keep: it writes nothing, and ``built`` makes
    the order from the rows in the file instead, the same list."""
    store, writer = _writer_build(tmp_path, note)
    made_from_file = []
    real = native.make_times
    monkeypatch.setattr(native, "make_times", lambda *a: made_from_file.append(a) or real(*a))
    kept = []

    def order(times_path: str, block_bytes: int) -> int | None:
        try:
            got = writer.times(times_path, block_bytes)
            kept.append(got)
            return got
        finally:
            writer.close()

    try:
        store.built(order)
        assert kept == [303 if note else None]
        assert bool(made_from_file) == (not note)
        rows = sorted(store.db.execute("SELECT mtime_ns, path FROM files"))
        assert len(rows) == 303
        listed = store.listed_by_time("", ("",), 100)
        assert listed is not None and listed.joined == b"\n".join(p for _, p in rows)
        assert store.get("times_max") == store.db.execute("SELECT max(id) FROM files").fetchone()[0]
        assert store.disk_bytes() > os.path.getsize(store.times_path) > 303 * 16
    finally:
        writer.close()
        store.close()
