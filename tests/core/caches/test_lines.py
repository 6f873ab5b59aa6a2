"""The line index of big files (lineindex): a continuation seeks, and a changed file never reuses marks.

Real files on disk, streamed (``read_stream_min_size`` set low). Marks are kept only once the
file's ctime is older than the stamp margin (``settle`` waits for that, it asserts nothing about
time). Every window is compared, as exact text, with the same window read without an index.
"""

from __future__ import annotations

import os
import time

import pytest
from conftest import settle

from dsh_jupyter.core.caches.lines import MARK_EVERY, LineIndex
from dsh_jupyter.core.caches.stamps import MARGIN_NS
from dsh_jupyter.core.fs.files import file_version

N = 3 * MARK_EVERY + 500  # 197,108 lines: three every-65,536th marks


def line(n: int, width: int = 0) -> str:
    return f"line {n:06d}" + "." * width


def write_lines(path, n: int = N, width=lambda n: n % 7) -> None:
    with open(path, "w") as f:
        f.write("".join(line(i, width(i)) + "\n" for i in range(1, n + 1)))


@pytest.fixture
def pair(make_ws):
    """A workspace with the index and one without, both streaming every file over 1000 bytes."""
    return make_ws(read_stream_min_size=1000, read_limit=100), make_ws(
        read_stream_min_size=1000, read_limit=100, read_index_max_files=0
    )


def test_a_continuation_starts_at_the_last_window_end(pair, root):
    ws, plain = pair
    write_lines(root / "big.txt")
    settle(root / "big.txt")
    first = ws.run("read", file_path="big.txt", offset=150_001)
    assert ws.lines.hits == 0
    nxt = ws.run("read", file_path="big.txt", offset=150_101)
    assert ws.lines.hits == 1
    assert first.text == plain.run("read", file_path="big.txt", offset=150_001).text
    assert nxt.text == plain.run("read", file_path="big.txt", offset=150_101).text
    assert nxt.value["lines"][0] == {"number": 150_101, "text": line(150_101, 150_101 % 7)}


def test_marks_name_the_first_byte_of_their_line(pair, root):
    ws, _plain = pair
    write_lines(root / "big.txt")
    settle(root / "big.txt")
    ws.run("read", file_path="big.txt", offset=N - 50)
    version = file_version(os.stat(root / "big.txt"))
    marks = ws.lines.marks(version)
    assert [m[0] for m in marks] == [MARK_EVERY + 1, 2 * MARK_EVERY + 1, 3 * MARK_EVERY + 1, N - 50]
    data = (root / "big.txt").read_bytes()
    for number, offset in marks:
        assert data[offset:].split(b"\n", 1)[0].decode() == line(number, number % 7)
        assert offset == 0 or data[offset - 1 : offset] == b"\n"


@pytest.mark.parametrize("offset", [1, 2, MARK_EVERY, MARK_EVERY + 1, MARK_EVERY + 2, 140_000, N - 99, N, N + 1])
def test_windows_near_known_lines_are_exact(pair, root, offset):
    ws, plain = pair
    write_lines(root / "big.txt")
    settle(root / "big.txt")
    ws.run("read", file_path="big.txt", offset=N - 20)  # learns every mark up to the end, and the total
    got = ws.run("read", file_path="big.txt", offset=offset)
    want = plain.run("read", file_path="big.txt", offset=offset)
    if want.is_error:
        assert got.text == want.text
        return
    assert got.value["lines"] == want.value["lines"]
    # The count the first read made is kept: every later window's footer names it.
    assert got.value["totalLines"] == N
    assert got.text.replace(f" of {N}.", ".") == want.text


def test_a_same_size_rewrite_with_the_mtime_set_back_never_uses_old_marks(pair, root):
    ws, plain = pair
    path = root / "big.txt"
    write_lines(path, width=lambda n: 3 * (n % 2))  # N is even: the swapped widths keep the size
    settle(path)
    before = os.stat(path)
    ws.run("read", file_path="big.txt", offset=150_002)
    assert ws.lines.marks(file_version(before))
    # Same size, same inode, mtime restored: only the ctime tells the content changed; the line
    # lengths move, so the old mark at line 150,102 would point 3 bytes into the previous line.
    with open(path, "r+") as f:
        f.write("".join(line(i, 3 - 3 * (i % 2)) + "\n" for i in range(1, N + 1)))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_ino, after.st_mtime_ns) == (before.st_size, before.st_ino, before.st_mtime_ns)
    assert after.st_ctime_ns != before.st_ctime_ns
    settle(path)
    hits = ws.lines.hits
    got = ws.run("read", file_path="big.txt", offset=150_102)
    assert ws.lines.hits == hits
    assert got.text == plain.run("read", file_path="big.txt", offset=150_102).text
    assert got.value["lines"][0] == {"number": 150_102, "text": line(150_102, 3)}


def test_a_fresh_write_is_not_indexed_and_an_append_is_a_new_version(pair, make_ws, root):
    ws, plain = pair
    path = root / "big.txt"
    write_lines(path)
    # Changed just now, its stamp proves nothing: a read that ends within the margin of the file's
    # last change keeps no index. A busy machine may take longer than the margin over the read, so
    # the change is made again, in a fresh workspace, until one read ends within it.
    for _ in range(50):
        fresh = make_ws(read_stream_min_size=1000, read_limit=100)
        os.utime(path)  # a change of the inode: its ctime is now
        fresh.run("read", file_path="big.txt", offset=100_001)
        if time.time_ns() < os.stat(path).st_ctime_ns + MARGIN_NS:
            assert len(fresh.lines) == 0
            break
    else:
        pytest.fail("no read of the file ended within 50 ms of its change in 50 tries")
    settle(path)
    ws.run("read", file_path="big.txt", offset=100_001)
    assert len(ws.lines) == 1
    with open(path, "a") as f:
        f.write("appended\n")
    got = ws.run("read", file_path="big.txt", offset=N - 1)
    assert got.text == plain.run("read", file_path="big.txt", offset=N - 1).text
    assert got.value["lines"][-1] == {"number": N + 1, "text": "appended"}


def test_a_replaced_file_is_a_new_version(pair, root):
    ws, plain = pair
    write_lines(root / "big.txt")
    settle(root / "big.txt")
    ws.run("read", file_path="big.txt", offset=150_001)
    write_lines(root / "other.txt", width=lambda n: 9)
    os.replace(root / "other.txt", root / "big.txt")
    settle(root / "big.txt")
    got = ws.run("read", file_path="big.txt", offset=150_101)
    assert got.text == plain.run("read", file_path="big.txt", offset=150_101).text
    assert got.value["lines"][0]["text"] == line(150_101, 9)


def test_the_index_keeps_a_bounded_number_of_versions(make_ws, root):
    ws = make_ws(read_stream_min_size=1000, read_limit=10, read_index_max_files=2)
    for name in ("a.txt", "b.txt", "c.txt"):
        write_lines(root / name, n=2000)
    for name in ("a.txt", "b.txt", "c.txt"):
        settle(root / name)
        ws.run("read", file_path=name, offset=1001)
    assert len(ws.lines) == 2
    assert not ws.lines.marks(file_version(os.stat(root / "a.txt")))
    assert ws.lines.marks(file_version(os.stat(root / "c.txt"))) == [
        (1001, 1000 * 12 + sum(i % 7 for i in range(1, 1001))),
        (1011, 1010 * 12 + sum(i % 7 for i in range(1, 1011))),
    ]


def test_marks_per_version_are_bounded():
    index = LineIndex(1)
    from dsh_jupyter.core.caches.lines import MAX_MARKS, FileLines

    lines = FileLines(index, "v")
    lines.learn([(k * 10 + 1, k * 100) for k in range(1, MAX_MARKS + 10)])
    kept = index.marks("v")
    assert len(kept) <= MAX_MARKS and kept[0] == (11, 100)
    assert lines.nearest(25) == (21, 200) or lines.nearest(25) == (11, 100)
    assert lines.nearest(5) == (1, 0)
