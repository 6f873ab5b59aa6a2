"""Read windows: a line-numbered window of a file with its own pager, and the spill viewer.

Why it exists: a file opened from a listing, a glob path or a grep match is shown the way
``read`` returns it, one window at a time, with the model's footer ("Showing lines A-B of T…").
The spill viewer is the same window over a saved full result, paged through
``Workspace.spill_page`` so only the owning session can page it.

What it must never do: load a whole file (each page is one ``read`` call with offset/limit), or
show a window without the footer that says which lines it is.
"""

from __future__ import annotations

import html

import ipywidgets as W
from traitlets import Int, List, Unicode

from ...core.render.quoting import quote_name
from .base import Pager, ToolView, batched

__all__ = ["ReadView", "SpillView", "CONTEXT_LINES", "SPILL_PAGE_LINES"]

CONTEXT_LINES = 3  # a window opened at a line starts this many lines above it
SPILL_PAGE_LINES = 200  # lines per spill-viewer page (a saved glob result: one path per line)


def window_html(lines: list[dict], highlight: int = 0) -> str:
    """The numbered lines as one preformatted block; the ``highlight`` line is marked."""
    if not lines:
        return '<pre style="margin: 0"></pre>'
    width = len(str(lines[-1]["number"]))
    out = []
    for line in lines:
        number = f'<span style="color: #888">{line["number"]:>{width}}</span>  '
        text = html.escape(line["text"])
        if line["number"] == highlight:
            text = f"<mark>{text}</mark>"
        out.append(number + text)
    return '<pre style="margin: 0; white-space: pre-wrap">' + "\n".join(out) + "</pre>"


class ReadView(ToolView):
    """``read`` as a window with previous / next / jump; see the module docstring."""

    path = Unicode("")
    offset = Int(1)
    limit = Int(None, allow_none=True)  # None: the tool's default (read_limit)
    total = Int(None, allow_none=True)  # None while a streamed file's length is unknown
    lines = List()  # the window shown: one page
    highlight = Int(0)  # a line to mark (the grep match that opened this window), 0 for none

    noun = "lines"
    tool_label = "read"

    def __init__(self, workspace, session: str, result=None, path: str | None = None, offset: int = 1,
                 limit: int | None = None, highlight: int = 0) -> None:
        super().__init__(workspace, session)
        self.limit = limit
        self.highlight = highlight
        self.window = W.HTML()
        self.pager = Pager(self.load, noun=self.noun)
        self.assemble([self.pager], [self.window])
        if result is not None:
            self.path = result.value["path"]
            self.show(result)
        else:
            self.path = path
            self.load(offset)

    def fetch(self, offset: int):
        args = {"file_path": self.path, "offset": offset}
        if self.limit is not None:
            args["limit"] = self.limit
        return self.call("read", **args)

    def load(self, offset: int) -> bool:
        """Fetch one window from the core and show it; False (window kept) on an error."""
        result = self.fetch(offset)
        if self.accept(result):
            self.show(result)
            return True
        return False

    def next_page(self) -> bool:
        return self.load(self.offset + len(self.lines))

    def previous_page(self) -> bool:
        return self.load(max(1, self.offset - self.step()))

    def step(self) -> int:
        return self.limit or self.workspace.settings.read_limit

    def show(self, result) -> None:
        value = result.value
        lines = value["lines"]
        total = value["totalLines"]
        last = value["offset"] + len(lines) - 1
        with self.hold_sync(), batched([self.window, self.title, self.footer_line]):
            self.offset = value["offset"]
            self.total = total
            self.lines = lines
            self.window.value = window_html(lines, self.highlight)
            self.title.value = f"<b>{self.tool_label}</b> <code>{html.escape(quote_name(value['path']))}</code>"
            self.show_model(result)
        more = bool(lines) and (total is None or last < total)
        self.pager.update(value["offset"], len(lines), total, self.step(), more)

    def close_parts(self) -> None:
        super().close_parts()
        for part in self.pager.parts():
            part.close()


class SpillView(ReadView):
    """A saved full glob/grep result, paged with ``Workspace.spill_page`` (owner session only)."""

    tool_label = "saved result"

    def __init__(self, workspace, session: str, locator: str, offset: int = 1,
                 limit: int | None = SPILL_PAGE_LINES) -> None:
        self.locator = locator
        super().__init__(workspace, session, path=locator, offset=offset, limit=limit)

    def fetch(self, offset: int):
        return self.workspace.spill_page(self.locator, session=self.session, offset=offset, limit=self.limit,
                                         surface="widget")
