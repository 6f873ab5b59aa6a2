"""The result of one tool call, as every surface hands it out.

Why it exists: the magic, the widgets, the HTML form and the Python API show one call the same
way. What it must never do: name a tool or parse the model's text back. What varies by tool (the
rows and columns of a frame, the header line) comes from the call's ``ToolSpec``; how much of the
whole a page is (its ``footer``) is a field of the value.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field

import orjson

from .images import Image
from .render.common import utc_time
from .tools.spec import ToolSpec

__all__ = ["Result", "cells_change_html", "html_table", "json_bytes"]


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
    spec: ToolSpec | None = field(default=None, repr=False, compare=False)  # None: an unknown tool

    def __str__(self) -> str:
        return self.text

    def rows(self) -> list[dict]:
        """The value's rows (entries, lines, paths or matches) as dicts; [] for other tools and errors."""
        frame = None if self.spec is None else self.spec.frame(self.value)
        if self.is_error or frame is None:
            return []
        first = frame.columns[0]
        return [row if isinstance(row, dict) else {first: row} for row in self.value.get(frame.key, [])]

    def columns(self) -> list[str]:
        """The columns of ``to_frame()`` and the HTML table, as the tool's spec names them."""
        frame = None if self.spec is None else self.spec.frame(self.value)
        return [] if frame is None else list(frame.columns)

    def to_frame(self):
        """A pandas DataFrame of the rows, with the tool's documented columns (empty for others)."""
        import pandas as pd  # imported here: plain tool use should not pay pandas' import time

        columns = self.columns()
        rows = self.rows()
        return pd.DataFrame([{c: r.get(c) for c in columns} for r in rows], columns=columns)

    def footer(self) -> str:
        """The model's footer, verbatim: what says how much of the whole this page is ("" if none).

        It is the value's ``footer`` (see ``ToolSpec.page``). Surfaces that show a page in another
        form (an HTML table, a widget) repeat this so a page never reads as the whole.
        """
        return "" if self.is_error else self.value.get("footer", "")

    def next_offset(self) -> int | None:
        """The offset argument of the next page (the value's ``nextOffset``); None on the last page."""
        return None if self.is_error else self.value.get("nextOffset")

    def header(self) -> str:
        """The count line a table shows above its rows (grep's ``Found K of N matches``); "" if none."""
        if self.is_error or self.spec is None or self.spec.header is None:
            return ""
        return self.spec.header(self.value)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """text/plain is the model's text; text/html a static table so non-widget frontends show truth."""
        return {"text/plain": self.text, "text/html": self._html()}

    def _html(self) -> str:
        if self.value.get("diff") is not None and not self.is_error:  # an edit's answer
            return diff_html(self.text)
        if "order" in self.value and "operations" in self.value and not self.is_error:  # a structure edit's
            return cells_change_html(self.text, self.value)
        rows = self.rows()
        if not rows:
            return f"<pre>{html.escape(self.text)}</pre>"
        columns = self.columns()
        if "mtime" in columns:  # a time a person reads, as the model's text writes it, not seconds
            rows = [
                {**r, "mtime": utc_time(r["mtime"])} if isinstance(r.get("mtime"), int | float) else r for r in rows
            ]
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


_CHANGE_STYLES = {
    "new": _DIFF_STYLES["+"],
    "gone": _DIFF_STYLES["-"] + ";text-decoration:line-through",
    "was": "color:#6e7781",
}


def cells_change_html(text: str, value: dict) -> str:
    """A structure edit's answer as HTML: its sentences, then the cells around the changes before
    and after, side by side (the model's order rows at their former places, and now)."""
    esc = html.escape
    head = text.split("\nCell order ", 1)[0].split("\nThe notebook would have no cells.", 1)[0]
    head = head.split("\nThe notebook has no cells now.", 1)[0]

    def name(row: dict) -> str:
        return json.dumps(row["id"]) if row.get("id") is not None else ""

    def column(rows: list[tuple[int, str, str]]) -> str:
        lines, last = [], 0
        for index, label, style in sorted(rows, key=lambda r: r[0]):
            if index > last + 1 and last:
                lines.append('<span style="color:#6e7781">  …</span>')
            line = esc(f"{index:>4} {label}")
            lines.append(f'<span style="{_CHANGE_STYLES[style]}">{line}</span>' if style else line)
            last = index
        return "<pre>" + "\n".join(lines) + "</pre>"

    types_before = {op["cell"]: op["from"] for op in value["operations"] if op["op"] == "set_type"}
    before, after = [], []
    for row in value["order"]:
        label = f"{name(row)} {row['type']}".strip()
        after.append((row["index"], label, "new" if row["changed"] else ""))
        if row["was"] is not None:
            was_type = types_before.get(row["id"] if row.get("id") is not None else row["was"], row["type"])
            moved = row["changed"] and row["was"] != row["index"]
            before.append((row["was"], f"{name(row)} {was_type}".strip(), "was" if moved else ""))
    for op in value["operations"]:
        if op["op"] == "delete" and op.get("was") is not None:
            ref = json.dumps(op["cell"]) if isinstance(op["cell"], str) else ""
            before.append((op["was"], f"{ref} {op['cellType']}".strip(), "gone"))
    table = (
        "<table><thead><tr><th>before</th><th>after</th></tr></thead><tbody><tr>"
        f'<td style="vertical-align:top">{column(before)}</td><td style="vertical-align:top">{column(after)}</td>'
        "</tr></tbody></table>"
    )
    return f'<pre class="dsh-cells-change">{esc(head)}</pre>{table}'
