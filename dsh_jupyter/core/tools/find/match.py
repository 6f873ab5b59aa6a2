"""Which paths hold a word of a ``find`` query as a subsequence: one regex over many paths at once.

Why it exists: a broad query matches tens of thousands of paths, and a test of each path in
Python costs more than rg takes to list them. Here many paths go to one regular expression as
one text, each path led by NUL and ``./`` (``"\\0./a.py\\0./b/c.py"``, as ``rg --files --null``
writes them, with a NUL put before the first), and ``findall`` answers the matching paths
themselves, "./" left off. The expression is ``\\0\\./([^\\0h]*h[^\\0d]*d[^\\0l]*l[^\\0]*)`` for
``hdl``: each class runs to the next letter of the word and never past the path's end, so the
first occurrence of each letter is taken and no path is looked at twice (linear time; on Python
3.11+ the classes are possessive, which spares the engine even the look back).

A path matches when the word occurs in ``path.lower()`` as a subsequence (the words are lower
case: ``rank.query_words``). Text that is all ASCII is matched as it is, each letter of the word
by a class of its two cases; other text is lower-cased first, and paths whose lower case is
longer than they are (``İ``) are tested one by one.

What it must never do: match across the end of a path, or read a NUL or ``./`` in a word as
anything but characters no path holds (a word with a NUL matches nothing).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from itertools import repeat

__all__ = ["records_holding"]

_RUN = "*+" if sys.version_info >= (3, 11) else "*"  # possessive where the engine has it


def _char(c: str) -> str:
    return f"\\U{ord(c):08x}"


def _pattern(classes: list[str]) -> re.Pattern[str]:
    steps = "".join(f"[^\\x00{cls}]{_RUN}[{cls}]" for cls in classes)
    return re.compile(f"\\x00\\./({steps}[^\\x00]{_RUN})")


def records_holding(word: str) -> Callable[[str], list[str]]:
    """A function from NUL-led records (``"\\0./a\\0./b"``) to those holding ``word`` (without "./")."""
    if "\0" in word:
        return lambda text: []
    lowered = _pattern([_char(c) for c in word])
    ascii_cases = (
        _pattern(["".join(_char(x) for x in sorted({c, c.upper()})) for c in word]) if word.isascii() else None
    )
    one = re.compile(".*".join(map(re.escape, word)), re.DOTALL).search

    def matching(text: str) -> list[str]:
        if text.isascii():
            return ascii_cases.findall(text) if ascii_cases is not None else []
        low = text.lower()
        if len(low) == len(text):  # each character lowered to one: the places are the same
            return [text[a:b] for a, b in map(re.Match.span, lowered.finditer(low), repeat(1))]
        paths = [p[2:] for p in text[1:].split("\0")]
        return [p for p in paths if one(p.lower())]

    return matching
