"""grep's modes and paging: output_mode, ignore_case, context and offset, with exact model text.

Real files, real rg, real notebooks; the spill and the value are read back as an agent would.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat
import pytest
from nbformat import v4

from dsh_jupyter import Workspace
from dsh_jupyter.core.rg.runner import find_rg

HINT = "Use read with offset/limit, or grep this path to search within it."
CONTEXT = " (rows Line N- are context, not matches)"


def make(root: Path, tmp_path: Path, **settings) -> Workspace:
    return Workspace(root, state_path=tmp_path / "state" / "s.sqlite", **settings)


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "ws"
    r.mkdir()
    write(r, "src/a.py", "one\ntwo TODO\nthree\nfour\nfive\nsix todo\nseven\n")
    write(r, "b.txt", "Todo x\n")
    write(r, "src/c.py", "x\nTODO\n")
    return r


def spill_of(r) -> str:
    return Path(r.value["spill"]).read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------ ignore_case


def test_ignore_case_matches_any_case_and_keeps_the_pattern_as_given(root: Path, tmp_path: Path) -> None:
    ws = make(root, tmp_path)
    assert ws.run("grep", pattern="todo").text == "Found 1 match\n\nsrc/a.py\nLine 6: six todo"
    r = ws.run("grep", pattern="todo", ignore_case=True)
    assert r.text == (
        "Found 4 matches\n\nb.txt\nLine 1: Todo x\n\nsrc/a.py\nLine 2: two TODO\nLine 6: six todo\n\nsrc/c.py\nLine 2: TODO"
    )
    assert r.value["pattern"] == "todo" and r.value["ignoreCase"] is True
    # the highlighting spans are the case-blind matches, not str.find of the pattern as typed
    assert [m["submatches"] for m in r.value["matches"]] == [[[0, 4]], [[4, 8]], [[4, 8]], [[0, 4]]]


def test_ignore_case_reaches_notebook_cells(root: Path, tmp_path: Path) -> None:
    nb = v4.new_notebook(cells=[v4.new_code_cell("LOAD = 1\nload()", id="c1")])
    nbformat.write(nb, os.fspath(root / "n.ipynb"))
    r = make(root, tmp_path).run("grep", pattern="load", path="n.ipynb", ignore_case=True)
    assert r.text == "Found 2 matches\n\nn.ipynb\nCell 1, line 1: LOAD = 1\nCell 1, line 2: load()"


def test_an_invalid_pattern_with_ignore_case_reads_as_the_pattern_given(root: Path, tmp_path: Path) -> None:
    ws = make(root, tmp_path)
    plain, blind = ws.run("grep", pattern="a)"), ws.run("grep", pattern="a)", ignore_case=True)
    assert blind.value["code"] == "SEARCH_INVALID_PATTERN"
    assert blind.text == plain.text and "(?i)" not in blind.text


# ----------------------------------------------------------------------- files_with_matches, count


def test_files_with_matches_lists_each_file_with_its_count_in_path_order(root: Path, tmp_path: Path) -> None:
    r = make(root, tmp_path).run("grep", pattern="todo", ignore_case=True, output_mode="files_with_matches")
    assert r.text == "Found 4 matches in 3 files, in path order\n\nb.txt: 1\nsrc/a.py: 2\nsrc/c.py: 1"
    assert r.value["fileCounts"] == [
        {"path": "b.txt", "matches": 1},
        {"path": "src/a.py", "matches": 2},
        {"path": "src/c.py", "matches": 1},
    ]
    assert r.value["matches"] == [] and r.value["outputMode"] == "files_with_matches"
    assert r.value["totalMatches"] == 4 and r.value["filesTotal"] == 3 and r.value["spill"] is None
    frame = r.to_frame()
    assert list(frame.columns) == ["path", "matches"] and frame["matches"].tolist() == [1, 2, 1]


def test_count_orders_files_by_count_then_path(root: Path, tmp_path: Path) -> None:
    r = make(root, tmp_path).run("grep", pattern="todo", ignore_case=True, output_mode="count")
    assert r.text == "Found 4 matches in 3 files, by match count, most first\n\nsrc/a.py: 2\nb.txt: 1\nsrc/c.py: 1"


def test_a_name_cannot_forge_a_count_row(root: Path, tmp_path: Path) -> None:
    write(root, "x.txt: 9\nfake.py: 3", "TODO\n")
    r = make(root, tmp_path).run("grep", pattern="TODO", output_mode="files_with_matches")
    assert r.text == (
        'Found 3 matches in 3 files, in path order\n\nsrc/a.py: 1\nsrc/c.py: 1\n"x.txt: 9\\u000afake.py: 3": 1'
    )


def test_files_over_the_cap_are_saved_and_paged_by_offset(root: Path, tmp_path: Path) -> None:
    ws = make(root, tmp_path, grep_max_matches=2)
    first = ws.run("grep", pattern="todo", ignore_case=True, output_mode="files_with_matches")
    assert first.text == (
        "Found 4 matches in 3 files, in path order\n\nb.txt: 1\nsrc/a.py: 2\n\n"
        f"(Showing files 1-2 of 3 in path order. Use offset=3 to continue. "
        f"Full grep result stored at: {first.value['spill']}. {HINT})"
    )
    assert spill_of(first) == "Found 4 matches in 3 files\n\nb.txt: 1\nsrc/a.py: 2\nsrc/c.py: 1\n"
    rest = ws.run("grep", pattern="todo", ignore_case=True, output_mode="files_with_matches", offset=3)
    assert rest.text == (
        "Found 4 matches in 3 files, in path order\n\nsrc/c.py: 1\n\n(Showing files 3-3 of 3 in path order. End of result.)"
    )
    assert rest.value["spill"] is None
    counted = ws.run("grep", pattern="todo", ignore_case=True, output_mode="count", offset=2)
    assert counted.text == (
        "Found 4 matches in 3 files, by match count, most first\n\nb.txt: 1\nsrc/c.py: 1\n\n"
        "(Showing files 2-3 of 3 by match count, most first. End of result.)"
    )
    late = ws.run("grep", pattern="todo", ignore_case=True, output_mode="count", offset=4)
    assert late.text == "Error: offset 4 is out of range for this grep (3 files)"


def test_no_match_in_a_files_mode_is_no_matches(root: Path, tmp_path: Path) -> None:
    r = make(root, tmp_path).run("grep", pattern="absent", output_mode="count")
    assert r.text == "No matches found" and r.value["fileCounts"] == []


# -------------------------------------------------------------------------------------- offset


def test_offset_pages_the_whole_result_in_path_order(root: Path, tmp_path: Path) -> None:
    ws = make(root, tmp_path, grep_max_matches=3)
    args = {"pattern": "todo", "ignore_case": True}
    first = ws.run("grep", **args)
    assert first.value["spill"] is not None  # the overview saves the whole, as before
    one = ws.run("grep", offset=1, **args)
    assert one.text == (
        "Found 3 of 4 matches\n\nb.txt\nLine 1: Todo x\n\nsrc/a.py\nLine 2: two TODO\nLine 6: six todo\n\n"
        "(Showing matches 1-3 of 4 in path order. Use offset=4 to continue.)"
    )
    assert one.value["sampled"] is False and one.value["spill"] is None
    two = ws.run("grep", offset=4, **args)
    assert two.text == (
        "Found 1 of 4 matches\n\nsrc/c.py\nLine 2: TODO\n\n(Showing matches 4-4 of 4 in path order. End of result.)"
    )
    assert ws.run("grep", offset=5, **args).text == "Error: offset 5 is out of range for this grep (4 matches)"


def test_offset_one_of_a_result_within_the_cap_is_the_whole(root: Path, tmp_path: Path) -> None:
    r = make(root, tmp_path).run("grep", pattern="TODO", offset=1)
    assert r.text == "Found 2 matches\n\nsrc/a.py\nLine 2: two TODO\n\nsrc/c.py\nLine 2: TODO"


def test_offset_one_of_no_match_is_no_matches(root: Path, tmp_path: Path) -> None:
    assert make(root, tmp_path).run("grep", pattern="absent", offset=1).text == "No matches found"


# ------------------------------------------------------------------------------------- context


def test_context_lines_are_marked_and_merged(root: Path, tmp_path: Path) -> None:
    ws = make(root, tmp_path)
    r = ws.run("grep", pattern="TODO", context=2)
    assert r.text == (
        f"Found 2 matches{CONTEXT}\n\nsrc/a.py\nLine 1- one\nLine 2: two TODO\nLine 3- three\nLine 4- four\n\n"
        "src/c.py\nLine 1- x\nLine 2: TODO"
    )
    a = r.value["matches"][0]
    assert a["before"] == [[1, "one"]] and a["after"] == [[3, "three"], [4, "four"]]
    assert r.value["context"] == 2
    # neighbouring matches share their context: each line once, a shown match never as context
    merged = ws.run("grep", pattern="o", path="src/a.py", context=1)
    assert merged.text == (
        f"Found 4 matches{CONTEXT}\n\nsrc/a.py\nLine 1: one\nLine 2: two TODO\nLine 3- three\nLine 4: four\n"
        "Line 5- five\nLine 6: six todo\nLine 7- seven"
    )


def test_context_groups_apart_are_separated(root: Path, tmp_path: Path) -> None:
    write(root, "far.txt", "".join(f"line {n}{' hit' if n in (3, 12) else ''}\n" for n in range(1, 16)))
    r = make(root, tmp_path).run("grep", pattern="hit", path="far.txt", context=1)
    assert r.text == (
        f"Found 2 matches{CONTEXT}\n\nfar.txt\nLine 2- line 2\nLine 3: line 3 hit\nLine 4- line 4\n--\n"
        "Line 11- line 11\nLine 12: line 12 hit\nLine 13- line 13"
    )


def test_a_long_context_line_is_cut_like_a_match(root: Path, tmp_path: Path) -> None:
    write(root, "long.txt", "é" * 30 + "\nhit\n")
    r = make(root, tmp_path, grep_max_line_bytes=10).run("grep", pattern="hit", path="long.txt", context=1)
    assert r.text == f"Found 1 match{CONTEXT}\n\nlong.txt\nLine 1- ééééé... (line truncated to 10 bytes)\nLine 2: hit"


def test_context_does_not_change_the_spill_and_notebooks_get_none(root: Path, tmp_path: Path) -> None:
    nb = v4.new_notebook(cells=[v4.new_code_cell("a\nTODO\nb", id="c1")])
    nbformat.write(nb, os.fspath(root / "n.ipynb"))
    ws = make(root, tmp_path, grep_max_matches=2)
    with_context = ws.run("grep", pattern="TODO", context=3)
    without = ws.run("grep", pattern="TODO")
    assert spill_of(with_context) == spill_of(without)
    cell = make(root, tmp_path).run("grep", pattern="TODO", path="n.ipynb", context=3)
    assert cell.text == f"Found 1 match{CONTEXT}\n\nn.ipynb\nCell 1, line 2: TODO"


def test_context_follows_offset_pages(root: Path, tmp_path: Path) -> None:
    r = make(root, tmp_path, grep_max_matches=1).run("grep", pattern="TODO", context=1, offset=2)
    assert r.text == (
        f"Found 1 of 2 matches{CONTEXT}\n\nsrc/c.py\nLine 1- x\nLine 2: TODO\n\n"
        "(Showing matches 2-2 of 2 in path order. End of result.)"
    )


# ------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    "args, text",
    [
        ({"output_mode": "lines"}, "Error: output_mode must be one of content, files_with_matches, count"),
        ({"output_mode": ""}, "Error: output_mode must be one of content, files_with_matches, count"),
        ({"ignore_case": "yes"}, "Error: ignore_case must be true or false"),
        ({"context": 21}, "Error: context must be at most 20"),
        ({"context": -1}, "Error: context must be at least 0"),
        ({"context": "3"}, "Error: context must be an integer"),
        ({"offset": 0}, "Error: offset must be at least 1"),
        ({"offset": 1.5}, "Error: offset must be an integer"),
        ({"context": 2, "output_mode": "count"}, "Error: context applies to output_mode content, not count"),
    ],
)
def test_bad_values_are_refused_in_one_sentence(root: Path, tmp_path: Path, args: dict, text: str) -> None:
    r = make(root, tmp_path).run("grep", pattern="TODO", **args)
    assert r.is_error and r.value["code"] == "ARGUMENT_INVALID"
    assert r.text == text


# ------------------------------------------------------------------- how the counts are taken


@pytest.mark.parametrize("landlock", [True, False], ids=["rg counts", "lines checked again"])
def test_both_ways_of_counting_agree(root: Path, tmp_path: Path, landlock: bool) -> None:
    """Under Landlock rg counts (``--count``); unfenced, every line is searched and checked again
    beneath the root: the same rows either way, a name with a newline included."""
    write(root, "odd\nname.txt", "todo\nTODO\n")
    ws = make(root, tmp_path, landlock=landlock)
    r = ws.run("grep", pattern="todo", ignore_case=True, output_mode="count")
    assert r.text == (
        'Found 6 matches in 4 files, by match count, most first\n\n"odd\\u000aname.txt": 2\n'
        "src/a.py: 2\nb.txt: 1\nsrc/c.py: 1"
    )


def test_rg_count_output_is_read_without_doubt() -> None:
    from dsh_jupyter.core.rg.countform import parse_counts

    found = parse_counts(b"./a\nb.txt\x003\n./c.py\x0012\n")
    assert (found.paths, found.counts) == (["./a\nb.txt", "./c.py"], [3, 12])
    assert parse_counts(b"").paths == []
    odd = parse_counts(b"./\xff\xfe.txt\x001\n./\xc3\xa9\x007\n")  # not UTF-8, then UTF-8
    assert (odd.paths, odd.counts) == (["./\udcff\udcfe.txt", "./\u00e9"], [1, 7])
    for bad in (b"./a\x00x\n", b"./a\x003\n./b", b"./a\x003", b"./a\x001\n./b\x00x\n./c\x002\n"):
        with pytest.raises(ValueError, match="malformed rg --count output"):
            parse_counts(bad)


# ------------------------------------------------------------------------ hostile and odd files


def test_binary_and_non_utf8_files_count_as_their_lines_are_searched(root: Path, tmp_path: Path) -> None:
    """A binary file is skipped and said so in every mode; a line that is not UTF-8 counts, and
    as context it is shown with U+FFFD, as a match is."""
    (root / "blob.bin").write_bytes(b"TODO\x00\x01\x02 TODO\n")
    (root / "latin.txt").write_bytes(b"caf\xe9\nTODO here\n")
    ws = make(root, tmp_path)
    content = ws.run("grep", pattern="TODO", context=1)
    counted = ws.run("grep", pattern="TODO", output_mode="count")
    assert counted.value["totalMatches"] == content.value["totalMatches"]
    assert [r["path"] for r in counted.value["fileCounts"]] == sorted({m["path"] for m in content.value["matches"]})
    assert "blob.bin" not in content.text + counted.text
    latin = next(m for m in content.value["matches"] if m["path"] == "latin.txt")
    assert latin["before"] == [[1, "caf\ufffd"]]
    assert "latin.txt\nLine 1- caf\ufffd\nLine 2: TODO here" in content.text


def test_counting_modes_fail_as_the_line_search_does(root: Path, tmp_path: Path) -> None:
    bad = make(root, tmp_path).run("grep", pattern="(", output_mode="files_with_matches")
    assert bad.value["code"] == "SEARCH_INVALID_PATTERN" and bad.text.startswith("Error: invalid pattern: ")
    copy = tmp_path / "rg-copy"  # an rg that vanishes after the workspace found it
    shutil.copy(find_rg(), copy)
    copy.chmod(0o755)
    ws = make(root, tmp_path, rg_path=str(copy))
    copy.unlink()
    gone = ws.run("grep", pattern="x", output_mode="count")
    assert gone.text == "Error: grep failed: the ripgrep (rg) binary could not be started"


def test_a_file_root_counts_and_gives_context(root: Path, tmp_path: Path) -> None:
    ws = make(root, tmp_path)
    assert ws.run("grep", pattern="o", path="src/a.py", output_mode="count").text == (
        "Found 4 matches in 1 file, by match count, most first\n\nsrc/a.py: 4"
    )


def test_a_file_split_over_two_runs_is_one_row_with_both_counts() -> None:
    """The files page adds the counts of a file whose matches came in two runs (adjacent after
    the sort by path), and takes the rows as they are when no file is split."""
    from dsh_jupyter.core.tools.grep.page import _shape_files

    value = {"outputMode": "files_with_matches", "totalMatches": 6}
    assert _shape_files(value, ["a.py", "b.py", "b.py", "c.py"], [1, 2, 2, 1], 10) is None
    assert value["fileCounts"] == [
        {"path": "a.py", "matches": 1},
        {"path": "b.py", "matches": 4},
        {"path": "c.py", "matches": 1},
    ]
    value = {"outputMode": "count", "totalMatches": 6}
    spill = _shape_files(value, ["a.py", "b.py", "c.py"], [1, 4, 1], 2)
    assert value["fileCounts"] == [{"path": "b.py", "matches": 4}, {"path": "a.py", "matches": 1}]
    assert spill == b"Found 6 matches in 3 files\n\nb.py: 4\na.py: 1\nc.py: 1\n"
