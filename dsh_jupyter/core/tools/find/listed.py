"""``find`` over a list of paths already in hand (the workspace index's): the paths every word matches.

Why: with the index, the files below the search root come from its table, not from rg's walk,
so the subsequence test rg's filter makes (``tool.py``) is made here, in one regex pass over the
joined list per word, with the same meaning: every word's letters in order, case ignored.

What it must never do: keep a path the rg filter would drop, or drop one it would keep.
"""

from __future__ import annotations

import re

__all__ = ["matching_joined"]


def _line_regex(word: str) -> re.Pattern:
    """A whole line holding ``word`` as a subsequence; negated classes, so it never backtracks."""
    body = "".join(f"[^\\n{re.escape(c)}]*+{re.escape(c)}" for c in word)
    return re.compile(f"^{body}[^\\n]*+$", re.MULTILINE | re.IGNORECASE)


def matching_joined(joined: str, words: list[str]) -> list[str] | None:
    """The paths that hold every word as a subsequence, in their order, from the paths joined by
    NULs (as the index gives them: no list of every path is made); None when a path holds a
    newline (the line-wise pass cannot tell it apart; the caller asks rg instead)."""
    if "\n" in joined:
        return None
    return _matching(joined.replace("\0", "\n"), words) if joined else []


def _matching(joined: str, words: list[str]) -> list[str]:
    for word in sorted(words, key=len, reverse=True):
        joined = "\n".join(_line_regex(word).findall(joined))
        if not joined:
            return []
    return joined.split("\n")
