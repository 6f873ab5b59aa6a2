"""rg's plain match lines: the same matches as ``--json`` gives, or a refusal, never a guess.

Real ripgrep over real files. The plain form (``PATH\\0N:TEXT``) is compared with what the
careful JSON parser makes of the same search; the outputs it cannot read for sure (a binary
file's warning line on stdout, a name holding a newline, one forged to look like a warning) must
make it refuse, and the grep tool must then answer exactly what the JSON form says.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from dsh_jupyter import Workspace
from dsh_jupyter.core.rg import find_rg
from dsh_jupyter.core.rglines import PLAIN_FLAGS, LineStream
from dsh_jupyter.core.rgstream import parse_all

ARGS = ["--no-config", "--no-ignore", "--hidden"]


def rg_out(directory: Path, pattern: str, *form: str) -> bytes:
    proc = subprocess.run([find_rg(), *ARGS, *form, "--sort=path", f"--regexp={pattern}", "--", "."], cwd=directory,
                          capture_output=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


def fed(stdout: bytes, size: int) -> LineStream:
    stream = LineStream()
    for i in range(0, len(stdout), size):
        stream.feed(stdout[i : i + size])
    return stream


def triples(m) -> list[tuple]:
    # JSON texts keep rg's line terminator; the plain form's never do
    return [(p, n, t.removesuffix("\n").removesuffix("\r")) for p, n, t in zip(m.paths, m.lines, m.texts)]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_bytes(b"needle one\nhay\r\nneedle crlf\r\nneedle \"q\" \\ back\ttab: 12:x\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "caf\u00e9 \"q\":7:.txt").write_text("x\nneedle caf\u00e9 \u2028 sep\nneedle last")
    (tmp_path / "bad-content.txt").write_bytes(b"needle \xff\xfe end\n")
    with open(os.path.join(os.fsencode(tmp_path), b"bad\xffname.txt"), "wb") as fh:
        fh.write(b"a needle here\n")
    for i in range(30):
        (tmp_path / "sub" / f"f{i:02d}.txt").write_text("".join(f"needle {i} {k}\n" for k in range(20)))
    return tmp_path


@pytest.mark.parametrize("size", [1, 5, 64, 999, 1 << 20])
def test_any_chunking_gives_what_the_json_form_gives(tree, size):
    got = fed(rg_out(tree, "needle", *PLAIN_FLAGS), size).finish()
    want = parse_all(rg_out(tree, "needle", "--json"))
    assert got is not None and len(got) == 607
    assert triples(got) == triples(want)
    # the raw line is what rg printed, byte for byte, for the page's submatch search
    assert got.raw_line(got.paths.index("./bad-content.txt")) == b"needle \xff\xfe end"
    assert "./bad\udcffname.txt" in got.paths  # undecodable name bytes kept as surrogate escapes
    assert all(got.record(i) is None for i in range(len(got)))


def test_no_output_is_no_matches():
    got = LineStream().finish()
    assert got is not None and len(got) == 0 and got.texts == []


def test_a_stream_cut_mid_line_or_holding_other_lines_is_refused(tree):
    out = rg_out(tree, "needle", *PLAIN_FLAGS)
    assert fed(out[:-5], 4096).finish() is None
    assert fed(out.replace(b"\n", b"\nnot a match line\n", 1), 4096).finish() is None
    assert fed(out.replace(b":", b":\0", 1), 4096).finish() is None  # a NUL in a text


def test_a_binary_files_warning_line_is_refused_and_grep_answers_as_json_does(tmp_path):
    (tmp_path / "late.txt").write_bytes(b"needle one\n" + b"x" * 300_000 + b"\nneedle two\n\0needle tail\n")
    (tmp_path / "z.txt").write_text("needle z\n")
    out = rg_out(tmp_path, "needle", *PLAIN_FLAGS)
    assert b"WARNING: stopped searching binary file after match" in out
    assert fed(out, 4096).finish() is None
    r = Workspace(tmp_path, state_path=str(tmp_path / "s.sqlite")).run("grep", pattern="needle")
    assert r.text == "Found 2 matches\n\nlate.txt\nLine 1: needle one\n\nz.txt\nLine 1: needle z"
    assert [m["submatches"] for m in r.value["matches"]] == [[[0, 6]], [[0, 6]]]


def test_a_name_forged_to_look_like_a_warning_and_a_record_is_not_believed(tmp_path):
    # In the plain form these bytes read as "a.txt had a binary warning, then b.txt matched";
    # only one file, with this strange name, holds the match.
    forged = 'a.txt: WARNING: stopped searching binary file after match (found "\\0" byte around offset 5)\nb.txt'
    (tmp_path / "a.txt").write_text("needle a\n")
    (tmp_path / forged).write_text("needle forged\n")
    (tmp_path / "b.txt").write_text("hay\n")
    assert fed(rg_out(tmp_path, "needle", *PLAIN_FLAGS), 4096).finish() is None
    r = Workspace(tmp_path, state_path=str(tmp_path / "s.sqlite")).run("grep", pattern="needle")
    shown = {m["path"]: m["text"] for m in r.value["matches"]}
    assert shown == {"a.txt": "needle a", forged: "needle forged"}
    assert "\nb.txt\nLine 1" not in r.text


def test_crlf_and_undecodable_lines_read_as_in_json(tmp_path):
    (tmp_path / "m.txt").write_bytes(b"needle crlf\r\nneedle \xff end\r\nneedle lf\n")
    r = Workspace(tmp_path, state_path=str(tmp_path / "s.sqlite")).run("grep", pattern="needle")
    assert r.text == "Found 3 matches\n\nm.txt\nLine 1: needle crlf\nLine 2: needle \ufffd end\nLine 3: needle lf"
    assert [m["submatches"] for m in r.value["matches"]] == [[[0, 6]]] * 3


def test_submatches_of_the_shown_page_come_from_its_lines_alone(tmp_path):
    # A multi-byte prefix: rg's byte offsets become character offsets; every match on a line.
    (tmp_path / "u.txt").write_text("\u00e9\u00e9 ab-ab x ab\nnothing\nab\n")
    r = Workspace(tmp_path, state_path=str(tmp_path / "s.sqlite")).run("grep", pattern="a+b")
    assert [(m["line"], m["submatches"]) for m in r.value["matches"]] == [(1, [[3, 5], [6, 8], [11, 13]]),
                                                                          (3, [[0, 2]])]


def test_plain_string_patterns_find_their_spans_without_rg_and_agree_with_it(tmp_path):
    from dsh_jupyter.core.tools.grepspans import literal_spans

    assert literal_spans("ab", ["xabab ab", "\ufffdab", "none"]) == [[[1, 3], [3, 5], [6, 8]], [[1, 3]], []]
    assert literal_spans("aa", ["aaa"]) == [[[0, 2]]]  # leftmost first, not overlapping, as rg
    for special in ["a.b", "a+", "(x)", "a|b", "\\d", "[a]", "^a", "a$", "a{2}", "a?", "a*", "\u00e9"]:
        assert literal_spans(special, ["a"]) is None, special
    (tmp_path / "u.txt").write_bytes("\u00e9\u00e9 ab-ab x ab \xff\n".encode() + b"ab\xffab\n")
    ws = Workspace(tmp_path, state_path=str(tmp_path / "s.sqlite"))
    plain = ws.run("grep", pattern="ab")  # found by str.find
    regex = ws.run("grep", pattern="a[b]")  # found by rg over the shown lines
    assert [m["submatches"] for m in plain.value["matches"]] == [[[3, 5], [6, 8], [11, 13]], [[0, 2], [3, 5]]]
    assert [m["submatches"] for m in regex.value["matches"]] == [m["submatches"] for m in plain.value["matches"]]
