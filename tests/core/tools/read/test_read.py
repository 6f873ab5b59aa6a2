"""``read`` through the public API on real files: envelope, footers, caps, refusals, streaming."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest
from conftest import assert_error


def env(path: str, lines: list[str], footer: str) -> str:
    body = "".join(f"{line}\n" for line in lines) + ("\n" if lines else "")
    return f"<path>{path}</path>\n<type>file</type>\n<content>\n{body}{footer}\n</content>"


def numbered(first: int, texts: list[str]) -> list[str]:
    return [f"{first + i}: {t}" for i, t in enumerate(texts)]


# -- envelope and footers ---------------------------------------------------------------------


def test_whole_file_exact(ws, root):
    (root / "f.txt").write_text("alpha\nbeta\ngamma\n")
    r = ws.run("read", file_path="f.txt")
    assert not r.is_error
    assert r.text == env("f.txt", ["1: alpha", "2: beta", "3: gamma"], "(End of file - total 3 lines)")
    assert r.value == {
        "path": "f.txt",
        "offset": 1,
        "lines": [{"number": 1, "text": "alpha"}, {"number": 2, "text": "beta"}, {"number": 3, "text": "gamma"}],
        "totalLines": 3,
        "capped": False,
        "nextOffset": None,
        "footer": "(End of file - total 3 lines)",
    }


def test_one_line_singular(ws, root):
    (root / "one.txt").write_text("only")
    assert ws.run("read", file_path="one.txt").text == env("one.txt", ["1: only"], "(End of file - total 1 line)")


def test_no_trailing_newline_counts_the_last_line(ws, root):
    (root / "f.txt").write_text("a\nb\nc")
    assert ws.run("read", file_path="f.txt").text == env(
        "f.txt", ["1: a", "2: b", "3: c"], "(End of file - total 3 lines)"
    )


def test_blank_lines_are_lines(ws, root):
    (root / "f.txt").write_text("\n\nx\n\n")
    assert ws.run("read", file_path="f.txt").text == env(
        "f.txt", ["1: ", "2: ", "3: x", "4: "], "(End of file - total 4 lines)"
    )


def test_empty_file(ws, root):
    (root / "empty.txt").write_bytes(b"")
    r = ws.run("read", file_path="empty.txt")
    assert r.text == env("empty.txt", [], "(End of file - total 0 lines)")
    assert r.text == "<path>empty.txt</path>\n<type>file</type>\n<content>\n(End of file - total 0 lines)\n</content>"
    assert r.footer() == "(End of file - total 0 lines)"
    assert r.value["lines"] == [] and r.value["totalLines"] == 0
    assert_error(
        ws.run("read", file_path="empty.txt", offset=2),
        "ARGUMENT_INVALID",
        'offset 2 is out of range for "empty.txt" (0 lines)',
    )


def test_window_with_total(ws, root):
    (root / "f.txt").write_text("".join(f"l{i}\n" for i in range(1, 6)))
    assert ws.run("read", file_path="f.txt", offset=2, limit=2).text == env(
        "f.txt", ["2: l2", "3: l3"], "(Showing lines 2-3 of 5. Use offset=4 to continue.)"
    )
    assert ws.run("read", file_path="f.txt", offset=4, limit=2).text == env(
        "f.txt", ["4: l4", "5: l5"], "(End of file - total 5 lines)"
    )
    assert ws.run("read", file_path="f.txt", offset=5).text == env("f.txt", ["5: l5"], "(End of file - total 5 lines)")


def test_default_limit_is_read_limit(make_ws, root):
    (root / "f.txt").write_text("".join(f"{i}\n" for i in range(1, 11)))
    ws = make_ws(read_limit=4)
    assert ws.run("read", file_path="f.txt").text == env(
        "f.txt", numbered(1, ["1", "2", "3", "4"]), "(Showing lines 1-4 of 10. Use offset=5 to continue.)"
    )
    assert_error(
        ws.run("read", file_path="f.txt", limit=5), "ARGUMENT_INVALID", "limit must be less than or equal to 4"
    )


def test_default_limit_2000(ws, root):
    (root / "f.txt").write_text("".join("x\n" for _ in range(2500)))
    r = ws.run("read", file_path="f.txt")
    assert len(r.value["lines"]) == 2000
    assert r.text.endswith("\n\n(Showing lines 1-2000 of 2500. Use offset=2001 to continue.)\n</content>")


def test_offset_beyond_end(ws, root):
    (root / "f.txt").write_text("a\nb\nc\n")
    r = ws.run("read", file_path="f.txt", offset=9)
    assert r.text == 'Error: offset 9 is out of range for "f.txt" (3 lines)'
    assert r.value == {
        "name": "ArgumentError",
        "code": "ARGUMENT_INVALID",
        "message": 'offset 9 is out of range for "f.txt" (3 lines)',
    }
    assert_error(
        ws.run("read", file_path="f.txt", offset=4),
        "ARGUMENT_INVALID",
        'offset 4 is out of range for "f.txt" (3 lines)',
    )
    (root / "one.txt").write_text("x\n")
    assert_error(
        ws.run("read", file_path="one.txt", offset=2),
        "ARGUMENT_INVALID",
        'offset 2 is out of range for "one.txt" (1 line)',
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"limit": 2001}, "limit must be less than or equal to 2000"),
        ({"limit": 0}, "limit must be at least 1"),
        ({"offset": 0}, "offset must not be 0: 1 is the first line, -1 the last"),
        ({"offset": "1"}, "offset must be an integer"),
        ({"limit": 2.5}, "limit must be an integer"),
        ({"file_path": ""}, "file_path must be a non-empty string"),
        ({"file_path": 7}, "file_path must be a string"),
        (
            {"path": "f.txt"},
            'unknown argument "path" (this tool takes: file_path, file_paths, offset, limit, cell_id, output, outline)',
        ),
    ],
)
def test_argument_errors(ws, root, args, message):
    (root / "f.txt").write_text("a\n")
    full = {"file_path": "f.txt", **args}
    assert_error(ws.run("read", **full), "ARGUMENT_INVALID", message)


def test_missing_file_path(ws):
    assert_error(ws.run("read"), "ARGUMENT_INVALID", "file_path is required")
    assert_error(ws.run("read", file_path=None), "ARGUMENT_INVALID", "file_path is required")


# -- caps -------------------------------------------------------------------------------------


def test_long_line_is_truncated(ws, root):
    (root / "long.txt").write_text("a" * 2500 + "\nshort\n" + "é" * 2001 + "\n" + "b" * 2000 + "\n")
    r = ws.run("read", file_path="long.txt")
    assert r.text == env(
        "long.txt",
        [
            "1: " + "a" * 2000 + "... (line truncated to 2000 chars)",
            "2: short",
            "3: " + "é" * 2000 + "... (line truncated to 2000 chars)",
            "4: " + "b" * 2000,
        ],
        "(End of file - total 4 lines)",
    )


def test_line_length_setting(make_ws, root):
    (root / "f.txt").write_text("0123456789\n")
    ws = make_ws(read_max_line_length=4)
    assert ws.run("read", file_path="f.txt").text == env(
        "f.txt", ["1: 0123... (line truncated to 4 chars)"], "(End of file - total 1 line)"
    )


def test_byte_cap(make_ws, root):
    # each of lines 1-9 costs len("N: abcdefghij\n") = 14 bytes: 7 lines fit in 100, the 8th not
    (root / "f.txt").write_text("abcdefghij\n" * 20)
    ws = make_ws(read_max_bytes=100)
    r = ws.run("read", file_path="f.txt")
    assert r.text == env(
        "f.txt", numbered(1, ["abcdefghij"] * 7), "(Output capped. Showing lines 1-7. Use offset=8 to continue.)"
    )
    assert r.value["capped"] is True and r.value["totalLines"] == 20
    r = ws.run("read", file_path="f.txt", offset=15)
    # lines 15-20 cost 15 bytes each: 6 * 15 = 90 fits, and it reaches the end
    assert r.text == env("f.txt", numbered(15, ["abcdefghij"] * 6), "(End of file - total 20 lines)")
    r = ws.run("read", file_path="f.txt", offset=8, limit=3)
    assert r.text == env(
        "f.txt", numbered(8, ["abcdefghij"] * 3), "(Showing lines 8-10 of 20. Use offset=11 to continue.)"
    )


def test_byte_cap_always_shows_one_line(make_ws, root):
    (root / "f.txt").write_text("x" * 500 + "\ny\n")
    ws = make_ws(read_max_bytes=100)
    assert ws.run("read", file_path="f.txt").text == env(
        "f.txt", ["1: " + "x" * 500], "(Output capped. Showing lines 1-1. Use offset=2 to continue.)"
    )


def test_default_byte_cap_51200(ws, root):
    # 100 lines of 1000 chars: each costs len("NN: " + 1000 chars + "\n") ~ 1005 bytes
    (root / "f.txt").write_text(("y" * 1000 + "\n") * 100)
    r = ws.run("read", file_path="f.txt")
    shown = len(r.value["lines"])
    used = sum(len(f"{i}: {'y' * 1000}\n") for i in range(1, shown + 1))
    assert used <= 51200 < used + len(f"{shown + 1}: {'y' * 1000}\n")
    assert r.text.endswith(f"(Output capped. Showing lines 1-{shown}. Use offset={shown + 1} to continue.)\n</content>")


# -- content ----------------------------------------------------------------------------------


def test_binary_file_is_refused(ws, root):
    (root / "bin.dat").write_bytes(b"abc\x00def\n")
    assert_error(ws.run("read", file_path="bin.dat"), "FS_NOT_TEXT", 'cannot read "bin.dat": binary file')
    (root / "late.dat").write_bytes(b"a" * 8191 + b"\x00")
    assert_error(ws.run("read", file_path="late.dat"), "FS_NOT_TEXT", 'cannot read "late.dat": binary file')


def test_nul_after_8_kib_reads_fine(ws, root):
    (root / "f.txt").write_bytes(b"x" * 8192 + b"\n\x00tail\n")
    r = ws.run("read", file_path="f.txt", offset=2)
    assert r.text == env("f.txt", ["2: \x00tail"], "(End of file - total 2 lines)")


def test_invalid_utf8_is_replaced(ws, root):
    (root / "latin1.txt").write_bytes(b"caf\xe9\nok \xff\xfe end\n\xe2\x82\n")
    assert ws.run("read", file_path="latin1.txt").text == env(
        "latin1.txt", ["1: caf\ufffd", "2: ok \ufffd\ufffd end", "3: \ufffd"], "(End of file - total 3 lines)"
    )


def test_utf8_is_decoded(ws, root):
    (root / "u.txt").write_text("héllo\n日本語\n", encoding="utf-8")
    assert ws.run("read", file_path="u.txt").text == env(
        "u.txt", ["1: héllo", "2: 日本語"], "(End of file - total 2 lines)"
    )


def test_crlf_lines_shown_without_cr(ws, root):
    (root / "win.txt").write_bytes(b"one\r\ntwo\r\n\r\nfour")
    r = ws.run("read", file_path="win.txt")
    assert r.text == env("win.txt", ["1: one", "2: two", "3: ", "4: four"], "(End of file - total 4 lines)")
    assert "\r" not in r.text


# -- refusals ---------------------------------------------------------------------------------


def test_directory_is_not_a_regular_file(ws, root):
    (root / "src").mkdir()
    assert_error(ws.run("read", file_path="src"), "FS_NOT_REGULAR_FILE", 'cannot read "src": not a regular file')
    assert_error(ws.run("read", file_path="."), "FS_NOT_REGULAR_FILE", 'cannot read ".": not a regular file')


def test_fifo_is_refused_at_once(ws, root, guarded):
    os.mkfifo(root / "pipe")
    r = guarded(lambda: ws.run("read", file_path="pipe"), timeout=10)
    assert_error(r, "FS_NOT_REGULAR_FILE", 'cannot read "pipe": not a regular file')


def test_fifo_through_a_symlink_is_refused_at_once(ws, root, guarded):
    os.mkfifo(root / "pipe")
    os.symlink("pipe", root / "pipe_link")
    r = guarded(lambda: ws.run("read", file_path="pipe_link"), timeout=10)
    assert_error(r, "FS_NOT_REGULAR_FILE", 'cannot read "pipe_link": not a regular file')


def test_socket_is_refused(ws, root, guarded):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(str(root / "sock"))
        r = guarded(lambda: ws.run("read", file_path="sock"), timeout=10)
    finally:
        s.close()
    assert_error(r, "FS_NOT_REGULAR_FILE", 'cannot read "sock": not a regular file')


def test_missing(ws, root):
    assert_error(ws.run("read", file_path="nope.txt"), "FS_NOT_FOUND", 'cannot read "nope.txt": not found')
    assert_error(
        ws.run("read", file_path="no/such/dir.txt"), "FS_NOT_FOUND", 'cannot read "no/such/dir.txt": not found'
    )
    (root / "f.txt").write_text("x")
    assert_error(ws.run("read", file_path="f.txt/under"), "FS_NOT_FOUND", 'cannot read "f.txt/under": not found')


def test_symlink_inside_root_reads_the_target(ws, root):
    (root / "real.txt").write_text("hi\n")
    os.symlink("real.txt", root / "alias.txt")
    assert ws.run("read", file_path="alias.txt").text == env("alias.txt", ["1: hi"], "(End of file - total 1 line)")


def test_symlink_loop(ws, root):
    os.symlink("loop", root / "loop")
    assert_error(ws.run("read", file_path="loop"), "FS_SYMLINK_LOOP", 'cannot read "loop": symbolic link loop')
    assert_error(
        ws.run("read", file_path="loop/x.txt"), "FS_SYMLINK_LOOP", 'cannot read "loop/x.txt": symbolic link loop'
    )


# -- streaming: the same windows as the whole-file path ---------------------------------------

LINES = [f"line {i:03d}" for i in range(1, 301)]  # 300 lines, 2700 bytes


@pytest.fixture(params=["whole", "streamed"])
def mode(request):
    return request.param


@pytest.fixture
def sws(make_ws, mode):
    return make_ws(read_stream_min_size=1000 if mode == "streamed" else 10_485_760)


@pytest.fixture
def f300(root):
    (root / "f.txt").write_text("".join(f"{t}\n" for t in LINES))
    (root / "nonl.txt").write_text("\n".join(LINES))
    (root / "crlf.txt").write_bytes("".join(f"{t}\r\n" for t in LINES).encode())
    assert (root / "f.txt").stat().st_size > 1000
    return LINES


def test_stream_window_before_eof(sws, mode, f300):
    r = sws.run("read", file_path="f.txt", offset=11, limit=10)
    footer = (
        "(Showing lines 11-20. Use offset=21 to continue.)"
        if mode == "streamed"
        else "(Showing lines 11-20 of 300. Use offset=21 to continue.)"
    )
    assert r.text == env("f.txt", numbered(11, f300[10:20]), footer)
    assert r.value["totalLines"] == (None if mode == "streamed" else 300)


def test_stream_first_window_default_limit(make_ws, mode, f300):
    ws = make_ws(read_stream_min_size=1000 if mode == "streamed" else 10_485_760, read_limit=50)
    r = ws.run("read", file_path="f.txt")
    footer = (
        "(Showing lines 1-50. Use offset=51 to continue.)"
        if mode == "streamed"
        else ("(Showing lines 1-50 of 300. Use offset=51 to continue.)")
    )
    assert r.text == env("f.txt", numbered(1, f300[:50]), footer)


@pytest.mark.parametrize("name", ["f.txt", "nonl.txt", "crlf.txt"])
@pytest.mark.parametrize(("offset", "limit"), [(291, 10), (295, 10), (300, 1), (300, 2000), (1, 2000)])
def test_stream_window_reaching_eof(sws, f300, name, offset, limit):
    r = sws.run("read", file_path=name, offset=offset, limit=limit)
    assert r.text == env(
        name, numbered(offset, f300[offset - 1 : offset - 1 + limit]), "(End of file - total 300 lines)"
    )


@pytest.mark.parametrize("name", ["f.txt", "nonl.txt", "crlf.txt"])
@pytest.mark.parametrize("offset", [301, 302, 9999])
def test_stream_offset_out_of_range(sws, f300, name, offset):
    assert_error(
        sws.run("read", file_path=name, offset=offset),
        "ARGUMENT_INVALID",
        f'offset {offset} is out of range for "{name}" (300 lines)',
    )


def test_stream_byte_cap(make_ws, mode, f300):
    ws = make_ws(read_stream_min_size=1000 if mode == "streamed" else 10_485_760, read_max_bytes=64)
    # "101: line 101\n" costs 14 bytes: 4 lines fit in 64
    r = ws.run("read", file_path="f.txt", offset=101, limit=10)
    assert r.text == env(
        "f.txt", numbered(101, f300[100:104]), "(Output capped. Showing lines 101-104. Use offset=105 to continue.)"
    )


def test_stream_empty_and_tiny_files_behave_the_same(make_ws, root):
    ws = make_ws(read_stream_min_size=1)
    (root / "empty.txt").write_bytes(b"")
    (root / "nl.txt").write_bytes(b"\n")
    (root / "x.txt").write_bytes(b"x")
    assert ws.run("read", file_path="empty.txt").text == env("empty.txt", [], "(End of file - total 0 lines)")
    assert ws.run("read", file_path="nl.txt").text == env("nl.txt", ["1: "], "(End of file - total 1 line)")
    assert ws.run("read", file_path="x.txt").text == env("x.txt", ["1: x"], "(End of file - total 1 line)")
    assert_error(
        ws.run("read", file_path="x.txt", offset=2), "ARGUMENT_INVALID", 'offset 2 is out of range for "x.txt" (1 line)'
    )
    assert_error(
        ws.run("read", file_path="nl.txt", offset=3),
        "ARGUMENT_INVALID",
        'offset 3 is out of range for "nl.txt" (1 line)',
    )


def test_stream_binary_is_refused(make_ws, root):
    (root / "bin.dat").write_bytes(b"\x00" * 5000)
    ws = make_ws(read_stream_min_size=1000)
    assert_error(ws.run("read", file_path="bin.dat"), "FS_NOT_TEXT", 'cannot read "bin.dat": binary file')


def test_stream_matches_whole_across_chunk_boundaries(make_ws, root):
    # 1 MiB chunks: windows around the first and second boundary must agree byte for byte
    lines = [f"{i:06d}" for i in range(1, 400_001)]  # 7 bytes each, 2.8 MB
    (root / "big.txt").write_text("".join(f"{t}\n" for t in lines))
    whole = make_ws(session="w")
    streamed = make_ws(session="s", read_stream_min_size=1000)
    boundary = (1 << 20) // 7 + 1  # the line holding byte 1 MiB
    for offset in (boundary - 3, boundary, boundary + 1, 2 * boundary - 1, 2 * boundary + 2, 399_990):
        a = whole.run("read", file_path="big.txt", offset=offset, limit=20)
        b = streamed.run("read", file_path="big.txt", offset=offset, limit=20)
        assert a.value["lines"] == b.value["lines"]
        assert [x["text"] for x in a.value["lines"]] == lines[offset - 1 : offset + 19]
    assert_error(
        streamed.run("read", file_path="big.txt", offset=400_001),
        "ARGUMENT_INVALID",
        'offset 400001 is out of range for "big.txt" (400000 lines)',
    )


def test_stream_long_window_spanning_a_chunk(make_ws, root):
    # a single line longer than one 1 MiB chunk
    (root / "wide.txt").write_bytes(b"a" * (3 << 20) + b"\nafter\n")
    ws = make_ws(read_stream_min_size=1000)
    r = ws.run("read", file_path="wide.txt")
    assert r.text == env(
        "wide.txt",
        ["1: " + "a" * 2000 + "... (line truncated to 2000 chars)", "2: after"],
        "(End of file - total 2 lines)",
    )


def test_stream_long_multibyte_lines_match_whole(make_ws, root):
    # a streamed window keeps only a bounded head of each line: the cut must still be exact
    lines = [
        "é" * 3000,
        "日" * 2500 + "\r",
        "😀" * 2100,
        "a" * 1999 + "😀" * 5,
        "x" * 8003 + "\r",
        "short",
        "\U0001f600" * 2001 + "\r",
    ]
    data = "\n".join(lines).encode() + b"\n" + b"tail \xff" * 2000
    (root / "mb.txt").write_bytes(data)
    whole = make_ws(session="w")
    streamed = make_ws(session="s", read_stream_min_size=1000)
    for offset in (1, 2, 3, 5, 8):
        a = whole.run("read", file_path="mb.txt", offset=offset)
        b = streamed.run("read", file_path="mb.txt", offset=offset)
        assert a.text == b.text
    small = make_ws(session="x", read_stream_min_size=1000, read_max_line_length=3)
    assert small.run("read", file_path="mb.txt", offset=2, limit=1).value["lines"] == [
        {"number": 2, "text": "日日日... (line truncated to 3 chars)"}
    ]


_HUGE_LINE_PROBE = textwrap.dedent(
    """
    import json, sys, time
    from dsh_jupyter import Workspace
    root, state, name = sys.argv[1:4]
    ws = Workspace(root, session="huge", state_path=state, read_stream_min_size=1000)
    ws.run("read", file_path="small.txt")
    base = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])
    t = time.perf_counter()
    r = ws.run("read", file_path=name)
    took = time.perf_counter() - t
    grew = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) - base
    print(json.dumps({"text": r.text, "grew_kib": grew, "took": took}))
    """
)


def test_stream_one_huge_line_keeps_memory_small(root, state_file):
    # 64 MiB without a newline: gathering the whole line (or re-concatenating per chunk) would
    # cost memory and time proportional to the line
    (root / "small.txt").write_text("x\n" * 1000)  # streamed as well: the warm-up imports what streaming uses
    with open(root / "huge.txt", "wb") as fh:
        for _ in range(64):
            fh.write(b"a" * (1 << 20))
        fh.write(b"\nsecond\n")
    p = subprocess.run(
        [sys.executable, "-c", _HUGE_LINE_PROBE, str(root), str(state_file), "huge.txt"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["text"] == env(
        "huge.txt",
        ["1: " + "a" * 2000 + "... (line truncated to 2000 chars)", "2: second"],
        "(End of file - total 2 lines)",
    )
    assert out["grew_kib"] < 16 * 1024, out["grew_kib"]
    assert out["took"] < 5


# -- a 1 GB file in a subprocess: memory stays small ------------------------------------------

_K = 1_000_000  # lines per repeated chunk; line n holds (n - 1) % _K
_CHUNKS = 52  # 52,000,000 lines of 20 bytes: 1.04 GB


def _line(n: int) -> str:
    return f"{(n - 1) % _K:07d}-abcdefghijk"


_PROBE = textwrap.dedent(
    """
    import json, sys
    from dsh_jupyter import Workspace
    root, state, mode = sys.argv[1:4]
    ws = Workspace(root, session="big", state_path=state)
    out = {}
    small = ws.run("read", file_path="small.txt")
    assert not small.is_error, small.text
    if mode == "deep":
        out["deep"] = ws.run("read", file_path="big.txt", offset=50_000_000, limit=1000).text
        out["end"] = ws.run("read", file_path="big.txt", offset=51_999_001, limit=2000).text
    out["maxrss_kib"] = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])
    print(json.dumps(out))
    """
)


@pytest.mark.slow
def test_one_gigabyte_file_deep_window_in_small_memory(root, state_file):
    big = root / "big.txt"
    (root / "small.txt").write_text("x\n")
    chunk = "".join(f"{i:07d}-abcdefghijk\n" for i in range(_K)).encode()
    assert len(chunk) == 20 * _K
    try:
        with open(big, "wb") as f:
            for _ in range(_CHUNKS):
                f.write(chunk)
        del chunk
        assert big.stat().st_size == 20 * _K * _CHUNKS

        def probe(mode):
            p = subprocess.run(
                [sys.executable, "-c", _PROBE, str(root), str(state_file), mode],
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert p.returncode == 0, p.stderr
            return json.loads(p.stdout)

        base = probe("base")
        deep = probe("deep")
        growth_mib = (deep["maxrss_kib"] - base["maxrss_kib"]) / 1024
        assert growth_mib < 64, f"peak memory grew by {growth_mib:.1f} MiB"

        first = 50_000_000
        assert deep["deep"] == env(
            "big.txt",
            [f"{n}: {_line(n)}" for n in range(first, first + 1000)],
            "(Showing lines 50000000-50000999. Use offset=50001000 to continue.)",
        )
        first = 51_999_001
        assert deep["end"] == env(
            "big.txt",
            [f"{n}: {_line(n)}" for n in range(first, 52_000_001)],
            "(End of file - total 52000000 lines)",
        )
    finally:
        big.unlink(missing_ok=True)


def test_stream_invalid_utf8_and_stray_cr_match_whole(make_ws, root):
    # lines decoded together in the streamed window: a broken sequence at a line's end, a CR
    # inside a line and at its end must read exactly as the whole-file path reads them
    body = b"".join(b"l%04d \xe2\x82\n\xffx\ry\r\n" % i for i in range(300))
    (root / "odd.txt").write_bytes(body)
    whole, streamed = make_ws(), make_ws(read_stream_min_size=1000)
    for offset, limit in [(1, 50), (7, 600), (590, 20)]:
        want = whole.run("read", file_path="odd.txt", offset=offset, limit=limit)
        got = streamed.run("read", file_path="odd.txt", offset=offset, limit=limit)
        assert got.value["lines"] == want.value["lines"]
    assert want.value["lines"][:2] == [{"number": 590, "text": "\ufffdx\ry"}, {"number": 591, "text": "l0295 \ufffd"}]
