"""Which substrings a line must hold for a grep pattern to match it: the index's candidate query.

Why it exists: an index of file contents can only narrow a search, never decide it. A grep
served from the index asks it for the files holding every substring the pattern needs, then runs
rg on exactly those files, so what matches and what is shown stay rg's. That is sound only if the
query never leaves out a file rg would match: this module works out such a query from the pattern,
after Google's codesearch (Russ Cox, "Regular Expression Matching with a Trigram Index"): each
part of the pattern is either a small set of exact strings it can match, or a query its matches
must satisfy; a concatenation multiplies exact sets, an alternation unions them, and a set too
big, or a part that matches anything, becomes an AND/OR of the literal substrings found.

Soundness rules, each a way rg could match a line the query would miss, taken out:

- The pattern is rg's (Rust regex syntax), parsed here with Python's own regex parser, which
  agrees on the common syntax. Where the two read a pattern differently — a class inside a class
  (``[[:alpha:]]``, ``[a-z&&[^x]]``), class set operators, verbose mode — or Python cannot parse it,
  the query is ``ALL`` (every file a candidate: rg over the tree, as without an index).
- Literals are folded to ASCII lower case, as the index's FTS5 ``trigram`` tokenizer folds the text
  (``case_sensitive 0``): a case-sensitive query asks for a superset. Outside ASCII a character
  counts as "any character" (the index's folding of it is not ours to rely on).
- With ignore-case (the argument or ``(?i)``), rg also matches ``k`` with ``K`` (Kelvin sign) and
  ``s`` with ``ſ`` (long s), which fold to themselves in the index: those two letters count as
  "any character" then (``UNSAFE_FOLDED``; a test asks rg which letters these are).
- A substring shorter than 3 characters asks nothing (a trigram index cannot).

What it must never do: return a query that a line rg matches fails, or decide a search alone: a
plan says which files may match, rg says which do (and words any error the pattern has).
"""

from __future__ import annotations

import itertools
import re
import re._constants as C  # the parser's node names (stable across 3.11-3.13)
import re._parser as sre
from dataclasses import dataclass

__all__ = ["ALL", "UNSAFE_FOLDED", "Query", "matches", "plan", "to_fts5"]

# A query: ("all",) anything; ("lit", s) the folded text holds s (len >= 3); ("and", parts);
# ("or", parts). Tuples, so plans compare and hash.
Query = tuple
ALL: Query = ("all",)
MIN_LIT = 3  # a trigram index answers nothing shorter
MAX_EXACT = 64  # exact strings kept for a part before it becomes a query
MAX_REPEAT_EXPAND = 3  # x{2} of a small exact set is expanded; longer counts ask for x once
UNSAFE_FOLDED = frozenset("ks")  # ASCII letters rg -i also matches outside ASCII (K U+212A, ſ U+017F)

_ANY = object()  # "one character, unknown"


@dataclass(frozen=True)
class _Info:
    exact: frozenset[str] | None  # every string the part matches, when known and few
    query: Query  # what any match of the part holds (used when exact is None)


def _lit(s: str) -> Query:
    return ("lit", s) if len(s) >= MIN_LIT else ALL


def _and(parts: list[Query]) -> Query:
    out: list[Query] = []
    for p in parts:
        if p == ALL:
            continue
        for q in p[1] if p[0] == "and" else (p,):
            if q not in out:
                out.append(q)
    return ALL if not out else out[0] if len(out) == 1 else ("and", tuple(out))


def _or(parts: list[Query]) -> Query:
    out: list[Query] = []
    for p in parts:
        if p == ALL:
            return ALL  # one branch that asks nothing: the whole OR asks nothing
        for q in p[1] if p[0] == "or" else (p,):
            if q not in out:
                out.append(q)
    return ALL if not out else out[0] if len(out) == 1 else ("or", tuple(out))


def _substrings_query(s: str) -> Query:
    """What a string surely holds: its runs of known characters (``\\0`` marks an unknown one)."""
    return _and([_lit(run) for run in s.split("\0")])


def _as_query(info: _Info) -> Query:
    if info.exact is None:
        return info.query
    return _or([_substrings_query(s) for s in sorted(info.exact)])  # sorted: one plan per pattern


def _exact(strings) -> _Info:
    strings = frozenset(strings)
    if len(strings) > MAX_EXACT:
        return _Info(None, _as_query(_Info(strings, ALL)))
    return _Info(strings, ALL)


def _char(code: int, fold: bool) -> str:
    """One literal character as the index sees it: folded ASCII, or ``\\0`` (any character)."""
    ch = chr(code)
    if not ch.isascii() or ch == "\n":
        return "\0"
    low = ch.lower()
    return "\0" if fold and low in UNSAFE_FOLDED else low


class _Unsure(Exception):
    """A construct this module does not read as rg does: the plan is ALL."""


def _concat(infos: list[_Info]) -> _Info:
    exact: frozenset[str] | None = frozenset({""})
    queries: list[Query] = []
    for info in infos:
        if exact is not None and info.exact is not None and len(exact) * len(info.exact) <= MAX_EXACT:
            exact = frozenset(a + b for a, b in itertools.product(exact, info.exact))
            continue
        if exact is not None:
            queries.append(_as_query(_Info(exact, ALL)))
        if info.exact is not None:
            exact = info.exact
        else:
            queries.append(info.query)
            exact = frozenset({""})  # what follows starts a new run
    if not queries:
        assert exact is not None
        return _exact(exact)
    queries.append(_as_query(_Info(exact, ALL)))
    return _Info(None, _and(queries))


def _class(items, fold: bool) -> _Info:
    chars: set[str] = set()
    for op, av in items:
        if op is C.LITERAL:
            chars.add(_char(av, fold))
        elif op is C.RANGE:
            lo, hi = av
            if hi - lo > MAX_EXACT:
                return _Info(frozenset({"\0"}), ALL)
            chars.update(_char(c, fold) for c in range(lo, hi + 1))
        else:  # a category (\w, \d ...) or a negation: one character, unknown
            return _Info(frozenset({"\0"}), ALL)
        if len(chars) > MAX_EXACT:
            return _Info(frozenset({"\0"}), ALL)
    return _Info(frozenset(chars), ALL)


def _node(op, av, fold: bool) -> _Info:
    if op is C.LITERAL:
        return _Info(frozenset({_char(av, fold)}), ALL)
    if op is C.NOT_LITERAL or op is C.ANY:
        return _Info(frozenset({"\0"}), ALL)
    if op is C.IN:
        return _class(av, fold)
    if op is C.AT:  # ^ $ \b \B \A: match no character
        return _Info(frozenset({""}), ALL)
    if op is C.SUBPATTERN:
        _group, add_flags, _del_flags, sub = av
        if add_flags & (sre.SRE_FLAG_VERBOSE):
            raise _Unsure("verbose mode")
        return _seq(sub, fold or bool(add_flags & sre.SRE_FLAG_IGNORECASE))
    if op is C.BRANCH:
        branches = [_seq(b, fold) for b in av[1]]
        if all(b.exact is not None for b in branches):
            return _exact(itertools.chain.from_iterable(b.exact for b in branches if b.exact is not None))
        return _Info(None, _or([_as_query(b) for b in branches]))
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        lo, hi, sub = av
        inner = _seq(sub, fold)
        if lo == 0 and hi == 1 and inner.exact is not None:  # x?: x or nothing
            return _exact(inner.exact | {""})
        if lo == 0:
            return _Info(None, ALL)
        if lo == hi and lo <= MAX_REPEAT_EXPAND and inner.exact is not None:
            return _concat([inner] * lo)
        return _Info(None, _as_query(inner))  # at least one x: what x holds
    raise _Unsure(f"{op}")  # back-references, lookaround, conditionals: not rg's default syntax


def _seq(items, fold: bool) -> _Info:
    return _concat([_node(op, av, fold) for op, av in items])


def _check_syntax(pattern: str) -> None:
    """Refuse what Python's parser would read other than rg: classes inside classes, POSIX and
    set-operation classes, rg's ``\\<``, ``\\>`` and ``\\b{…}`` word boundaries, line breaks."""
    at, n, in_class, class_start = 0, len(pattern), False, 0
    if "\n" in pattern:
        raise _Unsure("a line break (rg reads each line as a pattern of its own)")
    while at < n:
        ch = pattern[at]
        if ch == "\\":
            # rg's word-boundary escapes, which Python reads as the literal "<", ">" or "{start}"
            if pattern.startswith(("<", ">", "b{", "B{"), at + 1):
                raise _Unsure("a word-boundary escape Python does not know")
            at += 2
            continue
        if in_class:
            if ch == "[" or pattern.startswith(("&&", "--", "~~"), at):
                raise _Unsure("a class inside a class or a class operation")
            if ch == "]" and at != class_start:
                in_class = False
        elif ch == "[":
            in_class = True
            class_start = at + 1
            if pattern.startswith("^", class_start):
                class_start += 1  # "[^]...]": the "]" right after is a literal in both syntaxes
        at += 1


def plan(pattern: str, *, ignore_case: bool = False, literal: bool = False) -> Query:
    """The index query every line rg matches with these flags satisfies (``ALL``: no narrowing)."""
    if "\n" in pattern:
        return ALL  # rg reads each line of a pattern as a pattern of its own
    if literal:
        return _substrings_query("".join(_char(ord(ch), ignore_case) for ch in pattern))
    try:
        _check_syntax(pattern)
        parsed = sre.parse(pattern)
        if parsed.state.flags & sre.SRE_FLAG_VERBOSE:
            raise _Unsure("verbose mode")
        fold = ignore_case or bool(parsed.state.flags & sre.SRE_FLAG_IGNORECASE)
        return _as_query(_seq(parsed, fold))
    except (_Unsure, re.error, RecursionError, OverflowError):
        return ALL


def matches(query: Query, folded: str) -> bool:
    """Whether a text (folded as the index folds it: ASCII lower case) satisfies ``query``."""
    kind = query[0]
    if kind == "all":
        return True
    if kind == "lit":
        return query[1] in folded
    if kind == "and":
        return all(matches(q, folded) for q in query[1])
    return any(matches(q, folded) for q in query[1])


def to_fts5(query: Query) -> str | None:
    """The query as an FTS5 MATCH expression over a ``trigram`` table (None: ``ALL``)."""
    kind = query[0]
    if kind == "all":
        return None
    if kind == "lit":
        return '"' + query[1].replace('"', '""') + '"'
    parts = [to_fts5(q) for q in query[1]]
    joiner = " AND " if kind == "and" else " OR "
    return "(" + joiner.join(p for p in parts if p is not None) + ")"
