"""A glob of endings alone, answered from the index in two passes at once, samples as the walk does.

``glob/indexed.py`` picks the over-cap page from the head of the time-ordered list and the counts
of each top-level entry, instead of looking at every path; these tests hold it to
``search.sampling.sample_across_groups`` — the pure rule on seeded lists, then whole answers
against a workspace without the index on trees whose entries differ in size and in time, with
equal times, files beside folders, a search root below the root, several endings, sampling off
and more entries than are counted one by one.
"""

from __future__ import annotations

import os
import random
import time

import pytest

from dsh_jupyter import Workspace
from dsh_jupyter.core.index import native
from dsh_jupyter.core.tools.glob import indexed
from dsh_jupyter.core.tools.search.sampling import sample_across_groups


@pytest.mark.parametrize("seed", range(300))
def test_the_page_from_the_head_is_the_rule_s_page(seed):
    rng = random.Random(seed)
    keys = [f"k{rng.randrange(rng.randint(1, 12))}" for _ in range(rng.randint(2, 400))]
    cap = rng.randint(1, min(60, len(keys) - 1))  # over the cap: the only lists it is asked to page
    prefix = rng.choice(["", "sub/"])
    lines = [f"{prefix}{key}/f{i}" if rng.random() < 0.9 else f"{prefix}{key}" for i, key in enumerate(keys)]
    # a key used as a file name stays one path: make every such line unique and its key its own
    lines = [line if "/" in line[len(prefix) :] else f"{line}.{i}" for i, line in enumerate(lines)]
    keys = [line[len(prefix) :].partition("/")[0] for line in lines]
    sizes: dict[str, int] = {}
    for key in keys:
        sizes[key] = sizes.get(key, 0) + 1
    groups = sorted(sizes.items())
    page = indexed.sampled_page("\n".join(lines), groups, cap, len(prefix))
    want = sample_across_groups(keys, cap)
    assert page is not None
    assert page.paths == [lines[i] for i in want.indices]
    assert (page.groups_shown, page.flat) == (want.groups_shown, want.flat)


def test_a_line_of_an_entry_not_counted_sends_the_page_back():
    assert indexed.sampled_page("a/x\nb/y\na/z", [("a", 2)], 2, 0) is None


def _tree(root, rng: random.Random) -> None:
    now = time.time()
    for d in range(rng.randint(2, 6)):
        folder = root / f"top{d}" / f"sub{rng.randrange(3)}"
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(rng.randint(1, 40)):
            path = folder / f"f{i}.{rng.choice(['py', 'py', 'txt', 'js'])}"
            path.write_text("x\n")
            stamp = now - rng.choice([rng.uniform(0, 1e6), 5000.0])  # some times equal
            os.utime(path, (stamp, stamp))
    for i in range(rng.randint(0, 5)):  # files beside the folders: entries of their own
        path = root / f"root{i}.py"
        path.write_text("x\n")
        stamp = now - rng.uniform(0, 1e6)
        os.utime(path, (stamp, stamp))


@pytest.fixture(params=["c", "sql"])
def join_way(request):
    """The list read in one pass in C (``native.join``), or joined by SQLite beside a count of
    each entry (where the compiled library is missing)."""
    if request.param == "sql":
        with native.python_only():
            yield "sql"
    else:
        if not native.available():
            pytest.skip("the compiled library is not built here")
        yield "c"


CALLS = [
    {"pattern": "*.py"},
    {"pattern": "**/*.py"},
    {"pattern": "*.{py,js}"},
    {"pattern": "*.py", "path": "top1"},
    {"pattern": "*.txt"},
    {"pattern": "*0.py"},  # the extension's run of the table, then the ending
    {"pattern": "*.{js,py}", "path": "top0"},
]


@pytest.mark.parametrize("sample", [True, False], ids=["sampled", "head"])
@pytest.mark.parametrize("seed", range(6))
def test_glob_from_the_index_samples_as_the_walk(tmp_path, seed, sample, join_way):
    rng = random.Random(seed)
    root = tmp_path / "root"
    root.mkdir()
    _tree(root, rng)
    (root / "top1").mkdir(exist_ok=True)
    settings = {"glob_max_results": rng.choice([3, 7, 20]), "glob_sample_over_cap": sample}
    indexed_ws = Workspace(root, state_path=tmp_path / "a" / "s.sqlite", index_min_files=1, **settings)
    plain = Workspace(root, state_path=tmp_path / "b" / "s.sqlite", index_min_files=0, **settings)
    try:
        _ready(indexed_ws)
        for args in CALLS:
            got, want = indexed_ws.run("glob", **args), plain.run("glob", **args)
            assert got.value["source"] == "index", (args, got.value.get("index_note"))
            assert _same_text(got, want), (args, got.text, want.text)
            assert _trimmed(got.value) == _trimmed(want.value), args
            if want.value.get("spill"):
                assert _spilled(indexed_ws, got) == _spilled(plain, want)
    finally:
        indexed_ws.close()
        plain.close()


def test_more_entries_than_are_counted_one_by_one_split_the_list(tmp_path, monkeypatch, join_way):
    monkeypatch.setattr(indexed, "MAX_GROUPS", 3)
    root = tmp_path / "root"
    root.mkdir()
    _tree(root, random.Random(99))
    indexed_ws = Workspace(root, state_path=tmp_path / "a" / "s.sqlite", index_min_files=1, glob_max_results=5)
    plain = Workspace(root, state_path=tmp_path / "b" / "s.sqlite", index_min_files=0, glob_max_results=5)
    try:
        _ready(indexed_ws)
        got, want = indexed_ws.run("glob", pattern="*.py"), plain.run("glob", pattern="*.py")
        assert got.value["source"] == "index" and _trimmed(got.value) == _trimmed(want.value)
        assert _same_text(got, want)
    finally:
        indexed_ws.close()
        plain.close()


def _ready(ws: Workspace) -> None:
    deadline = time.monotonic() + 60
    while ws.index.status()["state"] != "ready":
        assert time.monotonic() < deadline, ws.index.status()
        ws.run("glob", pattern="*.none")
        time.sleep(0.02)


def _trimmed(value: dict) -> dict:
    return {k: v for k, v in value.items() if k not in ("source", "index_note", "spill", "footer")}


def _same_text(got, want) -> bool:
    """The same text but for the saved result's name (each workspace saves its own)."""
    spill_got, spill_want = got.value.get("spill"), want.value.get("spill")
    text = got.text.replace(spill_got, "SPILL") if spill_got else got.text
    return text == (want.text.replace(spill_want, "SPILL") if spill_want else want.text)


def _spilled(ws: Workspace, result) -> str:
    return open(result.value["spill"], encoding="utf-8").read()


@pytest.mark.parametrize("odd", [b"line\nbreak.py", b"x\xf0.py"], ids=["newline", "not-utf8"])
def test_a_name_the_joined_list_cannot_carry_sends_the_glob_to_the_python_sort(tmp_path, odd, join_way):
    """A name holding a line break (the lines would not say the names) or a byte that is not
    UTF-8 (SQLite orders bytes, rg the escapes): the index's list is taken row by row and sorted
    here instead, and the answer is still the walk's."""
    root = tmp_path / "root"
    root.mkdir()
    _tree(root, random.Random(7))
    stamp = time.time() - 2e6  # older than the rest, one time for both: their order is by name
    # beside a name whose bytes sort the other way round from its escapes (b"\xf0" after
    # "\ue000" in bytes, before it as the escape "\udcf0")
    for name in (odd, "x\ue000.py".encode()):
        path = os.path.join(os.fsencode(root / "top0"), name)
        with open(path, "w") as f:
            f.write("x\n")
        os.utime(path, (stamp, stamp))
    indexed_ws = Workspace(root, state_path=tmp_path / "a" / "s.sqlite", index_min_files=1, glob_max_results=4)
    plain = Workspace(root, state_path=tmp_path / "b" / "s.sqlite", index_min_files=0, glob_max_results=4)
    try:
        _ready(indexed_ws)
        got, want = indexed_ws.run("glob", pattern="*.py"), plain.run("glob", pattern="*.py")
        assert got.value["source"] == "index", got.value.get("index_note")
        assert _trimmed(got.value) == _trimmed(want.value) and _same_text(got, want)
        assert _spilled(indexed_ws, got) == _spilled(plain, want)
    finally:
        indexed_ws.close()
        plain.close()


@pytest.mark.parametrize("prefix", ["", "top0"])
def test_names_that_need_a_closer_look_print_as_the_walk_prints_them(tmp_path, join_way, prefix):
    """Names the pass in C cannot call bare (a space at an edge of a line, a quote, a backslash, a
    tab, ``</``, a character past ASCII) are checked one by one, as the walk's are, and print as
    the walk prints them: quoted where a name needs it, bare where it does not."""
    root = tmp_path / "root"
    root.mkdir()
    _tree(root, random.Random(11))
    odd = [" lead.py", "trail .py", 'quo"te.py', "back\\slash.py", "tab\tin.py", "tag</b.py", "tag<b.py",
           "mail@.py", "café.py", "in side.py"]  # fmt: skip
    for i, name in enumerate(odd):
        path = root / "top0" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text("x\n")
        stamp = time.time() - 3e6 + i
        os.utime(path, (stamp, stamp))
    indexed_ws = Workspace(root, state_path=tmp_path / "a" / "s.sqlite", index_min_files=1, glob_max_results=6)
    plain = Workspace(root, state_path=tmp_path / "b" / "s.sqlite", index_min_files=0, glob_max_results=6)
    try:
        _ready(indexed_ws)
        args = {"pattern": "*.py", **({"path": prefix} if prefix else {})}
        got, want = indexed_ws.run("glob", **args), plain.run("glob", **args)
        assert got.value["source"] == "index", got.value.get("index_note")
        assert _trimmed(got.value) == _trimmed(want.value) and _same_text(got, want)
        spilled = _spilled(indexed_ws, got)
        assert spilled == _spilled(plain, want)
        lines = spilled.split("\n")
        for bare in (
            "top0/ lead.py",
            "top0/trail .py",
            'top0/quo"te.py',
            "top0/tag<b.py",
            "top0/in side.py",
            "top0/mail@.py",
        ):
            assert bare in lines, bare
        for quoted in ('"top0/back\\\\slash.py"', '"top0/tab\\u0009in.py"', '"top0/tag<\\/b.py"'):
            assert quoted in lines, quoted
    finally:
        indexed_ws.close()
        plain.close()


def test_a_list_of_plain_names_is_its_own_spill(tmp_path):
    """With the pass in C, a list of plain ASCII names that print bare is spilled as the index's
    bytes and a newline, and no name is checked again."""
    if not native.available():
        pytest.skip("the compiled library is not built here")
    root = tmp_path / "root"
    root.mkdir()
    _tree(root, random.Random(5))
    indexed_ws = Workspace(root, state_path=tmp_path / "a" / "s.sqlite", index_min_files=1, glob_max_results=3)
    plain = Workspace(root, state_path=tmp_path / "b" / "s.sqlite", index_min_files=0, glob_max_results=3)
    checked: list = []
    real = indexed.render_glob_spill_joined
    try:
        _ready(indexed_ws)
        indexed.render_glob_spill_joined = lambda *a, **k: checked.append(k.get("bare")) or real(*a, **k)
        got, want = indexed_ws.run("glob", pattern="*.py"), plain.run("glob", pattern="*.py")
        assert checked == [True]
        assert _spilled(indexed_ws, got) == _spilled(plain, want)
    finally:
        indexed.render_glob_spill_joined = real
        indexed_ws.close()
        plain.close()
