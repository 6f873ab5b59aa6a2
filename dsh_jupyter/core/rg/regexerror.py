"""rg's regex parse error as the user wrote the pattern: its diagram kept on its own lines.

Why it exists: rg wraps every pattern in ``(?:…)`` before parsing it, so its error quotes
``(?:foo(bar)`` for the pattern ``foo(bar`` and puts its caret under that wrapper's columns; read
in one flattened line (``rg: regex parse error: (?:foo(bar) ^ error: unclosed group``) the caret
points nowhere. Here the wrapper is taken off the quoted pattern, each caret line is moved left
with it, and the lines stay lines:

    regex parse error:
        a{2,1}b
         ^^^^^
    error: invalid repetition count range, the start must be <= the end

A caret that pointed into the wrapper itself (an unclosed group makes rg blame its own ``(?:``) is
left out rather than shown under the wrong character; the error line says what is wrong.

What it must never do: invent a diagnosis, or answer for anything but a complete regex parse
error (a cut or unfamiliar stderr gives None, and the caller keeps its one-line form).
"""

from __future__ import annotations

import re

__all__ = ["regex_parse_error"]

_HEAD = "rg: regex parse error:"
_WRAP = "(?:"
_CARETS = re.compile(r"( *)(\^+)")
_NUMBERED = re.compile(r"(\d+: )(.*)")  # a line of a multi-line pattern: "1: (?:ab"
_RULE = re.compile(r"~+")


def regex_parse_error(stderr: str) -> str | None:
    """rg's whole stderr for a regex it could not parse, unwrapped; None when it is not one."""
    lines = stderr.rstrip("\n").split("\n")
    if len(lines) < 3 or lines[0] != _HEAD or not lines[-1].startswith("error: "):
        return None
    body = lines[1:-1]
    texts = [i for i, line in enumerate(body) if not _CARETS.fullmatch(line) and not _RULE.fullmatch(line)]
    if not texts:
        return None
    out: list[str] = []
    lead = end = shift = 0  # the current pattern line: where its text starts and ends, its carets' move
    for i, line in enumerate(body):
        carets = _CARETS.fullmatch(line)
        if carets:
            at = len(carets.group(1)) - shift
            if lead <= at < end:  # one under the wrapper rg added points at nothing of the pattern
                out.append(" " * at + carets.group(2))
            continue
        if _RULE.fullmatch(line):
            out.append(line)
            continue
        numbered = _NUMBERED.fullmatch(line)
        if numbered:
            prefix, text = numbered.group(1), numbered.group(2)
        elif line.startswith("    "):
            prefix, text = "    ", line[4:]
        else:
            return None
        shift = 0
        if i == texts[0]:
            if not text.startswith(_WRAP):
                return None
            text, shift = text[len(_WRAP) :], len(_WRAP)
        if i == texts[-1]:
            if not text.endswith(")"):
                return None
            text = text[:-1]
        lead, end = len(prefix), len(prefix) + max(len(text), 1)
        out.append(prefix + text)
    return "\n".join(["regex parse error:", *out, lines[-1]])
