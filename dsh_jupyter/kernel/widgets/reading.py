"""``%dsh read`` and the spill viewer as widgets: one read window (windows.py) as the whole view.

Why it exists: the magic's read result, and a saved full result opened from ``%dsh spills``, show
the same window a listing or search opens in place, with its pager, line numbers and the model's
footer. The window's state is the view's ``panel``; its footer and model text are the view's too,
so the model view shows exactly the text of the window on screen.

What it must never do: load a whole file (each page is one ``read`` call with offset/limit).
"""

from __future__ import annotations

from .base import DshView
from .outline import OutlineWindow
from .windows import CONTEXT_LINES, SPILL_PAGE_LINES, ReadWindow, SpillWindow

__all__ = ["CONTEXT_LINES", "SPILL_PAGE_LINES", "ReadView", "SpillView"]


class ReadView(DshView):
    """``read`` as a window with previous / next / jump to line."""

    def __init__(
        self,
        workspace,
        session: str,
        result=None,
        path: str | None = None,
        offset: int = 1,
        limit: int | None = None,
        highlight: int = 0,
        extra: dict | None = None,
        outline: bool = False,
    ) -> None:
        super().__init__(workspace, session)
        self.kind = "read"
        self.outline = outline  # a notebook's outline (``read(outline=true)``) rather than its cells
        self.extra = dict(extra or {})  # arguments every page repeats (one notebook output: cell_id, output)
        with self.hold_sync():
            window = self.make_window(result, path, offset, limit, highlight)
            self.open_window(window, "")

    def make_window(self, result, path, offset, limit, highlight):
        self.title = "read"
        if self.outline:
            if result is not None:
                return OutlineWindow(self, result.value["path"], limit=limit, result=result)
            return OutlineWindow(self, path, offset=offset, limit=limit)
        if result is not None:
            return ReadWindow(
                self, result.value["path"], limit=limit, highlight=highlight, result=result, extra=self.extra
            )
        return ReadWindow(self, path, offset=offset, limit=limit, highlight=highlight, extra=self.extra)

    def handlers(self) -> dict:
        return {**super().handlers(), "close": lambda: None}  # the window is the whole view

    @property
    def window(self) -> ReadWindow:
        """The view's one window (opened in ``__init__``, never closed: it is the whole view)."""
        assert self.opened is not None
        return self.opened

    def _window_changed(self) -> None:
        super()._window_changed()
        w = self.window
        self.subject = self.panel.get("subject", "")
        self.status = w.status
        self.error = w.error
        self.model_text = w.model_text
        self.footer = w.footer

    # The window's state, under the names the views have always had.
    path = property(lambda self: self.window.path)
    offset = property(lambda self: self.window.offset)
    lines = property(lambda self: self.window.lines)
    total = property(lambda self: self.window.total)
    limit = property(lambda self: self.window.limit)
    highlight = property(lambda self: self.window.highlight)

    def next_page(self) -> bool:
        return self.window.next_page()

    def previous_page(self) -> bool:
        return self.window.previous_page()

    def jump(self, line: int) -> bool:
        return self.window.jump(line)


class SpillView(ReadView):
    """A saved full glob/grep result, paged with ``Workspace.spill_page`` (owner session only)."""

    def __init__(
        self,
        workspace,
        session: str,
        locator: str,
        offset: int = 1,
        limit: int | None = SPILL_PAGE_LINES,
        name: str = "",
        tool: str = "",
    ) -> None:
        self.locator, self._name, self._tool = locator, name, tool
        super().__init__(workspace, session, path=locator, offset=offset, limit=limit)

    def make_window(self, result, path, offset, limit, highlight):
        self.title = "saved result"
        return SpillWindow(self, self.locator, offset=offset, limit=limit, name=self._name, tool=self._tool)
