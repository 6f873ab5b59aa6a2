"""glob and grep through the Workspace: real trees, real rg, exact model text."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from dsh_jupyter import Workspace
from dsh_jupyter.core.rg.runner import find_rg
from dsh_jupyter.seedtree import OLD_SUBTREE, build_seed_tree

HINT = "Use read with offset/limit, or grep this path to search within it."


def make(root: Path, tmp_path: Path, **settings) -> Workspace:
    return Workspace(root, state_path=tmp_path / "state" / "s.sqlite", **settings)


def write(root: Path, rel: str, text: str = "x\n", mtime: float | None = None) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "ws"
    r.mkdir()
    return r


# ------------------------------------------------------------------------------ the seed's shape


def test_seed_glob_star_shows_every_top_level_entry_with_files(tmp_path: Path) -> None:
    tree = build_seed_tree(str(tmp_path / "ws"))
    ws = make(Path(tree.root), tmp_path)
    r = ws.run("glob", pattern="*")
    assert not r.is_error
    shown_tops = {p.split("/", 1)[0] for p in r.value["paths"]}
    assert shown_tops == set(tree.with_files)
    assert r.value["totalPaths"] == 716
    assert r.value["sampled"] is True
    loc = r.value["spill"]
    assert loc is not None and loc.endswith("-glob-results.txt")
    assert r.text.endswith(
        "\n\n(Showing 100 of 716 paths, sampled across 23 of the 23 top-level entries this pattern "
        "matched instead of taken in modification-time order. Full sorted result stored at: "
        f"{loc}. {HINT})"
    )
    # The page is grouped by entry: each top-level name appears in one contiguous run.
    tops = [p.split("/", 1)[0] for p in r.value["paths"]]
    runs = [t for i, t in enumerate(tops) if i == 0 or tops[i - 1] != t]
    assert len(runs) == len(set(runs))
    # The spill holds all 716 paths, oldest first, one per line and nothing else.
    spilled = Path(loc).read_text(encoding="utf-8").splitlines()
    assert len(spilled) == 716
    mtimes = [os.stat(os.path.join(tree.root, p)).st_mtime_ns for p in spilled]
    assert mtimes == sorted(mtimes)
    assert all(p.startswith(OLD_SUBTREE + "/") for p in spilled[:355])


def test_seed_head_without_sampling_shows_one_entry(tmp_path: Path) -> None:
    tree = build_seed_tree(str(tmp_path / "ws"))
    ws = make(Path(tree.root), tmp_path, glob_sample_over_cap=False)
    r = ws.run("glob", pattern="*")
    assert {p.split("/", 1)[0] for p in r.value["paths"]} == {OLD_SUBTREE}
    assert r.value["sampled"] is False
    assert f"\n\n(Showing 100 of 716 paths. Full sorted result stored at: {r.value['spill']}. {HINT})" in r.text


def test_seed_list_answers_what_is_here(tmp_path: Path) -> None:
    tree = build_seed_tree(str(tmp_path / "ws"))
    r = make(Path(tree.root), tmp_path).run("list")
    names = [e["name"] for e in r.value["entries"]]
    assert sorted(names) == tree.top_level
    assert "empty-cache/" in r.text.splitlines()
    assert r.text.endswith("\n\n(24 entries: 21 directories, 3 files)\n</content>")


# ------------------------------------------------------------------------------------- glob


def test_glob_within_cap_is_modification_time_order_without_footer(root: Path, tmp_path: Path) -> None:
    write(root, "b.py", mtime=3_000)
    write(root, "a.py", mtime=1_000)
    write(root, "sub/c.py", mtime=2_000)
    write(root, "notes.txt", mtime=500)
    r = make(root, tmp_path).run("glob", pattern="*.py")
    assert r.text == "a.py\nsub/c.py\nb.py"
    assert r.value == {
        "pattern": "*.py",
        "root": ".",
        "paths": ["a.py", "sub/c.py", "b.py"],
        "totalPaths": 3,
        "sampled": False,
        "groupsShown": 0,
        "groupsTotal": 0,
        "spill": None,
        "capped": False,
        "nextOffset": None,
        "footer": "",
    }


def test_glob_nothing(root: Path, tmp_path: Path) -> None:
    write(root, "a.txt")
    assert make(root, tmp_path).run("glob", pattern="*.rs").text == "No files found"


def test_glob_flat_result_keeps_the_plain_footer(root: Path, tmp_path: Path) -> None:
    for i in range(5):
        write(root, f"f{i}.txt", mtime=1_000 + i)
    r = make(root, tmp_path, glob_max_results=3).run("glob", pattern="*.txt")
    assert r.value["paths"] == ["f0.txt", "f1.txt", "f2.txt"]
    assert (
        r.text
        == f"f0.txt\nf1.txt\nf2.txt\n\n(Showing 3 of 5 paths. Full sorted result stored at: {r.value['spill']}. {HINT})"
    )


def test_glob_more_groups_than_slots(root: Path, tmp_path: Path) -> None:
    for g in range(6):
        for i in range(2):
            write(root, f"d{g}/f{i}.txt", mtime=1_000 + g * 10 + i)
    r = make(root, tmp_path, glob_max_results=4).run("glob", pattern="*.txt", path=".")
    assert r.value["paths"] == ["d0/f0.txt", "d1/f0.txt", "d2/f0.txt", "d3/f0.txt"]
    assert r.text.endswith(
        "(Showing 4 of 12 paths, sampled across 4 of the 6 top-level entries this pattern matched instead "
        "of taken in modification-time order; narrow path to see the others. Full sorted result stored at: "
        f"{r.value['spill']}. {HINT})"
    )


def test_glob_with_a_path_groups_below_that_path(root: Path, tmp_path: Path) -> None:
    for g in ("x", "y"):
        for i in range(3):
            write(root, f"src/{g}/f{i}.py", mtime=1_000 + (0 if g == "x" else 100) + i)
    r = make(root, tmp_path, glob_max_results=4).run("glob", pattern="*.py", path="src")
    assert r.value["paths"] == ["src/x/f0.py", "src/x/f1.py", "src/y/f0.py", "src/y/f1.py"]
    assert r.value["groupsTotal"] == 2 and r.value["root"] == "src"


def test_glob_refuses_negation_and_option_like_values_do_no_harm(root: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pre-ran"
    evil = tmp_path / "evil.sh"
    evil.write_text(f'#!/bin/sh\ntouch {marker}\ncat "$1"\n')
    evil.chmod(0o755)
    write(root, f"--pre={evil}", "hello\n")
    write(root, "-rf/inner.txt", "hello\n")
    ws = make(root, tmp_path)
    neg = ws.run("glob", pattern="!*.txt")
    assert neg.is_error and neg.value["code"] == "ARGUMENT_INVALID"
    assert neg.text == 'Error: pattern must not start with "!"; negated globs are not supported'
    assert ws.run("glob", pattern=f"--pre={evil}").text == f'"--pre={evil}"'.strip('"')
    assert ws.run("glob", pattern="*", path="-rf").text == "-rf/inner.txt"
    r = ws.run("grep", pattern=f"--pre={evil}", path=".")
    assert r.text == "No matches found"
    r = ws.run("grep", pattern="hello", include=f"--pre={evil}")
    assert r.value["totalMatches"] == 1
    r = ws.run("grep", pattern="-e", path="-rf")
    assert r.text == "No matches found"
    assert not marker.exists()


def test_vcs_folders_are_excluded_and_dotfiles_included(root: Path, tmp_path: Path) -> None:
    write(root, ".env", "needle\n")
    write(root, ".git/config", "needle\n")
    write(root, "pkg/.hg/store", "needle\n")
    write(root, "pkg/.jj/x", "needle\n")
    write(root, "pkg/mod.py", "needle\n")
    ws = make(root, tmp_path)
    assert sorted(ws.run("glob", pattern="*").value["paths"]) == [".env", "pkg/mod.py"]
    assert ws.run("glob", pattern="*", path=".git").text == "No files found"
    assert ws.run("glob", pattern="**/*", path="pkg/.hg").text == "No files found"
    r = ws.run("grep", pattern="needle")
    assert sorted(m["path"] for m in r.value["matches"]) == [".env", "pkg/mod.py"]
    assert ws.run("grep", pattern="needle", path=".git/config").text == "No matches found"


def test_glob_target_must_be_a_directory(root: Path, tmp_path: Path) -> None:
    write(root, "a.txt")
    ws = make(root, tmp_path)
    assert ws.run("glob", pattern="*", path="a.txt").text == 'Error: cannot glob "a.txt": not a directory'
    assert ws.run("glob", pattern="*", path="nope").value["code"] == "FS_NOT_FOUND"
    assert ws.run("glob", pattern="*", path="../").value["code"] == "FS_OUTSIDE_ROOT"


def test_glob_invalid_utf8_file_name(root: Path, tmp_path: Path) -> None:
    os.makedirs(root / "d")
    with open(os.path.join(os.fsencode(root / "d"), b"bad\xffname.txt"), "wb") as f:
        f.write(b"needle\n")
    ws = make(root, tmp_path)
    assert ws.run("glob", pattern="*.txt").text == '"d/bad\\udcffname.txt"'
    assert ws.run("grep", pattern="needle").text == 'Found 1 match\n\n"d/bad\\udcffname.txt"\nLine 1: needle'
    # the path in the value names the file again
    path = ws.run("glob", pattern="*.txt").value["paths"][0]
    assert ws.run("read", file_path=path).text.endswith("1: needle\n\n(End of file - total 1 line)\n</content>")


def test_glob_newline_in_name_is_quoted(root: Path, tmp_path: Path) -> None:
    write(root, "two\nlines.txt")
    assert make(root, tmp_path).run("glob", pattern="*.txt").text == '"two\\u000alines.txt"'


# ------------------------------------------------------------------------------------- grep


def test_grep_text_and_value(root: Path, tmp_path: Path) -> None:
    write(root, "a.py", "import os\nx = 1\nimport sys\n")
    write(root, "b/c.py", "import re\n")
    r = make(root, tmp_path).run("grep", pattern="^import", include="*.py")
    assert r.text == "Found 3 matches\n\na.py\nLine 1: import os\nLine 3: import sys\n\nb/c.py\nLine 1: import re"
    assert r.value["files"] == 2 and r.value["spill"] is None and r.value["totalMatches"] == 3


def test_grep_single_file_target(root: Path, tmp_path: Path) -> None:
    write(root, "a.py", "one\ntwo\n")
    assert make(root, tmp_path).run("grep", pattern="two", path="a.py").text == "Found 1 match\n\na.py\nLine 2: two"


def test_grep_cap_spills_the_complete_result(root: Path, tmp_path: Path) -> None:
    for i in range(4):
        write(root, f"f{i}.txt", "hit\nhit\n")
    ws = make(root, tmp_path, grep_max_matches=3)
    r = ws.run("grep", pattern="hit")
    loc = r.value["spill"]
    # each file is its own top-level entry: the page takes every entry's first match in turn
    assert r.text == (
        "Found 3 of 8 matches\n\nf0.txt\nLine 1: hit\n\nf1.txt\nLine 1: hit\n\nf2.txt\nLine 1: hit\n\n"
        "(Showing 3 of 8 matches from 3 of the 4 files that matched, sampled across top-level entries and "
        "files instead of taken in path order; narrow path or include to see the others. "
        f"Full grep result stored at: {loc}. {HINT})"
    )
    full = Path(loc).read_text(encoding="utf-8")
    assert full.startswith("Found 8 matches\n\nf0.txt\nLine 1: hit\n")
    assert full.count("Line ") == 8
    # readable by read, searchable by grep, listed per session, read-only
    page = ws.run("read", file_path=loc, offset=3, limit=2)
    assert page.text.splitlines()[3:5] == ["3: f0.txt", "4: Line 1: hit"]
    assert ws.run("grep", pattern="f3", path=loc).value["totalMatches"] == 1
    assert [s["locator"] for s in ws.spill_list()] == [loc]
    assert ws.run("write", file_path=loc, content="x").value["code"] == "FS_READ_ONLY"
    assert ws.run("edit", file_path=loc, old_string="hit", new_string="x").value["code"] == "FS_READ_ONLY"
    # deleted with their session
    assert ws.delete_session("default") is True
    assert not os.path.exists(loc)


def needle_tree(root: Path) -> None:
    """The shape that hid 45 of 55 files: aaa/ first in path order with 1,000 matches in 10
    files, then nine entries holding 15 matches each, in 5 files of 3."""
    for i in range(10):
        write(root, f"aaa/f{i}.txt", "needle\n" * 100)
    for entry in "bcdefghij":
        for i in range(5):
            write(root, f"{entry * 3}/f{i}.txt", "needle\n" * 3)


def test_grep_over_the_cap_is_spread_across_entries_and_files(root: Path, tmp_path: Path) -> None:
    needle_tree(root)
    ws = make(root, tmp_path)
    r = ws.run("grep", pattern="needle")
    loc = r.value["spill"]
    files = list(dict.fromkeys(m["path"] for m in r.value["matches"]))
    assert len(files) == 55 and files == sorted(files)  # every matching file, in path order
    per_file = [sum(1 for m in r.value["matches"] if m["path"] == f) for f in files]
    # the nine small entries whole (135 matches); aaa's 115 slots round-robin over its 10 files
    assert per_file == [12] * 5 + [11] * 5 + [3] * 45
    # each file shows its first matches, in line order
    assert [m["line"] for m in r.value["matches"] if m["path"] == "aaa/f9.txt"] == list(range(1, 12))
    assert {k: v for k, v in r.value.items() if k != "matches"} == {
        "pattern": "needle",
        "totalMatches": 1135,
        "files": 55,
        "filesTotal": 55,
        "sampled": True,
        "spill": loc,
        "unreadable": 0,
        "nextOffset": None,
        "footer": r.footer(),
    }
    lines = r.text.split("\n")
    assert lines[:4] == ["Found 250 of 1135 matches", "", "aaa/f0.txt", "Line 1: needle"]
    footer = (
        "(Showing 250 of 1135 matches from all 55 files that matched, sampled across top-level entries and "
        f"files instead of taken in path order. Full grep result stored at: {loc}. {HINT})"
    )
    assert lines[-2:] == ["", footer]
    assert r.footer() == footer and r.header() == "Found 250 of 1135 matches"
    frame = r.to_frame()
    assert list(frame.columns) == ["path", "line", "text"] and len(frame) == 250
    assert frame["path"].tolist() == [m["path"] for m in r.value["matches"]]
    # the spill keeps the complete result, in path order
    spilled = Path(loc).read_text(encoding="utf-8")
    assert spilled.startswith("Found 1135 matches\n\naaa/f0.txt\nLine 1: needle\nLine 2: needle\n")
    assert spilled.count("Line ") == 1135
    blocks = [b.split("\n", 1)[0] for b in spilled.split("\n\n")[1:]]
    assert blocks == sorted(blocks) and len(blocks) == 55
    # the call log holds the same text
    assert ws.calls()["calls"][-1]["text"] == r.text


def test_grep_sampled_page_that_cannot_reach_every_file(root: Path, tmp_path: Path) -> None:
    for entry in ("a", "b"):
        for i in range(4):
            write(root, f"{entry}/f{i}.txt", "hit\nhit\n")
    r = make(root, tmp_path, grep_max_matches=5).run("grep", pattern="hit")
    assert [(m["path"], m["line"]) for m in r.value["matches"]] == [
        ("a/f0.txt", 1),
        ("a/f1.txt", 1),
        ("a/f2.txt", 1),
        ("b/f0.txt", 1),
        ("b/f1.txt", 1),
    ]
    assert (r.value["files"], r.value["filesTotal"], r.value["sampled"]) == (5, 8, True)
    assert r.footer() == (
        "(Showing 5 of 16 matches from 5 of the 8 files that matched, sampled across top-level entries and "
        "files instead of taken in path order; narrow path or include to see the others. Full grep result "
        f"stored at: {r.value['spill']}. {HINT})"
    )


def test_grep_sampled_below_a_path(root: Path, tmp_path: Path) -> None:
    for entry in ("x", "y"):
        write(root, f"src/{entry}/a.py", "hit\n" * 4)
    write(root, "other/z.py", "hit\n" * 4)  # outside the search path
    r = make(root, tmp_path, grep_max_matches=4).run("grep", pattern="hit", path="src")
    assert [(m["path"], m["line"]) for m in r.value["matches"]] == [
        ("src/x/a.py", 1),
        ("src/x/a.py", 2),
        ("src/y/a.py", 1),
        ("src/y/a.py", 2),
    ]
    assert r.value["sampled"] is True and r.value["filesTotal"] == 2


def test_grep_sampled_without_a_spill(root: Path, tmp_path: Path) -> None:
    for i in range(3):
        write(root, f"d{i}/f.txt", "hit\nhit\n")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    ws = make(root, tmp_path, grep_max_matches=3, spill_root=str(blocker / "spills"))
    r = ws.run("grep", pattern="hit")
    assert not r.is_error and r.value["spill"] is None
    assert r.text == (
        "Found 3 of 6 matches\n\nd0/f.txt\nLine 1: hit\n\nd1/f.txt\nLine 1: hit\n\nd2/f.txt\nLine 1: hit\n\n"
        "(Showing 3 of 6 matches from all 3 files that matched, sampled across top-level entries and files "
        "instead of taken in path order. The full result could not be saved.)"
    )
    write(root, "d3/f.txt", "hit\n")
    r = ws.run("grep", pattern="hit")
    assert r.footer() == (
        "(Showing 3 of 7 matches from 3 of the 4 files that matched, sampled across top-level entries and "
        "files instead of taken in path order; narrow path or include to see the others. The full result "
        "could not be saved.)"
    )


def test_grep_one_file_or_a_head_page_makes_no_sampling_claim(root: Path, tmp_path: Path) -> None:
    write(root, "big.txt", "hit\n" * 10)
    ws = make(root, tmp_path, grep_max_matches=3)
    r = ws.run("grep", pattern="hit")
    assert r.text == (
        "Found 3 of 10 matches\n\nbig.txt\nLine 1: hit\nLine 2: hit\nLine 3: hit\n\n"
        f"(Full grep result stored at: {r.value['spill']}. {HINT})"
    )
    assert (r.value["sampled"], r.value["files"], r.value["filesTotal"]) == (False, 1, 1)
    # one match per top-level entry: the round-robin is the path-order head
    for i in range(4):
        write(root, f"e{i}.md", "hit\n")
    r = ws.run("grep", pattern="hit", include="*.md")
    assert r.value["sampled"] is False and (r.value["files"], r.value["filesTotal"]) == (3, 4)
    assert r.footer() == f"(Full grep result stored at: {r.value['spill']}. {HINT})"


def test_grep_within_the_cap_counts_files(root: Path, tmp_path: Path) -> None:
    write(root, "a.txt", "hit\nhit\n")
    write(root, "b/c.txt", "hit\n")
    r = make(root, tmp_path).run("grep", pattern="hit")
    assert (r.value["files"], r.value["filesTotal"], r.value["sampled"]) == (2, 2, False)
    assert r.footer() == ""


def test_spills_are_per_session(root: Path, tmp_path: Path) -> None:
    for i in range(3):
        write(root, f"f{i}.txt", "hit\n")
    ws = make(root, tmp_path, grep_max_matches=1)
    a = ws.call("grep", {"pattern": "hit"}, session="a")
    ws.call("grep", {"pattern": "hit"}, session="b")
    assert [s["locator"] for s in ws.spill_list("a")] == [a.value["spill"]]
    assert "/session-a-" in a.value["spill"]
    assert ws.spill_page(a.value["spill"], session="b").value["code"] == "FS_NOT_FOUND"
    # neither read nor grep of another session's spill gets anything
    for tool, args in (
        ("read", {"file_path": a.value["spill"]}),
        ("grep", {"pattern": "hit", "path": a.value["spill"]}),
    ):
        r = ws.call(tool, args, session="b")
        assert r.value == {
            "name": "FsError",
            "code": "FS_NOT_FOUND",
            "message": f'cannot {tool} "{a.value["spill"]}": not found',
        }
    assert not ws.spill_page(a.value["spill"], session="a").is_error


def test_unsaveable_spill_is_not_an_error(root: Path, tmp_path: Path) -> None:
    for i in range(3):
        write(root, f"f{i}.txt", "hit\n", mtime=1_000 + i)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    ws = make(root, tmp_path, grep_max_matches=1, glob_max_results=1, spill_root=str(blocker / "spills"))
    g = ws.run("grep", pattern="hit")
    assert not g.is_error and g.value["spill"] is None
    assert g.text.endswith("\n\n(The full result could not be saved.)")
    f = ws.run("glob", pattern="*.txt")
    assert f.text == "f0.txt\n\n(Showing 1 of 3 paths. The full result could not be saved.)"


def test_grep_invalid_regex(root: Path, tmp_path: Path) -> None:
    write(root, "a.txt")
    r = make(root, tmp_path).run("grep", pattern="(unclosed")
    assert r.value["code"] == "SEARCH_INVALID_PATTERN"
    # the pattern as written, rg's diagram on its own lines (rg/regexerror.py)
    assert r.text == "Error: invalid pattern: regex parse error:\n    (unclosed\nerror: unclosed group"


def test_grep_include_validation(root: Path, tmp_path: Path) -> None:
    ws = make(root, tmp_path)
    one_glob = "Error: include must be one positive glob such as *.py or *.{py,md} (no comma list, no leading !)"
    for include in ("*.py,*.txt", "!*.py", "*.{py,md},*.txt", ","):
        r = ws.run("grep", pattern="x", include=include)
        assert r.value["code"] == "ARGUMENT_INVALID"
        assert r.text == one_glob
    r = ws.run("grep", pattern="x", include="*.{py,md")
    assert (r.value["code"], r.text) == (
        "ARGUMENT_INVALID",
        "Error: include has a { without its }; write [{] for a literal brace",
    )
    r = ws.run("grep", pattern="x", include="*}")
    assert (r.value["code"], r.text) == (
        "ARGUMENT_INVALID",
        "Error: include has a } without its {; write [}] for a literal brace",
    )


def test_grep_include_braces_hold_alternatives(root: Path, tmp_path: Path) -> None:
    for name in ("a.py", "b.md", "c.txt", "d,e.txt", "f{g}.txt"):
        write(root, name, "x\n")
    ws = make(root, tmp_path)

    def files(include: str) -> list[str]:
        r = ws.run("grep", pattern="x", include=include)
        assert not r.is_error, r.text
        return sorted({m["path"] for m in r.value["matches"]})

    assert files("*.{py,md}") == ["a.py", "b.md"]
    assert files("*.{py,{md,txt}}") == ["a.py", "b.md", "c.txt", "d,e.txt", "f{g}.txt"]
    assert files("{a.py,c.txt}") == ["a.py", "c.txt"]
    # a literal comma or brace: in a class or escaped
    assert files("*[,]*") == ["d,e.txt"]
    assert files("*\\,*") == ["d,e.txt"]
    assert files("*[{]*") == ["f{g}.txt"]
    assert files("*[]{]*") == ["f{g}.txt"]


def test_grep_long_multibyte_line_is_cut_at_a_boundary(root: Path, tmp_path: Path) -> None:
    line = "needle " + "é日本" * 620  # about 5,000 bytes
    write(root, "long.txt", line + "\n")
    r = make(root, tmp_path).run("grep", pattern="needle")
    text = r.value["matches"][0]["text"]
    kept = text.removesuffix("... (line truncated to 2000 bytes)")
    assert kept != text and "\ufffd" not in kept
    assert 1996 <= len(kept.encode("utf-8")) <= 2000
    assert line.startswith(kept)


def test_grep_non_utf8_line(root: Path, tmp_path: Path) -> None:
    (root / "bin.txt").write_bytes(b"needle \xff\xfe end\n")
    r = make(root, tmp_path).run("grep", pattern="needle")
    assert r.text == "Found 1 match\n\nbin.txt\nLine 1: needle \ufffd\ufffd end"


def test_grep_stopped_by_the_output_guard_answers_the_files_it_finished(root: Path, tmp_path: Path) -> None:
    for i in range(40):
        write(root, f"f{i:02d}.txt", "hit\n" * 20)
    ws = make(root, tmp_path, raw_output_max_bytes=2_000, grep_max_matches=30)
    r = ws.run("grep", pattern="hit")
    assert not r.is_error, r.text
    v = r.value
    assert v["partialAfterBytes"] == 2_000
    assert 0 < v["filesTotal"] < 40 and v["totalMatches"] == 20 * v["filesTotal"]  # whole files only
    head, _, rest = r.text.partition("\n")
    assert head == f"Found 30 of at least {v['totalMatches']} matches"
    assert (
        "\n\n(Partial result: rg was stopped after writing 2000 bytes of matches (setting raw_output_max_bytes); "
        "the counts cover the files it had finished, and other files may match too. Narrow the pattern, path "
        "or include to see every match.)\n\n(Showing 30 of "
    ) in rest
    assert "Every match found before the stop stored at: " in rest
    saved = ws.run("read", file_path=v["spill"])
    assert saved.text.count("Line ") == v["totalMatches"]


def test_grep_stopped_before_any_file_was_finished_is_an_error(root: Path, tmp_path: Path) -> None:
    write(root, "one.txt", "hit\n" * 2000)  # one file, its block cut in the middle
    r = make(root, tmp_path, raw_output_max_bytes=2_000).run("grep", pattern="hit")
    assert r.value["code"] == "SEARCH_RAW_OUTPUT_OVERFLOW"
    assert r.text == (
        "Error: grep produced more than 2000 bytes of raw output and was stopped; narrow the pattern, path or include"
    )


def test_inherited_ripgrep_config_is_ignored(root: Path, tmp_path: Path, monkeypatch) -> None:
    marker = tmp_path / "pre-ran"
    pre = tmp_path / "pre.sh"
    pre.write_text(f'#!/bin/sh\ntouch {marker}\ncat "$1"\n')
    pre.chmod(0o755)
    config = tmp_path / "rgrc"
    config.write_text(f"--pre={pre}\n--follow\n--max-count=1\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(config))
    write(root, "a.txt", "hit\nhit\n")
    r = make(root, tmp_path).run("grep", pattern="hit")
    assert r.value["totalMatches"] == 2
    assert not marker.exists()


def test_fifo_target_is_refused_at_once(root: Path, tmp_path: Path) -> None:
    os.mkfifo(root / "pipe")
    ws = make(root, tmp_path)
    out: list = []
    t = threading.Thread(target=lambda: out.append(ws.run("grep", pattern="x", path="pipe")), daemon=True)
    t.start()
    t.join(10)
    assert out, "grep on a FIFO hung"
    assert out[0].value["code"] == "FS_NOT_REGULAR_FILE"
    assert out[0].text == 'Error: cannot grep "pipe": not a regular file'


def test_symlink_out_of_root_is_not_searched(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle\n")
    os.symlink(outside, root / "link")
    ws = make(root, tmp_path)
    assert ws.run("grep", pattern="needle").text == "No matches found"
    assert ws.run("grep", pattern="needle", path="link").value["code"] == "FS_OUTSIDE_ROOT"
    assert ws.run("glob", pattern="*").text == "No files found"


def test_unreadable_file_beside_matches(root: Path, tmp_path: Path) -> None:
    """A per-file read error keeps the other matches and adds a counted note.

    Root reads any file, so as root the search runs in a child whose capability bounding set
    lacks the two that let root ignore file modes (util-linux ``setpriv``).
    """
    write(root, "ok.txt", "needle\n")
    write(root, "locked.txt", "needle\n").chmod(0)
    code = textwrap.dedent(
        f"""
        from dsh_jupyter import Workspace
        ws = Workspace({str(root)!r}, state_path={str(tmp_path / "st" / "s.sqlite")!r})
        print(ws.run("grep", pattern="needle").text)
        """
    )
    argv = [sys.executable, "-c", code]
    if os.geteuid() == 0:
        argv = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *argv]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Found 1 match\n\nok.txt\nLine 1: needle\n\n(1 file could not be read and was skipped.)\n"


def _as_unprivileged(code: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-c", textwrap.dedent(code)]
    if os.geteuid() == 0:
        argv = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *argv]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def test_unreadable_file_and_no_match_anywhere_is_no_matches_with_the_note(root: Path, tmp_path: Path) -> None:
    """rg exits 2 when it met a file it could not read, also when nothing matched: not a failure
    (glob, which reads no file, says the folder it could not read)."""
    write(root, "ok.txt", "hay\n")
    write(root, "noread.txt", "needle\n").chmod(0)
    (root / "closed").mkdir()
    write(root, "closed/inner.txt", "needle\n")
    (root / "closed").chmod(0)
    try:
        proc = _as_unprivileged(f"""
            from dsh_jupyter import Workspace
            ws = Workspace({str(root)!r}, state_path={str(tmp_path / "st" / "s.sqlite")!r})
            for tool, pattern in (("grep", "needle"), ("glob", "*.md")):
                r = ws.run(tool, pattern=pattern)
                print(repr((r.is_error, r.text)))
        """)
    finally:
        (root / "closed").chmod(0o755)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        repr((False, "No matches found\n\n(2 files could not be read and were skipped.)")),
        repr((False, "No files found\n\n(1 folder could not be read and was left out.)")),
    ]


def test_a_regex_past_rgs_size_limit_is_an_invalid_pattern(root: Path, tmp_path: Path) -> None:
    write(root, "a.txt", "x\n")
    r = make(root, tmp_path).run("grep", pattern=r"\w{1000}\w{1000}\w{1000}")
    assert r.value["code"] == "SEARCH_INVALID_PATTERN"
    assert r.text == "Error: invalid pattern: rg: compiled regex exceeds size limit of 104857600"


def test_a_real_failure_beside_file_errors_still_fails(root: Path, tmp_path: Path) -> None:
    """Only an exit 2 whose every stderr line is a per-file error counts as a result."""
    from dsh_jupyter.core.rg.runner import RgOutcome
    from dsh_jupyter.core.tools.search.run import file_errors

    def outcome(stderr: str, code: int = 2) -> RgOutcome:
        return RgOutcome(
            returncode=code, stdout=b"", stderr_tail=stderr, stderr_head=stderr[:4096], overflow=False, duration_s=0.1
        )

    assert (
        file_errors(outcome("rg: ./a: Permission denied (os error 13)\nrg: ./b/c: Permission denied (os error 13)\n"))
        == 2
    )
    assert file_errors(outcome("rg: ./a: Permission denied (os error 13)\nrg: something else broke\n")) == 0
    assert file_errors(outcome("rg: regex parse error:\n    (\n    ^\nerror: unclosed group\n")) == 0
    assert file_errors(outcome("rg: ./a: Permission denied (os error 13)\n", code=1)) == 0


def test_file_errors_longer_than_the_stderr_kept_are_still_counted() -> None:
    """A folder deeper than a path can name makes one line of rg's stderr longer than both the
    head and the tail kept of it: judged by the ends seen, it counts as one, never as two."""
    from dsh_jupyter.core.rg.runner import STDERR_HEAD, STDERR_TAIL, RgOutcome
    from dsh_jupyter.core.tools.search.run import file_errors

    def outcome(stderr: str) -> RgOutcome:  # what the runner keeps: the first and the last bytes
        data = stderr.encode()
        return RgOutcome(
            returncode=2,
            stdout=b"",
            stderr_tail=data[-STDERR_TAIL:].decode(),
            stderr_head=data[:STDERR_HEAD].decode(),
            overflow=False,
            duration_s=0.1,
        )

    deep = "rg: ./" + "dir/" * 2100 + "dir: File name too long (os error 36)\n"
    short = "rg: ./a: Permission denied (os error 13)\n"
    longer = "rg: ./" + "dir/" * 4000 + "dir: File name too long (os error 36)\n"
    assert STDERR_TAIL < len(deep) < STDERR_HEAD + STDERR_TAIL < len(longer)
    assert file_errors(outcome(deep)) == 1
    assert file_errors(outcome(longer)) == 1
    assert file_errors(outcome(short + deep)) == 2
    assert file_errors(outcome(deep + short)) == 2
    many = "".join(f"rg: ./f{i:03d}: Permission denied (os error 13)\n" for i in range(230))  # 9,660 bytes
    assert STDERR_TAIL < len(many) < STDERR_HEAD + STDERR_TAIL  # head and tail overlap: no line counted twice
    assert file_errors(outcome(many)) == 230
    assert file_errors(outcome("rg: regex parse error: " + "(" * 9000 + "\n")) == 0  # not a file error


# --------------------------------------------------------------------------- rg availability


def _marker_processes(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            st = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if marker.encode() in cmd and ") Z " not in st:
            found.append(int(pid))
    return found


def _sleeper(tmp_path: Path, marker: str) -> Path:
    script = tmp_path / "fake-rg"
    script.write_text(f"#!/bin/sh\nsleep {marker}\n")
    script.chmod(0o755)
    return script


def test_hanging_search_is_killed_by_the_timeout(root: Path, tmp_path: Path) -> None:
    marker = "61.4242"
    ws = make(root, tmp_path, rg_path=str(_sleeper(tmp_path, marker)), search_timeout_ms=500, index_min_files=0)
    t0 = time.monotonic()
    r = ws.run("grep", pattern="x")
    assert time.monotonic() - t0 < 10
    assert r.value["code"] == "SEARCH_ABORTED"
    assert r.text == "Error: grep was stopped after 500 ms; narrow the pattern or path"
    assert _marker_processes(marker) == []


def test_cancelled_search(root: Path, tmp_path: Path) -> None:
    marker = "62.4242"
    ws = make(root, tmp_path, rg_path=str(_sleeper(tmp_path, marker)), index_min_files=0)
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    r = ws.call("glob", {"pattern": "*"}, cancel=cancel)
    assert r.value["code"] == "SEARCH_ABORTED"
    assert r.text == "Error: glob was cancelled before it finished"
    assert _marker_processes(marker) == []


def test_no_rg_means_no_search_tools(root: Path, tmp_path: Path, caplog) -> None:
    with caplog.at_level(logging.WARNING):
        ws = make(root, tmp_path, rg_path=str(tmp_path / "missing-rg"))
    names = [t["name"] for t in ws.tools()]
    assert "glob" not in names and "grep" not in names
    assert "no ripgrep binary found" in caplog.text
    assert ws.run("glob", pattern="*").value["code"] == "TOOL_UNKNOWN"


def test_rg_vanishing_later_is_a_clear_search_error(root: Path, tmp_path: Path) -> None:
    copy = tmp_path / "rg-copy"
    shutil.copy(find_rg(), copy)
    copy.chmod(copy.stat().st_mode | stat.S_IXUSR)
    ws = make(root, tmp_path, rg_path=str(copy))
    assert "grep" in [t["name"] for t in ws.tools()]
    copy.unlink()
    r = ws.run("grep", pattern="x")
    assert r.value["code"] == "SEARCH_FAILED"
    assert r.text == "Error: grep failed: the ripgrep (rg) binary could not be started"


def test_grep_page_carries_submatch_spans_and_the_text_does_not_change(root: Path, tmp_path: Path) -> None:
    write(root, "a.py", "x = 'été'  # TODO one TODO two\nplain\n")
    write(root, "b.py", "    TODO: keep   spacing\n")
    write(root, "long.txt", "é" * 1500 + " TODO late\n" + "TODO early " + "é" * 1500 + "\n")
    ws = make(root, tmp_path)
    r = ws.run("grep", pattern="TODO")
    assert r.text == ws.run("grep", pattern="TODO").text
    assert "submatches" not in r.text and "[[" not in r.text
    spans = {(m["path"], m["line"]): m["submatches"] for m in r.value["matches"]}
    a = next(m for m in r.value["matches"] if m["path"] == "a.py")
    assert [a["text"][s:e] for s, e in a["submatches"]] == ["TODO", "TODO"]
    assert spans[("b.py", 1)] == [[4, 8]]
    # a long line is cut at grep_max_line_bytes: a match past the cut has no span, one before keeps it
    assert spans[("long.txt", 1)] == []
    assert spans[("long.txt", 2)] == [[0, 4]]


def test_grep_submatches_only_for_the_shown_page(root: Path, tmp_path: Path) -> None:
    for i in range(5):
        write(root, f"f{i}.txt", "hit and hit\n")
    r = make(root, tmp_path, grep_max_matches=2).run("grep", pattern="hit")
    assert [m["submatches"] for m in r.value["matches"]] == [[[0, 3], [8, 11]]] * 2
    assert r.value["totalMatches"] == 5


def test_minified_and_lock_files_cannot_overflow_a_search(root: Path, tmp_path: Path) -> None:
    """rg prints at most the start of a long line: raw output grows with the matches, not with line
    length. A match past the printed start still counts and is located; a cut line says so in the
    page and in the saved result."""
    (root / "node_modules" / "pkg").mkdir(parents=True)
    write(
        root, "node_modules/pkg/bundle.min.js", "var a=1;" * 1_300_000 + "Workspace(x)" + "\n"
    )  # 10 MB, match at the end
    write(root, "package-lock.json", '{"a": "' + "Workspace(" * 200_000 + '"}\n')
    write(root, "app.py", "ws = Workspace(root)\n")
    code = textwrap.dedent(f"""
        import json
        from dsh_jupyter import Workspace
        ws = Workspace({str(root)!r}, state_path={str(tmp_path / "st" / "s.sqlite")!r},
                       raw_output_max_bytes=1_000_000, grep_max_matches=2)
        r = ws.run("grep", pattern=r"Workspace\\(")
        spill = open(r.value["spill"]).read() if r.value["spill"] else ""
        print(json.dumps({{"text": r.text, "matches": r.value["matches"], "total": r.value["totalMatches"],
                           "spill": spill, "rss": int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) // 1024}}))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["total"] == 3 and got["text"].startswith("Found 2 of 3 matches"), got["text"][:300]
    cut = "... (line truncated to 2000 bytes)"
    lines = {m["path"]: m for m in got["matches"]}
    for m in lines.values():
        assert m["line"] == 1
        if m["path"] != "app.py":
            assert m["text"].endswith(cut) and len(m["text"].encode()) == 2000 + len(cut)
    assert "omitted end of long line" not in got["text"] + got["spill"]
    assert "node_modules/pkg/bundle.min.js\nLine 1: var a=1;" in got["spill"]
    assert got["spill"].count(cut) == 2 and "app.py\nLine 1: ws = Workspace(root)" in got["spill"]
    print("RSS", got["rss"])
    assert got["rss"] < 160, f"{got['rss']} MiB"


def test_a_line_that_ends_like_rgs_preview_words_is_the_files_own_text(root: Path, tmp_path: Path) -> None:
    write(root, "a.txt", "needle [... omitted end of long line]\n")
    r = make(root, tmp_path).run("grep", pattern="needle")
    assert r.text == "Found 1 match\n\na.txt\nLine 1: needle [... omitted end of long line]"


@pytest.mark.slow
def test_grep_answers_on_this_checkout_with_its_node_modules(tmp_path: Path) -> None:
    """A real repository: this one, where ./dev test has installed the JupyterLab extension's npm
    packages (minified bundles with multi-megabyte lines) beside the sources."""
    repo = Path(__file__).resolve().parents[4]
    assert (repo / "dsh_jupyter" / "core" / "workspace.py").is_file()
    # over index_min_files: its first search starts the workspace index in the background, which
    # closing the workspace ends (a build left running would outlive the test in this process)
    ws = Workspace(repo, state_path=str(tmp_path / "s.sqlite"))
    try:
        _grep_this_checkout(repo, ws)
    finally:
        ws.close()


def _grep_this_checkout(repo: Path, ws: Workspace) -> None:
    vendored = repo / "labextension_shim" / "node_modules"
    assert vendored.is_dir() and len(os.listdir(vendored)) > 50, "./dev test installs these packages"
    r = ws.run("grep", pattern=r"Workspace\(")
    assert not r.is_error, r.text
    assert r.value["totalMatches"] > 50 and r.text.startswith("Found ")
    # a pattern every bundle holds: the line search, rg's own count and the paths agree
    lines = ws.run("grep", pattern="use strict")
    counted = ws.run("grep", pattern="use strict", output_mode="count")
    assert not lines.is_error and not counted.is_error, (lines.text[:300], counted.text[:300])
    assert counted.value["totalMatches"] == lines.value["totalMatches"] > 1000
    assert counted.value["filesTotal"] == lines.value["filesTotal"]
    assert any(row["path"].startswith("labextension_shim/node_modules/") for row in counted.value["fileCounts"])
    # leaving the vendored tree out, in any case
    own = ws.run(
        "grep",
        pattern="USE STRICT",
        ignore_case=True,
        output_mode="files_with_matches",
        exclude="labextension_shim/node_modules/**",
    )
    assert 0 < own.value["totalMatches"] < lines.value["totalMatches"]
    assert not any(row["path"].startswith("labextension_shim/node_modules/") for row in own.value["fileCounts"])
    around = ws.run("grep", pattern=r"def execute_grep\(", path="dsh_jupyter", context=1)
    assert around.text.startswith("Found 1 match (rows Line N- are context, not matches)")
    match = around.value["matches"][0]
    assert match["before"][0][0] == match["line"] - 1 and match["after"][0][0] == match["line"] + 1
    assert f"Line {match['line']}: def execute_grep(" in around.text
    assert f"\nLine {match['line'] + 1}- " in around.text


# --------------------------------------------------------------------------- exclude


@pytest.fixture
def vendored(root: Path) -> Path:
    for rel in ("node_modules/p/a.js", "src/node_modules/q/b.js", "src/app.js", "build/out.js", "src/x.min.js"):
        write(root, rel, "needle\n")
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "id": "c1",
                "metadata": {},
                "outputs": [],
                "execution_count": None,
                "source": "needle = 1",
            }
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    write(root, "node_modules/p/demo.ipynb", json.dumps(nb))
    write(root, "src/note.ipynb", json.dumps(nb))
    return root


@pytest.mark.parametrize(
    "exclude, paths",
    [
        ("node_modules/**", ["src/app.js", "src/node_modules/q/b.js", "src/x.min.js", "build/out.js"]),
        ("node_modules", ["src/app.js", "src/x.min.js", "build/out.js"]),  # no slash: at any depth
        (["node_modules", "*.min.js", "build"], ["src/app.js"]),
        ("src/**/*.js", ["build/out.js", "node_modules/p/a.js"]),
        ([], ["build/out.js", "node_modules/p/a.js", "src/app.js", "src/node_modules/q/b.js", "src/x.min.js"]),
    ],
    ids=["anchored", "any-depth", "list", "nested", "empty"],
)
def test_exclude_leaves_out_what_it_names_in_glob_and_grep(vendored: Path, tmp_path: Path, exclude, paths) -> None:
    ws = make(vendored, tmp_path)
    globbed = ws.run("glob", pattern="*.js", exclude=exclude)
    assert sorted(globbed.value["paths"]) == sorted(paths)
    assert globbed.value.get("exclude", []) == ([exclude] if isinstance(exclude, str) else exclude)
    found = ws.run("grep", pattern="needle", exclude=exclude, include="*.js")
    assert sorted(m["path"] for m in found.value["matches"]) == sorted(paths)


def test_exclude_leaves_out_notebooks_too(vendored: Path, tmp_path: Path) -> None:
    ws = make(vendored, tmp_path)
    r = ws.run("grep", pattern="needle = 1", exclude="node_modules")
    assert r.text == "Found 1 match\n\nsrc/note.ipynb\nCell 1, line 1: needle = 1"


@pytest.mark.parametrize(
    "exclude, message",
    [
        (
            "!node_modules",
            "exclude holds globs to leave out, such as node_modules/** or *.min.js; a leading ! is not supported",
        ),
        (
            ["a", "!b"],
            "exclude holds globs to leave out, such as node_modules/** or *.min.js; a leading ! is not supported",
        ),
        (5, "exclude must be a string or a list"),
        (["a", 3], "exclude[1] must be a string"),
        ("", "exclude must be a non-empty string"),
        (["a\0"], "exclude[0] must not contain a NUL character"),
        (["x"] * 101, "exclude may hold at most 100 items"),
    ],
    ids=["negated", "negated-in-list", "number", "number-in-list", "empty", "nul", "too-many"],
)
def test_bad_excludes_are_argument_errors(vendored: Path, tmp_path: Path, exclude, message) -> None:
    ws = make(vendored, tmp_path)
    for tool, args in (("glob", {"pattern": "*"}), ("grep", {"pattern": "x"})):
        r = ws.call(tool, {**args, "exclude": exclude})
        assert r.value["code"] == "ARGUMENT_INVALID" and r.text == f"Error: {message}", (tool, r.text)


# --------------------------------------------------------------------------- respect_ignore_files

IGNORED = (
    "(Files named by .gitignore or .ignore rules were not searched (setting respect_ignore_files); "
    "grep such a file by its path to search it anyway.)"
)


@pytest.fixture
def ignoring(root: Path) -> Path:
    write(root, ".gitignore", "build/\n*.log\n")
    write(root, "sub/.ignore", "dist/\n")
    for rel in ("a.txt", "x.log", "build/o.txt", "sub/s.txt", "sub/dist/d.txt"):
        write(root, rel, "needle\n")
    return root


def test_ignore_files_are_not_honoured_by_default(ignoring: Path, tmp_path: Path) -> None:
    ws = make(ignoring, tmp_path)
    assert ws.run("grep", pattern="needle").value["totalMatches"] == 5
    assert IGNORED not in ws.run("grep", pattern="zzz").text


def test_respect_ignore_files_leaves_them_out_and_every_answer_says_so(ignoring: Path, tmp_path: Path) -> None:
    ws = make(ignoring, tmp_path, respect_ignore_files=True, glob_max_results=1, grep_max_matches=1)
    found = ws.run("grep", pattern="needle")
    assert sorted(m["path"] for m in found.value["matches"]) in (["a.txt"], ["sub/s.txt"])
    assert found.value["totalMatches"] == 2 and found.value["ignoreFiles"] is True
    assert found.text.split("\n\n")[-2] == IGNORED
    assert ws.run("grep", pattern="zzz").text == f"No matches found\n\n{IGNORED}"
    assert ws.run("glob", pattern="*.md").text == f"No files found\n\n{IGNORED}"
    globbed = ws.run("glob", pattern="*.txt")
    assert globbed.value["totalPaths"] == 2 and globbed.text.split("\n\n")[1] == IGNORED
    # a page that holds every match found says it too: "Found 2 matches" must not pass for the whole
    # workspace; a file named by its path is searched, and nothing was left out of that answer
    whole = make(ignoring, tmp_path, respect_ignore_files=True)
    assert whole.run("grep", pattern="needle").text == (
        f"Found 2 matches\n\na.txt\nLine 1: needle\n\nsub/s.txt\nLine 1: needle\n\n{IGNORED}"
    )
    assert whole.run("grep", pattern="needle", output_mode="files_with_matches").text.endswith(f"\n\n{IGNORED}")
    assert whole.run("glob", pattern="*.txt").text == f"a.txt\nsub/s.txt\n\n{IGNORED}"
    assert whole.run("grep", pattern="needle", path="x.log").text == "Found 1 match\n\nx.log\nLine 1: needle"


def test_a_long_search_tells_how_far_it_got(root: Path, tmp_path: Path, monkeypatch) -> None:
    from dsh_jupyter.core.tools.grep import tool as grep_tool

    for i in range(300):
        write(root, f"d{i % 7}/f{i:03d}.txt", "hit\n" * 3 + "miss\n")
    monkeypatch.setattr(grep_tool, "PROGRESS_EVERY_S", 0.0)  # tell at every piece rg writes
    told: list[str] = []
    r = make(root, tmp_path).call("grep", {"pattern": "hit"}, progress=told.append)
    assert not r.is_error and r.value["totalMatches"] == 900
    assert told, "no progress was told"
    pattern = re.compile(r"^([\d,]+) match(?:es)? in ([\d,]+) files? so far$")
    seen = [tuple(int(n.replace(",", "")) for n in pattern.match(t).groups()) for t in told]
    assert all(m == 3 * f for m, f in seen)  # whole files: three matches each
    assert [f for _, f in seen] == sorted(f for _, f in seen) and seen[-1][1] <= 300
    monkeypatch.setattr(grep_tool, "PROGRESS_EVERY_S", 0.5)  # the usual pace
    quiet: list[str] = []
    make(root, tmp_path).call("grep", {"pattern": "hit"}, progress=quiet.append)
    assert quiet == []  # a search this short says nothing


def test_a_counting_search_tells_how_far_it_got(root: Path, tmp_path: Path, monkeypatch) -> None:
    """files_with_matches and count read rg's count rows as they come (the panel's "count in every
    file" says how far it got too)."""
    from dsh_jupyter.core.tools.grep import tool as grep_tool

    for i in range(300):
        write(root, f"d{i % 7}/f{i:03d}.txt", "hit\n" * 3 + "miss\n")
    monkeypatch.setattr(grep_tool, "PROGRESS_EVERY_S", 0.0)
    told: list[str] = []
    r = make(root, tmp_path).call("grep", {"pattern": "hit", "output_mode": "count"}, progress=told.append)
    assert r.value["totalMatches"] == 900 and r.value["filesTotal"] == 300
    assert told, "no progress was told"
    pattern = re.compile(r"^([\d,]+) match(?:es)? in ([\d,]+) files? so far$")
    seen = [tuple(int(n.replace(",", "")) for n in pattern.match(t).groups()) for t in told]
    assert all(m == 3 * f for m, f in seen) and seen[-1][1] <= 300


def test_a_search_stopped_by_the_output_guard_answers_files_in_path_order_with_none_skipped(
    root: Path, tmp_path: Path
) -> None:
    # rg searches files on several threads: a search cut short held whichever files finished
    # first, so page 1 "in path order" could leave out gen/file-00002.txt and the next page's
    # totals differed. Cut short, the search is a prefix of the path order, the same every time.
    for i in range(300):
        write(root, f"gen/file-{i:05d}.txt", "hit and more text on the line\n" * 30)
    ws = make(root, tmp_path, raw_output_max_bytes=60_000, grep_max_matches=100)
    every = sorted(f"gen/file-{i:05d}.txt" for i in range(300))
    totals = set()
    for offset in (1, 101, 1, 201):
        v = ws.run("grep", pattern="hit", offset=offset).value
        assert v["partialAfterBytes"] == 60_000
        totals.add((v["totalMatches"], v["filesTotal"]))
        shown = list(dict.fromkeys(m["path"] for m in v["matches"]))
        first = every.index(shown[0])
        assert shown == every[first : first + len(shown)]
    ((total, files),) = totals
    assert 0 < files < 300 and total == 30 * files
    first_page = ws.run("grep", pattern="hit", offset=1).value
    assert first_page["matches"][0]["path"] == "gen/file-00000.txt"
    assert [m["path"] for m in first_page["matches"][:61:30]] == every[:3]


def test_a_search_cut_short_leaves_out_what_sorts_among_the_files_not_searched(root: Path, tmp_path: Path) -> None:
    # rg walks a folder before a sibling whose name continues the folder's with a character
    # sorting before "/" (gen/... before gen.txt); in path order gen.txt comes first. Cut inside
    # gen/, gen.txt was not searched: what follows it in path order is left out with it.
    for i in range(100):
        write(root, f"gen/file-{i:05d}.txt", "hit and more text on the line\n" * 30)
    write(root, "gen.txt", "hit\n")
    write(root, "a.txt", "hit\n")
    ws = make(root, tmp_path, raw_output_max_bytes=30_000, grep_max_matches=1000)
    v = ws.run("grep", pattern="hit", offset=1).value
    assert v["partialAfterBytes"] == 30_000
    assert [m["path"] for m in v["matches"]] == ["a.txt"]
    assert (v["totalMatches"], v["filesTotal"]) == (1, 1)
