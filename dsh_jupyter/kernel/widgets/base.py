"""What every dsh widget shares: one anywidget front end, one request at a time, the model's text.

Why it exists: each view (listing, read window, glob, grep, call log, saved results) must repeat
the model's footer so a page never reads as the whole, offer the exact text the model saw, fetch
one page per request through the core, and show a file it opens in place. Those parts live here
once, on ``DshView``.

State lives in synced traitlets; the browser draws rows from one page of plain data (``frontend.py``).
A click in the browser is one custom message ``{action, seq, ...}``; the view runs the action
inside ``hold_sync()``, so every trait it changes (rows, status, footer, error) reaches the
browser in one update, then answers ``{done: seq}``, which ends the browser's busy state. The
browser sends nothing while a request is pending, so repeated clicks cannot queue up.

What it must never do: fetch more than one page per request, call the core under another
surface than ``widget``, send the model text while the model view is closed, or hide a failed
call (its ``Error: …`` text is shown and the page stays as it was).
"""

from __future__ import annotations

import logging

import anywidget
from traitlets import Bool, Dict, Unicode, observe

from .frontend import CSS, ESM
from .outline import window_for_link
from .windows import CONTEXT_LINES, ReadWindow

__all__ = ["DshView"]

log = logging.getLogger(__name__)


class DshView(anywidget.AnyWidget):
    """Base of the views: title, error, notice, pager status, footer, model view, an opened window."""

    _esm = ESM
    _css = CSS

    kind = Unicode("").tag(sync=True)  # which renderer the front end uses
    title = Unicode("").tag(sync=True)  # the tool or view name ("list", "grep", "calls")
    subject = Unicode("").tag(sync=True)  # the path or pattern, as the model prints it
    summary = Unicode("").tag(sync=True)  # a short count line beside the title
    header = Unicode("").tag(sync=True)  # grep's "Found K of N matches", verbatim
    footer = Unicode("").tag(sync=True)  # the model's footer, verbatim
    footer_note = Unicode("").tag(sync=True)  # when the page shown is not the model's: which page it is of
    error = Unicode("").tag(sync=True)  # the last failed call's text ("" when it worked)
    notice = Unicode("").tag(sync=True)  # e.g. the folder changed since the page was fetched
    status = Unicode("").tag(sync=True)  # the pager's "entries 1-200 of 452"
    pager = Dict().tag(sync=True)  # {prev, next, offset, noun}: what the pager may do
    model_view = Bool(False).tag(sync=True)
    model_shown = Unicode("").tag(sync=True)  # model_text while model_view is on, else ""
    panel = Dict().tag(sync=True)  # the opened window's state ({} when none), see windows.py
    session = Unicode("default")
    model_text = Unicode("")  # exactly the text the model saw for the page shown (not synced)

    def __init__(self, workspace, session: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.workspace = workspace
        self.session = session
        self.opened: ReadWindow | None = None  # the window shown in the panel, or None
        self._anchor = ""
        self.on_msg(self._on_msg)

    # -- requests from the browser -------------------------------------------------------------

    def handlers(self) -> dict:
        """Action name -> method; subclasses add theirs."""
        return {
            "model_view": lambda on: setattr(self, "model_view", bool(on)),
            "close": self.close_opened,
            "window": self._window_action,
        }

    def _on_msg(self, _widget, content, _buffers) -> None:
        if not isinstance(content, dict) or "action" not in content:
            return
        content = dict(content)
        action, seq = content.pop("action"), content.pop("seq", None)
        ok = True
        with self.hold_sync():
            try:
                handler = self.handlers().get(action)
                if handler is None:
                    raise ValueError(f"unknown action {action!r}")
                handler(**content)
            except KeyboardInterrupt:  # the stop button (or the notebook's) interrupted the kernel
                self.error = f"Error: stopped before it finished ({action!r} was interrupted); the page is as it was"
                ok = False
            except Exception as exc:  # a widget bug must not leave the browser busy forever
                log.exception("dsh widget action %r failed", action)
                self.error = f"Error: the widget could not do {action!r} ({type(exc).__name__}: {exc})"
                ok = False
        try:
            self.send({"done": seq, "ok": ok})
        except KeyboardInterrupt:  # an interrupt that came just now must not swallow the answer
            self.send({"done": seq, "ok": False})

    # -- calls -----------------------------------------------------------------------------------

    def call(self, tool: str, **args):
        """One core call in this view's session, logged with surface ``widget``; a long search
        sends how far it got, which the view shows in its busy line until the answer comes."""
        return self.workspace.call(tool, args, session=self.session, surface="widget", progress=self._progress)

    def _progress(self, text: str) -> None:
        self.send({"progress": text})

    def accept(self, result) -> bool:
        """Show a failed call's text and keep the page; True when ``result`` worked."""
        self.error = result.text if result.is_error else ""
        return not result.is_error

    def show_model(self, result) -> None:
        """Set the footer and model text from ``result`` (call inside a ``hold_sync``)."""
        self.model_text = result.text
        self.footer = result.footer()

    @observe("model_view", "model_text")
    def _model_changed(self, _change) -> None:
        self.model_shown = self.model_text if self.model_view else ""  # no copy while closed

    # -- the opened window -----------------------------------------------------------------------

    def open_window(self, window, anchor: str):
        """Show ``window`` in the panel below the row ``anchor`` (replacing any other), return it."""
        if self.opened is not None:
            self.opened.listener = None
        self.opened, self._anchor = window, anchor
        window.listener = self._window_changed
        self._window_changed()
        return window

    def close_opened(self) -> None:
        if self.opened is not None:
            self.opened.listener = None
        self.opened, self._anchor = None, ""
        self.panel = {}

    def _window_changed(self) -> None:
        self.panel = {} if self.opened is None else {**self.opened.state(), "anchor": self._anchor}

    def open_file(
        self, path: str, line: int = 0, anchor: str = "", cell: int = 0, span: list[int] | None = None
    ) -> ReadWindow:
        """A read window of ``path`` in the panel; at ``line`` (marked, a few lines above) if given;
        a notebook with ``cell``: from that cell, its ``line`` marked. ``span`` (``[start, end]``,
        characters of that line) is the match that opened it, for "open in editor" to select."""
        if cell:
            return self.open_window(ReadWindow(self, path, offset=cell, highlight=line, cell=cell), anchor)
        offset = max(1, line - CONTEXT_LINES) if line else 1
        return self.open_window(ReadWindow(self, path, offset=offset, highlight=line, span=span), anchor)

    def _window_action(self, op: str, line: int | None = None, index: int | None = None) -> None:
        if self.opened is None:
            return
        if op == "link":  # a path in a saved result, a notebook output or outline row: opens it, with "back"
            links = self.opened.links()
            target = links[int(index)] if index is not None and 0 <= int(index) < len(links) else None
            back = self.opened
            if isinstance(target, dict):
                self.open_window(window_for_link(self, target), self._anchor).back = back
                self._window_changed()
            elif target is not None:
                self.open_file(target[0], target[1], self._anchor, *target[2:]).back = back
                self._window_changed()
        elif op in ("outline", "cells"):  # a notebook's cells and its outline switch, with "back"
            back = self.opened
            target = {"open": op, "path": back.path, "offset": back.offset if op == "cells" else 1}
            self.open_window(window_for_link(self, target), self._anchor).back = back
            self._window_changed()
        elif op == "back":
            if self.opened.back is not None:
                self.open_window(self.opened.back, self._anchor)
        elif op == "next":
            self.opened.next_page()
        elif op == "previous":
            self.opened.previous_page()
        elif op == "last":
            self.opened.last_page()
        elif op == "jump":
            if line is None:
                raise ValueError("a jump needs a line")
            self.opened.jump(int(line))
        else:
            raise ValueError(f"unknown window action {op!r}")
