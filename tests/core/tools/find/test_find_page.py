"""``find``'s matching and ranking over a list of paths, and its reading of rg's list in pieces.

The pure functions (``rank.find_page``, ``match.records_holding``) are checked against a plain
reference written from the rules in rank.py's docstring, on generated paths; the tool against
real rg on real files for the edges of reading its output in pieces.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from dsh_jupyter.core.tools.find.match import records_holding
from dsh_jupyter.core.tools.find.rank import find_page, query_words, rank_page


def holds(path: str, word: str) -> bool:
    at = 0
    low = path.lower()
    for c in word:
        at = low.find(c, at) + 1
        if not at:
            return False
    return True


def tier(path: str, word: str) -> int:
    low = path.lower()
    name = low.rpartition("/")[2]
    if name.startswith(word):
        return 0
    if low.startswith(word) or any(sep + word in low for sep in "/_-. "):
        return 1
    if word in name:
        return 2
    return 3 if word in low else 4


def reference(paths: list[str], words: list[str], offset: int, limit: int) -> tuple[int, list[str]]:
    found = [p for p in paths if all(holds(p, w) for w in words)]
    found.sort(key=lambda p: (sum(tier(p, w) for w in words), len(p), p))
    return len(found), found[offset - 1 : offset - 1 + limit]


def generated(rng: random.Random) -> tuple[list[str], list[str]]:
    """Paths of a few short segments over letters of both cases, separators, non-ASCII letters
    (one whose lower case is longer) and a newline; and words over some of those letters."""

    def segment() -> str:
        return "".join(rng.choice("abcAB_-. é日İ\n") for _ in range(rng.randint(1, 6)))

    paths = list(
        dict.fromkeys("/".join(segment() for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(0, 40)))
    )
    words = ["".join(rng.choice("abé._") for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 3))]
    return paths, query_words(" ".join(words))


def test_find_page_is_the_rules_of_rank_py():
    rng = random.Random(20261205)
    for _ in range(600):
        paths, words = generated(rng)
        offset, limit = rng.randint(1, 5), rng.randint(1, 6)
        assert find_page(paths, words, offset, limit) == reference(paths, words, offset, limit), (paths, words)


def test_many_paths_of_one_length_page_in_path_order():
    """The broad case: every path matches, all at the name's start, most of one length."""
    rng = random.Random(7)
    paths = [f"pkg{rng.randrange(20):02d}/mod{rng.randrange(100):03d}/file{i:06d}.py" for i in range(20_000)]
    paths += [f"pkg01/file{i:05d}.txt" for i in range(30)]  # shorter: first
    rng.shuffle(paths)
    for words, offset, limit in ((["file"], 1, 50), (["file"], 21, 50), (["mod"], 1, 50), (["f42py"], 3, 7)):
        assert find_page(paths, words, offset, limit) == reference(paths, words, offset, limit), (words, offset)
    total, page = find_page(paths, ["file"], 1, 50)
    assert total == 20_030 and page[:30] == sorted(p for p in paths if p.endswith(".txt"))


def test_records_holding_reads_nul_led_records_and_leaves_off_their_dot_slash():
    text = "\0./a/Hdl.py\0./x\ny/h-d-l\0./hd\0./İhdl\0./日/hdl"
    assert records_holding("hdl")(text) == ["a/Hdl.py", "x\ny/h-d-l", "İhdl", "日/hdl"]
    assert records_holding("hdl")(text.replace("İ", "I")) == ["a/Hdl.py", "x\ny/h-d-l", "Ihdl", "日/hdl"]
    assert records_holding("é")("\0./É.txt\0./e.txt") == ["É.txt"]
    assert records_holding("é")("\0./E.txt") == []  # all ASCII: no é there
    assert records_holding("a\0b")("\0./a\0./b") == []  # no path holds a NUL
    assert records_holding("./")("\0./a/.x/b\0./ab") == ["a/.x/b"]


def test_rank_page_past_the_end_is_empty_and_the_total_exact():
    assert find_page(["a.py", "b.py"], ["py"], 5, 10) == (2, [])
    assert rank_page([], ["x"], 1, 10) == []


# -- the tool, real rg ---------------------------------------------------------------------------


def test_paths_cut_by_a_read_of_the_pipe_are_found_whole(root: Path, ws, monkeypatch):
    """rg's list is read in pieces as small as one byte: a piece ends inside a path, inside a
    character, inside the "./" before a path."""
    from dsh_jupyter.core.tools.find import tool

    names = [f"dir{i}/naïve_{i}_handler.py" for i in range(40)] + ["日本/handler語.txt", "other.md"]
    for rel in names:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    whole = ws.run("find", query="handler").value
    assert whole["totalPaths"] == 41
    for size in (1, 2, 3, 7):
        monkeypatch.setattr(tool, "PIPE_SIZE", size)
        assert ws.run("find", query="handler").value == whole, size


def test_non_ascii_and_newline_paths_are_matched_with_case_ignored(root: Path, ws):
    for rel in ("ÄRGER/Überblick.md", "plain/uber.txt", "new\nline/Über.py", "İstanbul.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    assert ws.run("find", query="über").value["paths"] == ["new\nline/Über.py", "ÄRGER/Überblick.md"]
    assert ws.run("find", query="ärger blick").value["paths"] == ["ÄRGER/Überblick.md"]
    assert ws.run("find", query="ub").value["paths"] == ["plain/uber.txt"]
    assert ws.run("find", query="ist").value["paths"] == ["İstanbul.txt"]  # "İ".lower() is "i̇"
    assert ws.run("find", query="wline").value["totalPaths"] == 1


def test_what_find_keeps_is_bounded_by_the_raw_output_guard(root: Path, make_ws, expect_error):
    for i in range(300):
        (root / f"file{i:04d}.txt").write_text("x\n")
    (root / "zz.md").write_text("x\n")
    ws = make_ws(raw_output_max_bytes=2000)  # the list is over 4 KB; what matches "zz" is not
    assert ws.run("find", query="zz").value["paths"] == ["zz.md"]
    expect_error(
        ws.run("find", query="file"),
        "SEARCH_RAW_OUTPUT_OVERFLOW",
        "find produced more than 2000 bytes of raw output and was stopped; narrow the pattern, path or include",
    )


@pytest.mark.parametrize("query", ["handler", "hdl py"])
def test_the_same_page_from_the_tool_and_from_find_page(root: Path, ws, query):
    names = [f"a{i % 7}/b{i % 3}/{'handler' if i % 2 else 'hd_l'}{i}.py" for i in range(200)]
    for rel in names:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    r = ws.run("find", query=query).value
    assert (r["totalPaths"], r["paths"]) == find_page(names, query_words(query), 1, 50)


def test_a_page_chosen_piece_by_piece_is_the_page_of_the_whole(root: Path, make_ws, monkeypatch):
    """The best of each piece of rg's list, ranked as it comes, give the page ranking all would."""
    from dsh_jupyter.core.tools.find import tool

    rng = random.Random(5)
    names = [
        f"{rng.choice(['src', 'lib/x', 'tests'])}/{rng.choice(['hand', 'a_hdl', 'h-d-l', 'zh.d.l'])}{i}.py"
        for i in range(300)
    ]
    for rel in names:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    monkeypatch.setattr(tool, "PIPE_SIZE", 64)  # many pieces
    monkeypatch.setattr(tool, "RANK_EVERY", 5)  # ranked every few paths
    ws = make_ws(find_max_results=7)
    for query in ("hdl", "h l", "hand"):
        for offset in (1, 8, 295):
            total, page = find_page(names, query_words(query), offset, 7)
            r = ws.run("find", query=query, offset=offset) if offset <= total else None
            if r is not None:
                assert (r.value["totalPaths"], r.value["paths"]) == (total, page), (query, offset)
