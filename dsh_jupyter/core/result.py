"""The result of one tool call, as every surface hands it out."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field

import orjson

from .images import Image

__all__ = ["FRAME_COLUMNS", "Result", "html_table", "json_bytes"]

# Stable, documented columns of ``Result.to_frame()`` per tool.
FRAME_COLUMNS: dict[str, list[str]] = {
    "list": ["name", "type", "size", "mtime", "target"],
    "list_dir": ["entry"],
    "read": ["number", "text"],
    "glob": ["path"],
    "grep": ["path", "line", "text"],
}
# grep's output_mode files_with_matches and count: one row per file.
FILE_COUNT_COLUMNS = ["path", "matches"]


@dataclass(frozen=True)
class Result:
    tool: str
    text: str  # exactly what the model sees
    value: dict  # the canonical value; for an error {name, code, message}
    is_error: bool
    session: str = "default"
    call_id: str = ""
    duration_ms: float = 0.0
    extra: dict = field(default_factory=dict, repr=False, compare=False)
    # Images the result shows besides its text (an image file; a notebook page's output images),
    # in the order the text numbers them. Kept out of ``value`` so the value stays small: MCP
    # sends them as image blocks, REST as base64 only when asked (``include_images``).
    images: tuple[Image, ...] = field(default=(), repr=False, compare=False)

    def __str__(self) -> str:
        return self.text

    def rows(self) -> list[dict]:
        """The value's rows (entries, lines, paths or matches) as dicts; [] for other tools."""
        if self.is_error or self.tool not in FRAME_COLUMNS:
            return []
        if self.tool == "list":
            return list(self.value.get("entries", []))
        if self.tool == "list_dir":
            return [{"entry": e} for e in self.value.get("entries", [])]
        if self.tool == "read":
            return list(self.value.get("lines", []))
        if self.tool == "glob":
            return [{"path": p} for p in self.value.get("paths", [])]
        if "fileCounts" in self.value:
            return list(self.value["fileCounts"])
        return list(self.value.get("matches", []))

    def columns(self) -> list[str]:
        """The columns of ``to_frame()`` and the HTML table: the tool's, or grep's file counts'."""
        if self.tool == "grep" and "fileCounts" in self.value:
            return FILE_COUNT_COLUMNS
        return FRAME_COLUMNS.get(self.tool, [])

    def to_frame(self):
        """A pandas DataFrame of the rows, with the tool's documented columns (empty for others)."""
        import pandas as pd  # imported here: plain tool use should not pay pandas' import time

        columns = self.columns()
        rows = self.rows()
        return pd.DataFrame([{c: r.get(c) for c in columns} for r in rows], columns=columns)

    def footer(self) -> str:
        """The model's footer, verbatim: what says how much of the whole this page is ("" if none).

        ``list`` and ``read``: the paragraph before ``</content>``. ``glob``: the parenthesised
        paragraphs after the paths (what was left out, and an over-cap page's). ``grep``: the trailing
        parenthesised notes (unreadable files; how much of the result a sampled page covers and
        where the full result is). Surfaces that show a
        page in another form (an HTML table, a widget) repeat this so a page never reads as the whole.
        """
        text = self.text
        if self.is_error:
            return ""
        if self.tool in ("list", "read"):
            body = text[: -len("\n</content>")] if text.endswith("\n</content>") else text
            if "\n\n" in body:
                return body.rpartition("\n\n")[2]
            # no entries or lines: the footer follows <content> directly
            return body.partition("\n<content>\n")[2]
        if self.tool in ("glob", "grep"):
            tail: list[str] = []
            for para in reversed(text.split("\n\n")[1:]):
                if "\n" in para or not (para.startswith("(") and para.endswith(")")):
                    break
                tail.append(para)
            return "\n\n".join(reversed(tail))
        return ""

    def header(self) -> str:
        """``grep``'s count line (``Found K of N matches``); "" for every other result."""
        if self.tool == "grep" and not self.is_error and self.text.startswith("Found "):
            return self.text.partition("\n")[0]
        return ""

    def _repr_mimebundle_(self, include=None, exclude=None):
        """text/plain is the model's text; text/html a static table so non-widget frontends show truth."""
        return {"text/plain": self.text, "text/html": self._html()}

    def _html(self) -> str:
        if self.tool == "edit" and not self.is_error:
            return diff_html(self.text)
        rows = self.rows()
        if not rows:
            return f"<pre>{html.escape(self.text)}</pre>"
        columns = self.columns()
        return html_table(columns, rows, header=self.header(), footer=self.footer())


# Inline styles: the HTML form is shown where no style sheet of ours is loaded (nbconvert, GitHub).
_DIFF_STYLES = {
    "+": "color:#116329;background:#dafbe1",
    "-": "color:#82071e;background:#ffebe9",
    "@": "color:#0550ae",
}


def diff_html(text: str) -> str:
    """An edit's answer as HTML: its sentence, then the diff with added and removed lines coloured."""
    head, _, rest = text.partition("\n")
    rows = [html.escape(head)]
    for line in rest.split("\n") if rest else []:
        mark = line[:1]
        if line.startswith(("+++ ", "--- ")) or mark not in _DIFF_STYLES:
            rows.append(html.escape(line))
        else:
            rows.append(f'<span style="{_DIFF_STYLES[mark]}">{html.escape(line)}</span>')
    return '<pre class="dsh-diff">' + "\n".join(rows) + "</pre>"


def html_table(columns: list[str], rows: list[dict], header: str = "", footer: str = "") -> str:
    """A static HTML table of ``rows`` with an optional header line and the footer below it."""
    esc = html.escape
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc('' if r.get(c) is None else str(r.get(c)))}</td>" for c in columns) + "</tr>"
        for r in rows
    )
    parts = [f"<p>{esc(header)}</p>"] if header else []
    parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    if footer:
        parts.append(f"<p>{esc(footer)}</p>")
    return "".join(parts)


def json_bytes(obj: object) -> bytes:
    """JSON bytes of a value; text with lone surrogates (undecodable names) falls back to escaped ASCII."""
    try:
        return orjson.dumps(obj)
    except TypeError:
        return json.dumps(obj).encode("ascii")
