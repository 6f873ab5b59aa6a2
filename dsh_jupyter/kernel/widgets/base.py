"""What every dsh widget shares: the model-view toggle, the model's footer, the pager, the detail slot.

Why it exists: each view (listing, read window, glob, grep, spill viewer, call log) must repeat
the model's footer so a page never reads as the whole, offer the exact text the model saw, and
fetch one page at a time through the core. Those parts live here once.

State is kept in traitlets on the view (``path``, ``offset``, ``rows``, ``footer``,
``model_text``…), the Python side's truth that tests read; they are not synced, because no custom
front-end code exists to read them. What the browser receives is the stock child widgets'
state, changed inside ``hold_sync`` so one page change is one message per changed widget.

What it must never do: fetch more than one page, call the core under another surface than
``widget``, or hide a failed call (its ``Error: …`` text is shown and the page stays as it was).
"""

from __future__ import annotations

import contextlib
import html
from collections.abc import Callable, Iterable

import ipywidgets as W
from traitlets import Bool, Instance, Int, Unicode, observe

__all__ = ["ToolView", "Pager", "batched", "pre", "close_tree"]

HIDDEN, SHOWN = "none", ""


@contextlib.contextmanager
def batched(widgets: Iterable[W.Widget]):
    """``hold_sync`` on many widgets at once: each sends its changed state in one message."""
    with contextlib.ExitStack() as stack:
        for w in widgets:
            stack.enter_context(w.hold_sync())
        yield


def pre(text: str) -> str:
    """``text`` shown verbatim (escaped, wrapped, whitespace kept)."""
    return f'<pre style="white-space: pre-wrap; margin: 0">{html.escape(text)}</pre>'


def close_tree(widget: W.Widget | None) -> None:
    """Close a widget, every widget below it and their layout and style models.

    Only for widgets that are going away for good: a replaced view, an old breadcrumb button.
    """
    if widget is None:
        return
    for child in getattr(widget, "children", ()) or ():
        close_tree(child)
    if isinstance(widget, ToolView):
        widget.close_parts()
    for part in (getattr(widget, "layout", None), getattr(widget, "style", None)):
        if isinstance(part, W.Widget):
            part.close()
    widget.close()


def show_if(widget: W.Widget, visible: bool) -> None:
    widget.layout.display = SHOWN if visible else HIDDEN


class Pager(W.HBox):
    """previous / next / jump to offset. It never fetches: it asks its owner for one page."""

    offset = Int(1)
    step = Int(1)  # how far "previous" goes back
    has_more = Bool(False)

    def __init__(self, on_page: Callable[[int], object], noun: str = "entries") -> None:
        self._on_page = on_page
        self.noun = noun
        self.prev_button = W.Button(description="previous", icon="arrow-left", tooltip="the page before this one")
        self.next_button = W.Button(description="next", icon="arrow-right", tooltip="the page after this one")
        self.offset_box = W.IntText(value=1, description="offset", layout=W.Layout(width="11em"))
        self.go_button = W.Button(description="go", tooltip="show the page starting at this offset")
        self.status = W.Label()
        self.prev_button.on_click(lambda _b: self._on_page(max(1, self.offset - self.step)))
        self.next_button.on_click(lambda _b: self._on_page(self.offset + self._shown))
        self.go_button.on_click(lambda _b: self._on_page(self.offset_box.value))
        self._shown = 0
        super().__init__([self.prev_button, self.next_button, self.offset_box, self.go_button, self.status])

    def parts(self) -> tuple[W.Widget, ...]:
        return (self.prev_button, self.next_button, self.offset_box, self.go_button, self.status)

    def update(self, offset: int, shown: int, total: int | None, step: int, has_more: bool) -> None:
        with batched(self.parts()):
            self.offset, self._shown, self.step, self.has_more = offset, shown, step, has_more
            self.prev_button.disabled = offset <= 1
            self.next_button.disabled = not has_more
            self.offset_box.value = offset
            last = offset + shown - 1
            of = "" if total is None else f" of {total:,}"
            self.status.value = f"{self.noun} {offset:,}-{last:,}{of}" if shown else f"no {self.noun}{of}"


class ToolView(W.VBox):
    """Base of the views: title, error line, body, the model's footer, model view, detail slot."""

    session = Unicode("default")
    model_text = Unicode("")  # exactly the text the model saw for the page shown
    footer = Unicode("")  # the model's footer, verbatim
    error = Unicode("")  # the text of the last failed call ("" when the last call worked)
    model_view = Bool(False)
    opened = Instance(W.Widget, allow_none=True)  # the view opened from this one (read, spill)

    def __init__(self, workspace, session: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.workspace = workspace
        self.session = session
        self.title = W.HTML()
        self.error_line = W.HTML(layout=W.Layout(display=HIDDEN))
        self.footer_line = W.HTML()
        self.model_toggle = W.ToggleButton(
            description="model view", icon="robot", tooltip="show exactly the text the model sees"
        )
        self.model_box = W.HTML(layout=W.Layout(display=HIDDEN))
        self.detail = W.VBox()
        self.close_button = W.Button(description="close", icon="xmark", tooltip="close the opened view")
        self.close_button.on_click(lambda _b: self.close_opened())
        self.model_toggle.observe(self._toggle_changed, "value")

    def assemble(self, toolbar: list[W.Widget], body: list[W.Widget]) -> None:
        bar = W.HBox([*toolbar, self.model_toggle])
        self.children = [self.title, bar, self.error_line, *body, self.footer_line, self.model_box, self.detail]

    def close_parts(self) -> None:
        """Close widgets this view owns that are not (or not always) among its children."""
        close_tree(self.opened)
        close_tree(self.close_button)

    # -- calls ---------------------------------------------------------------------------------

    def call(self, tool: str, **args):
        """One core call in this view's session, logged with surface ``widget``."""
        return self.workspace.call(tool, args, session=self.session, surface="widget")

    def accept(self, result) -> bool:
        """Show a failed call's text and keep the page; True when ``result`` worked."""
        self.error = result.text if result.is_error else ""
        return not result.is_error

    def show_model(self, result) -> None:
        """Set the footer and model text from ``result`` (called inside the subclass's batch)."""
        self.model_text = result.text
        self.footer = result.footer()

    # -- the opened view -----------------------------------------------------------------------

    def open_view(self, view: W.Widget) -> W.Widget:
        """Show ``view`` (a read window, a spill viewer) below this one, replacing the last."""
        old = self.opened
        self.opened = view
        self.detail.children = [self.close_button, view]
        close_tree(old)
        return view

    def close_opened(self) -> None:
        old, self.opened = self.opened, None
        self.detail.children = []
        close_tree(old)

    # -- observers -----------------------------------------------------------------------------

    @observe("error")
    def _error_changed(self, change) -> None:
        with self.error_line.hold_sync():
            self.error_line.value = pre(change["new"]) if change["new"] else ""
            show_if(self.error_line, bool(change["new"]))

    @observe("footer")
    def _footer_changed(self, change) -> None:
        self.footer_line.value = pre(change["new"]) if change["new"] else ""

    @observe("model_text")
    def _model_text_changed(self, change) -> None:
        if self.model_view:
            self.model_box.value = pre(change["new"])

    def _toggle_changed(self, change) -> None:
        self.model_view = change["new"]

    @observe("model_view")
    def _model_view_changed(self, change) -> None:
        with self.model_box.hold_sync():
            if change["new"]:
                self.model_box.value = pre(self.model_text)
            else:
                self.model_box.value = ""  # the browser keeps no copy while hidden
            show_if(self.model_box, change["new"])
        self.model_toggle.value = change["new"]
