"""How ``find`` matches a query to paths and ranks them: pure functions over lists of strings.

Why it exists: a person or an agent remembers a fragment of a name (``hdl`` for ``handlers``,
``srv hdl`` for ``server/handlers.py``), not a glob. A path matches when every word of the query
occurs in it as a subsequence, case ignored, in any order of the words. Paths are ranked by how
each word occurs, best first:

    0  at the start of the file name           (``hand`` in ``server/handlers.py``)
    1  at the start of a path segment or word  (``serv`` in ``dsh/server/x.py``, after / _ - . or space)
    2  inside the file name                    (``dler``)
    3  inside the path                         (``ver/han``)
    4  only scattered                          (``hdl``)

summed over the words; then shorter paths first, then path order, so a page is stable.

The subsequence test itself runs in rg (``tool.py``: one linear-time regex over the path list),
so what reaches Python is the matching paths; the tiers are computed with C-level ``str``
methods over them. What it must never do: touch the filesystem, or rank by anything the page
does not show (two calls on the same tree give the same page).
"""

from __future__ import annotations

import heapq
import re
from itertools import compress, repeat
from operator import contains, itemgetter

__all__ = ["MAX_QUERY", "fuzzy_regex", "query_words", "rank_page"]

MAX_QUERY = 200  # characters of a query: a fragment of a name, not a document
_WORD_START = "/_-. "  # a word of a path starts after one of these (or at the path's start)


def query_words(query: str) -> list[str]:
    """The query's words, lower-cased, each at most once (order kept)."""
    seen: dict[str, None] = {}
    for word in query.lower().split():
        seen.setdefault(word, None)
    return list(seen)


def fuzzy_regex(words: list[str]) -> str:
    """rg's regex body for "holds the longest word as a subsequence": ``h.*d.*l``.

    Only the longest word goes to rg (the most selective as a subsequence, usually); the other
    words are tested on what it lets through (``matches_all``). Every character but an ASCII
    letter or digit is written ``\\x{HEX}``, which rg's regex syntax reads as that character.
    """
    longest = max(words, key=len)
    return ".*".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):X}}}" for c in longest)


def _subsequence(word: str):
    return re.compile(".*".join(re.escape(c) for c in word), re.DOTALL).search


def matches_all(lowered: list[str], words: list[str], checked: str) -> list[int]:
    """Indexes of the ``lowered`` paths that hold every word but ``checked`` (rg checked it)."""
    keep: list[int] = list(range(len(lowered)))
    for word in words:
        if word == checked:
            continue
        search = _subsequence(word)
        keep = [i for i in keep if search(lowered[i])]
    return list(keep)


def _tiers(lowered: list[str], names: list[str], word: str) -> list[int]:
    """Each path's tier for ``word`` (the table in the module docstring)."""
    in_path = list(map(contains, lowered, repeat(word)))
    in_name = list(map(contains, names, repeat(word)))
    at_name = list(map(str.startswith, names, repeat(word)))
    starts = tuple(sep + word for sep in _WORD_START)
    out = []
    for path, inside, named, first in zip(lowered, in_path, in_name, at_name):
        if first:
            out.append(0)
        elif inside and (path.startswith(word) or any(s in path for s in starts)):
            out.append(1)
        elif named:
            out.append(2)
        else:
            out.append(3 if inside else 4)
    return out


def _lowered(paths: list[str]) -> list[str]:
    """The paths lower-cased: the same list when none has a letter to lower (one look at them all)."""
    joined = "\0".join(paths)
    if joined.lower() == joined:
        return paths
    return list(map(str.lower, paths))


def rank_page(paths: list[str], words: list[str], offset: int, limit: int) -> list[str]:
    """Paths ``offset`` .. ``offset + limit - 1`` (1-based) of ``paths`` ranked for ``words``."""
    if not paths:
        return []
    need = offset - 1 + limit
    lowered = _lowered(paths)
    if len(words) == 1:
        # the best tier first, by C-level tests alone: when the paths whose file name starts with
        # the word fill the pages asked for, no other path needs a tier (the name starts after
        # the last "/": str.startswith from there, no name cut out of each path)
        name_starts = map((1).__add__, map(str.rfind, lowered, repeat("/")))
        first = list(compress(paths, map(str.startswith, lowered, repeat(words[0]), name_starts)))
        if len(first) >= need:
            best = heapq.nsmallest(need, zip(map(len, first), first))
            return [path for _, path in best[offset - 1 :]]
    names = list(map(itemgetter(2), map(str.rpartition, lowered, repeat("/"))))
    score = [0] * len(paths)
    for word in words:
        score = list(map(int.__add__, score, _tiers(lowered, names, word)))
    best3 = heapq.nsmallest(need, zip(score, map(len, paths), paths))
    return [path for _, _, path in best3[offset - 1 :]]
