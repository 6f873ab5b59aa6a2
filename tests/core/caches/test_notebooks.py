"""Where the notebooks are: the kept tree answers what rg's listing answers, and is never stale.

Real trees, real rg for the comparison. Folders are left to settle (their ctime older than the
stamp margin) before the kept entries are trusted, then changed in every way that moves a
folder's entries: a notebook made deep down (also right after a look, in the same clock tick),
one removed, a folder renamed, a folder swapped for a symlink.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import nbformat
import pytest

from dsh_jupyter import Workspace
from dsh_jupyter.core.caches.notebooks import NotebookTree, plain_globs
from dsh_jupyter.core.caches.stamps import MARGIN_NS
from dsh_jupyter.core.rg.runner import find_rg
from dsh_jupyter.core.tools.search.flags import VCS_DIRS

NB = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("needle = 1\n", id="c1")]))


def settle() -> None:
    time.sleep(MARGIN_NS / 1e9 + 0.03)


def make_tree(root: Path) -> None:
    for rel in [
        "a/one.ipynb",
        "a/b/c/deep.ipynb",
        "top.ipynb",
        ".hid/h.ipynb",
        "a/.git/g.ipynb",
        "__pycache__/p.ipynb",
        "a/build-x/skip.ipynb",
        "a/keep.ipynb.txt",
        "z/plain.py",
    ]:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(NB)
    (root / "linkdir").symlink_to(root / "a", target_is_directory=True)
    (root / "link.ipynb").symlink_to(root / "top.ipynb")
    os.mkfifo(root / "z" / "fifo.ipynb")


def rg_listing(root: Path, hidden: bool, globs: list[str]) -> list[str]:
    argv = [
        find_rg(),
        "--files",
        "--null",
        "--no-config",
        "--no-ignore",
        "--no-follow",
        *(["--hidden"] if hidden else []),
        "--glob=*.ipynb",
        *[f"--glob=!{v}" for v in VCS_DIRS],
        *([] if hidden else ["--glob=!.*"]),
        *[f"--glob=!{g}" for g in globs],
        "--",
        ".",
    ]
    out = subprocess.run(argv, cwd=root, capture_output=True, check=False).stdout
    return sorted(p[2:] for p in out.decode().split("\0") if p)


def listed(tree: NotebookTree, root: Path, ws: Workspace) -> list[str]:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return tree.list_notebooks(
            fd, shown=ws.resolver.visibility.shown, skip_dirs=frozenset(VCS_DIRS), excluded=frozenset()
        )
    finally:
        os.close(fd)


@pytest.mark.parametrize("hidden", [True, False])
def test_it_lists_what_rg_lists(tmp_path, hidden):
    root = tmp_path / "root"
    make_tree(root)
    globs = ["__pycache__", "build-*"]
    ws = Workspace(root, state_path=str(tmp_path / "s.sqlite"), allow_hidden=hidden, hide_globs=globs)
    want = rg_listing(root, hidden, globs)
    assert "a/b/c/deep.ipynb" in want and "link.ipynb" not in want and "z/fifo.ipynb" not in want
    tree = NotebookTree()
    assert listed(tree, root, ws) == want
    settle()
    assert listed(tree, root, ws) == want  # now kept
    assert listed(tree, root, ws) == want and tree.reads > 0
    reads, answered = tree.reads, tree.answered
    assert listed(tree, root, ws) == want and tree.reads == reads  # served from the stamps alone
    assert tree.answered == answered + 1  # the whole answer, proven by one stat per folder


def test_a_kept_answer_serves_only_the_rules_and_exclusions_it_was_made_for(tmp_path):
    root = tmp_path / "root"
    make_tree(root)
    tree = NotebookTree()
    plain = Workspace(root, state_path=str(tmp_path / "a.sqlite"))
    hiding = Workspace(root, state_path=str(tmp_path / "b.sqlite"), allow_hidden=False, hide_globs=["__pycache__"])
    settle()
    for _ in range(2):
        assert listed(tree, root, plain) == rg_listing(root, True, [])
        assert listed(tree, root, hiding) == rg_listing(root, False, ["__pycache__"])
    assert tree.answered == 2
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(2):
            got = tree.list_notebooks(
                fd, shown=plain.resolver.visibility.shown, skip_dirs=frozenset(VCS_DIRS), excluded=frozenset({"a/b"})
            )
            assert "a/b/c/deep.ipynb" not in got and "a/one.ipynb" in got
    finally:
        os.close(fd)
    assert tree.answered == 3


def test_every_change_is_seen_on_the_next_call_even_in_the_same_tick(tmp_path):
    root = tmp_path / "root"
    make_tree(root)
    ws = Workspace(root, state_path=str(tmp_path / "s.sqlite"))
    tree = NotebookTree()
    listed(tree, root, ws)
    settle()
    before = listed(tree, root, ws)
    answered = tree.answered  # 0 or 1: whether the first look was already settled depends on the load
    assert listed(tree, root, ws) == before and tree.answered == answered + 1  # a change meets a kept answer
    (root / "a" / "b" / "c" / "new.ipynb").write_text(NB)  # right after the look
    assert listed(tree, root, ws) == sorted([*before, "a/b/c/new.ipynb"])
    settle()
    listed(tree, root, ws)
    answered = tree.answered
    listed(tree, root, ws)
    assert tree.answered == answered + 1  # once settled, the next look is a kept answer
    (root / "a" / "one.ipynb").unlink()
    os.rename(root / "a" / "b", root / "a" / "moved")
    assert listed(tree, root, ws) == sorted(
        p.replace("a/b/", "a/moved/") for p in [*before, "a/b/c/new.ipynb"] if p != "a/one.ipynb"
    )
    settle()
    listed(tree, root, ws)
    answered = tree.answered
    listed(tree, root, ws)
    assert tree.answered == answered + 1  # once settled, the next look is a kept answer
    os.rename(root / "a" / "moved", root / "a" / "gone")
    (root / "a" / "moved").symlink_to(root / "a" / "gone", target_is_directory=True)
    got = listed(tree, root, ws)
    assert "a/gone/c/deep.ipynb" in got and not any(p.startswith("a/moved/") for p in got)
    assert got == rg_listing(root, True, [])


def test_grep_finds_the_same_cells_with_and_without_the_kept_tree(tmp_path):
    root = tmp_path / "root"
    make_tree(root)
    results = []
    for size in (0, 50_000):
        ws = Workspace(root, state_path=str(tmp_path / f"s{size}.sqlite"), notebook_tree_max_folders=size)
        for _ in range(2):
            r = ws.run("grep", pattern="needle")
            results.append(r.text)
            settle()
    assert len(set(results)) == 1
    assert "a/b/c/deep.ipynb\nCell 1, line 1: needle = 1" in results[0] and "\nLine 1: " not in results[0]


def test_a_hide_glob_rg_reads_its_own_way_is_left_to_rg():
    assert plain_globs(["__pycache__", "*.pyc", ".DS_Store", "*~", "[ab]x"])
    for glob in ["a/b", "*.{py,ipynb}", "**/x", "a\\*", "[^a]x"]:
        assert not plain_globs([glob]), glob


def test_a_cancelled_walk_answers_nothing(tmp_path):
    root = tmp_path / "root"
    make_tree(root)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert (
            NotebookTree().list_notebooks(
                fd, shown=lambda n: True, skip_dirs=frozenset(), excluded=frozenset(), cancelled=lambda: True
            )
            is None
        )
    finally:
        os.close(fd)


def test_the_kept_folders_are_bounded(tmp_path):
    root = tmp_path / "root"
    for i in range(30):
        (root / f"d{i:02d}").mkdir(parents=True)
    settle()
    tree = NotebookTree(max_folders=10)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert tree.list_notebooks(fd, shown=lambda n: True, skip_dirs=frozenset(), excluded=frozenset()) == []
    finally:
        os.close(fd)
    assert len(tree) == 10


def test_a_wide_tree_is_walked_with_one_folder_open_at_a_time(tmp_path):
    # 600 subfolders under a descriptor limit of 64: a walk that kept folders open would fail.
    root = tmp_path / "root"
    for i in range(600):
        (root / f"d{i:03d}").mkdir(parents=True)
    (root / "d599" / "last.ipynb").write_text(NB)
    probe = (
        "import os, resource, sys\n"
        "from dsh_jupyter.core.caches.notebooks import NotebookTree\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))\n"
        f"fd = os.open({str(root)!r}, os.O_RDONLY | os.O_DIRECTORY)\n"
        "print(NotebookTree().list_notebooks(fd, shown=lambda n: True, skip_dirs=frozenset(), excluded=frozenset()))\n"
    )
    out = subprocess.run([os.sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['d599/last.ipynb']"


@pytest.mark.parametrize("case", ["brace-hide-glob", "include"])
def test_grep_asks_rg_for_the_listing_when_the_kept_tree_cannot_answer_alike(tmp_path, case):
    root = tmp_path / "root"
    make_tree(root)
    (root / "a" / "x.bak").mkdir()
    (root / "a" / "x.bak" / "in-hidden.ipynb").write_text(NB)
    globs = ["*.{bak,tmp}"] if case == "brace-hide-glob" else []
    ws = Workspace(root, state_path=str(tmp_path / "s.sqlite"), hide_globs=globs)
    args = {"pattern": "needle"} if case == "brace-hide-glob" else {"pattern": "needle", "include": "*.ipynb"}
    text = ws.run("grep", **args).text
    assert ws.notebooks.reads == 0  # the kept tree was not used
    assert "a/b/c/deep.ipynb\nCell 1, line 1: needle = 1" in text
    # rg reads braces as alternatives: the folder x.bak is hidden by "*.{bak,tmp}"
    assert ("a/x.bak/in-hidden.ipynb" in text) == (case == "include")
