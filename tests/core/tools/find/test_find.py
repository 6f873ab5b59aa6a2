"""``find``: paths by a fragment of their name, fuzzy, ranked, with the exact total (real rg, real files)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_jupyter.core.tools.find.rank import fuzzy_regex, query_words, rank_page

FILES = [
    "server/handlers.py",
    "dsh_jupyter/server/handlers.py",
    "handler_list.txt",
    "docs/handling.md",
    "hdl.py",
    "with space.txt",
    "notes/readme.md",
]


@pytest.fixture
def files(root: Path) -> Path:
    for rel in FILES:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    return root


def test_a_fragment_finds_every_path_holding_it_best_first(files, ws):
    r = ws.run("find", query="hdl")
    assert r.text == (
        "hdl.py\ndocs/handling.md\nhandler_list.txt\nserver/handlers.py\ndsh_jupyter/server/handlers.py\n\n"
        '(5 paths match "hdl", best first.)'
    )
    assert r.value["paths"][0] == "hdl.py" and r.value["totalPaths"] == 5 and r.value["nextOffset"] is None
    assert r.value["footer"] == '(5 paths match "hdl", best first.)'


def test_every_word_must_match_in_any_order_and_case_is_ignored(files, ws):
    both = '(2 paths match "SRV Hdl", best first.)'
    assert ws.run("find", query="SRV Hdl").text == f"server/handlers.py\ndsh_jupyter/server/handlers.py\n\n{both}"
    assert ws.run("find", query="hdl srv").value["paths"] == ["server/handlers.py", "dsh_jupyter/server/handlers.py"]


def test_a_name_that_starts_with_the_word_comes_before_one_that_only_holds_it(files, ws):
    assert ws.run("find", query="handlers").value["paths"] == [
        "server/handlers.py",  # the file name starts with it; shorter first
        "dsh_jupyter/server/handlers.py",
        "handler_list.txt",  # only as a subsequence
    ]
    assert ws.run("find", query="read").value["paths"][0] == "notes/readme.md"  # then handlers.py: r…e…a…d


def test_nothing_matching_says_so(files, ws):
    r = ws.run("find", query="zq")
    assert r.text == 'No paths match "zq"' and r.value["paths"] == [] and r.value["totalPaths"] == 0
    assert r.value["footer"] == ""


def test_pages_name_the_total_and_the_next_offset(files, make_ws):
    ws = make_ws(find_max_results=2)
    first = ws.run("find", query="h")
    assert first.value["totalPaths"] == 6 and first.value["nextOffset"] == 3
    assert first.text.endswith('\n\n(Showing paths 1-2 of 6 matching "h", best first. Use offset=3 to continue.)')
    last = ws.run("find", query="h", offset=5)
    assert last.text.endswith('\n\n(Showing paths 5-6 of 6 matching "h", best first.)')
    assert last.value["nextOffset"] is None
    pages = [ws.run("find", query="h", offset=o).value["paths"] for o in (1, 3, 5)]
    assert sorted(p for page in pages for p in page) == sorted(
        p for p in FILES if "h" in p
    )  # each path on exactly one page


def test_query_characters_are_literal(root, ws):
    for name in ("a(b).txt", "a.b.txt", "x*y.txt", "Über.txt", "new\nline.txt"):
        (root / name).write_text("x\n")
    assert ws.run("find", query="a(b").value["paths"] == ["a(b).txt"]
    assert ws.run("find", query="*").value["paths"] == ["x*y.txt"]
    assert ws.run("find", query="über").value["paths"] == ["Über.txt"]
    r = ws.run("find", query="newline")
    assert r.value["paths"] == ["new\nline.txt"] and r.text.startswith('"new\\u000aline.txt"\n')  # quoted, one line


def test_the_same_files_as_glob_hidden_protected_and_vcs_left_out(root, make_ws, monkeypatch):
    from conftest import jupyter_folders_in  # tests/conftest.py

    runtime = jupyter_folders_in(root, monkeypatch)
    (runtime / "kernel-app.json").write_text("{}")
    for rel in ("src/app.py", ".hidden/app.py", ".git/app.py", "src/.app.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    ws = make_ws()
    found = ws.run("find", query="app").value["paths"]
    assert sorted(found) == sorted(ws.run("glob", pattern="*app*").value["paths"])
    assert sorted(found) == [".hidden/app.py", "src/.app.py", "src/app.py"]  # no .git, no Jupyter runtime
    assert make_ws(allow_hidden=False).run("find", query="app").value["paths"] == ["src/app.py"]


def test_ignore_files_are_followed_when_the_setting_says_so(root, make_ws):
    (root / "build").mkdir()
    (root / "build" / "app.py").write_text("x\n")
    (root / "app.py").write_text("x\n")
    (root / ".gitignore").write_text("build/\n")
    assert make_ws().run("find", query="app").value["paths"] == ["app.py", "build/app.py"]
    r = make_ws(respect_ignore_files=True).run("find", query="app")
    assert r.value["paths"] == ["app.py"] and r.value["ignoreFiles"] is True
    assert r.text == (
        "app.py\n\n(Files named by .gitignore or .ignore rules were left out (setting respect_ignore_files).)"
        '\n\n(1 path matches "app", best first.)'
    )


def test_a_path_narrows_the_search_and_prefixes_the_paths(files, ws):
    r = ws.run("find", query="hdl", path="server")
    assert r.value["paths"] == ["server/handlers.py"] and r.value["root"] == "server"


def test_a_symlink_out_of_the_root_is_not_followed(root, tmp_path, ws):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret_handlers.py").write_text("x\n")
    os.symlink(outside, root / "link")
    (root / "mine_handlers.py").write_text("x\n")
    assert ws.run("find", query="handlers").value["paths"] == ["mine_handlers.py"]


@pytest.mark.parametrize(
    "args, code, message",
    [
        ({"query": "   "}, "ARGUMENT_INVALID", "query must hold a word: a fragment of a path such as hdl or srv hdl"),
        ({"query": "x" * 201}, "ARGUMENT_INVALID", "query must be at most 200 characters (a fragment of a path)"),
        ({"query": "h", "offset": 99}, "ARGUMENT_INVALID", "offset 99 is out of range (6 matching paths)"),
        ({"query": "h", "path": "hdl.py"}, "FS_NOT_DIRECTORY", 'cannot find in "hdl.py": not a directory'),
        ({"query": "h", "path": "missing"}, "FS_NOT_FOUND", None),
        ({"query": "h", "path": "../.."}, "FS_OUTSIDE_ROOT", None),
        ({}, "ARGUMENT_INVALID", "query is required"),
        ({"query": 3}, "ARGUMENT_INVALID", None),
        ({"query": ""}, "ARGUMENT_INVALID", None),
    ],
)
def test_bad_arguments_are_one_sentence_errors(files, ws, expect_error, args, code, message):
    expect_error(ws.run("find", **args), code, message)


def test_the_ranking_alone():
    paths = ["b/zz_handlers.py", "handlers.py", "a/handlers/x.py", "hxaxnxd.py", "a/b/handlers.py"]
    assert rank_page(paths, ["hand"], 1, 10) == [
        "handlers.py",  # the file name starts with it
        "a/b/handlers.py",
        "a/handlers/x.py",  # a folder starts with it
        "b/zz_handlers.py",  # a word of the name starts with it (after _)
        "hxaxnxd.py",  # scattered
    ]
    assert rank_page(paths, ["hand"], 2, 2) == ["a/b/handlers.py", "a/handlers/x.py"]
    assert query_words("  Srv  HDL srv ") == ["srv", "hdl"]
    assert fuzzy_regex(["a.b", "x"]) == "a.*\\x{2E}.*b"


def test_the_ranking_of_paths_with_capitals_is_that_of_their_lower_case():
    paths = ["Src/Handlers.py", "x/handlers.py", "HANDLERS.md", "a/Hand/x.py", "b/OldHandlers.py"]
    lowered = [p.lower() for p in paths]
    by_lower = rank_page(lowered, ["hand"], 1, 10)
    assert [lowered[paths.index(p)] for p in rank_page(paths, ["hand"], 1, 10)] == by_lower
    assert rank_page(paths, ["hand"], 1, 10) == [
        "HANDLERS.md",
        "x/handlers.py",
        "Src/Handlers.py",
        "a/Hand/x.py",
        "b/OldHandlers.py",
    ]
    assert rank_page(paths, ["hand"], 1, 2) == ["HANDLERS.md", "x/handlers.py"]  # the best tier fills the page


def test_matches_are_decoded_whole_however_the_filter_output_is_cut():
    """rg's output is taken as it grows: a chunk may end inside a path, even inside a character."""
    from dsh_jupyter.core.tools.find.tool import _Records

    paths = ["a.py", "dir/é-naïve.py", "x/\udcff.bin", "日本/語.txt", "last"]
    raw = b"".join(b"./" + p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)[:-1]  # no final NUL
    for size in (1, 2, 3, 5, 7, len(raw)):
        records = _Records()
        for k in range(0, len(raw), size):
            records.take(raw[k : k + size])
        assert records.finish() == paths, size
        assert records.taken == len(raw)
