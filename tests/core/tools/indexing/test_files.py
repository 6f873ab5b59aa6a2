"""rg's list, kept as it printed it, read back a batch at a time: every path once, in rg's order.

The build keeps rg's ``--files --null`` output as one bytes object and decodes it a batch at a
time (``in_batches``); whatever the batch size — one byte, a few, a path longer than a batch —
the paths are the ones a single split gives, "./" cut, VCS folders' and protected paths dropped.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from dsh_jupyter.core.index import native
from dsh_jupyter.core.rg.runner import find_rg
from dsh_jupyter.core.tools.indexing.files import FileReader, in_batches, read_batch


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
