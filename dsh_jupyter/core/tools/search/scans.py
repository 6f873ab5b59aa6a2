"""Whole-output scans of rg's paths: a VCS folder, a protected folder; the paths below one dropped.

Why it exists: a search rooted inside ``.git`` (or a name rg's flags could not leave out) must
still show none of a VCS folder's internals nor anything of a protected folder, so glob and grep
look at rg's output once, as a whole, and only when a scan says yes is it filtered path by path.

What it must never do: say no where a path of its output is in or of such a folder (a name
holding the joining character may only make it say yes), or scan the output once per folder.
"""

from __future__ import annotations

import re

from .flags import VCS_DIRS

__all__ = ["drop_excluded", "lines_have_vcs", "lines_name_any", "output_has_vcs", "output_names_any"]


# A VCS folder (or file) anywhere in a path: rg names every path "./…", so such a name always
# follows a "/" and ends at a "/" or the path's NUL.
_VCS_IN_OUTPUT = re.compile(rb"/(?:" + "|".join(re.escape(v) for v in VCS_DIRS).encode() + rb")(?:[/\0]|$)")
# In joined paths (no "./"), a candidate starts a line or follows a "/": checked after.
_VCS_NAME_END = re.compile("(?:" + "|".join(re.escape(v) for v in VCS_DIRS) + ")(?:/|$)", re.MULTILINE)


def output_has_vcs(stdout: bytes) -> bool:
    """Whether rg's NUL-ended output names a path in or of a VCS folder (one scan)."""
    return b"/." in stdout and _VCS_IN_OUTPUT.search(stdout) is not None


def lines_have_vcs(joined: str) -> bool:
    """``output_has_vcs`` for paths joined by newlines (or by "/": a match across a join is then a
    path that starts or ends with a VCS name). A name holding the joining character can only make
    it say yes where no path is a VCS path (the paths are then checked one by one), never the
    reverse. One search for the names themselves, each found one looked at: a regular expression
    that starts with "^ or /" tries every position of megabytes of paths."""
    for match in _VCS_NAME_END.finditer(joined):
        at = match.start()
        if at == 0 or joined[at - 1] in "/\n":
            return True
    return False


def output_names_any(stdout: bytes, rels: list[str]) -> bool:
    """Whether rg's NUL-ended output names one of the folders ``rels`` or a path below one."""
    if not rels:
        return False
    text = b"\0" + stdout  # one copy of the output, not one per folder
    return any(_named(text, b"\0./" + rel.encode("utf-8", "surrogateescape"), b"/\0") for rel in rels)


def lines_name_any(joined: str, rels: list[str]) -> bool:
    """``output_names_any`` for paths joined by newlines (a name holding one can only add a yes)."""
    if not rels:
        return False
    text = "\n" + joined  # one copy of the paths, not one per folder
    return any(_named(text, "\n" + rel, "/\n") for rel in rels)


def _named(text, start, ends) -> bool:
    """Whether ``start`` occurs in ``text`` followed by one of ``ends`` or by nothing. The search
    is for ``start`` alone: a needle ending in "/" crawls, as "/" is in every path."""
    at = text.find(start)
    while at >= 0:
        end = at + len(start)
        if end == len(text) or text[end : end + 1] in (ends[0:1], ends[1:2]):
            return True
        at = text.find(start, end)
    return False


def drop_excluded(paths: list[str], rels: list[str]) -> list[str]:
    if not rels:
        return paths
    heads = tuple(rel + "/" for rel in rels)
    return [p for p in paths if not p.startswith(heads) and p not in rels]
