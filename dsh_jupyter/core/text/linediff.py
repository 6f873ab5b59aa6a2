"""Which lines of two long line lists are equal and which changed, in near-linear time.

Why it exists: ``difflib.SequenceMatcher`` looks for the longest matching block again and again,
which costs quadratic time or worse where changed and unchanged lines alternate: an edit that
changes every other line of 40,000 took two minutes to describe. ``diffs`` uses ``difflib`` on a
short changed middle (its answers stay as they were) and this module on a long one: lines that
occur once in each list anchor the comparison (patience diff); between anchors, the common head
and tail are set aside, stretches of equal length are compared line by line, and only short
stretches go to ``difflib``. The recursion is a few levels deep at most, so every level costs one
pass over its lines.

What it must never do: call ``difflib`` on more than ``SMALL`` lines at once, recurse without a
bound, or answer opcodes that do not cover both lists exactly, in order.
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter

__all__ = ["SMALL", "opcodes"]

SMALL = 64  # lines (both sides together) a stretch may have to be compared by difflib
_DEPTH = 4  # levels of anchoring by lines that are unique within the stretch

Opcode = tuple[str, int, int, int, int]


def opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """``difflib``-style opcodes (``equal``, ``replace``, ``delete``, ``insert``) turning ``a``
    into ``b``, adjacent changes merged into one."""
    out: list[Opcode] = []
    _compare(a, 0, len(a), b, 0, len(b), 0, out)
    return _merged(out)


def _compare(a: list[str], alo: int, ahi: int, b: list[str], blo: int, bhi: int, depth: int, out: list) -> None:
    head = 0
    while alo + head < ahi and blo + head < bhi and a[alo + head] == b[blo + head]:
        head += 1
    if head:
        out.append(("equal", alo, alo + head, blo, blo + head))
        alo, blo = alo + head, blo + head
    tail = 0
    while alo < ahi - tail and blo < bhi - tail and a[ahi - 1 - tail] == b[bhi - 1 - tail]:
        tail += 1
    ahi, bhi = ahi - tail, bhi - tail
    _middle(a, alo, ahi, b, blo, bhi, depth, out)
    if tail:
        out.append(("equal", ahi, ahi + tail, bhi, bhi + tail))


def _middle(a: list[str], alo: int, ahi: int, b: list[str], blo: int, bhi: int, depth: int, out: list) -> None:
    """``a[alo:ahi]`` against ``b[blo:bhi]``, whose first and last lines differ."""
    if alo == ahi or blo == bhi:
        if alo < ahi or blo < bhi:
            out.append(("delete" if blo == bhi else "insert", alo, ahi, blo, bhi))
        return
    if ahi - alo == 1 and bhi - blo == 1:  # one line for another (most changes between anchors)
        out.append(("replace", alo, ahi, blo, bhi))
        return
    if (ahi - alo) + (bhi - blo) <= SMALL:
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi]).get_opcodes():
            out.append((tag, alo + i1, alo + i2, blo + j1, blo + j2))
        return
    anchors = _anchors(a, alo, ahi, b, blo, bhi) if depth < _DEPTH else []
    if anchors:
        i, j = alo, blo
        for ai, bj in anchors:
            _compare(a, i, ai, b, j, bj, depth + 1, out)
            out.append(("equal", ai, ai + 1, bj, bj + 1))
            i, j = ai + 1, bj + 1
        _compare(a, i, ahi, b, j, bhi, depth + 1, out)
    elif ahi - alo == bhi - blo:  # as many lines on both sides: compared line by line
        for k in range(ahi - alo):
            out.append(("equal" if a[alo + k] == b[blo + k] else "replace", alo + k, alo + k + 1, blo + k, blo + k + 1))
    else:
        out.append(("replace", alo, ahi, blo, bhi))


def _anchors(a: list[str], alo: int, ahi: int, b: list[str], blo: int, bhi: int) -> list[tuple[int, int]]:
    """Pairs ``(i, j)`` of lines that occur once in each stretch, the longest run of them in the
    same order on both sides (patience sorting)."""
    in_a, in_b = Counter(a[alo:ahi]), Counter(b[blo:bhi])  # counted in C
    once = {line for line, n in in_a.items() if n == 1 and in_b.get(line) == 1}
    if not once:
        return []
    where_b = {b[j]: j for j in range(blo, bhi) if b[j] in once}
    pairs = [(i, where_b[a[i]]) for i in range(alo, ahi) if a[i] in once]
    # The longest increasing run of j: tails[k] is the smallest j that ends a run of k + 1 pairs.
    tails: list[int] = []
    ends: list[int] = []  # the pair index ending each run length
    back = [-1] * len(pairs)
    for n, (_i, j) in enumerate(pairs):
        k = bisect.bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            ends.append(n)
        else:
            tails[k] = j
            ends[k] = n
        back[n] = ends[k - 1] if k else -1
    run: list[tuple[int, int]] = []
    n = ends[-1] if ends else -1
    while n >= 0:
        run.append(pairs[n])
        n = back[n]
    run.reverse()
    return run


def _merged(codes: list[Opcode]) -> list[Opcode]:
    """Empty opcodes dropped, neighbours of one kind joined: equal runs, and changes (a delete next
    to an insert is one replace, as ``difflib`` would write it)."""
    out: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if i1 == i2 and j1 == j2:
            continue
        if out:
            ptag, pi1, _pi2, pj1, _pj2 = out[-1]
            if (tag == "equal") == (ptag == "equal"):
                if tag != "equal":
                    tag = "replace" if (pi1 < i2 and pj1 < j2) else ("delete" if pj1 == j2 else "insert")
                out[-1] = (tag, pi1, i2, pj1, j2)
                continue
        out.append((tag, i1, i2, j1, j2))
    return out
