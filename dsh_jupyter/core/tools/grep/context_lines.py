"""Context lines around the matches a grep page shows (``context`` argument).

Why it exists: an agent that sees a match often needs the lines around it before it edits; one
call instead of a grep and a read per match. Only the page's matches get context (at most
``grep_max_matches`` of them), read from the files beneath the search root's descriptor after the
search, never from rg's output, so the search itself, its spill and its speed are the same with
or without context; a later page (``offset``) gets its own.

Context of neighbouring matches is merged: a line is shown once, as the ``after`` of the earlier
match, and never as context when it is a shown match itself. The text of a context line is cut
like a match's (``grep_max_line_bytes``). Notebook cell matches get none: a cell is read with
``read`` by its number.

What it must never do: read a file by a path string (a swapped folder must not lead outside) or
invent a line the file does not hold (a file that shrank since the search gives fewer lines).
"""

from __future__ import annotations

import os

from ...render.search import truncate_line
from ...rg.recheck import Rechecker, read_lines
from ..search.root import SearchRoot

__all__ = ["add_context"]


def add_context(root: SearchRoot, matches: list[dict], around: int, limit: int) -> None:
    """Give each plain-file match of ``matches`` its ``before`` and ``after`` lists of
    ``[line, text]`` (up to ``around`` lines each, merged with its neighbours')."""
    by_path: dict[str, list[dict]] = {}
    for match in matches:
        if "cell" not in match:
            by_path.setdefault(match["path"], []).append(match)
    with Rechecker(root.fd) as check:
        for path, group in by_path.items():
            group.sort(key=lambda m: m["line"])
            ranges = _ranges([m["line"] for m in group], around)
            wanted = {n for before, after in ranges for n in (*before, *after)}
            held = _lines(root, check, path, wanted, 4 * limit + 8) if wanted else {}
            for match, (before, after) in zip(group, ranges):
                match["before"] = [[n, _shown(held[n], limit)] for n in before if n in held]
                match["after"] = [[n, _shown(held[n], limit)] for n in after if n in held]


def _ranges(lines: list[int], around: int) -> list[tuple[range, range]]:
    """For matches at ``lines`` (ascending), the line numbers before and after each, merged."""
    out = []
    shown_to = 0  # the last line number already shown (a match or its context)
    for i, line in enumerate(lines):
        following = lines[i + 1] if i + 1 < len(lines) else None
        before = range(max(line - around, shown_to + 1, 1), line)
        end = line + around if following is None else min(line + around, following - 1)
        after = range(line + 1, end + 1)
        out.append((before, after))
        shown_to = max(end, line)
    return out


def _lines(root: SearchRoot, check: Rechecker, path: str, wanted: set[int], keep: int) -> dict[int, bytes]:
    """The wanted lines of one shown file, each held as at most its first ``keep`` bytes."""
    if not root.is_dir:
        return read_lines(root.fd, wanted, keep)
    fd = check.open_regular(path.removeprefix(root.prefix))
    if fd is None:
        return {}  # gone, or no longer a regular file beneath the root
    try:
        return read_lines(fd, wanted, keep)
    finally:
        os.close(fd)


def _shown(raw: bytes, limit: int) -> str:
    text = raw.decode("utf-8", "replace")
    return truncate_line(text.rstrip("\n").removesuffix("\r"), limit)
