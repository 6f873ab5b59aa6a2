"""rg's heading-form match lines: the same matches as ``--json`` gives, or a refusal, never a guess.

Real ripgrep over real files. The heading form (``PATH\\0N: TEXT`` lines, a blank line between
files) is compared with what the careful JSON parser makes of the same search; the outputs it
cannot read for sure (a name holding a newline, one forged to look like a warning, a line that
is not a match) must make it refuse, and the grep tool must then answer exactly what the JSON
form says. The spill made from the blocks' bytes must equal the one made row by row.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
from pathlib import Path

import pytest

from dsh_jupyter import Workspace
from dsh_jupyter.core.render.search import render_grep_spill, render_grep_spill_runs, truncate_line
from dsh_jupyter.core.rg.headingform import HEADING_FLAGS, BlockStream, FileBlocks
from dsh_jupyter.core.rg.jsonstream import parse_all
from dsh_jupyter.core.rg.recheck import Rechecker
from dsh_jupyter.core.rg.runner import find_rg
from dsh_jupyter.core.tools.grep.page import _decoded, shaped_bodies
from dsh_jupyter.core.tools.grep.tool import _confirmed

from .test_jsonstream import fed as fed_in_pieces

ARGS = ["--no-config", "--no-ignore", "--hidden"]


def rg_out(directory: Path, pattern: str, *form: str) -> bytes:
    proc = subprocess.run(
        [find_rg(), *ARGS, *form, "--sort=path", f"--regexp={pattern}", "--", "."],
        cwd=directory,
        capture_output=True,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


def fed(stdout: bytes, size: int) -> BlockStream:
    return fed_in_pieces(stdout, size, BlockStream())


def triples(found) -> list[tuple]:
    """(path, line, text) of every match; texts as the page shows them before any cut."""
    if isinstance(found, FileBlocks):
        return [(path, n, _decoded(raw)) for b, path in enumerate(found.paths) for n, raw in found.lines(b)]
    return [(p, n, t.removesuffix("\n").removesuffix("\r")) for p, n, t in zip(found.paths, found.lines, found.texts)]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_bytes(b'needle one\nhay\r\nneedle crlf\r\nneedle "q" \\ back\ttab: 12:x\n')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / 'caf\u00e9 "q":7:.txt').write_text("x\nneedle caf\u00e9 \u2028 sep\nneedle last")
    (tmp_path / "bad-content.txt").write_bytes(b"needle \xff\xfe end\n")
    (tmp_path / "empty-after.txt").write_bytes(b"needle\n\n\nneedle: \n")
    with open(os.path.join(os.fsencode(tmp_path), b"bad\xffname.txt"), "wb") as fh:
        fh.write(b"a needle here\n")
    for i in range(30):
        (tmp_path / "sub" / f"f{i:02d}.txt").write_text("".join(f"needle {i} {k}\n" for k in range(20)))
    return tmp_path


@pytest.mark.parametrize("size", [1, 5, 64, 999, 1 << 20])
def test_any_chunking_gives_what_the_json_form_gives(tree, size):
    got = fed(rg_out(tree, "needle", *HEADING_FLAGS), size).finish()
    want = parse_all(rg_out(tree, "needle", "--json"))
    assert got is not None and len(got) == 609
    assert triples(got) == triples(want)
    # the raw text is what rg printed, byte for byte, for the page's submatch search
    block = got.paths.index("./bad-content.txt")
    assert got.line(block, 0) == (1, b"needle \xff\xfe end")
    assert got.line(got.paths.index("./a.txt"), 1) == (3, b"needle crlf\r")
    assert "./bad\udcffname.txt" in got.paths  # undecodable name bytes kept as surrogate escapes
    assert got.counts[got.paths.index("./empty-after.txt")] == 2


def test_no_output_is_no_matches():
    got = BlockStream().finish()
    assert got is not None and len(got) == 0 and got.runs() == ([], [], [])


def test_a_stream_cut_mid_line_or_holding_other_lines_is_refused(tree):
    out = rg_out(tree, "needle", *HEADING_FLAGS)
    assert fed(out, 4096).finish() is not None
    assert fed(out[:-5], 4096).finish() is None  # cut inside a line
    assert fed(out.replace(b"\n", b"\nnot a match line\n", 1), 4096).finish() is None
    assert b"\n3: " in out and fed(out.replace(b"\n3: ", b"\n3:", 1), 4096).finish() is None  # not the separator
    assert fed(out.replace(b": ", b": \0", 1), 4096).finish() is None  # a NUL in a text
    assert fed(out[::-1].replace(b" :", b"\0 :", 1)[::-1], 4096).finish() is None  # in the last file's
    one = rg_out(tree, "needle", *HEADING_FLAGS, "--glob=/a.txt")
    assert b"\n\n" not in one and fed(one, 4096).finish() is not None
    one = one.replace(b": ", b": \0", 2)
    assert fed(one, 4096).finish() is None  # in the only file's
    assert fed(out.replace(b"\0", b"", 1), 4096).finish() is None  # a block without its path
    assert fed(b"\n" + out, 4096).finish() is None  # a blank line where a path must be
    # a warning line is believed only as the last line of its own file's block
    warning = b': WARNING: stopped searching binary file after match (found "\\0" byte around offset 9)'
    first = out.index(b"\0")
    path = out[:first]
    end = out.index(b"\n\n")
    assert fed(out[:end] + b"\n" + path + warning + out[end:], 4096).finish() is not None
    assert fed(out[:end] + b"\n./other.txt" + warning + out[end:], 4096).finish() is None
    second = out.index(b"\n", first)
    assert fed(out[:second] + b"\n" + path + warning + out[second:], 4096).finish() is None


_MATCH_LINE = re.compile(rb"\d+: [^\0]*")


def reference(blob: bytes) -> list[tuple[bytes, bytes]] | None:
    """The heading form read line by line, the obvious way: (path, line) of every match."""
    if not blob:
        return []
    if not blob.endswith(b"\n"):
        return None
    lines = blob[:-1].split(b"\n")
    out = []
    path = None
    for i, line in enumerate(lines):
        last_of_block = i + 1 == len(lines) or lines[i + 1] == b""
        if path is None:
            path, nul, rest = line.partition(b"\0")
            if not nul or not path or _MATCH_LINE.fullmatch(rest) is None:
                return None
            out.append((path, rest))
        elif line == b"":
            path = None
        elif _MATCH_LINE.fullmatch(line):
            out.append((path, line))
        elif not (
            last_of_block
            and line.startswith(path + b": WARNING: stopped searching binary file after match")
            and b"\0" not in line
        ):
            return None
    return None if path is None else out


def test_a_damaged_output_is_read_as_the_obvious_reading_reads_it_or_refused(tmp_path):
    (tmp_path / "late.txt").write_bytes(b"needle one\n" + b"x" * 300_000 + b"\nneedle two\n\0needle tail\n")
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text("needle 1\nhay\nneedle: 2\n")
    out = rg_out(tmp_path, "needle", *HEADING_FLAGS)
    assert b"WARNING" in out
    rng = random.Random(11)
    outcomes = {"read": 0, "refused": 0}
    for _ in range(3000):
        damaged = bytearray(out)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(damaged) + 1)
            byte = rng.choice(b"\n\0\n\0:1 x")
            choice = rng.random()
            if choice < 0.4:
                damaged[at:at] = bytes([byte])
            elif choice < 0.7 and at < len(damaged):
                del damaged[at]
            elif at < len(damaged):
                damaged[at] = byte
        want = reference(bytes(damaged))
        got = fed(bytes(damaged), rng.choice([1, 2, 3, 97, 4096])).finish()  # blank lines cut across pieces too
        # refusing is always safe (the search is asked again in --json), but it refuses exactly
        # what the obvious reading refuses, and reads the rest as it does
        assert (got is None) == (want is None), bytes(damaged)
        if got is None:
            outcomes["refused"] += 1
            continue
        outcomes["read"] += 1
        mine = [
            (p.encode("utf-8", "surrogateescape"), line)
            for b, p in enumerate(got.paths)
            for line in got.bodies[b].split(b"\n")
        ]
        assert mine == want, bytes(damaged)
    assert outcomes["read"] > 300 and outcomes["refused"] > 300, outcomes


def test_a_binary_files_warning_line_is_dropped_and_grep_answers_as_json_does(tmp_path):
    (tmp_path / "late.txt").write_bytes(b"needle one\n" + b"x" * 300_000 + b"\nneedle two\n\0needle tail\n")
    (tmp_path / "z.txt").write_text("needle z\n")
    out = rg_out(tmp_path, "needle", *HEADING_FLAGS)
    assert b"./late.txt: WARNING: stopped searching binary file after match" in out
    got = fed(out, 4096).finish()
    assert got is not None
    assert triples(got) == triples(parse_all(rg_out(tmp_path, "needle", "--json")))
    r = Workspace(tmp_path, state_path=str(tmp_path / "s.sqlite")).run("grep", pattern="needle")
    assert r.text == "Found 2 matches\n\nlate.txt\nLine 1: needle one\n\nz.txt\nLine 1: needle z"
    assert [m["submatches"] for m in r.value["matches"]] == [[[0, 6]], [[0, 6]]]


@pytest.mark.parametrize(
    "forged",
    [
        'a.txt: WARNING: stopped searching binary file after match (found "\\0" byte around offset 5)\nb.txt',
        "a.txt\n\nb.txt",
        "c.txt\n1: needle c",
    ],
)
@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "descriptors-only"])
def test_a_name_holding_newlines_is_not_believed(tmp_path, forged, landlock):
    # In the heading form these names read as more than one file or line; only one file, with
    # this strange name, holds each match. (Without Landlock the --json answer is rechecked.)
    (tmp_path / "a.txt").write_text("needle a\n")
    (tmp_path / forged).write_text("needle forged\n")
    (tmp_path / "b.txt").write_text("hay\n")
    assert fed(rg_out(tmp_path, "needle", *HEADING_FLAGS), 4096).finish() is None
    r = Workspace(tmp_path, state_path=str(tmp_path / "s.sqlite"), landlock=landlock).run("grep", pattern="needle")
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
    assert [(m["line"], m["submatches"]) for m in r.value["matches"]] == [
        (1, [[3, 5], [6, 8], [11, 13]]),
        (3, [[0, 2]]),
    ]


def test_plain_string_patterns_find_their_spans_without_rg_and_agree_with_it(tmp_path):
    from dsh_jupyter.core.tools.grep.spans import literal_spans

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


# -------------------------------------------------------------------- the spill from the bytes

_PIECES = [
    b"a",
    b"needle",
    b" ",
    b"\xff",
    b"\xe2\x82",
    b"\xe2\x82\xac",
    b"\xf0\x9f\x98\x80",
    b"\r",
    b"\t",
    b": ",
    b"\x1b[0m",
    "\u00e9".encode(),
]


@pytest.mark.parametrize("limit", [1, 7, 12, 40, 2000])
def test_spill_rows_from_bytes_equal_the_texts_the_page_shows(limit):
    # Texts of random bytes around the cap: CRs (also ending a file's last line), undecodable
    # bytes (each shown as 3-byte U+FFFD, so a short raw line can still pass the cap), multi-byte
    # characters cut at the boundary; several files shaped in one pass.
    rng = random.Random(limit)
    for _ in range(200):
        files = []
        for f in range(rng.randint(1, 4)):
            raws = [b"".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 20))) for _ in range(rng.randint(1, 5))]
            files.append((f"f{f}", sorted(rng.sample(range(1, 500), len(raws))), raws))
        bodies = [b"\n".join(b"%d: %s" % pair for pair in zip(numbers, raws)) for _, numbers, raws in files]
        total = sum(len(raws) for _, _, raws in files)
        got = render_grep_spill_runs([f[0] for f in files], shaped_bodies(bodies, limit), total).decode()
        rows = [
            {"path": path, "line": n, "text": truncate_line(_decoded(raw), limit)}
            for path, numbers, raws in files
            for n, raw in zip(numbers, raws)
        ]
        assert got == render_grep_spill(rows, total), files


def test_a_capped_grep_spills_exactly_what_the_json_form_would(tmp_path):
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_bytes(b"needle crlf\r\n" + b"needle " + b"\xff" * 30 + b"\n" + b"needle " * 40 + b"\n")
    (root / 'b "q".txt').write_bytes(b"x\nneedle \xe2\x82\xac tail\nneedle\r")
    for i in range(5):
        (root / "sub" / f"{i}.txt").write_text(f"needle {i}\n" * 3)
    ws = Workspace(root, state_path=str(tmp_path / "s.sqlite"), grep_max_matches=4, grep_max_line_bytes=60)
    r = ws.run("grep", pattern="needle")
    assert r.value["totalMatches"] == 20
    spill = Path(r.value["spill"]).read_text(encoding="utf-8")
    want = parse_all(rg_out(root, "needle", "--json"))
    rows = [
        {"path": p.removeprefix("./"), "line": n, "text": truncate_line(t, 60).removesuffix("\r")}
        for p, n, t in zip(want.paths, want.lines, want.texts)
    ]
    assert spill == render_grep_spill(sorted(rows, key=lambda row: row["path"]), 20)
    # 30 undecodable bytes are 30 three-byte U+FFFD: 17 of them fit in the 60-byte cap after "needle "
    assert "\nLine 2: needle " + "\ufffd" * 17 + "... (line truncated to 60 bytes)\n" in spill
    assert "\r" not in spill


# ------------------------------------------------------------- descriptors only: every line checked


def test_grep_without_landlock_shows_what_it_shows_with_it(tree, tmp_path):
    fenced = Workspace(tree, state_path=str(tmp_path / "a.sqlite"), landlock=True).run("grep", pattern="needle")
    bare = Workspace(tree, state_path=str(tmp_path / "b.sqlite"), landlock=False).run("grep", pattern="needle")
    assert bare.value["totalMatches"] == fenced.value["totalMatches"] == 609
    assert bare.value["matches"] == fenced.value["matches"] and len(bare.value["matches"]) == 250
    # the spill root lies in the tree here, so the locators are shown relative to it
    assert (tree / bare.value["spill"]).read_bytes() == (tree / fenced.value["spill"]).read_bytes()


def test_the_recheck_drops_a_line_the_file_no_longer_holds(tree):
    found = fed(rg_out(tree, "needle", *HEADING_FLAGS), 1 << 20).finish()
    (tree / "a.txt").write_bytes(b"needle one\nhay\r\nchanged crlf\r\n")  # line 3 changed, line 4 gone
    fd = os.open(tree, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with Rechecker(fd) as check:
            kept = _confirmed(check, found, 2000)
    finally:
        os.close(fd)
    assert len(kept) == len(found) - 2
    assert kept.lines(kept.paths.index("./a.txt")) == [(1, b"needle one")]
    assert triples(kept) == [t for t in triples(found) if t[0] != "./a.txt" or t[1] == 1]
