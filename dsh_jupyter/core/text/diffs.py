"""Unified diffs of an edit, bounded for a model's page.

Why it exists: an ``edit`` answers what it changed (and a dry run what it would change) as a
unified diff, the form every agent and person reads. ``difflib`` compares whole sequences and can
take quadratic time, so the lines both versions share at the start and the end are set aside
first (an edit touches a few places of a file): the diff costs the changed middle, not the file.
The result is cut to ``MAX_LINES`` lines of at most ``MAX_LINE_CHARS`` characters, and says how
long it was, so a page never passes for the whole diff.

What it must never do: hold more than both texts' lines, or print a line without its ``+``,
``-`` or space mark (a cut line keeps its mark).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

__all__ = ["MAX_LINES", "MAX_LINE_CHARS", "Diff", "bounded", "unified"]

MAX_LINES = 200  # diff lines shown in an answer
MAX_LINE_CHARS = 400  # characters kept of one diff line (a minified line must not fill the page)
CONTEXT = 3  # unchanged lines around each change


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


def unified(old: str, new: str, label: str) -> list[str]:
    """The unified diff from ``old`` to ``new`` (``--- label``, ``+++ label``, hunks), or ``[]``.

    ``label`` is printed as given: pass a quoted name (``quote_name``), so that no file name can
    add a line of its own to the diff.
    """
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
    out = list(difflib.unified_diff(a_mid, b_mid, f"{label}", f"{label}", n=CONTEXT, lineterm=""))
    if not out:
        return []
    return out[:2] + [_shift(line, keep_before) if line.startswith("@@") else line for line in out[2:]]


def _shift(header: str, by: int) -> str:
    """A hunk header ``@@ -a,b +c,d @@`` of the trimmed texts, moved down ``by`` lines."""
    if by == 0:
        return header
    parts = header.split(" ")
    for i in (1, 2):
        sign, rest = parts[i][0], parts[i][1:]
        first, comma, count = rest.partition(",")
        parts[i] = f"{sign}{int(first) + by}{comma}{count}"
    return " ".join(parts)


@dataclass(frozen=True)
class Diff:
    lines: list[str]  # the diff lines shown
    total: int  # the diff's whole length in lines


def bounded(lines: list[str]) -> Diff:
    """``lines`` cut to ``MAX_LINES`` lines, each cut to ``MAX_LINE_CHARS`` characters."""
    shown = [
        line if len(line) <= MAX_LINE_CHARS else f"{line[:MAX_LINE_CHARS]}... (line cut)" for line in lines[:MAX_LINES]
    ]
    return Diff(shown, len(lines))
