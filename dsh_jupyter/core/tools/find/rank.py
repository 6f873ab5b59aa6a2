"""How ``find`` matches a query to paths and ranks them: pure functions over lists of strings.

Why it exists: a person or an agent remembers a fragment of a name (``hdl`` for ``handlers``,
``srv hdl`` for ``server/handlers.py``), not a glob. A path matches when every word of the query
occurs in it as a subsequence, case ignored (in ``path.lower()``), in any order of the words. Paths are ranked by how
each word occurs, best first:

    0  at the start of the file name           (``hand`` in ``server/handlers.py``)
    1  at the start of a path segment or word  (``serv`` in ``dsh/server/x.py``, after / _ - . or space)
    2  inside the file name                    (``dler``)
    3  inside the path                         (``ver/han``)
    4  only scattered                          (``hdl``)

summed over the words; then shorter paths first, then path order, so a page is stable.

``find_page`` is ``find`` over any list of paths (rg's walk in ``tool.py``, or another table of
paths): the subsequence test of each word is one regex over all the paths at once
(``match.py``), and the ranking looks at each path only in C-level passes (``str`` methods
mapped over the list, ints compared instead of a tuple per path), since a broad word matches
every path of a tree and the page needs only its best.

What it must never do: touch the filesystem, or rank by anything the page does not show (two
calls on the same tree give the same page).
"""

from __future__ import annotations

import heapq
from collections.abc import Collection
from itertools import compress, repeat
from operator import add, contains, eq, le, lt, mul, or_

from .match import records_holding

__all__ = ["MAX_QUERY", "find_page", "fuzzy_regex", "query_words", "rank_page"]

MAX_QUERY = 200  # characters of a query: a fragment of a name, not a document
_WORD_START = "/_-. "  # a word of a path starts after one of these (or at the path's start)


def query_words(query: str) -> list[str]:
    """The query's words, lower-cased, each at most once (order kept)."""
    seen: dict[str, None] = {}
    for word in query.lower().split():
        seen.setdefault(word, None)
    return list(seen)


def fuzzy_regex(words: list[str]) -> str:
    """rg's regex body for "holds the longest word as a subsequence": ``h.*d.*l`` (for a list of
    paths rg filters; ``find`` itself filters in this process, ``match.py``).

    Every character but an ASCII letter or digit is written ``\\x{HEX}``, which rg's regex syntax
    reads as that character.
    """
    longest = max(words, key=len)
    return ".*".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):X}}}" for c in longest)


# a tier from (at the name's start, at a segment's or word's start, in the name, in the path)
_TIER = {
    (a, b, c, d): 0 if a else 1 if b else 2 if c else 3 if d else 4
    for a in (False, True)
    for b in (False, True)
    for c in (False, True)
    for d in (False, True)
}


def _tiers(lowered: list[str], name_starts: list[int], word: str) -> list[int] | None:
    """Each path's tier for ``word`` (the table in the module docstring), or None when every path
    holds it only scattered (4 each): a few C-level passes over the paths that hold the word
    whole, no Python step per path. ``name_starts``: where each path's file name starts."""
    in_path = list(map(contains, lowered, repeat(word)))
    inside = sum(in_path)
    if not inside:
        return None
    if inside == len(lowered):
        return _tiers_inside(lowered, name_starts, word)
    holding = _tiers_inside(list(compress(lowered, in_path)), list(compress(name_starts, in_path)), word)
    # each path that holds the word takes the next of those tiers; next() of an empty iterator
    # gives the others 4
    pick = (iter(()), iter(holding))
    return list(map(next, map(pick.__getitem__, in_path), repeat(4)))


def _tiers_inside(lowered: list[str], name_starts: list[int], word: str) -> list[int]:
    """``_tiers`` of paths that each hold ``word`` whole (tier 3 at worst)."""
    at_word = map(str.startswith, lowered, repeat(word))
    for sep in _WORD_START:
        at_word = map(or_, at_word, map(contains, lowered, repeat(sep + word)))
    at_name = map(str.startswith, lowered, repeat(word), name_starts)
    in_name = map(le, repeat(0), map(str.find, lowered, repeat(word), name_starts))
    return list(map(_TIER.__getitem__, zip(at_name, at_word, in_name, repeat(True))))


def _lowered(paths: list[str]) -> list[str]:
    """The paths lower-cased: the same list when none has a letter to lower (one look at them all)."""
    joined = "\0".join(paths)
    if joined.lower() == joined:
        return paths
    return list(map(str.lower, paths))


def _best(paths: list[str], keys: list[int], need: int) -> list[str]:
    """The ``need`` first of ``paths`` by (key, path), without a tuple per path: the ``need``-th
    smallest key is found among the ints alone, and only paths at or below it are looked at again
    (those at it by ``_smallest`` over the strings themselves)."""
    if need >= len(paths):
        return [path for _, path in sorted(zip(keys, paths))]
    least = min(keys)
    cut = least if keys.count(least) >= need else heapq.nsmallest(need, keys)[-1]
    below = sorted(compress(zip(keys, paths), map(lt, keys, repeat(cut)))) if cut > least else []  # fewer than need
    at = list(compress(paths, map(eq, keys, repeat(cut))))
    return [path for _, path in below] + _smallest(at, need - len(below))


def _smallest(items: list[str], k: int) -> list[str]:
    """The ``k`` smallest of ``items``, in order. A bound first, from a spread sample (its ``k``-th
    smallest: at least ``k`` items are at or below it), so that the Python-level heap sees only the
    items under it, which one C-level pass picks out."""
    if len(items) > 64 * k:
        bound = heapq.nsmallest(k, items[:: len(items) // (32 * k)])[-1]
        items = list(compress(items, map(le, items, repeat(bound))))
    return heapq.nsmallest(k, items)


def _all_at_name_start(paths: list[str], words: list[str]) -> bool:
    """Whether every word is at the start of each path's file name (the best score there is)."""
    for path in paths:
        name = path.lower().rpartition("/")[2]
        if not all(name.startswith(word) for word in words):
            return False
    return True


def rank_page(paths: list[str], words: list[str], offset: int, limit: int) -> list[str]:
    """Paths ``offset`` .. ``offset + limit - 1`` (1-based) of ``paths`` ranked for ``words``."""
    if not paths:
        return []
    need = offset - 1 + limit
    lens = list(map(len, paths))
    # the best page there can be first: the shortest paths, if every word starts each one's name
    # (words can all start one name only when each starts the longest)
    longest = max(words, key=len)
    if all(map(longest.startswith, words)):
        shortest = _best(paths, lens, need)
        if len(shortest) == need and _all_at_name_start(shortest, words):
            return shortest[offset - 1 :]
    lowered = _lowered(paths)
    # each file name starts after the last "/": str methods from there, no name cut out
    name_starts = list(map(add, map(str.rfind, lowered, repeat("/")), repeat(1)))
    if len(words) == 1:
        # the best tier first, by C-level tests alone: when the paths whose file name starts with
        # the word fill the pages asked for, no other path needs a tier
        at_start = list(map(str.startswith, lowered, repeat(words[0]), name_starts))
        if sum(at_start) >= need:
            first = list(compress(paths, at_start))
            return _best(first, list(compress(lens, at_start)), need)[offset - 1 :]
    score: list[int] | None = None  # None: the same for every path (each word scattered in each)
    for word in words:
        tiers = _tiers(lowered, name_starts, word)
        if tiers is not None:
            score = tiers if score is None else list(map(add, score, tiers))
    if score is None:  # then shorter first, then path order
        return _best(paths, lens, need)[offset - 1 :]
    longer = max(lens) + 1  # score first, then length: one int per path
    return _best(paths, list(map(add, map(mul, score, repeat(longer)), lens)), need)[offset - 1 :]


def find_page(
    paths: list[str], words: list[str], offset: int, limit: int, held: Collection[str] = ()
) -> tuple[int, list[str]]:
    """How many of ``paths`` hold every one of ``words``, and page ``offset`` .. ``offset + limit - 1``
    (1-based) of those ranked: ``find`` over any list of paths.

    ``paths`` are relative paths without "./", already those the caller may show (visible, not
    protected, not in a VCS folder); ``words`` as ``query_words`` makes them (lower case, each
    once, at least one). ``held`` are words every path is known to hold already (the walk's
    filter tested it). A page past the end is empty; the total is exact either way.
    """
    for word in words:
        if word not in held and paths:
            paths = records_holding(word)("\0./" + "\0./".join(paths))
    return len(paths), rank_page(paths, words, offset, limit)
