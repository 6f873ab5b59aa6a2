"""rg's list, kept as it printed it, read back a batch at a time: every path once, in rg's order.

The build keeps rg's ``--files --null`` output as one bytes object and decodes it a batch at a
time (``in_batches``); whatever the batch size — one byte, a few, a path longer than a batch —
the paths are the ones a single split gives, "./" cut, VCS folders' and protected paths dropped.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time

import pytest

from dsh_jupyter import Workspace
from dsh_jupyter.core.index import native
from dsh_jupyter.core.index.store import IndexStore
from dsh_jupyter.core.index.watch import Watcher
from dsh_jupyter.core.rg.runner import find_rg
from dsh_jupyter.core.tools.indexing.files import (
    FileReader,
    ListingFailed,
    Paths,
    StreamedListing,
    in_batches,
    listed,
    read_batch,
)
from dsh_jupyter.core.tools.search.flags import VCS_DIRS
from dsh_jupyter.core.tools.search.root import excluded_below, open_search_root


@pytest.fixture
def printed(tmp_path) -> bytes:
    names = ["a.py", "b/c.txt", "b/" + "long" * 50 + ".py", "é/ü.md", ".git/config", "keep/x.py", "secret/y.py"]
    for name in names:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    bad = os.fsencode(tmp_path) + b"/b/\xff.bin"
    with open(bad, "wb") as f:
        f.write(b"x\n")
    rg = find_rg()
    assert rg
    argv = [rg, "--no-config", "--files", "--null", "--hidden", "--no-ignore", "--sort=path", "--", "."]
    return subprocess.run(argv, cwd=tmp_path, stdout=subprocess.PIPE, check=True).stdout


@pytest.mark.parametrize("size", [1, 7, 64, 1 << 17])
def test_batches_give_every_path_once_in_rgs_order(printed, size):
    whole = [p[2:] for p in printed.decode("utf-8", "surrogateescape").split("\0") if p]
    want = [p for p in whole if not p.startswith((".git/", "secret/"))]
    got = list(in_batches(printed, ["secret"], size))
    assert [p for batch in got for p in batch] == want
    assert len(want) == 6 and "b/\udcff.bin" in want and "é/ü.md" in want
    assert len(got) == 1 if size == 1 << 17 else len(got) > 1  # a path of 200 bytes is over two sizes


@pytest.mark.parametrize("size", [1, 7, 64, 1 << 17])
def test_batches_with_nothing_to_drop_stay_rgs_bytes_and_read_as_the_same_files(tmp_path, printed, size):
    """With no exclusion, a batch that names no VCS folder is handed on as rg's bytes (``Paths``:
    the compiled reader takes them as they are), one that does as the list of the paths kept; both
    give the same paths, and the reader the same rows, as the paths given one by one."""
    assert all(v.startswith(".") for v in VCS_DIRS)  # a batch without "/." names none of them
    whole = [p[2:] for p in printed.decode("utf-8", "surrogateescape").split("\0") if p]
    want = [p for p in whole if not p.startswith(".git/")]
    got = list(in_batches(printed, [], size))
    assert [p for batch in got for p in batch] == want
    as_bytes = [b for b in got if isinstance(b, Paths)]
    assert all(b.block == "\0".join(b).encode("utf-8", "surrogateescape") for b in as_bytes)
    assert all(b".git" not in b.block for b in as_bytes)  # the batch that named .git/ is a list
    if size == 1 << 17:
        assert len(got) == 1 and not isinstance(got[0], Paths)  # it holds .git/config: the kept list
    else:
        assert as_bytes and sum(map(len, as_bytes)) >= 4
    if not native.available():
        return
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with FileReader(fd, 4096, True) as reader, native.Gatherer() as g:
            first = 1
            for batch in as_bytes:
                assert read_batch(reader, g, batch, first) == read_batch(reader, g, list(batch), first)
                first += len(batch)
    finally:
        os.close(fd)


@pytest.mark.parametrize("compiled", [True, False], ids=["c", "python"])
@pytest.mark.parametrize("use_openat2", [True, False], ids=["openat2", "walk"])
def test_a_listed_name_gone_by_its_read_is_not_recorded(tmp_path, compiled, use_openat2):
    """rg may list a folder's files while a neighbour has swapped the folder for a symlink to
    outside (rg opens it by path); when the real folder is back by the read, the outside name is
    not there. It is left out, not kept as an unread file: the index records no name from outside.
    A listed file that is gone, or whose folder is gone, is left out the same way."""
    if compiled and not native.available():
        pytest.skip("the compiled trigram reader was not built here")
    (tmp_path / "flipdir").mkdir()
    (tmp_path / "flipdir" / "g.txt").write_text("inside\n")
    os.mkfifo(tmp_path / "pipe")  # not a regular file: recorded unread, rg decides
    rels = ["flipdir/g.txt", "flipdir/outside-only-name.txt", "gone.txt", "nodir/x.txt", "pipe"]
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with FileReader(fd, 1 << 20, use_openat2) as reader:
            assert [reader.read(rel) is None for rel in rels] == [False, True, True, True, False]
            if compiled:
                with native.Gatherer() as gatherer:
                    rows, _ = read_batch(reader, gatherer, rels, 1)
            else:
                rows, _ = read_batch(reader, None, rels, 1)
    finally:
        os.close(fd)
    assert sorted((row[0], bytes(row[1])) for row in rows) == [(1, b"flipdir/g.txt"), (5, b"pipe")]


def _tree(root, files: int) -> None:
    for i in range(files):
        folder = root / f"d{i % 7}" / f"e{i % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}{'é' if i % 11 == 0 else ''}.txt").write_text("x\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("x\n")


@contextlib.contextmanager
def _opened(ws: Workspace):
    """The build's context factory, its search root and the folders it leaves out."""
    assert ws.index is not None
    ctx = ws.index._context(threading.Event())
    with open_search_root(ctx, None, "grep", spills=False) as root:
        yield ws.index._context, ctx, root, excluded_below(ctx, root)


@pytest.mark.parametrize("size", [1, 100, 1 << 17])
def test_a_streamed_list_gives_every_path_of_rgs_whole_list_once(tmp_path, size):
    """The build's list, taken a batch at a time while rg still lists, holds the paths rg's
    whole list holds (VCS folders and protected paths left out), each once."""
    _tree(tmp_path, 3000)
    ws = Workspace(tmp_path, state_path=tmp_path.parent / f"{tmp_path.name}-state" / "s.sqlite", index_min_files=1)
    try:
        with _opened(ws) as (context, ctx, root, excluded):
            want, _ = listed(ctx, root, excluded, ["."])
            rg_list = StreamedListing(context, root, excluded)
            try:
                got = [p for batch in rg_list.batches(threading.Event(), size) for p in batch]
            finally:
                rg_list.close()
    finally:
        ws.close()
    assert len(want) == 3000 and not [p for p in want if p.startswith(".git")]
    assert sorted(got) == sorted(want) and len(got) == len(set(got))
    assert rg_list.listed == 3000 and rg_list.unreadable == 0


def test_a_streamed_list_says_whether_rg_lists_enough_files(tmp_path):
    _tree(tmp_path, 50)
    ws = Workspace(tmp_path, state_path=tmp_path.parent / f"{tmp_path.name}-state" / "s.sqlite", index_min_files=1)
    try:
        with _opened(ws) as (context, _ctx, root, excluded):
            answers = []
            for enough in (1, 50, 51):
                rg_list = StreamedListing(context, root, excluded)
                try:
                    answers.append(rg_list.at_least(enough, threading.Event()))
                finally:
                    rg_list.close()
    finally:
        ws.close()
    assert answers == [True, True, False]  # .git/config is listed by no search: not counted


def test_a_streamed_list_over_the_output_bound_fails_with_why(tmp_path):
    _tree(tmp_path, 50)
    ws = Workspace(
        tmp_path,
        state_path=tmp_path.parent / f"{tmp_path.name}-state" / "s.sqlite",
        index_min_files=1,
        raw_output_max_bytes=100,
    )
    try:
        with _opened(ws) as (context, _ctx, root, excluded):
            rg_list = StreamedListing(context, root, excluded)
            try:
                with pytest.raises(ListingFailed, match=r"^the list of files is over the raw output bound$"):
                    list(rg_list.batches(threading.Event()))
            finally:
                rg_list.close()
        ws.run("glob", pattern="*.none")  # the build, for real
        deadline = time.monotonic() + 60
        while ws.index.status()["state"] in ("idle", "counting", "building"):
            assert time.monotonic() < deadline, ws.index.status()
            time.sleep(0.05)
        assert ws.index.status() == {
            "state": "failed",
            "note": "rg could not list the workspace: the list of files is over the raw output bound",
        }
    finally:
        ws.close()


def test_a_stopped_list_ends_at_once_and_close_stops_rg(tmp_path):
    """``stop`` ends the batches where they are; ``close`` kills rg if it still lists and waits
    for its thread, so the root's descriptor may close after it."""
    _tree(tmp_path, 3000)
    ws = Workspace(tmp_path, state_path=tmp_path.parent / f"{tmp_path.name}-state" / "s.sqlite", index_min_files=1)
    try:
        with _opened(ws) as (context, _ctx, root, excluded):
            stop = threading.Event()
            rg_list = StreamedListing(context, root, excluded)
            taken = []
            for batch in rg_list.batches(stop, 100):
                taken.append(batch)
                stop.set()
            rg_list.close()
            assert len(taken) == 1 and 0 < len(taken[0]) < 3000
            assert not rg_list._thread.is_alive()
    finally:
        ws.close()


@pytest.mark.parametrize("given", [0, 1, 4])
def test_a_build_whose_list_ends_early_because_it_was_stopped_is_not_ready(tmp_path, given):
    """The batches end early when the build is stopped, maybe while no batch is being read (rg
    had printed no more yet); the files read so far must not pass for the whole index: the build
    ends "idle"."""
    _tree(tmp_path, 200)
    ws = Workspace(tmp_path, state_path=tmp_path.parent / f"{tmp_path.name}-state" / "s.sqlite", index_min_files=1)
    keeper = ws.index
    assert keeper is not None
    try:
        with _opened(ws) as (_context, ctx, root, excluded):
            paths, _ = listed(ctx, root, excluded, ["."])

            def batches():
                for i in range(given):
                    yield paths[i * 40 : i * 40 + 40]
                keeper._stop.set()  # as StreamedListing.batches ends once the build is stopped

            store = IndexStore(str(tmp_path.parent / f"{tmp_path.name}-partial.sqlite"), building=True)
            keeper._watcher = Watcher(str(tmp_path))  # the build's, taking in events a batch at a time
            keeper._watcher.start()
            try:
                assert keeper._fill(ctx, root, store, batches(), time.monotonic()) == ("idle", None)
            finally:
                store.close()
    finally:
        ws.close()
