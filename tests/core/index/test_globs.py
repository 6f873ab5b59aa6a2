"""The index decides ``--glob`` as rg does: every compiled glob selects exactly what the real rg lists.

A seeded tree of files with awkward names (dots, spaces, brackets, braces, backslashes, a
newline, non-ASCII and non-UTF-8 bytes, names equal to folder names, deep and shallow) is walked
by the bundled rg with ``--files --glob=P`` and with ``--glob=!P``; for every pattern
``compile_glob`` decides, ``select`` over the tree's paths must give the same set. A glob rg
refuses must not be decided. The everyday patterns are checked on every run; the seeded grammar
of the whole syntax is the slow test.
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from dsh_jupyter.core.index.globs import compile_glob, select
from dsh_jupyter.core.rg.runner import find_rg

EVERYDAY = [
    "*.py",
    "src/**/*.ts",
    "**/test_*.py",
    "*.{js,ts}",
    "docs/*",
    "node_modules",
    "build/",
    "*",
    "**/*",
    "**/*.py",
    "*.md",
    "*.txt",
    "*.*",
    "*app*",
    "bottom.py",
    "file0*",
    "*.ipynb",
    "src/**",
    "docs/**",
    "util/**",
    "node_modules/**",
    "pkg",
    "/src",
    "src/*.py",
    "*.min.js",
    "test_*",
    "**/node_modules/**",
    ".git",
    ".*",
    "/docs",
    "/a/b",
    "*.py/",
]
# Globs rg refuses (or that add nothing to its overrides): never decided here.
UNDECIDED = ["[", "a{b", "*}", "*.{py,md", "x\\", "[b-a]", "", "  ", "#x", "{a", "a}", "[!"]

DIR_NAMES = [
    "src", "docs", "build", "node_modules", "a", "a.b", "sp ace", "[br]", "{x,y}", "ünï", ".hidden",
    "test", "x.py", "Src", "lib", "deep", "*", "q?", "b\\s", "nl\nd", "util", "pkg", ",c", "é",
]  # fmt: skip
FILE_NAMES = [
    "x.py", "test_a.py", "test_.py", "a_test.py", "a.js", "a.ts", "b.min.js", "A.PY", ".env", ".py",
    "README.md", "src", "build", "node_modules", "[x].txt", "{a,b}.txt", "a*b", "q?x", "b\\s.txt",
    "é.py", "日本.txt", "tab\tname", "nl\nx.py", "x.tar.gz", "no_ext", "a b.py", "-dash", "!bang",
    "#hash", "\udcff.py", "ab", "a", "trail ", ",comma", "é", "ée", "app.json", "file01.txt",
    "bottom.py", "n.ipynb", "pkg", "x.", "..x", "a]b", "a-b", "ß.md",
]  # fmt: skip


def _rg() -> str:
    rg = find_rg()
    assert rg is not None
    return rg


def _make_tree(root: Path, seed: int, folders: int) -> list[str]:
    rng = random.Random(seed)
    rels: set[str] = set(rng.sample(FILE_NAMES, 30))
    dirs: set[str] = set()
    for _ in range(folders):
        parts = [rng.choice(DIR_NAMES) for _ in range(rng.randint(1, 4))]
        folder = "/".join(parts)
        if any(folder == r or folder.startswith(r + "/") for r in rels):
            continue  # a file already holds that name
        dirs.add(folder)
        for name in rng.sample(FILE_NAMES, rng.randint(1, 8)):
            rel = f"{folder}/{name}"
            if rel not in dirs and not any(d.startswith(rel + "/") for d in dirs):
                rels.add(rel)
    for rel in sorted(rels):
        path = os.path.join(os.fsencode(root), os.fsencode(rel))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.isdir(path):
            continue
        with open(path, "wb") as f:
            f.write(b"x\n")
    found = []
    for top, _dirs, files in os.walk(os.fsencode(root)):
        for name in files:
            found.append(os.path.relpath(os.path.join(top, name), os.fsencode(root)).decode("utf-8", "surrogateescape"))
    return sorted(found)


def _rg_files(root: Path, globs: list[str]) -> set[str] | None:
    """What the bundled rg lists walking ``root`` with these --glob flags; None when it refuses."""
    argv = [_rg(), "--no-config", "--no-ignore", "--hidden", "--files", "--null", *(f"--glob={g}" for g in globs)]
    done = subprocess.run([*argv, "--", "."], cwd=root, capture_output=True, timeout=30)
    if done.returncode == 2:
        assert not done.stdout, done.stderr
        return None
    assert done.returncode in (0, 1), done.stderr
    return {p.decode("utf-8", "surrogateescape")[2:] for p in done.stdout.split(b"\0") if p}


def _check(root: Path, paths: list[str], pattern: str) -> list[str]:
    """Compare one pattern with rg as include and as exclude; the variants left undecided."""
    undecided = []
    for include, excludes, flags in ((pattern, [], [pattern]), (None, [pattern], [f"!{pattern}"])):
        listed = _rg_files(root, flags)
        got = select(paths, include, excludes)
        if listed is None:
            assert got is None, f"rg refuses {flags!r}, the index decided it"
            continue
        if got is None:
            undecided.append(flags[0])
            continue
        assert set(got) == listed, (flags, sorted(set(got) - listed), sorted(listed - set(got)))
        test = compile_glob(flags[0])
        assert test is not None
        assert {p for p in paths if test.selected(p)} == listed, flags
    return undecided


@pytest.fixture(scope="module")
def small_tree(tmp_path_factory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("globs-small")
    return root, _make_tree(root, seed=7, folders=40)


def test_everyday_patterns_are_decided_exactly_as_rg_lists(small_tree) -> None:
    root, paths = small_tree
    assert len(paths) > 100
    for pattern in EVERYDAY:
        assert _check(root, paths, pattern) == [], pattern


def test_globs_rg_refuses_are_left_to_rg(small_tree) -> None:
    root, paths = small_tree
    for pattern in UNDECIDED:
        assert compile_glob(pattern) is None, pattern
        assert select(paths, pattern, []) is None
    assert select(paths, "*.py", ["["]) is None
    for pattern in ["[", "a{b", "*}", "x\\", "[b-a]"]:
        assert _rg_files(root, [pattern]) is None, pattern


def test_what_rg_decides_for_folders_and_names(small_tree) -> None:
    root, paths = small_tree
    # A positive glob that names a folder lists no file inside it; one ending in / lists nothing.
    assert select(paths, "build/", []) == [] == sorted(_rg_files(root, ["build/"]) or [])
    assert all(p.rpartition("/")[2] == "src" for p in select(paths, "src", []) or ["?"])
    # A later glob wins: the exclude leaves out what the include brought in.
    got = select(paths, "*.py", ["src/**"])
    assert got is not None and set(got) == _rg_files(root, ["*.py", "!src/**"])
    assert not any(p.startswith("src/") for p in got)
    assert got == [p for p in paths if p in set(got)]  # in the order given
    # ? and a class match one byte: never the two bytes of é, as rg says.
    one = compile_glob("?.py")
    assert one is not None and not one.selected("é.py") and one.selected("x.py")
    assert compile_glob("??.py") is not None and compile_glob("??.py").selected("é.py")  # type: ignore[union-attr]


def test_a_positive_glob_brings_back_what_ignore_files_hide(tmp_path) -> None:
    # Why select answers for --no-ignore --hidden walks only: rg's overrides come first.
    (tmp_path / "ig").mkdir()
    (tmp_path / ".hid").mkdir()
    for rel in ["ig/a.py", "b.log", "c.py", ".hid/d.py"]:
        (tmp_path / rel).write_text("x\n")
    (tmp_path / ".gitignore").write_text("ig/\n*.log\n")
    argv = [_rg(), "--no-config", "--no-require-git", "--files", "--null"]

    def listed(*globs: str) -> list[str]:
        done = subprocess.run([*argv, *(f"--glob={g}" for g in globs)], cwd=tmp_path, capture_output=True, check=True)
        return sorted(p.decode() for p in done.stdout.split(b"\0") if p)

    assert listed() == ["c.py"]
    assert listed("*.py") == ["c.py"]
    assert listed("*") == [".gitignore", ".hid/d.py", "b.log", "c.py", "ig/a.py"]
    assert listed("*", "!.*") == ["b.log", "c.py", "ig/a.py"]


def _grammar_pattern(rng: random.Random) -> str:
    atoms = [
        "*", "*", "?", "[a-z]", "[!a]", "[^.]", "[]x]", "[-a]", "[a-]", "[é]", "[.-_]", "{py,js}",
        "{a,b/c}", "{*.py,*.md}", "{src,docs}", "{,x}", "{a,{b,c}}", "\\*", "\\[", "\\{", "\\?", "\\\\",
        "**", ".", "_", " ", "é", "ß", "py", "src", "test", "a", "x", "md", "txt", "js", "b", "\\,", ",",
    ]  # fmt: skip
    names = DIR_NAMES + FILE_NAMES

    def piece() -> str:
        r = rng.random()
        if r < 0.3:
            name = rng.choice(names)
            cut = rng.randint(0, len(name))
            return rng.choice([name, name[:cut], name[cut:]])
        return rng.choice(atoms)

    def segment() -> str:
        return "".join(piece() for _ in range(rng.randint(1, 3)))

    segs = [segment() for _ in range(rng.randint(1, 3))]
    glob = rng.choice(["/", "/**/"] if rng.random() < 0.2 else ["/"]).join(segs)
    r = rng.random()
    if r < 0.15:
        glob = "/" + glob
    elif r < 0.3:
        glob = "**/" + glob
    r = rng.random()
    if r < 0.1:
        glob += "/"
    elif r < 0.2:
        glob += "/**"
    elif r < 0.25:
        glob += "/*"
    return glob


def _escape(name: str) -> str:
    return "".join("\\" + c if c in "*?[]{}\\," else c for c in name)


def _mangle(rng: random.Random, name: str) -> str:
    """A glob for ``name`` (or one near it): characters become ``?``, runs ``*``, a class, braces."""
    out, i = [], 0
    while i < len(name):
        c, r = name[i], rng.random()
        if r < 0.1:
            out.append("?")
        elif r < 0.18:
            out.append("*")
            i += rng.randint(0, 3)
        elif r < 0.24:
            out.append(rng.choice([f"[{_escape(c)}]", f"[!{_escape(c)}]", "[a-z]", "[^.]", f"[{_escape(c)}-~]"]))
        elif r < 0.28:
            out.append("{" + _escape(c) + "," + rng.choice(["x", "py", "", "*", "é"]) + "}")
        else:
            out.append(_escape(c))
        i += 1
    return "".join(out)


def _path_pattern(rng: random.Random, paths: list[str]) -> str:
    """A glob made from a path of the tree, so that it selects something."""
    parts = rng.choice(paths).split("/")
    if rng.random() < 0.35:
        parts = parts[: rng.randint(1, len(parts))]  # a folder (or the file)
    parts = [_mangle(rng, p) if rng.random() < 0.6 else _escape(p) for p in parts]
    if len(parts) > 2 and rng.random() < 0.3:
        a = rng.randint(1, len(parts) - 2)
        parts[a : a + rng.randint(1, len(parts) - 1 - a)] = ["**"]
    r = rng.random()
    if r < 0.3:
        parts = parts[-1:]  # the name alone: any depth
    elif r < 0.4:
        parts = ["**", *parts[rng.randint(0, len(parts) - 1) :]]
    glob = ("/" if rng.random() < 0.15 else "") + "/".join(parts)
    r = rng.random()
    if r < 0.1:
        glob += "/"
    elif r < 0.2:
        glob += "/**"
    elif r < 0.25:
        glob += "/*"
    return glob


@pytest.mark.slow
def test_seeded_globs_select_exactly_what_rg_lists(tmp_path) -> None:
    paths = _make_tree(tmp_path, seed=11, folders=120)
    assert len(paths) >= 300
    rng = random.Random(20261205)
    grammar = {_grammar_pattern(rng) for _ in range(400)} | {_path_pattern(rng, paths) for _ in range(400)}
    extra = [
        "**", "/", "/**", "**/", "a/**/b", "**/**", "***", "a**b", "{**/a,b}", "{a/**,b}", "{,x}y", "a{}b",
        "\\!bang", "\\#hash", "x\\ ", "trail\\ ", "x ", "*\\/", "\\/", "src/", "/src/", "[br]", "\\[br]",
        "\\{x,y}", "{x,y}", "*\n*", "nl*", "**/nl\nx.py", "ünï/**", "*.PY", "A.*", "*.tar.gz", "*.gz",
        "[[]x]*", "[!]]*", "[^-]*", "*.", ".*", "..*", "#x", "!x", "!!x", "*.py\u3000", "*.py\xa0", "*.py\x1c",
        "*.py\t", "\\#hash ", "a\\/", "**/a\\/", "a[/]b", "*[/]*", "x.py[/]*", "{src,docs}/**", "a/{b,**/c}",
        "**/{x.py,a.js}", "[!/]*", "?", "??", "*/", "*/*/", "**/*/", "[é]*", "*[!a-z]", "\\*", "*\\**", "{*}",
        "{}", "{,}", "{a,}", "é", "?[é]*", "[à-ü]*", "[a-é]*", "*.{PY,py}", "{.,..}*", "**/{**/,}x.py",
    ]  # fmt: skip
    patterns = sorted(grammar) + extra + EVERYDAY
    assert len(patterns) >= 500
    undecided = []
    for pattern in patterns:
        undecided += _check(tmp_path, paths, pattern)
    # Only what adds nothing to rg's overrides (an empty line, a comment) is left undecided.
    assert all(v.lstrip("!").strip(" ") == "" or v.startswith("#") for v in undecided), undecided

    # An include with excludes after it, as grep and glob pass them.
    for _ in range(150):
        include = rng.choice([None, *EVERYDAY, _grammar_pattern(rng)])
        excludes = [rng.choice([*EVERYDAY, _grammar_pattern(rng)]) for _ in range(rng.randint(1, 3))]
        flags = ([] if include is None else [include]) + [f"!{g}" for g in excludes]
        listed = _rg_files(tmp_path, flags)
        got = select(paths, include, excludes)
        if listed is None:
            assert got is None, flags
        elif got is not None:
            assert set(got) == listed, (flags, sorted(set(got) - listed), sorted(listed - set(got)))
