"""``read_lines``: the wanted lines of a file, each held whole or, with ``keep``, as its first bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_jupyter.core.rg.recheck import read_lines


@pytest.fixture
def open_file(tmp_path: Path):
    fds = []

    def make(data: bytes) -> int:
        path = tmp_path / f"f{len(fds)}.txt"
        path.write_bytes(data)
        fds.append(os.open(path, os.O_RDONLY))
        return fds[-1]

    yield make
    for fd in fds:
        os.close(fd)


def test_wanted_lines_whole_with_their_terminators(open_file) -> None:
    fd = open_file(b"one\ntwo\r\nthree")
    assert read_lines(fd, {1, 2, 3}) == {1: b"one\n", 2: b"two\r\n", 3: b"three"}
    assert read_lines(fd, {2}) == {2: b"two\r\n"}
    assert read_lines(fd, {9}) == {}
    assert os.lseek(fd, 0, os.SEEK_CUR) == 0  # the descriptor's offset is left alone


def test_keep_holds_the_start_of_a_long_line_and_nothing_more(open_file) -> None:
    long = b"x" * (3 << 20) + b"END"  # longer than one chunk read
    fd = open_file(b"short\n" + long + b"\nafter\n" + b"y" * 10 + b"\n" + b"z" * 10)
    got = read_lines(fd, {1, 2, 3, 4, 5}, keep=10)
    assert got == {1: b"short\n", 2: b"x" * 10, 3: b"after\n", 4: b"y" * 10 + b"\n", 5: b"z" * 10}
    # a line exactly as long as keep is whole; one byte more is cut, terminator and all
    fd = open_file(b"a" * 10 + b"\n" + b"b" * 11 + b"\n")
    assert read_lines(fd, {1, 2}, keep=10) == {1: b"a" * 10 + b"\n", 2: b"b" * 10}


def test_a_line_whose_end_lies_exactly_at_a_chunk_boundary_is_still_cut(open_file) -> None:
    fd = open_file(b"c" * (1 << 20) + b"\nnext\n")  # the newline is the first byte of the second chunk
    assert read_lines(fd, {1, 2}, keep=100) == {1: b"c" * 100, 2: b"next\n"}
