"""``read`` with a negative offset: the last lines of a file, numbered from the start when the file
is counted, from the end when it is too big to count; notebooks' last cells."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import nbformat
import pytest
from conftest import assert_error, settle


def env(path: str, lines: list[str], footer: str) -> str:
    body = "".join(f"{line}\n" for line in lines) + ("\n" if lines else "")
    return f"<path>{path}</path>\n<type>file</type>\n<content>\n{body}{footer}\n</content>"


def write_lines(path, n: int, end: str = "\n") -> None:
    path.write_text("".join(f"line {i}\n" for i in range(1, n)) + f"line {n}{end}")


@pytest.fixture
def streamed(make_ws):
    """A workspace that streams every file over 1,000 bytes (no whole-file read, no count)."""
    return make_ws(session="tail", read_stream_min_size=1000)


# -- a small file: read whole, counted, numbered from the start ---------------------------------


def test_last_lines_of_a_small_file_keep_their_numbers(ws, root):
    write_lines(root / "s.txt", 5)
    r = ws.run("read", file_path="s.txt", offset=-2)
    assert r.text == env("s.txt", ["4: line 4", "5: line 5"], "(End of file - total 5 lines)")
    assert r.value["offset"] == 4 and r.value["totalLines"] == 5


def test_more_lines_asked_than_the_file_has_shows_it_all(ws, root):
    write_lines(root / "s.txt", 3)
    r = ws.run("read", file_path="s.txt", offset=-2000)
    assert r.text == env("s.txt", ["1: line 1", "2: line 2", "3: line 3"], "(End of file - total 3 lines)")


def test_negative_offset_with_a_limit_stops_before_the_end(ws, root):
    write_lines(root / "s.txt", 10)
    r = ws.run("read", file_path="s.txt", offset=-5, limit=2)
    assert r.text == env("s.txt", ["6: line 6", "7: line 7"], "(Showing lines 6-7 of 10. Use offset=8 to continue.)")


def test_minus_one_is_the_last_line_with_or_without_a_final_newline(ws, root):
    (root / "a.txt").write_text("x\ny\n")
    (root / "b.txt").write_text("x\ny")
    for name in ("a.txt", "b.txt"):
        assert ws.run("read", file_path=name, offset=-1).value["lines"] == [{"number": 2, "text": "y"}]


def test_empty_file_read_from_the_end(ws, root):
    (root / "e.txt").write_text("")
    r = ws.run("read", file_path="e.txt", offset=-10)
    assert not r.is_error, r.text
    assert r.value["lines"] == [] and r.value["totalLines"] == 0


def test_offset_zero_is_refused(ws, root):
    write_lines(root / "s.txt", 3)
    assert_error(
        ws.run("read", file_path="s.txt", offset=0),
        "ARGUMENT_INVALID",
        "offset must not be 0: 1 is the first line, -1 the last",
    )


def test_a_non_integer_offset_is_refused(ws, root):
    write_lines(root / "s.txt", 3)
    assert_error(ws.run("read", file_path="s.txt", offset="-3"), "ARGUMENT_INVALID", "offset must be an integer")


def test_a_binary_file_is_refused_from_the_end_too(ws, streamed, root):
    (root / "bin.dat").write_bytes(b"\0\1\2" * 1000)
    for w in (ws, streamed):
        assert_error(w.run("read", file_path="bin.dat", offset=-5), "FS_NOT_TEXT", 'cannot read "bin.dat": binary file')


def test_a_tail_read_allows_a_write(ws, root):
    write_lines(root / "s.txt", 3)
    ws.run("read", file_path="s.txt", offset=-1)
    assert not ws.run("edit", file_path="s.txt", old_string="line 3", new_string="last").is_error


# -- a big file: scanned back from the end, not counted ------------------------------------------


def test_last_lines_of_a_big_file_are_numbered_from_the_end(streamed, root):
    write_lines(root / "big.txt", 5000)
    r = streamed.run("read", file_path="big.txt", offset=-3)
    assert r.text == env(
        "big.txt",
        ["-3: line 4998", "-2: line 4999", "-1: line 5000"],
        "(Showing the last 3 lines, numbered from the end: -1 is the last line; the file's lines were "
        "not counted. Use offset=-6 with limit=3 for the lines before.)",
    )
    assert r.value["offset"] == -3 and r.value["totalLines"] is None
    before = streamed.run("read", file_path="big.txt", offset=-6, limit=3)
    assert [line["text"] for line in before.value["lines"]] == ["line 4995", "line 4996", "line 4997"]


def test_a_big_file_window_short_of_the_end_says_how_to_continue(streamed, root):
    write_lines(root / "big.txt", 5000)
    r = streamed.run("read", file_path="big.txt", offset=-10, limit=2)
    assert r.text == env(
        "big.txt",
        ["-10: line 4991", "-9: line 4992"],
        "(Showing lines -10 to -9, numbered from the end: -1 is the last line. Use offset=-8 to continue.)",
    )
    nxt = streamed.run("read", file_path="big.txt", offset=-8, limit=8)
    assert [line["number"] for line in nxt.value["lines"]] == list(range(-8, 0))


def test_a_big_file_tail_stopped_by_the_byte_cap_says_so(make_ws, root):
    write_lines(root / "big.txt", 5000)
    w = make_ws(session="cap", read_stream_min_size=1000, read_max_bytes=40)
    r = w.run("read", file_path="big.txt", offset=-4)
    assert r.text == env(
        "big.txt",
        ["-4: line 4997", "-3: line 4998"],
        "(Output capped. Showing lines -4 to -3, numbered from the end: -1 is the last line. "
        "Use offset=-2 to continue.)",
    )


def test_a_big_file_tail_without_a_final_newline(streamed, root):
    write_lines(root / "big.txt", 5000, end="")
    r = streamed.run("read", file_path="big.txt", offset=-2)
    assert r.value["lines"] == [{"number": -2, "text": "line 4999"}, {"number": -1, "text": "line 5000"}]


def test_asking_back_past_the_start_of_a_big_file_counts_it(streamed, root):
    write_lines(root / "big.txt", 5000)
    r = streamed.run("read", file_path="big.txt", offset=-6000, limit=2)
    assert r.text == env(
        "big.txt", ["1: line 1", "2: line 2"], "(Showing lines 1-2 of 5000. Use offset=3 to continue.)"
    )
    exact = streamed.run("read", file_path="big.txt", offset=-5000, limit=1)
    assert exact.value["lines"] == [{"number": 1, "text": "line 1"}]


def test_a_big_file_counted_before_numbers_its_last_lines(streamed, root):
    write_lines(root / "big.txt", 5000)
    settle(root / "big.txt")
    streamed.run("read", file_path="big.txt", offset=4990)  # reaches the end: the count is kept
    r = streamed.run("read", file_path="big.txt", offset=-2)
    assert r.text == env("big.txt", ["4999: line 4999", "5000: line 5000"], "(End of file - total 5000 lines)")


def test_long_lines_at_the_end_of_a_big_file_are_cut(make_ws, root):
    (root / "big.txt").write_text("x\n" * 600 + "a" * 100_000 + "\nshort\n")
    w = make_ws(session="long", read_stream_min_size=1000, read_max_line_length=5)
    r = w.run("read", file_path="big.txt", offset=-2)
    assert r.value["lines"] == [
        {"number": -2, "text": "aaaaa... (line truncated to 5 chars)"},
        {"number": -1, "text": "short"},
    ]


def test_tail_reads_of_a_big_file_match_the_counted_reads(streamed, ws, root):
    # crlf, blank lines, invalid UTF-8 and lines across the 64 KiB and 1 MiB chunk edges
    body = b"".join(b"r%06d \xe2\x82\r\n" % i + (b"\n" if i % 7 == 0 else b"") for i in range(150_000))
    (root / "odd.txt").write_bytes(body)
    total = ws.run("read", file_path="odd.txt", offset=1, limit=1).value["totalLines"]
    for back in (1, 2, 3, 1999, 7000, 60_000):
        got = streamed.run("read", file_path="odd.txt", offset=-back, limit=50)
        want = ws.run("read", file_path="odd.txt", offset=total - back + 1, limit=50)
        assert [line["text"] for line in got.value["lines"]] == [line["text"] for line in want.value["lines"]]
        assert got.value["lines"][0]["number"] == -back


# -- notebooks: the last cells --------------------------------------------------------------------


def test_the_last_cells_of_a_notebook(ws, root):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"x = {i}", id=f"c{i}") for i in range(1, 6)]
    nbformat.write(nb, root / "n.ipynb")
    r = ws.run("read", file_path="n.ipynb", offset=-2)
    assert r.value["offset"] == 4 and r.value["totalCells"] == 5
    assert [c["id"] for c in r.value["cells"]] == ["c4", "c5"]
    assert ws.run("read", file_path="n.ipynb", offset=-99).value["offset"] == 1


# -- a 1 GB file in a subprocess: the last 2,000 lines in small memory ---------------------------

_PROBE = textwrap.dedent(
    """
    import json, sys, time
    import numpy  # imported by the first big read of either kind: not the tail's own memory
    from dsh_jupyter import Workspace
    root, state, mode = sys.argv[1:4]
    ws = Workspace(root, session="big", state_path=state)
    out = {}
    assert not ws.run("read", file_path="small.txt").is_error
    if mode == "tail":
        r = ws.run("read", file_path="big.txt", offset=-2000)
        out["lines"] = r.value["lines"]
        out["text"] = r.text
    out["maxrss_kib"] = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])
    print(json.dumps(out))
    """
)


@pytest.mark.slow
def test_the_last_lines_of_a_one_gigabyte_file_in_small_memory(root, state_file):
    big = root / "big.txt"
    (root / "small.txt").write_text("x\n")
    chunk = "".join(f"{i:07d}-abcdefghijk\n" for i in range(1_000_000)).encode()
    try:
        with open(big, "wb") as f:
            for _ in range(52):  # 52,000,000 lines of 20 bytes: 1.04 GB
                f.write(chunk)
        del chunk

        def probe(mode):
            p = subprocess.run(
                [sys.executable, "-c", _PROBE, str(root), str(state_file), mode],
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert p.returncode == 0, p.stderr
            return json.loads(p.stdout)

        base, tail = probe("base"), probe("tail")
        growth_mib = (tail["maxrss_kib"] - base["maxrss_kib"]) / 1024
        assert growth_mib < 16, f"peak memory grew by {growth_mib:.1f} MiB"
        assert tail["lines"][0] == {"number": -2000, "text": "0998000-abcdefghijk"}
        # 2,000 rows of 27 bytes pass the 51,200-byte cap: the window stops early and says so
        shown = len(tail["lines"])
        last = -2000 + shown - 1
        assert tail["lines"] == [{"number": -2000 + i, "text": f"{998_000 + i:07d}-abcdefghijk"} for i in range(shown)]
        assert tail["text"].endswith(
            f"(Output capped. Showing lines -2000 to {last}, numbered from the end: -1 is the last line. "
            f"Use offset={last + 1} to continue.)\n</content>"
        )
    finally:
        big.unlink(missing_ok=True)
