"""Where the pattern matched in the lines a grep page shows, for the widgets' highlighting.

Why it exists: the main search is read in rg's heading form (``rg.headingform``), which names the path,
line number and text of each match but not the submatches. Only the page's lines (at most
``grep_max_matches``) need them, so those lines alone are searched again: one rg run over a text
made of them, read from standard input. The pattern means exactly what it meant in the files,
because rg matches line by line and each line is given back byte for byte.

A pattern made only of ASCII letters, digits and punctuation that has no meaning in rg's regex
syntax is a plain string: its spans are found by ``str.find`` in the decoded lines, with no rg
run (exact: an ASCII byte is one character, and no multi-byte or replaced character holds one).

What it must never do: put anything in model text (spans are for highlighting only) or guess a
span: a line rg does not match on its own gets no span.
"""

from __future__ import annotations

import os
import re

from ...errors import Codes, ToolError
from ...rg.jsonform import RgMatch, parse_match_records
from ...rg.runner import memory_file
from ..context import CallContext
from ..search.root import SearchRoot
from ..search.run import diagnostic, run_search

__all__ = ["line_records", "literal_spans", "search_input"]

# Characters that stand for themselves anywhere in an rg pattern (no flags, no classes).
_PLAIN = re.compile(r"[A-Za-z0-9_ :=,/'\"<>!@%;#-]+")


def literal_spans(pattern: str, texts: list[str]) -> list[list[list[int]]] | None:
    """Each text's ``[[start, end], ...]`` (characters) where ``pattern`` occurs, leftmost first and
    not overlapping, as rg reports them; None when ``pattern`` is not a plain string."""
    if not _PLAIN.fullmatch(pattern):
        return None
    size = len(pattern)
    out = []
    for text in texts:
        spans = []
        at = text.find(pattern)
        while at >= 0:
            spans.append([at, at + size])
            at = text.find(pattern, at + size)
        out.append(spans)
    return out


def search_input(ctx: CallContext, root: SearchRoot, pattern: str, fd: int) -> tuple[list[RgMatch], list[bytes]]:
    """rg's matches (and their JSON records) of ``pattern`` in the text ``fd`` holds, given as its
    standard input; every failure is the grep's ``ToolError``."""
    outcome = run_search(ctx, ["--json", f"--regexp={pattern}", "--", "-"], "grep", root, stdin=fd)
    if outcome.returncode == 2 and not outcome.stdout:
        raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {diagnostic(outcome)}")
    try:
        return parse_match_records(outcome.stdout)
    except ValueError as exc:
        raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {exc}") from None


def line_records(ctx: CallContext, root: SearchRoot, pattern: str, lines: list[bytes]) -> list[bytes | None]:
    """rg's JSON match record of each of ``lines`` searched on its own (None where it has none)."""
    if not lines:
        return []
    fd = memory_file("dsh-grep-page")
    try:
        data = b"\n".join(lines) + b"\n"
        view, pos = memoryview(data), 0
        while pos < len(data):
            pos += os.write(fd, view[pos:])
        os.lseek(fd, 0, os.SEEK_SET)
        found, records = search_input(ctx, root, pattern, fd)
    finally:
        os.close(fd)
    out: list[bytes | None] = [None] * len(lines)
    for match, record in zip(found, records):
        if 1 <= match.line <= len(lines):
            out[match.line - 1] = record
    return out
