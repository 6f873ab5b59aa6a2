"""Where ranges of a text are in a later version of it, when someone typed elsewhere meanwhile.

Why it exists: ``replace`` changes a file open in JupyterLab through its live document, where a
person may have typed since the preview. Each occurrence the preview showed is a range of the
text the preview saw; this finds that range in the text the document holds now: the lines are
compared (``linediff``, near-linear), and within a run of changed lines the characters
(``difflib`` on that run alone). A range is found only when every character of it, and the
characters on both sides of it, are unchanged: a person who typed in, or right against, an
occurrence changed it, and its range is not found.

What it must never do: answer a range that does not hold, in the later text, exactly the
characters it held in the earlier one, or compare whole long texts character by character.
"""

from __future__ import annotations

import bisect
import difflib

from .linediff import opcodes

__all__ = ["shifted_ranges"]

_RUN_CHARS = 20_000  # a run of changed lines longer than this (both sides) is not compared by character


def _runs(before: str, after: str) -> list[tuple[int, int, int]]:
    """``(start in before, start in after, length)`` of the stretches the two texts share, in order."""
    a, b = before.splitlines(True), after.splitlines(True)
    sa, sb = [0], [0]
    for line in a:
        sa.append(sa[-1] + len(line))
    for line in b:
        sb.append(sb[-1] + len(line))
    runs: list[tuple[int, int, int]] = []
    for tag, i1, i2, j1, j2 in opcodes(a, b):
        if tag == "equal":
            runs.append((sa[i1], sb[j1], sa[i2] - sa[i1]))
            continue
        was, now = before[sa[i1] : sa[i2]], after[sb[j1] : sb[j2]]
        if not was or not now or len(was) + len(now) > _RUN_CHARS:
            continue
        matcher = difflib.SequenceMatcher(None, was, now, autojunk=False)
        for i, j, n in matcher.get_matching_blocks():
            if n:
                runs.append((sa[i1] + i, sb[j1] + j, n))
    merged: list[tuple[int, int, int]] = []
    for x, y, n in runs:  # a run that goes on where the last ended, in both texts, is one run
        if merged and merged[-1][0] + merged[-1][2] == x and merged[-1][1] + merged[-1][2] == y:
            merged[-1] = (merged[-1][0], merged[-1][1], merged[-1][2] + n)
        else:
            merged.append((x, y, n))
    return merged


def shifted_ranges(before: str, after: str, ranges: list[tuple[int, int]]) -> list[tuple[int, int] | None]:
    """Each ``(start, end)`` of ``before`` (code points) as ``(start, end)`` of ``after``; None for a
    range that was changed, or typed against (a character next to it changed; at an end of the text,
    anything but a line break put beyond it), since ``before``."""
    if before == after:
        return list(ranges)
    runs = _runs(before, after)
    firsts = [x for x, _y, _n in runs]
    out: list[tuple[int, int] | None] = []
    for start, end in ranges:
        found = None
        # the range and one character on each side (where there is one) lie in one shared run:
        # the last run that starts at or before them (runs do not overlap)
        lo = start - 1 if start > 0 else start
        hi = end + 1 if end < len(before) else end
        k = bisect.bisect_right(firsts, lo) - 1
        if k >= 0 and hi <= runs[k][0] + runs[k][2]:
            a, b, _n = runs[k]
            at, to = b + start - a, b + end - a
            # at an end of the text: what lies beyond it now is nothing, or a line break
            if (start > 0 or at == 0 or after[at - 1] == "\n") and (
                end < len(before) or to == len(after) or after[to] == "\n"
            ):
                found = (at, to)
        out.append(found)
    return out
