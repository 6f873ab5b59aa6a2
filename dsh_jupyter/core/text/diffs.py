"""Unified diffs of an edit, bounded for a model's page.

Why it exists: an ``edit`` answers what it changed (and a dry run what it would change) as a
unified diff, the form every agent and person reads. The lines both versions share at the start
and the end are set aside first (an edit touches a few places of a file): the diff costs the
changed middle, not the file. A short middle is compared by ``difflib``; a long one by
``linediff`` (``difflib`` takes quadratic time or worse where changed and unchanged lines
alternate). The page keeps the first ``MAX_LINES`` lines of at most ``MAX_LINE_CHARS``
characters and counts the rest without making them, so a page never passes for the whole diff
and a diff of millions of lines costs no more memory than its page.

What it must never do: hold more than both texts' lines, the opcodes between them and one page,
compare a long middle with ``difflib``, or print a line without its ``+``, ``-`` or space mark (a
cut line keeps its mark).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .linediff import opcodes

__all__ = ["DIFFLIB_LINES", "MAX_LINES", "MAX_LINE_CHARS", "Diff", "diff_page"]

MAX_LINES = 200  # diff lines shown in an answer
MAX_LINE_CHARS = 400  # characters kept of one diff line (a minified line must not fill the page)
CONTEXT = 3  # unchanged lines around each change
DIFFLIB_LINES = 1000  # a changed middle of at most this many lines (both sides) is compared by difflib

Opcode = tuple[str, int, int, int, int]


@dataclass(frozen=True)
class Diff:
    lines: list[str]  # the diff lines shown
    total: int  # the diff's whole length in lines


def diff_page(changes: Iterable[tuple[str, str, str]]) -> Diff:
    """The unified diffs of ``(old, new, label)`` one after another, as one page.

    ``label`` is printed as given: pass a quoted name (``quote_name``), so that no file name can
    add a line of its own to the diff.
    """
    shown: list[str] = []
    total = 0
    for old, new, label in changes:
        a, b, groups = _groups(old, new)
        if not groups:
            continue
        for line in (f"--- {label}", f"+++ {label}"):
            if len(shown) < MAX_LINES:
                shown.append(_cut(line))
        total += 2
        for group in groups:
            total += _length(group)
            if len(shown) < MAX_LINES:
                for line in _hunk(a, b, group):
                    shown.append(line)
                    if len(shown) == MAX_LINES:
                        break
    return Diff(shown, total)


def _lines(text: str, drop_last: bool) -> list[str]:
    """Lines without their endings; CRLF shows as LF (the edit keeps the file's own endings), and
    bytes that are not UTF-8 (kept by the edit) show as U+FFFD."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that came in new_string, not from the file
        raw = text.encode("utf-8", "surrogatepass")
    text = raw.decode("utf-8", "replace").replace("\r\n", "\n")
    lines = text.split("\n")
    if drop_last:  # the final newline ends the last line; it does not start an empty one
        lines.pop()
    return lines


def _groups(old: str, new: str) -> tuple[list[str], list[str], list[list[Opcode]]]:
    """Both texts' lines and the hunks between them (``difflib``'s grouped opcodes)."""
    # When only one of them ends with a newline, both keep their last (maybe empty) line, so that
    # the newline's coming or going shows as a changed line instead of an empty diff.
    ends = old.endswith("\n") and new.endswith("\n")
    a, b = _lines(old, ends), _lines(new, ends)
    start = 0
    limit = min(len(a), len(b))
    while start < limit and a[start] == b[start]:
        start += 1
    end = 0
    while end < limit - start and a[len(a) - 1 - end] == b[len(b) - 1 - end]:
        end += 1
    keep_before = max(0, start - CONTEXT)  # context lines before the first change
    keep_after = max(0, end - CONTEXT)
    a_mid, b_mid = a[keep_before : len(a) - keep_after], b[keep_before : len(b) - keep_after]
    codes: list[Opcode]
    if len(a_mid) + len(b_mid) <= DIFFLIB_LINES:
        codes = list(difflib.SequenceMatcher(None, a_mid, b_mid).get_opcodes())
    else:
        codes = opcodes(a_mid, b_mid)
    shifted = [
        (tag, i1 + keep_before, i2 + keep_before, j1 + keep_before, j2 + keep_before) for tag, i1, i2, j1, j2 in codes
    ]
    return a, b, list(_grouped(shifted, keep_before))


def _grouped(codes: list[Opcode], offset: int) -> Iterator[list[Opcode]]:
    """Changes with ``CONTEXT`` lines around them, as ``difflib.SequenceMatcher.get_grouped_opcodes``."""
    if not codes:
        codes = [("equal", offset, offset + 1, offset, offset + 1)]
    n = CONTEXT
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > n + n:  # a long unchanged run ends a hunk
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _range(start: int, stop: int) -> str:
    """A hunk header's range, as ``difflib`` writes it (1-based; an empty range names the line before)."""
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


def _length(group: list[Opcode]) -> int:
    """How many lines the hunk prints: its header and every line of its opcodes."""
    return 1 + sum((i2 - i1) + (j2 - j1 if tag != "equal" else 0) for tag, i1, i2, j1, j2 in group)


def _hunk(a: list[str], b: list[str], group: list[Opcode]) -> Iterator[str]:
    first, last = group[0], group[-1]
    yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@"
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            for k in range(i1, i2):
                yield _marked(" ", a[k])
            continue
        for k in range(i1, i2):
            yield _marked("-", a[k])
        for k in range(j1, j2):
            yield _marked("+", b[k])


def _marked(mark: str, line: str) -> str:
    """A diff line, cut to ``MAX_LINE_CHARS`` (mark included) without copying a long line whole."""
    if len(line) < MAX_LINE_CHARS:
        return mark + line
    return _cut(mark + line[:MAX_LINE_CHARS])


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else f"{line[:MAX_LINE_CHARS]}... (line cut)"
