"""Search widgets: glob paths grouped by top-level entry, grep matches grouped by file.

Why it exists: a glob or grep page is at most ``glob_max_results`` paths or ``grep_max_matches``
matches, so it is shown whole, but arranged the way a person scans it, every path or match
opens a read window (a grep match opens at its line), and when the core saved the full result a
button opens the spill viewer that pages through it. The model's footer is repeated under the
page, so a sampled or capped page says so here exactly as it did to the model.

What it must never do: fetch the full result into the widget (that is what the spill viewer's
paging is for), or show a path other than as the model saw it.
"""

from __future__ import annotations

import html

import ipywidgets as W
from traitlets import Dict, List, Unicode

from ...core.render.quoting import quote_name
from .base import ToolView, show_if
from .reading import CONTEXT_LINES, ReadView, SpillView

__all__ = ["GlobView", "GrepView", "group_paths"]


def group_paths(paths: list[str], root: str) -> dict[str, list[str]]:
    """Shown glob paths by top-level entry of the search root, groups in first-appearance order."""
    prefix = "" if root == "." else root.rstrip("/") + "/"
    groups: dict[str, list[str]] = {}
    for path in paths:
        rest = path[len(prefix):] if prefix and path.startswith(prefix) else path
        head, sep, _ = rest.partition("/")
        groups.setdefault(head + sep, []).append(path)
    return groups


def _link(description: str, tooltip: str, on_click) -> W.Button:
    button = W.Button(description=description, tooltip=tooltip, layout=W.Layout(width="auto", max_width="100%"))
    button.on_click(lambda _b: on_click())
    return button


class _SearchView(ToolView):
    spill = Unicode(None, allow_none=True)

    def __init__(self, workspace, session: str, result) -> None:
        super().__init__(workspace, session)
        self.spill = result.value.get("spill")
        self.spill_button = W.Button(
            description="open the full result", icon="table-list",
            tooltip="page through the complete saved result", layout=W.Layout(display="none"),
        )
        self.spill_button.on_click(lambda _b: self.open_spill())
        show_if(self.spill_button, bool(self.spill))
        self.body = W.VBox()
        self.assemble([self.spill_button], [self.body])
        self.model_text = result.text
        self.footer = result.footer()

    def open_spill(self):
        if not self.spill:
            return None
        return self.open_view(SpillView(self.workspace, self.session, self.spill))

    def open_file(self, path: str, line: int = 0):
        offset = max(1, line - CONTEXT_LINES) if line else 1
        return self.open_view(ReadView(self.workspace, self.session, path=path, offset=offset, highlight=line))


class GlobView(_SearchView):
    """A glob page: paths grouped by top-level entry, each opening a read window."""

    paths = List()
    groups = Dict()

    def __init__(self, workspace, session: str, result) -> None:
        super().__init__(workspace, session, result)
        value = result.value
        self.paths = list(value["paths"])
        self.groups = group_paths(self.paths, value.get("root", "."))
        shown, total = len(self.paths), value["totalPaths"]
        self.title.value = (
            f"<b>glob</b> <code>{html.escape(value['pattern'])}</code> in "
            f"<code>{html.escape(quote_name(value.get('root', '.')))}</code>: {shown:,} of {total:,} paths"
            f" in {len(self.groups):,} top-level {'entry' if len(self.groups) == 1 else 'entries'} shown"
        )
        boxes = []
        for key, paths in self.groups.items():
            count = f"{len(paths)} shown" if key.endswith("/") else ""
            header = W.HTML(f"<b>{html.escape(quote_name(key.rstrip('/')) + ('/' if key.endswith('/') else ''))}</b>"
                            f" <span style='color:#888'>{count}</span>")
            links = [_link(quote_name(p), "open a read window", lambda p=p: self.open_file(p)) for p in paths]
            boxes.append(W.VBox([header, *links]))
        if not self.paths:
            boxes.append(W.HTML(f"<i>{html.escape(result.text)}</i>"))
        self.body.children = boxes


class GrepView(_SearchView):
    """A grep page: matches grouped by file; a file opens at line 1, a match at its line."""

    matches = List()
    header_text = Unicode("")  # the model's "Found K of N matches" line

    def __init__(self, workspace, session: str, result) -> None:
        super().__init__(workspace, session, result)
        value = result.value
        self.matches = list(value["matches"])
        self.header_text = result.header()
        self.title.value = (
            f"<b>grep</b> <code>{html.escape(value['pattern'])}</code>: "
            f"{html.escape(self.header_text or result.text.partition(chr(10))[0])}"
        )
        by_file: dict[str, list[dict]] = {}
        for match in self.matches:
            by_file.setdefault(match["path"], []).append(match)
        boxes = []
        for path, matches in by_file.items():
            head = _link(quote_name(path), "open a read window", lambda p=path: self.open_file(p))
            head.icon = "file"
            links = [
                _link(f"Line {m['line']}: {m['text']}", f"open a read window at line {m['line']}",
                      lambda p=path, n=m["line"]: self.open_file(p, n))
                for m in matches
            ]
            boxes.append(W.VBox([head, W.VBox(links, layout=W.Layout(margin="0 0 0 2em"))]))
        if not self.matches:
            boxes.append(W.HTML(f"<i>{html.escape(result.text.partition(chr(10))[0])}</i>"))
        self.by_file = {p: len(ms) for p, ms in by_file.items()}
        self.body.children = boxes
