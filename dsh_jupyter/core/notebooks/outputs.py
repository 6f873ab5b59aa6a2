"""The text of a notebook cell's output, as the cell view shows it: no ANSI escapes, no payloads.

Why it exists: ``read`` summarises each output under ``[output K: ...]`` with its text, and
``grep`` with ``notebook_scope`` searches that same text; made in one place, the text a match is
found in is the text ``read`` shows, line for line (``read`` then cuts long text and long
tracebacks, which a search does not). The text of an output is: a stream's text, its
carriage-return rewrites resolved as a terminal ends them (a progress bar reads as its last
state); an ``execute_result``'s or ``display_data``'s ``text/plain``; an error's
``ename: evalue`` followed by its traceback lines — each with its ANSI escapes removed.

What it must never do: return anything of an output but that text — no base64 payload, no other
MIME type (``text/html`` is markup, an image is bytes), no metadata — or open a file (callers
hand it the output's dict).
"""

from __future__ import annotations

import re

from .format import source_text

__all__ = ["clean_output", "output_text", "traceback_lines"]

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")


def clean_output(text: str, stream: bool = False) -> str:
    """Output text without ANSI escapes; a stream's carriage-return rewrites shown as they end."""
    if "\x1b" in text:  # an escape sequence starts with ESC: most text has none
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if stream and "\r" in text:
        text = "\n".join(_last_rewrite(line) for line in text.split("\n"))
    if text.endswith("\n"):
        text = text[:-1]
    return text


def _last_rewrite(line: str) -> str:
    parts = [p for p in line.split("\r") if p]
    return parts[-1] if parts else ""


def traceback_lines(lines: list) -> list[str]:
    """An error output's traceback as ANSI-free lines, each without trailing whitespace."""
    flat = clean_output("\n".join(source_text(x) for x in lines if isinstance(x, (str, list)))).split("\n")
    return [line.rstrip() for line in flat]


def output_text(out: dict) -> str | None:
    """The whole text of one output as the cell view shows it before any cut; None when it has none."""
    kind = out.get("output_type", "")
    if kind == "stream":
        return clean_output(source_text(out.get("text", "")), stream=True)
    if kind in ("execute_result", "display_data"):
        data = out.get("data")
        if isinstance(data, dict) and "text/plain" in data:
            return clean_output(source_text(data["text/plain"]))
        return None
    if kind == "error":
        head = clean_output(f"{str(out.get('ename', ''))}: {str(out.get('evalue', ''))}")
        trace = "\n".join(traceback_lines(out.get("traceback") or []))
        return head + ("\n" + trace if trace else "")
    return None
