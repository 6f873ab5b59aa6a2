"""What rg's ``--glob`` selects, decided from a path alone: the index's answer to include/exclude.

Why it exists: an index answers ``glob`` and grep's ``include``/``exclude`` from its table of
paths, so it must decide for a path relative to the search root exactly what ``rg --files
--glob=P`` decides walking from that root (``--no-ignore --hidden``: the table already says
which files are visible). This module ports rg 15.2's rules from their source — the ``ignore``
crate's ``OverrideBuilder``/``GitignoreBuilder::add_line``, its walk's ``Ignore::matched`` and
``globset``'s parser and regex — to one Python regex per glob, and a differential test
(``tests/core/index/test_globs.py``) checks every compiled glob against the bundled rg.

The rules, as rg applies them:

- Each ``--glob`` is one gitignore line with ``!`` inverted: ``P`` whitelists what it matches,
  ``!P`` leaves it out. A line starting with ``#`` is a comment (it adds nothing); ``\\!`` and
  ``\\#`` at the start are a literal ``!``/``#``. Trailing whitespace is dropped unless it ends
  in ``\\ ``.
- A leading ``/`` anchors the glob to the search root (and is removed). A trailing ``/`` makes it
  match directories only (an escaped ``\\/`` loses its backslash too). A glob without a ``/``
  left in it gets a ``**/`` prefix: it matches the name at any depth. A glob ending in ``/**``
  gets ``/*`` added: what is inside, never the folder itself.
- globset, with ``literal_separator`` and backslash escapes: ``*`` is ``[^/]*``, ``?`` is
  ``[^/]``, ``[...]`` a class (``[!...]``/``[^...]`` negated, ``]`` first and ``-`` first or last
  literal, a reversed range an error), ``{a,b}`` alternatives (nested; an empty one drops out),
  ``\\x`` the literal ``x``, a ``,`` outside braces literal. ``**`` is recursive only as a whole
  component: ``**/`` at the start (``(?:/?|.*/)``), ``/**`` at the end (``/.*``), ``/**/`` in the
  middle (``(?:/|/.*/)``), also at the edges of an alternative; elsewhere it is ``*`` twice.
  Case sensitive (rg's default). Errors (an unclosed class or ``{``, an unopened ``}``, a trailing
  lone ``\\``) make rg refuse the search.
- globset matches bytes: ``?`` and a class match one *byte*, so ``?`` never matches ``é`` (two
  bytes) but ``??`` does, and ``[é]`` is a class of é's two bytes, matching one of them, never
  é. Where a glob has ``?`` or a class, a path that is not ASCII is matched as its bytes here
  (``surrogateescape`` gives back the bytes of a name that is not UTF-8); elsewhere text and
  bytes agree.
- globset's regexes are built with ``dot_matches_new_line``: ``**`` crosses a name holding a
  newline as any other.
- The walk: every folder below the root meets the globs first (as a folder); the last glob that
  matches it decides, and if that is a ``!`` glob nothing below it is listed. A file is then
  listed if the last glob matching it is positive, left out if it is a ``!`` glob, and when none
  matches it is listed only if there is no positive glob at all. A directory-only glob never
  matches a file, so a positive ``build/`` alone lists nothing, and a positive ``src`` lists no
  file inside ``src``. With the positive glob first and the ``!`` ones after (how grep and glob
  pass include and exclude), a file is left out when a ``!`` glob matches it or a folder above
  it, else listed when the positive glob matches it (or there is none).

What rg does beyond this, for the index to respect: overrides come before ignore files and the
hidden rule, so where those are honoured a positive glob that matches a folder or file brings it
back (``--glob=*`` lists gitignored files and, without ``--hidden``, dot folders' files; the
tools add ``!.*`` for the latter). ``select`` answers for a ``--no-ignore --hidden`` walk only.

Speed: ``select`` filters a list in one comprehension per glob, the positive glob first; a
literal start, literal endings (``*.{js,ts}``) or a run of literals every match holds is checked
before the regex, as globset checks a required extension, and ``**/*.py`` is an ``endswith``
alone (``benchmarks/bench_globs.py``: 0.08 to 0.17 s for a million paths, 1.1 to 2.5 times one
``endswith`` pass over them).

What it must never do: decide a glob it has not ported — ``compile_glob`` returns None for
anything rg refuses or that adds nothing (an empty line, a comment), and the index then asks rg,
which is always right.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["MAX_PATTERN", "GlobTest", "compile_glob", "select"]

MAX_PATTERN = 4096  # a longer glob is left to rg (whose regex has a size limit)

# Rust's char::is_whitespace (Unicode White_Space), what str::trim_end strips from a line.
_RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
)

# Tokens, as globset's: ("lit", c), ("any",), ("star",), ("rprefix",), ("rsuffix",), ("rzom",),
# ("class", negated, ((lo, hi), ...)), ("alt", (tokens, ...)).
_ANY = ("any",)
_STAR = ("star",)
_RPREFIX = ("rprefix",)
_RSUFFIX = ("rsuffix",)
_RZOM = ("rzom",)


class _Refused(Exception):
    """rg refuses the glob (globset's parse error)."""


class _Parser:
    """globset's ``Parser`` (literal_separator, backslash_escape, no unclosed classes)."""

    def __init__(self, glob: str) -> None:
        self.chars = glob
        self.i = 0
        self.prev: str | None = None
        self.cur: str | None = None
        self.alternates: list[int] = []
        self.branches: list[list[tuple]] = [[]]

    def bump(self) -> str | None:
        self.prev = self.cur
        if self.i < len(self.chars):
            self.cur = self.chars[self.i]
            self.i += 1
        else:
            self.cur = None
        return self.cur

    def peek(self) -> str | None:
        return self.chars[self.i] if self.i < len(self.chars) else None

    def parse(self) -> list[tuple]:
        while (c := self.bump()) is not None:
            if c == "?":
                self.branches[-1].append(_ANY)
            elif c == "*":
                self.star()
            elif c == "[":
                self.klass()
            elif c == "{":
                self.alternates.append(len(self.branches))
                self.branches.append([])
            elif c == "}":
                if not self.alternates:
                    raise _Refused
                start = self.alternates.pop()
                alts = tuple(tuple(b) for b in self.branches[start:])
                del self.branches[start:]
                self.branches[-1].append(("alt", alts))
            elif c == ",":
                if self.alternates:
                    self.branches.append([])
                else:
                    self.branches[-1].append(("lit", ","))
            elif c == "\\":
                e = self.bump()
                if e is None:
                    raise _Refused  # a dangling escape
                self.branches[-1].append(("lit", e))
            else:
                self.branches[-1].append(("lit", c))
        if len(self.branches) > 1:
            raise _Refused  # an unclosed {
        return self.branches[0]

    def star(self) -> None:
        prev = self.prev
        tokens = self.branches[-1]
        if self.peek() != "*":
            tokens.append(_STAR)
            return
        self.bump()
        if not tokens:
            if self.peek() not in (None, "/"):
                tokens += [_STAR, _STAR]
            else:
                tokens.append(_RPREFIX)
                self.bump()
            return
        if prev != "/" and (len(self.branches) <= 1 or prev not in (",", "{")):
            tokens += [_STAR, _STAR]
            return
        nxt = self.peek()
        if nxt is None:
            self.bump()
            is_suffix = True
        elif nxt in (",", "}") and len(self.branches) >= 2:
            is_suffix = True
        elif nxt == "/":
            self.bump()
            is_suffix = False
        else:
            tokens += [_STAR, _STAR]
            return
        last = tokens.pop()
        if last in (_RPREFIX, _RSUFFIX):
            tokens.append(last)
        else:
            tokens.append(_RSUFFIX if is_suffix else _RZOM)

    def klass(self) -> None:
        ranges: list[list[str]] = []
        negated = self.peek() in ("!", "^")
        if negated:
            self.bump()
        first, in_range = True, False
        while True:
            c = self.bump()
            if c is None:
                raise _Refused  # an unclosed class
            if c == "]":
                if not first:
                    break
                ranges.append(["]", "]"])
            elif c == "-":
                if first:
                    ranges.append(["-", "-"])
                elif in_range:
                    self.extend(ranges[-1], "-")
                    in_range = False
                else:
                    in_range = True
            else:
                if in_range:
                    self.extend(ranges[-1], c)
                else:
                    ranges.append([c, c])
                in_range = False
            first = False
        if in_range:
            ranges.append(["-", "-"])
        self.branches[-1].append(("class", negated, tuple((lo, hi) for lo, hi in ranges)))

    @staticmethod
    def extend(r: list[str], hi: str) -> None:
        r[1] = hi
        if r[1] < r[0]:
            raise _Refused  # a reversed range


def _escaped(c: str, raw: bool) -> str:
    """One char as regex text: its UTF-8 bytes as ``\\xNN`` for the byte regex (globset's way)."""
    if raw and not c.isascii():
        return "".join(f"\\x{b:02x}" for b in c.encode("utf-8"))
    return re.escape(c)


def _regex(tokens: Iterable[tuple], raw: bool) -> str:
    """globset's ``tokens_to_regex`` (literal_separator, empty alternatives dropped)."""
    out: list[str] = []
    for tok in tokens:
        kind = tok[0]
        if kind == "lit":
            out.append(_escaped(tok[1], raw))
        elif kind == "any":
            out.append("[^/]")
        elif kind == "star":
            out.append("[^/]*")
        elif kind == "rprefix":
            out.append("(?:/?|.*/)")
        elif kind == "rsuffix":
            out.append("/.*")
        elif kind == "rzom":
            out.append("(?:/|/.*/)")
        elif kind == "class":
            body = "".join(
                _escaped(lo, raw) if lo == hi else _escaped(lo, raw) + "-" + _escaped(hi, raw) for lo, hi in tok[2]
            )
            out.append("[" + ("^" if tok[1] else "") + body + "]")
        else:
            parts = [p for p in (_regex(alt, raw) for alt in tok[1]) if p]
            if parts:
                out.append("(?:" + "|".join(parts) + ")")
    return "".join(out)


def _byte_sized(tokens: Iterable[tuple]) -> bool:
    """Whether a token matches one byte (``?``, a class), so a non-ASCII path needs its bytes."""
    return any(t[0] in ("any", "class") or (t[0] == "alt" and any(_byte_sized(a) for a in t[1])) for t in tokens)


def _literal_tail(tokens: list[tuple]) -> tuple[tuple[str, ...] | None, bool]:
    """The literal endings one of which every path the tokens match ends with (or None), and
    whether they are all the tokens hold.

    Trailing literals, through alternatives of literals (``*.{js,ts}``: ``.js``, ``.ts``); what
    globset checks first too (its required extension), so the regex runs on few paths.
    """
    ends, whole = [""], True
    for tok in reversed(tokens):
        if tok[0] == "lit":
            ends = [tok[1] + e for e in ends]
        elif tok[0] == "alt" and all(all(t[0] == "lit" for t in alt) for alt in tok[1]) and len(ends) <= 64:
            branches = ["".join(t[1] for t in alt) for alt in tok[1]]
            branches = [b for b in branches if b]  # globset drops an empty alternative
            if branches:
                ends = [b + e for b in branches for e in ends]
        else:
            whole = False
            break
    return (tuple(ends) if all(ends) else None), whole


def _needle(tokens: list[tuple]) -> str | None:
    """The longest run of literals every match holds, when it is two characters or more."""
    best, run = "", ""
    for tok in tokens:
        run = run + tok[1] if tok[0] == "lit" else ""
        best = max(best, run, key=len)
    return best if len(best) >= 2 else None


@dataclass(frozen=True, eq=False)
class GlobTest:
    """One ``--glob`` as rg reads it: what it matches, whether it leaves out, folders only."""

    pattern: str  # as given to --glob
    negated: bool  # began with ! : what it matches is left out
    dirs_only: bool  # ended with / : matches folders only
    text: re.Pattern[str]  # the glob on a path as text (exact for every ASCII path)
    raw: re.Pattern[bytes] | None  # on a path's bytes, where ? or a class meet non-ASCII names
    below: re.Pattern[str]  # the path, or (with dirs_only: only) a folder above it, matches
    raw_below: re.Pattern[bytes] | None
    ends: tuple[str, ...] | None  # every match ends with one of these
    ends_only: bool  # and every file path that ends with one of them matches (**/*.py)
    needle: str | None  # every match (of the path or a folder above it) holds this
    lead: str  # every match starts with this (docs/ for docs/*)

    def matches(self, rel: str, is_dir: bool = False) -> bool:
        """Whether the glob (its ``!`` aside) matches ``rel``, a file or, with ``is_dir``, a folder."""
        if self.dirs_only and not is_dir:
            return False
        if self.raw is not None and not rel.isascii():
            return self.raw.fullmatch(rel.encode("utf-8", "surrogateescape")) is not None
        return self.text.fullmatch(rel) is not None

    def selected(self, rel: str) -> bool:
        """Whether ``rg --files --glob=PATTERN`` walking from the root lists the file ``rel``."""
        return bool(_decide([rel], [self]))

    def hit(self, below: bool) -> Callable[[str], bool]:
        """A test of a file path: the glob matches the file (``below``: or a folder above it)."""
        if self.dirs_only and not below:
            return lambda rel: False
        m = (self.below if below else self.text).fullmatch
        r = self.raw_below if below else self.raw
        if r is None:
            return lambda rel: m(rel) is not None
        rm = r.fullmatch
        return lambda rel: (m(rel) if rel.isascii() else rm(rel.encode("utf-8", "surrogateescape"))) is not None


def compile_glob(pattern: str) -> GlobTest | None:
    """``pattern`` as rg's ``--glob`` reads it, or None when that is not ported (or rg refuses it)."""
    if len(pattern) > MAX_PATTERN:
        return None
    try:
        pattern.encode("utf-8")
    except UnicodeEncodeError:
        return None  # not a str rg could be given
    line = pattern
    if line.startswith("#"):
        return None  # a comment: adds nothing
    if not line.endswith("\\ "):
        line = line.rstrip(_RUST_WHITESPACE)
    if not line:
        return None  # adds nothing
    negated = absolute = dirs_only = False
    if line.startswith(("\\!", "\\#")):
        line = line[1:]
    else:
        if line.startswith("!"):
            negated, line = True, line[1:]
        if line.startswith("/"):
            absolute, line = True, line[1:]
    if line.endswith("/"):
        dirs_only, line = True, line[:-1]
        if line.endswith("\\"):
            line = line[:-1]
    actual = line
    if not absolute and "/" not in line and not (actual.startswith("**/") or actual == "**"):
        actual = "**/" + actual
    if actual.endswith("/**"):
        actual += "/*"
    try:
        tokens = _Parser(actual).parse()
    except _Refused:
        return None
    if tokens == [_RPREFIX]:
        text_re = raw_re = ".*"  # globset's special case: ** alone
    else:
        text_re, raw_re = _regex(tokens, raw=False), _regex(tokens, raw=True)
    tail = "/.*" if dirs_only else "(?:/.*)?"  # a folder above the file (or the file itself)
    byte_sized = _byte_sized(tokens)
    try:
        # globset builds its regexes with dot_matches_new_line
        text, below = re.compile(text_re, re.DOTALL), re.compile(f"(?:{text_re}){tail}", re.DOTALL)
        raw = raw_below = None
        if byte_sized:
            raw = re.compile(raw_re.encode("ascii"), re.DOTALL)
            raw_below = re.compile(f"(?:{raw_re}){tail}".encode("ascii"), re.DOTALL)
    except re.error:
        return None
    ends, _ = _literal_tail(tokens)
    tail_ends, whole = _literal_tail(tokens[2:])
    # **/*E with E literal and no /: the name ends with E, exactly when the path does
    ends_only = (
        tokens[:2] == [_RPREFIX, _STAR] and whole and tail_ends is not None and not any("/" in e for e in tail_ends)
    )
    lead = "".join(t[1] for t in itertools.takewhile(lambda t: t[0] == "lit", tokens))
    return GlobTest(pattern, negated, dirs_only, text, raw, below, raw_below, ends, ends_only, _needle(tokens), lead)


def select(paths: list[str], include: str | None, excludes: list[str]) -> list[str] | None:
    """The paths rg lists with ``--glob=include`` then ``--glob=!g`` for each exclude (a later
    glob wins), in the given order; None when one of the globs is not decided here."""
    globs = ([] if include is None else [include]) + [f"!{g}" for g in excludes]
    tests = [compile_glob(g) for g in globs]
    if any(t is None for t in tests):
        return None
    return _decide(paths, [t for t in tests if t is not None])


def _decide(paths: list[str], tests: list[GlobTest]) -> list[str]:
    """rg's walk over ``paths`` with the override globs ``tests``, positive ones first.

    The last glob that matches a folder or file decides it; with every ``!`` glob after every
    positive one, that is: a file is left out when a ``!`` glob matches it or a folder above it,
    else listed when a positive glob matches it, or when there is no positive glob.
    """
    negated = [t.negated for t in tests]
    if negated != sorted(negated):
        raise ValueError("the positive globs must come first")
    out = paths
    # The positive glob first: it usually leaves few paths to test. A literal ending or a run of
    # literals that every match holds is checked before the regex (as globset does).
    positive = [t for t in tests if not t.negated]
    if len(positive) == 1:
        t = positive[0]
        if t.dirs_only:
            out = []
        else:
            if t.lead:
                lead = t.lead
                out = [p for p in out if p.startswith(lead)]
            if t.ends is not None:
                ends = t.ends
                out = [p for p in out if p.endswith(ends)]
            elif t.needle is not None and not t.lead:
                holds = t.needle
                out = [p for p in out if holds in p]
            if not t.ends_only:
                one = t.hit(below=False)
                out = [p for p in out if one(p)]
    elif positive:
        hits = [t.hit(below=False) for t in positive]
        out = [p for p in out if any(h(p) for h in hits)]
    for t in tests:
        if t.negated:
            hit, need, start = t.hit(below=True), t.needle, t.lead
            if start:
                out = [p for p in out if not p.startswith(start) or not hit(p)]
            elif need is not None:
                out = [p for p in out if need not in p or not hit(p)]
            else:
                out = [p for p in out if not hit(p)]
    return list(out) if out is paths else out
