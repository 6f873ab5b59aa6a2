"""rg's one-line-per-match form: the same matches as ``--json`` gives, or a refusal, never a guess.

Real ripgrep over real files with the names the heading form cannot vouch for (newlines, names
forged to look like other files' lines or like rg's note on binary files), compared with the
careful JSON parser; then grep over such a name beside a minified bundle, where ``--json`` would
print every megabyte-long line whole.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dsh_jupyter import Workspace
from dsh_jupyter.core.rg.headingform import HEADING_FLAGS
from dsh_jupyter.core.rg.jsonstream import parse_all
from dsh_jupyter.core.rg.lineform import LINE_FLAGS, parse_lines

from .test_headingform import fed, rg_out, triples

STRANGE = [
    "a.txt\n\nb.txt",  # a blank line and another file, in the heading form
    "c.txt\n1: needle c",  # another file's match line
    "d.txt\0".rstrip("\0") + "\nx",  # a plain newline
    "\nleading",
    "trailing\n",
]


@pytest.fixture
def strange_tree(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("needle a\nhay\nneedle a2\n")
    (tmp_path / "c.txt").write_bytes(b"needle crlf\r\nneedle \xff bad\n")
    for i, name in enumerate(STRANGE):
        (tmp_path / name).write_text(f"needle strange {i}\nneedle again {i}\n")
    with open(os.path.join(os.fsencode(tmp_path), b"bad\xffname\nx.txt"), "wb") as fh:
        fh.write(b"a needle here\n")
    (tmp_path / "sub").mkdir()
    for i in range(20):
        (tmp_path / "sub" / f"f{i:02d}.txt").write_text("".join(f"needle {i} {k}\n" for k in range(5)))
    return tmp_path


def test_names_the_heading_form_refuses_read_as_the_json_form_reads_them(strange_tree):
    assert fed(rg_out(strange_tree, "needle", *HEADING_FLAGS), 4096).finish() is None
    got = parse_lines(rg_out(strange_tree, "needle", *LINE_FLAGS))
    want = parse_all(rg_out(strange_tree, "needle", "--json"))
    assert got is not None and len(got) == 2 + 2 + 2 * len(STRANGE) + 1 + 100
    assert triples(got) == triples(want)
    assert got.counts[got.paths.index("./c.txt\n1: needle c")] == 2


def test_no_match_is_an_empty_answer():
    found = parse_lines(b"")
    assert found is not None and (found.paths, found.bodies, found.counts) == ([], [], [])


def test_rgs_note_on_a_binary_file_is_refused(tmp_path):
    (tmp_path / "late.txt").write_bytes(b"needle one\n" + b"x" * 300_000 + b"\nneedle two\n\0needle tail\n")
    (tmp_path / "z.txt").write_text("needle z\n")
    out = rg_out(tmp_path, "needle", *LINE_FLAGS)
    assert b"\n./late.txt: WARNING: stopped searching binary file after match" in out
    assert parse_lines(out) is None  # the search is then asked in --json


@pytest.mark.parametrize(
    "out",
    [
        b"\x001: x\n",  # no path
        b"./a\x001: x",  # cut inside a line
        b"./a\x00x: y\n",  # not a match line
        b"./a\x001: x\n./b",  # a path and nothing after it
        b"./a\x001: x\n\x001: y\n",  # an empty path
        b'./a\x001: x\n./a: binary file matches (found "\\0" byte around offset 9)\n./b\x001: y\n',
    ],
)
def test_what_is_not_of_the_form_is_refused(out):
    assert parse_lines(out) is None


def test_same_file_lines_make_one_block():
    found = parse_lines(b"./a\x001: x\n./a\x003: y\n./b\x002: z\n")
    assert found is not None
    assert (found.paths, found.bodies, found.counts) == (["./a", "./b"], [b"1: x\n3: y", b"2: z"], [2, 1])


@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "descriptors-only"])
def test_a_strange_name_beside_minified_files_still_answers_every_match_bounded(tmp_path, landlock):
    """The heading form refuses the newline name; the line form keeps rg's previews bounded, so
    a raw-output cap a tenth of one bundle's size holds and the answer is whole."""
    root = tmp_path / "root"
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "bundle.min.js").write_text("var a=1;" * 1_300_000 + "Workspace(x)\n")
    (root / "package-lock.json").write_text('{"a": "' + "Workspace(" * 200_000 + '"}\n')
    (root / "odd\nname.py").write_text("ws = Workspace(root)\n")
    code = textwrap.dedent(f"""
        import json
        from dsh_jupyter import Workspace
        ws = Workspace({str(root)!r}, state_path={str(tmp_path / "s.sqlite")!r}, landlock={landlock},
                       raw_output_max_bytes=1_000_000)
        r = ws.run("grep", pattern=r"Workspace\\(")
        status = open("/proc/self/status").read()
        print(json.dumps({{"text": r.text, "total": r.value["totalMatches"],
                           "rss": int(status.split("VmHWM:")[1].split()[0]) // 1024}}))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    cut = "... (line truncated to 2000 bytes)"
    assert got["total"] == 3
    text = got["text"]
    assert text.startswith("Found 3 matches\n\nnode_modules/pkg/bundle.min.js\nLine 1: var a=1;"), text[:200]
    assert '\n\n"odd\\u000aname.py"\nLine 1: ws = Workspace(root)\n\npackage-lock.json\nLine 1: {"a": ' in text
    assert text.count(cut) == 2
    assert got["rss"] < 160, f"{got['rss']} MiB"


def test_the_json_form_stays_the_last_resort(tmp_path):
    """A name that could be rg's note on a binary file: both quick forms refuse, --json answers."""
    (tmp_path / "a.txt").write_text("needle a\n")
    forged = 'a.txt: WARNING: stopped searching binary file after match (found "\\0" byte around offset 5)\nb.txt'
    (tmp_path / forged).write_text("needle forged\n")
    assert parse_lines(rg_out(tmp_path, "needle", *LINE_FLAGS)) is None
    r = Workspace(tmp_path, state_path=str(tmp_path / "s.sqlite")).run("grep", pattern="needle")
    assert {m["path"]: m["text"] for m in r.value["matches"]} == {"a.txt": "needle a", forged: "needle forged"}


def test_the_json_form_stopped_by_the_output_guard_answers_the_files_it_finished(tmp_path, monkeypatch):
    """--json prints each bundle's matching line whole: the guard stops rg, and the files it had
    finished make a page marked partial, as in the quick forms. The line form is made to refuse
    here, as it does for a name forged like rg's note on a binary file (whether it meets one
    depends on the order rg's threads print files in)."""
    from dsh_jupyter.core.tools.grep import tool as grep_tool

    monkeypatch.setattr(grep_tool, "parse_lines", lambda out: None)
    (tmp_path / "a.txt").write_text("needle a\n" * 20)
    (tmp_path / "odd\nname.txt").write_text("needle odd\n")
    for i in range(3):
        (tmp_path / f"bundle{i}.min.js").write_text("var a=1;" * 1_300_000 + "needle\n")  # 10 MB a line
    ws = Workspace(tmp_path, state_path=str(tmp_path / "s.sqlite"), raw_output_max_bytes=15_000_000)
    r = ws.run("grep", pattern="needle")
    assert not r.is_error, r.text
    v = r.value
    assert v["partialAfterBytes"] == 15_000_000
    counts: dict[str, int] = {}
    for m in v["matches"]:
        counts[m["path"]] = counts.get(m["path"], 0) + 1
    whole = {"a.txt": 20, "odd\nname.txt": 1, "bundle0.min.js": 1, "bundle1.min.js": 1, "bundle2.min.js": 1}
    assert 1 <= v["filesTotal"] < 5 and all(counts[p] == whole[p] for p in counts)  # whole files only
    assert r.text.startswith(f"Found at least {v['totalMatches']} matches\n\n")
    assert "(Partial result: rg was stopped after writing 15000000 bytes of matches" in r.text


@pytest.mark.parametrize("pieces", [1, 7, 4096])
def test_a_json_output_cut_anywhere_keeps_exactly_the_files_whose_end_was_read(strange_tree, pieces):
    """What grep keeps of a --json output stopped by the guard: the quick reading's files, or
    where it cannot vouch for a record (a name or line that is not UTF-8 comes as base64) the
    careful reading's, up to the last end record read whole."""
    from dsh_jupyter.core.rg.jsonstream import MatchStream, parse_finished

    out = rg_out(strange_tree, "needle", "--json")
    whole = parse_all(out)
    ends = [i for i in range(len(out)) if out.startswith(b'{"type":"end"', i)]
    seen = set()
    for at in range(0, len(out), 97):
        stream = MatchStream()
        for k in range(0, at, max(1, at // pieces) if at else 1):
            stream.feed(out[k : min(at, k + max(1, at // pieces))])
        quick = stream.finish_cut()
        cut = quick if quick is not None else parse_finished(out[:at])
        assert cut is not None
        ended = sum(1 for e in ends if out.index(b"\n", e) < at)  # end records wholly read
        files = list(dict.fromkeys(whole.paths))[:ended]
        assert triples(cut) == [t for t in triples(whole) if t[0] in files]
        seen.add(quick is None)
    assert seen == {True, False}  # both readings were needed
