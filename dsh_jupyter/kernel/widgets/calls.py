"""Session widgets: the call log (each call expandable to the exact model text) and saved results.

Why it exists: an agent builder wants to see, in a notebook, exactly what the model saw in a
session, whichever surface made the call (rest, magic, widget, python). The call log shows one
page of calls, newest last, and fills a call's text only when it is expanded, so the browser
holds titles for a page and the text of the call being read. The saved-results list opens each
spill in the spill viewer.

What it must never do: fetch the whole log (one ``Workspace.calls`` page per click), or show a
call's text other than verbatim.
"""

from __future__ import annotations

import html

import ipywidgets as W
from traitlets import Int, List

from ..results import calls_info, spills_info
from .base import Pager, ToolView, batched, close_tree, pre
from .reading import SpillView

__all__ = ["CallLogView", "SpillsView", "CALLS_PAGE"]

CALLS_PAGE = 50


def _title(number: int, call: dict) -> str:
    mark = " ERROR" if call["isError"] else ""
    return f"{number}. {call['surface']} · {call['tool']}{mark}"


class CallLogView(ToolView):
    """One page of a session's call log, newest last, in an accordion."""

    offset = Int(1)  # 1-based number of the first call shown
    total = Int(0)
    calls = List()  # the page's calls: never more than one page
    expanded = Int(None, allow_none=True)  # index (on the page) of the call whose text is shown

    def __init__(self, workspace, session: str, info=None, limit: int = CALLS_PAGE) -> None:
        super().__init__(workspace, session)
        self.limit = limit
        self.accordion = W.Accordion()
        self.accordion.observe(self._selected, "selected_index")
        # The accordion's children are reused from page to page, only their titles change: when
        # children and titles were both replaced in one update, JupyterLab's accordion view applied
        # the new titles to the old sections still being removed, so a section could show another
        # call's title (seen in the browser tests).
        self._pool: list[W.HTML] = []
        self.refresh_button = W.Button(description="newest", icon="rotate", tooltip="show the newest calls")
        self.refresh_button.on_click(lambda _b: self.newest())
        self.pager = Pager(self.load, noun="calls")
        self.assemble([self.pager, self.refresh_button], [self.accordion])
        if info is not None:
            self.show(info)
        else:
            self.newest()

    def newest(self) -> bool:
        total = self.workspace.calls(self.session, 0, 0)["total"]
        return self.load(max(1, total - self.limit + 1))

    def load(self, offset: int) -> bool:
        if offset < 1:
            self.error = "Error: offset must be at least 1"
            return False
        page = self.workspace.calls(self.session, offset - 1, self.limit)
        if not page["calls"] and page["total"]:
            self.error = f"Error: offset {offset} is out of range ({page['total']} calls)"
            return False
        self.error = ""
        self.show(calls_info(page, self.workspace))
        return True

    def show(self, info) -> None:
        page = info.value
        calls = page["calls"]
        start = page["offset"] + 1
        while len(self._pool) < len(calls):  # at most one page of sections, ever
            self._pool.append(W.HTML())
        children = self._pool[: len(calls)]
        with self.hold_sync(), batched([self.accordion, self.title, self.footer_line, *self._pool]):
            self.offset = start
            self.total = page["total"]
            self.calls = calls
            self.expanded = None
            self.accordion.selected_index = None
            for child in self._pool:
                child.value = ""  # no call text of the previous page stays in the browser
            if list(self.accordion.children) != children:
                self.accordion.children = children
            self.accordion.titles = tuple(_title(start + i, c) for i, c in enumerate(calls))
            self.title.value = f"<b>calls</b> in session <code>{html.escape(page['session'])}</code>"
            self.model_text = info.text
            self.footer = info.footer()
        last = start + len(calls) - 1
        self.pager.update(start, len(calls), page["total"], self.limit, last < page["total"])

    def expand(self, index: int | None) -> None:
        self.accordion.selected_index = index

    def close_parts(self) -> None:
        super().close_parts()
        for child in self._pool:
            close_tree(child)
        for part in self.pager.parts():
            part.close()

    def _selected(self, change) -> None:
        index = change["new"]
        for i, child in enumerate(self.accordion.children):
            if i != index and child.value:
                child.value = ""  # only the expanded call's text lives in the browser
        if index is not None and index < len(self.calls):
            call = self.calls[index]
            self.accordion.children[index].value = pre(call["text"])
        self.expanded = index


class SpillsView(ToolView):
    """The session's saved full results, each with a button that opens the spill viewer."""

    spills = List()

    def __init__(self, workspace, session: str, info=None) -> None:
        super().__init__(workspace, session)
        if info is None:
            info = spills_info(workspace.spill_list(session), session, workspace)
        self.spills = list(info.value)
        self.title.value = f"<b>saved results</b> of session <code>{html.escape(session)}</code>"
        rows = []
        for spill in self.spills:
            button = W.Button(description="open", icon="table-list", tooltip="page through this result")
            button.on_click(lambda _b, loc=spill["locator"]: self.open_spill(loc))
            label = W.Label(f"{spill['tool']}: {spill['locator']} ({spill['size']:,} bytes)")
            rows.append(W.HBox([button, label]))
        self.assemble([], [W.VBox(rows)])
        self.model_text = info.text
        self.footer = info.footer()

    def open_spill(self, locator: str):
        return self.open_view(SpillView(self.workspace, self.session, locator))
