"""The result of one tool call, as every surface hands it out."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

__all__ = ["Result", "FRAME_COLUMNS"]

# Stable, documented columns of ``Result.to_frame()`` per tool.
FRAME_COLUMNS: dict[str, list[str]] = {
    "list": ["name", "type", "size", "mtime", "target"],
    "list_dir": ["entry"],
    "read": ["number", "text"],
    "glob": ["path"],
    "grep": ["path", "line", "text"],
}


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
        return list(self.value.get("matches", []))

    def to_frame(self):
        """A pandas DataFrame of the rows, with the tool's documented columns (empty for others)."""
        import pandas as pd  # imported here: plain tool use should not pay pandas' import time

        columns = FRAME_COLUMNS.get(self.tool, [])
        rows = self.rows()
        return pd.DataFrame([{c: r.get(c) for c in columns} for r in rows], columns=columns)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """text/plain is the model's text; text/html a static table so non-widget frontends show truth."""
        return {"text/plain": self.text, "text/html": self._html()}

    def _html(self) -> str:
        rows = self.rows()
        columns = FRAME_COLUMNS.get(self.tool, [])
        parts = [f"<pre>{html.escape(self.text)}</pre>"] if not rows else []
        if rows:
            head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
            body = "".join(
                "<tr>" + "".join(f"<td>{html.escape(str(r.get(c, '')))}</td>" for c in columns) + "</tr>"
                for r in rows
            )
            footer = self.text.rsplit("\n\n", 1)[-1].replace("</content>", "").strip()
            parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
            parts.append(f"<p>{html.escape(footer)}</p>")
        return "".join(parts)
