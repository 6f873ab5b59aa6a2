"""The index against a hostile neighbour, for real: folders swapped for symlinks to outside while it reads.

The racer of ``tests/core/test_races.py`` (another process, ``renameat2(RENAME_EXCHANGE)`` as
fast as it can) flips an in-root folder and file with symlinks that point outside the root while
the index is built, takes in the file events the flips make and answers grep, glob and find. The
safety property is checked in every answer (no outside byte or name) and on disk, in the index
file itself: not one trigram of the outside text and not one outside name is ever recorded.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time

import pytest

from dsh_jupyter import Workspace
from dsh_jupyter.core.fs import syscalls
from dsh_jupyter.core.index import native
from dsh_jupyter.core.index.store import fts_query, posted_ids
from dsh_jupyter.core.rg.runner import find_rg
from dsh_jupyter.core.tools.indexing.files import FileReader, in_batches, read_batch

from ...test_races import INSIDE, MODES, OUT_NAME, RACER, SECRET, arena, check, snapshot, start_racer, stop_racer

__all__ = ["arena"]  # the fixture, shared

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not syscalls.renameat2_available(), reason="renameat2(RENAME_EXCHANGE) is Linux-only"),
]

SECONDS = float(os.environ.get("DSH_INDEX_RACE_SECONDS", "4"))
CALLS = {
    "grep": {"pattern": "TEXT|SECRET"},
    "grep-literal": {"pattern": "OUTSIDE-SEC[R]ET"},  # the outside text, not written as it is
    "glob": {"pattern": "*"},
    "find": {"query": "txt"},
}


@pytest.mark.parametrize("use_openat2", [True, False], ids=["openat2", "walk"])
def test_the_index_reader_never_reads_through_a_swapped_folder(arena, use_openat2):
    """The reader alone, as fast as it goes: a file below a folder that is a symlink to outside
    half of the time is read only while the folder is the real one."""
    root, _ = arena
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    reads = inside = 0
    racer = start_racer(root)
    try:
        deadline = time.monotonic() + SECONDS / 2
        while time.monotonic() < deadline:
            with FileReader(fd, 1 << 20, use_openat2) as reader:
                for rel in ("flipdir/f.txt", "flipdir_link/f.txt", "flip", "flip_link"):
                    got = reader.read(rel)
                    row, text = got if got is not None else (None, None)
                    reads += 1
                    assert SECRET not in (text or ""), (rel, row)
                    inside += INSIDE in (text or "")
    finally:
        stop_racer(racer)
        os.close(fd)
    assert reads > 1000 and inside > 0, (reads, inside)  # the race ran, and the inside text was read


@pytest.mark.skipif(not native.available(), reason="the compiled trigram reader was not built here")
@pytest.mark.parametrize("beneath", [True, False], ids=["openat2", "walk"])
def test_the_compiled_reader_never_reads_through_a_swapped_folder(arena, beneath):
    """grams.c as fast as it goes, the same race: the outside text's trigrams are never gathered
    (a file below the swapped folder is read only while the folder is the real one), and the
    inside text's are."""
    root, _ = arena
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    rels = ["flipdir/f.txt", "flipdir_link/f.txt", "flip", "flip_link"]
    inside = _grams(f"{INSIDE} in folder\n") | _grams(f"{INSIDE} file\n")  # the root's texts
    secret = _grams(SECRET) - inside  # what only the outside text holds ("sec", "ret", ...)
    assert len(secret) >= 4
    reads, first, seen = 0, 1, set()
    racer = start_racer(root)
    try:
        deadline = time.monotonic() + SECONDS / 2
        with native.Gatherer() as g:
            while time.monotonic() < deadline:
                g.read(fd, beneath, rels, first, 1 << 20)
                first += len(rels)
                reads += len(rels)
                if g.held() > 1 << 20 or time.monotonic() >= deadline:
                    grams = {gram for gram, _ in native.records(g.flush())}
                    assert not secret & grams, "an outside trigram was gathered"
                    seen |= grams
    finally:
        stop_racer(racer)
        os.close(fd)
    assert reads > 1000 and inside <= seen, reads  # the race ran, and the inside text was read


@pytest.mark.parametrize("compiled", [True, False], ids=["c", "python"])
def test_rgs_list_through_a_swapped_folder_gives_the_index_no_outside_name(arena, compiled):
    """rg lists a folder by its path, so while the folder flips with a symlink to outside its
    list often names the outside files (as ``flipdir/`` or ``flipdir_link/``). The build reads
    each listed file beneath the root: whether the folder is the symlink or the real one by then,
    no row is made for an outside name (a name not in the real folder is gone, and left out)."""
    if compiled and not native.available():
        pytest.skip("the compiled trigram reader was not built here")
    root, _ = arena
    argv = [find_rg(), "--no-config", "--files", "--null", "--threads=1", "--hidden", "--no-ignore", "--", "."]
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    listings = named = 0
    racer = _racer(root, [("flipdir", "flipdir_link")])
    try:
        deadline = time.monotonic() + SECONDS / 2
        with native.Gatherer() as gatherer:
            while time.monotonic() < deadline or not named:
                assert time.monotonic() < deadline + 30, "rg never listed through the swapped folder"
                out = subprocess.run(argv, cwd=root, stdout=subprocess.PIPE, check=False).stdout
                listings += 1
                named += OUT_NAME.encode() in out
                with FileReader(fd, 1 << 20, True) as reader:
                    for rels in in_batches(out, []):
                        rows, _ = read_batch(reader, gatherer if compiled else None, rels, 1)
                        assert not [row for row in rows if OUT_NAME in os.fsdecode(bytes(row[1]))], rels
                gatherer.flush()
    finally:
        stop_racer(racer)
        os.close(fd)
    assert listings > 20 and named > 0, (listings, named)  # the race ran, and rg named outside files


def _grams(text: str) -> set[int]:
    return {native.gram(text.lower()[i : i + 3]) for i in range(len(text) - 2)}


def _index_file(state: os.PathLike) -> str | None:
    """The index file (None between a loss and the next build, which removes it first)."""
    folder = os.path.join(os.path.dirname(state), "index")
    names = [n for n in os.listdir(folder) if n.endswith(".sqlite")] if os.path.isdir(folder) else []
    return os.path.join(folder, names[0]) if names else None


def _recorded_outside(path: str | None) -> list:
    """Rows of the index that hold the outside text's trigrams or an outside name.

    The file may be one a build has just made (the flips can overflow the kernel's event queue, and
    a build after the loss starts from a new file): its tables are made one statement at a time, so
    a table not made yet is read as empty, which it is."""
    if path is None:
        return []
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.OperationalError:
        if os.path.exists(path):
            raise
        return []  # removed by a build starting again, between the listing and the open
    try:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        if "files" not in tables:
            return []
        texts = []
        if "grams" in tables:
            texts += db.execute(
                "SELECT f.path FROM files f WHERE f.id IN (SELECT rowid FROM grams WHERE grams MATCH ?)",
                (fts_query(("lit", SECRET.lower())),),
            ).fetchall()
        if "postings" in tables:
            posted = posted_ids(db, ("lit", SECRET.lower())).tolist()  # the build's, from the compiled reader
            texts += db.execute(
                "SELECT path FROM files WHERE id IN (SELECT value FROM json_each(?))", (str(posted),)
            ).fetchall()
        names = db.execute("SELECT path FROM files WHERE instr(path, ?) > 0", (OUT_NAME.encode(),)).fetchall()
        return texts + names
    finally:
        db.close()


def _racer(root, pairs: list[tuple[str, str]]) -> subprocess.Popen:
    """The racer of ``test_races`` flipping only ``pairs`` (names in ``root``)."""
    argv = [f"{root / a}|{root / b}" for a, b in pairs]
    proc = subprocess.Popen([sys.executable, "-c", RACER, *argv], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "racing"
    return proc


def _calls(ws: Workspace, seconds: float, seen: dict, sources: dict) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for tool, args in CALLS.items():
            result = ws.run(tool.partition("-")[0], **args)
            check(result, seen)
            source = "error" if result.is_error else result.value.get("source")
            sources[source] = sources.get(source, 0) + 1


def _built_again(ws: Workspace) -> None:
    """The index ready again once the flips end (a build that met a folder mid-swap is tried
    again after ``ASK_AGAIN_S``: that wait is skipped here)."""
    deadline = time.monotonic() + 60
    while ws.index.status()["state"] != "ready":
        assert time.monotonic() < deadline, ws.index.status()
        if ws.index._ask_again_at is not None:
            ws.index._ask_again_at = 0.0
        ws.run("glob", pattern="*.none")
        time.sleep(0.05)


@pytest.mark.parametrize("mode", MODES)
def test_the_index_never_records_or_answers_outside(arena, tmp_path, mode):
    """First the folder and the file flip while the index is built and built again (a folder
    renamed in the workspace makes the watcher distrust its events, so every flip sends the index
    back to a build that reads the files once more); then only the file flips, the index answers,
    and every flip's event makes the keeper read that name again."""
    root, outside = arena
    for i in range(200):  # files to read in the swapped folder and beside it, so reads meet the flips
        (root / "flipdir" / f"g{i}.txt").write_text(f"{INSIDE} {i}\n")
        (root / f"h{i}.txt").write_text(f"{INSIDE} {i}\n")
    state = tmp_path / "state" / "s.sqlite"
    ws = Workspace(root, session="race", state_path=state, index_min_files=1, **mode)
    before = snapshot(outside)
    seen: dict = {}
    sources: dict = {}
    try:
        racer = _racer(root, [("flipdir", "flipdir_link"), ("flip", "flip_link")])
        try:
            _calls(ws, SECONDS / 2, seen, sources)
        finally:
            stop_racer(racer)
        assert _recorded_outside(_index_file(state)) == []
        _built_again(ws)
        racer = _racer(root, [("flip", "flip_link")])
        try:
            _calls(ws, SECONDS / 2, seen, sources)
        finally:
            stop_racer(racer)
        assert _recorded_outside(_index_file(state)) == []
    finally:
        ws.close()
    assert snapshot(outside) == before
    assert seen.get("ok", 0) > 0, seen
    assert sources.get("index", 0) > 0, sources  # the index answered while a name flipped
