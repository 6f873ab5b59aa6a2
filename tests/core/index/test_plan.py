"""The index's candidate query is sound: no file rg matches is ever left out (rg and SQLite, real).

Seeded patterns of rg's syntax (literals, classes, alternations, repeats, anchors, flags, and the
constructs Python's parser reads other than rg) are run by rg over a corpus of small files, with
and without ignore-case; every file rg lists must satisfy the plan, both as this module evaluates
it and as a real FTS5 ``trigram`` table answers its MATCH expression.
"""

from __future__ import annotations

import random
import sqlite3
import subprocess

import pytest

from dsh_jupyter.core.index.plan import ALL, UNSAFE_FOLDED, matches, plan, to_fts5
from dsh_jupyter.core.rg.runner import find_rg

ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
WORDS = ["foo", "bar", "baz", "ks", "Kelvin", "seas", "data", "frame", "old_total", "x1", "(a)", "a.b", "é", "ß"]
ODD = ["\u212a", "\u017f", "İ", "ı", "é", "Σ", "ς"]  # K Kelvin, ſ long s, letters whose case is odd


def _line(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 6)):
        r = rng.random()
        if r < 0.6:
            w = rng.choice(WORDS)
            parts.append(w.upper() if rng.random() < 0.2 else w)
        elif r < 0.8:
            parts.append("".join(rng.choice("abcksKSxyz_-.()[]{}<>") for _ in range(rng.randint(1, 5))))
        else:
            parts.append(rng.choice(WORDS)[:2] + rng.choice(ODD) + rng.choice(WORDS))
    return rng.choice([" ", "", "\t", ", "]).join(parts)


ATOMS = [
    "foo",
    "bar",
    "ba",
    "a",
    "k",
    "s",
    "kel",
    "sea",
    "KELVIN",
    "Seas",
    "old_total",
    "data",
    "é",
    "ß",
    ".",
    r"\w",
    r"\d",
    r"\s",
    r"\.",
    r"\(",
    "[abc]",
    "[a-f]",
    "[^x]",
    "[ks]",
    "[[:alpha:]]",
    "[a-z&&[^aeiou]]",
    r"\b",
    r"\B",
    "^",
    "$",
    r"\<",
    r"\>",
    r"\b{start}",
    r"\x41",
    r"\x{4b}",
    r"\pL",
    r"\p{Greek}",
    "[]a]",
    "[^]a]",
]


def _pattern(rng: random.Random, depth: int = 0) -> str:
    r = rng.random()
    if depth > 2 or r < 0.45:
        return rng.choice(ATOMS)
    if r < 0.65:
        return "".join(_pattern(rng, depth + 1) for _ in range(rng.randint(2, 3)))
    if r < 0.78:
        return "(" + "|".join(_pattern(rng, depth + 1) for _ in range(rng.randint(2, 3))) + ")"
    if r < 0.92:
        return (
            "(?:" + _pattern(rng, depth + 1) + ")" + rng.choice(["*", "+", "?", "{2}", "{1,3}", "{0,2}", "*?", "{3}"])
        )
    return (
        rng.choice(["(?i)", "(?i:", "(?-i)", "(?x)"]) + _pattern(rng, depth + 1) + (")" if rng.random() < 0.3 else "")
    )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    rng = random.Random(20261205)
    folder = tmp_path_factory.mktemp("corpus")
    texts = {}
    for i in range(160):
        name = f"f{i:03d}.txt"
        text = "\n".join(_line(rng) for _ in range(rng.randint(1, 4))) + "\n"
        (folder / name).write_text(text, encoding="utf-8")
        texts[name] = text
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE body USING fts5(name UNINDEXED, text, tokenize='trigram')")
    db.executemany("INSERT INTO body (name, text) VALUES (?, ?)", texts.items())
    return folder, texts, db


def _rg_files(folder, pattern: str, ignore_case: bool, literal: bool) -> set[str] | None:
    argv = [find_rg(), "--no-config", "--files-with-matches", "--no-messages"]
    argv += ["--ignore-case"] if ignore_case else []
    argv += ["--fixed-strings"] if literal else []
    done = subprocess.run([*argv, "-e", pattern, "--", "."], cwd=folder, capture_output=True, timeout=30)
    if done.returncode == 2:
        return None  # rg refused the pattern: an index never answers for it alone
    return {line.decode().removeprefix("./") for line in done.stdout.splitlines()}


def _fts_files(db, query) -> set[str] | None:
    expr = to_fts5(query)
    if expr is None:
        return None
    return {name for (name,) in db.execute("SELECT name FROM body WHERE body MATCH ?", (expr,))}


@pytest.mark.slow
def test_seeded_patterns_never_leave_out_a_file_rg_matches(corpus):
    folder, texts, db = corpus
    rng = random.Random(5)
    checked = narrowed = 0
    for _ in range(500):
        pattern = _pattern(rng)
        for ignore_case, literal in ((False, False), (True, False), (rng.random() < 0.5, True)):
            found = _rg_files(folder, pattern, ignore_case, literal)
            if found is None:
                continue
            query = plan(pattern, ignore_case=ignore_case, literal=literal)
            checked += 1
            missed = {n for n in found if not matches(query, texts[n].translate(ASCII_LOWER))}
            assert not missed, (pattern, ignore_case, literal, query, sorted(missed))
            fts = _fts_files(db, query)
            if fts is not None:
                narrowed += 1
                assert found <= fts, (pattern, ignore_case, literal, to_fts5(query), sorted(found - fts))
    print(f"{checked} runs checked, {narrowed} narrowed by the index")
    assert checked >= 900 and narrowed >= 200, (checked, narrowed)


@pytest.mark.parametrize(
    ("pattern", "flags", "query"),
    [
        ("old_total", {}, ("lit", "old_total")),
        ("Old_Total", {}, ("lit", "old_total")),  # folded: a superset of the case-sensitive answer
        ("foo.*bar", {}, ("and", (("lit", "foo"), ("lit", "bar")))),
        ("(foo|bar)baz", {}, ("or", (("lit", "barbaz"), ("lit", "foobaz")))),
        ("colou?r", {}, ("or", (("lit", "color"), ("lit", "colour")))),
        (r"def \w+\(", {}, ("lit", "def ")),
        ("ab", {}, ALL),  # shorter than a trigram
        ("foo|x", {}, ALL),  # one branch asks nothing
        ("a*", {}, ALL),
        ("seeks", {"ignore_case": True}, ALL),  # s and k are any character under -i (ſ, K)
        ("data frame", {"ignore_case": True}, ("lit", "data frame")),
        ("(?i)masks", {}, ALL),  # "ma" is left: shorter than a trigram
        ("a.b(c)", {"literal": True}, ("lit", "a.b(c)")),
        ("[[:alpha:]]foo", {}, ALL),  # Python would read a class and a literal "]"
        (r"\<foobar", {}, ALL),  # rg's word start, Python's literal "<"
        (r"\b{start}foobar", {}, ALL),
        ("foo\nbar", {}, ALL),
        ("caf\u00e9s", {}, ("lit", "caf")),  # outside ASCII: any character
    ],
)
def test_plans_of_known_patterns(pattern, flags, query):
    assert plan(pattern, **flags) == query


def test_the_letters_unsafe_under_ignore_case_are_those_rg_matches_outside_ascii(tmp_path):
    """Every ASCII letter or digit rg -i matches with a character outside ASCII is in UNSAFE_FOLDED."""
    lines = [f"{cp:06x} {chr(cp)}" for cp in range(0x80, 0x20000) if not 0xD800 <= cp <= 0xDFFF]
    (tmp_path / "all.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    unsafe = set()
    for ch in "abcdefghijklmnopqrstuvwxyz0123456789":
        done = subprocess.run(
            [find_rg(), "--no-config", "-i", "-c", f" {ch}$", "all.txt"], cwd=tmp_path, capture_output=True, timeout=30
        )
        if done.stdout.strip():
            unsafe.add(ch)
    assert unsafe == set(UNSAFE_FOLDED)
