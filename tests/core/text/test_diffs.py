"""``diffs`` and ``linediff``: difflib's answers on a short changed middle, a valid diff in near-linear
time on a long one, and a page that counts what it does not show."""

from __future__ import annotations

import difflib
import random

from dsh_jupyter.core.text.diffs import DIFFLIB_LINES, MAX_LINE_CHARS, MAX_LINES, diff_page
from dsh_jupyter.core.text.linediff import opcodes


def difflib_page(old: str, new: str, label: str) -> tuple[list[str], int]:
    """The page as it was made before: difflib over the changed middle (the shared head and tail
    set aside, 3 lines of context kept), the hunk headers moved back, then cut."""
    ends = old.endswith("\n") and new.endswith("\n")

    def lines(text: str) -> list[str]:
        out = text.replace("\r\n", "\n").split("\n")
        return out[:-1] if ends else out

    a, b = lines(old), lines(new)
    start, limit = 0, min(len(a), len(b))
    while start < limit and a[start] == b[start]:
        start += 1
    end = 0
    while end < limit - start and a[len(a) - 1 - end] == b[len(b) - 1 - end]:
        end += 1
    before, after = max(0, start - 3), max(0, end - 3)
    full = list(
        difflib.unified_diff(a[before : len(a) - after], b[before : len(b) - after], label, label, n=3, lineterm="")
    )

    def shift(header: str) -> str:
        parts = header.split(" ")
        for i in (1, 2):
            first, comma, count = parts[i][1:].partition(",")
            parts[i] = f"{parts[i][0]}{int(first) + before}{comma}{count}"
        return " ".join(parts)

    full = full[:2] + [shift(line) if line.startswith("@@") else line for line in full[2:]]
    cut = [line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "... (line cut)" for line in full]
    return cut[:MAX_LINES], len(full)


def test_a_short_middle_gets_difflibs_diff():
    rnd = random.Random(3)
    for _ in range(2000):
        text = "".join(rnd.choice(["a", "b", "c\n", "\n", "\r\n", "dd" * 300]) for _ in range(rnd.randint(0, 80)))
        chars = list(text)
        for _ in range(rnd.randint(0, 6)):
            if chars:
                chars[rnd.randrange(len(chars))] = rnd.choice(["x", "\n", "", "yy\n"])
        new = "".join(chars)
        page = diff_page([(text, new, "f")])
        assert (page.lines, page.total) == difflib_page(text, new, "f"), (text, new)


def covers(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """``opcodes(a, b)``, checked: in order, covering both lists, equal where they say so."""
    codes = opcodes(a, b)
    i = j = 0
    rebuilt: list[str] = []
    for tag, i1, i2, j1, j2 in codes:
        assert (i1, j1) == (i, j) and i1 <= i2 and j1 <= j2 and (i1 < i2 or j1 < j2), codes
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
        else:
            assert tag == ("replace" if i1 < i2 and j1 < j2 else "delete" if i1 < i2 else "insert")
        rebuilt += b[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(a), len(b)) and rebuilt == b
    return codes


def test_opcodes_cover_both_lists_on_every_shape():
    rnd = random.Random(5)
    for _ in range(1500):
        a = [rnd.choice("abcdefgh") + str(rnd.randint(0, 40)) for _ in range(rnd.randint(0, 400))]
        b = [line if rnd.random() < 0.8 else rnd.choice(["z", line + "!", ""]) for line in a]
        for _ in range(rnd.randint(0, 6)):
            if b and rnd.random() < 0.5:
                del b[rnd.randrange(len(b))]
            b.insert(rnd.randint(0, len(b)), rnd.choice(["ins", "a1"]))
        covers(a, b)


def test_every_other_line_changed_is_one_hunk_of_the_changed_lines_only():
    a = [f"line {i} {'x' if i % 2 else 'z'}" for i in range(40_000)]
    b = [line.replace("x", "y") for line in a]
    codes = covers(a, b)
    assert sum(i2 - i1 for tag, i1, i2, _j1, _j2 in codes if tag == "equal") == 20_000
    page = diff_page([("\n".join(a) + "\n", "\n".join(b) + "\n", "f")])
    assert page.total == 2 + 1 + 20_000 + 2 * 20_000
    assert page.lines[:8] == [
        "--- f",
        "+++ f",
        "@@ -1,40000 +1,40000 @@",
        " line 0 z",
        "-line 1 x",
        "+line 1 y",
        " line 2 z",
        "-line 3 x",
    ]
    assert len(page.lines) == MAX_LINES


def test_repeated_lines_and_lines_added_are_described_exactly():
    a = ["same", "x"] * 5_000
    b = ["same", "y", "z"] * 5_000
    covers(a, b)
    head = [f"row {i}" for i in range(DIFFLIB_LINES)]
    covers(head + a, b + head)


def test_a_page_of_several_texts_counts_them_all():
    first = "".join(f"{i}\n" for i in range(300))
    second = "one\ntwo\n"
    page = diff_page([(first, first.replace("1", "I"), "a"), ("same\n", "same\n", "b"), (second, "one\n2\n", "c")])
    assert page.total == difflib_page(first, first.replace("1", "I"), "a")[1] + 6
    assert page.lines == difflib_page(first, first.replace("1", "I"), "a")[0]
