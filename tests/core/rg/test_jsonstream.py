"""The streamed rg --json parser: the same matches as the careful parser, whatever the chunking.

Real ripgrep output over real files; the stream is fed in pieces cut at every kind of place, and
any record the fast pattern cannot vouch for makes it give up (the caller then parses the whole
output carefully).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_jupyter.core.rg.jsonstream import MatchStream, parse_all

from .test_jsonform import run_rg


def fed(stdout: bytes, size: int, stream=None):
    """``stream`` (a new ``MatchStream`` by default) fed ``stdout`` in pieces of ``size`` bytes."""
    stream = MatchStream() if stream is None else stream
    for i in range(0, len(stdout), size):
        stream.feed(stdout[i : i + size])
    return stream


def triples(matches) -> list[tuple]:
    return list(zip(matches.paths, matches.lines, matches.texts))


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_bytes(b'needle one\nhay\r\nneedle crlf\r\nneedle "quoted" \\ back\ttab\n')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / 'caf\u00e9 "q".txt').write_text("x\nneedle caf\u00e9 \u2028 sep\nneedle last")
    for i in range(40):
        (tmp_path / "sub" / f"f{i:02d}.txt").write_text("".join(f"needle {i} {k}\n" for k in range(30)))
    return tmp_path


@pytest.mark.parametrize("size", [1, 7, 64, 1000, 1 << 20])
def test_any_chunking_gives_what_the_careful_parser_gives(plain, size):
    stdout = run_rg("needle", plain)
    got = fed(stdout, size).finish()
    assert got is not None
    want = parse_all(stdout)
    assert triples(got) == triples(want) and len(got) == 1205
    for i in (0, 1, 2, 500, len(got) - 1):
        assert got.record(i) == want.record(i)


def test_context_records_and_the_summary_are_skipped(plain):
    stdout = run_rg("crlf", plain, "-C", "1")
    got = fed(stdout, 100).finish()
    assert triples(got) == [(str(plain / "a.txt"), 3, "needle crlf\r\n")]


def test_base64_paths_and_lines_send_the_whole_output_to_the_careful_parser(tmp_path):
    with open(os.path.join(os.fsencode(tmp_path), b"bad\xffname.txt"), "wb") as fh:
        fh.write(b"a needle here\n")
    (tmp_path / "bad-content.txt").write_bytes(b"needle \xff\xfe end\n")
    stdout = run_rg("needle", tmp_path)
    stream = fed(stdout, 50)
    assert stream.finish() is None
    assert sorted(triples(parse_all(stdout))) == [
        (str(tmp_path / "bad-content.txt"), 1, "needle \ufffd\ufffd end\n"),
        (str(tmp_path) + "/bad\udcffname.txt", 1, "a needle here\n"),
    ]


def test_a_stream_cut_mid_record_or_holding_garbage_is_refused(plain):
    stdout = run_rg("needle", plain)
    assert fed(stdout[:-40], 4096).finish() is None
    assert fed(stdout.replace(b"\n", b"\nnot json\n", 1), 4096).finish() is None
    assert fed(stdout.replace(b'"line_number":', b'"line_number": ', 1), 4096).finish() is None
    with pytest.raises(ValueError, match=r"^malformed rg --json output: "):
        parse_all(stdout[:-40])


def test_no_output_is_no_matches():
    assert triples(MatchStream().finish()) == []
