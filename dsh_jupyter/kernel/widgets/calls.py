"""Session widgets: the call log (titles, filters, one call's exact text) and the saved results.

Why it exists: an agent builder wants to see, in a notebook, exactly what the model saw in a
session, whichever surface made the call (rest, magic, widget, python). The call log shows one
page of call titles (tool, key arguments, time, duration, surface), newest last, filterable by
tool and to failures only, and sends a call's text to the browser only while it is expanded,
so a saved notebook never embeds every call's text. The saved-results list names each spill by
the query that made it and opens it in the saved-result window, whose paths are links.

What it must never do: send more than one page of titles and one call's text, or show a call's
text other than verbatim.
"""

from __future__ import annotations

import os

from traitlets import Bool, Int, List, Unicode

from ..results import calls_info, spills_info
from .base import DshView
from .search import query_name
from .windows import SpillWindow

__all__ = ["CALLS_PAGE", "CallLogView", "SpillsView", "call_title", "spill_names"]

CALLS_PAGE = 50
_SCAN_CHUNK = 500
_LONG = 60  # an argument longer than this is shown by its length


def call_title(call: dict) -> str:
    """The call as typed: tool and key arguments. Text a call writes is shown by its length
    (``<N characters>``); a long path keeps its start and its file name around a ``…``, a long
    pattern its start, so a row always names what the call was about."""
    args = {}
    for key, value in (call.get("args") or {}).items():
        if not isinstance(value, str):
            args[key] = value
        elif key in ("content", "old_string", "new_string"):
            args[key] = f"<{len(value)} characters>"
        elif len(value) <= _LONG:
            args[key] = value
        elif key in ("file_path", "path"):
            args[key] = value[: _LONG // 3] + "…" + value[-(_LONG - _LONG // 3 - 1) :]
        else:
            args[key] = value[: _LONG - 1] + "…"
    return query_name(call["tool"], args)


def _summary(number: int, call: dict) -> dict:
    return {
        "number": number,
        "tool": call["tool"],
        "title": call_title(call),
        "surface": call["surface"],
        "error": bool(call["isError"]),
        "started": call["started"],
        "ms": round(call["durationMs"], 1),
    }


def spill_names(workspace, session: str, spills: list[dict], limit: int = 5000) -> dict[str, str]:
    """locator -> the query that saved it, found in the session's call log (newest calls first)."""
    wanted = {os.path.basename(s["locator"]).split("-", 1)[0]: s["locator"] for s in spills}
    names: dict[str, str] = {}
    total = workspace.calls(session, 0, 0)["total"]
    end = total
    while wanted and end > 0 and total - end < limit:
        start = max(0, end - _SCAN_CHUNK)
        for call in workspace.calls(session, start, end - start)["calls"]:
            locator = wanted.pop(call["callId"][:12], None)
            if locator is not None:
                names[locator] = call_title(call)
        end = start
    return names


class CallLogView(DshView):
    """One page of a session's call log, newest last; see the module docstring."""

    offset = Int(1).tag(sync=True)  # 1-based number (in the shown list) of the first call
    total = Int(0).tag(sync=True)  # calls in the shown list (all, or those the filters keep)
    calls = List().tag(sync=True)  # the page's titles: never more than one page, never their text
    expanded = Int(None, allow_none=True).tag(sync=True)  # number of the call whose text is shown
    expanded_text = Unicode("").tag(sync=True)
    tool_filter = Unicode("").tag(sync=True)
    errors_only = Bool(False).tag(sync=True)
    tools = List().tag(sync=True)  # tool names for the filter

    def __init__(self, workspace, session: str, info=None, limit: int = CALLS_PAGE) -> None:
        super().__init__(workspace, session)
        self.kind, self.title = "calls", "calls"
        self.subject = session
        self.limit = limit
        self._kept: list[dict] | None = None  # the filtered log's titles, when a filter is on
        self._seen: int | None = None  # the log's length at the last poll
        self._shown_total = 0  # the log's length when the page shown was fetched
        self.tools = sorted(spec for spec in workspace.registry)
        with self.hold_sync():
            if info is not None:
                self._show_page(info.value)
                self.model_text, self.footer = info.text, info.footer()
            else:
                self.newest()

    def handlers(self) -> dict:
        return {
            **super().handlers(),
            "page": self.page,
            "expand": self.expand,
            "newest": self.newest,
            "filter": self.set_filter,
            "poll": self.poll,
        }

    # -- paging ----------------------------------------------------------------------------------

    def newest(self) -> bool:
        if self._kept is not None:
            self._kept = self._scan()
        total = len(self._kept) if self._kept is not None else self.workspace.calls(self.session, 0, 0)["total"]
        return self.load(max(1, total - self.limit + 1))

    def poll(self) -> bool:
        """Asked every few seconds while the log is on screen: calls that landed since (an agent's,
        over REST or MCP) show at once on the newest page. A page further back, or one with a
        call's text open, stays as it is and the notice counts the new calls. True when new."""
        total = self.workspace.calls(self.session, 0, 0)["total"]
        # The first poll compares with the page shown: a call that landed before the log first came
        # on screen is new to it, not already seen.
        seen = self._seen if self._seen is not None else self._shown_total
        self._seen = total
        if total == seen:
            return False
        on_newest = self.offset + len(self.calls) > self.total
        if on_newest and self.expanded is None:
            self.notice = ""
            return self.newest()
        new = total - self._shown_total
        self.notice = f"{new:,} new {'call' if new == 1 else 'calls'} since this page: ↻ newest shows them."
        return True

    def page(self, where) -> bool:
        if where == "next":
            return self.load(self.offset + len(self.calls)) if self.offset + len(self.calls) <= self.total else False
        if where == "previous":
            return self.offset > 1 and self.load(max(1, self.offset - self.limit))
        return self.load(int(where))

    def next_page(self) -> bool:
        return self.page("next")

    def previous_page(self) -> bool:
        return self.page("previous")

    def load(self, offset: int) -> bool:
        if offset < 1:
            self.error = "Error: offset must be at least 1"
            return False
        if self._kept is not None:
            if offset > max(len(self._kept), 1):
                self.error = f"Error: offset {offset} is out of range ({len(self._kept)} calls)"
                return False
            self.error = ""
            self._show_rows(self._kept[offset - 1 : offset - 1 + self.limit], offset, len(self._kept))
            return True
        page = self.workspace.calls(self.session, offset - 1, self.limit)
        if not page["calls"] and page["total"]:
            self.error = f"Error: offset {offset} is out of range ({page['total']} calls)"
            return False
        self.error = ""
        self._show_page(page)
        return True

    def _show_page(self, page: dict) -> None:
        self._shown_total = page["total"]
        self.notice = ""
        start = page["offset"] + 1
        rows = [_summary(start + i, c) for i, c in enumerate(page["calls"])]
        self._show_rows(rows, start, page["total"])
        info = calls_info(page, self.workspace)
        self.model_text, self.footer = info.text, info.footer()

    def _show_rows(self, rows: list[dict], offset: int, total: int) -> None:
        self.calls, self.offset, self.total = rows, offset, total
        self.expanded, self.expanded_text = None, ""  # no call text of the previous page stays
        last = offset + len(rows) - 1
        self.status = f"calls {offset:,}-{last:,} of {total:,}" if rows else f"no calls of {total:,}"
        self.pager = {"prev": offset > 1, "next": last < total, "offset": offset, "noun": "calls", "step": self.limit}
        kept = "" if self._kept is None else " kept by the filter"
        self.summary = f"{total:,} {'call' if total == 1 else 'calls'}{kept}"

    # -- filters and expansion -------------------------------------------------------------------

    def set_filter(self, tool: str = "", errors_only: bool = False) -> bool:
        """Keep only calls of ``tool`` ("" for any) and, if ``errors_only``, only failed ones."""
        self.tool_filter, self.errors_only = tool or "", bool(errors_only)
        self._kept = self._scan() if (self.tool_filter or self.errors_only) else None
        if self._kept is None:
            self.notice = ""
        return self.newest()

    def _scan(self) -> list[dict]:
        kept, start = [], 0
        total = self.workspace.calls(self.session, 0, 0)["total"]
        while start < total:
            for i, call in enumerate(self.workspace.calls(self.session, start, _SCAN_CHUNK)["calls"]):
                if (not self.tool_filter or call["tool"] == self.tool_filter) and (
                    not self.errors_only or call["isError"]
                ):
                    kept.append(_summary(start + i + 1, call))
            start += _SCAN_CHUNK
        return kept

    def expand(self, number: int | None) -> None:
        """Show the exact text of call ``number`` (its place in the whole log); None collapses."""
        if number is None or number == self.expanded:
            self.expanded, self.expanded_text = None, ""
            return
        page = self.workspace.calls(self.session, int(number) - 1, 1)["calls"]
        self.expanded = int(number)
        self.expanded_text = page[0]["text"] if page else ""

    def titles(self) -> list[str]:
        """The rows as one line each (what the front end lays out in columns)."""
        return [f"{c['number']}. {c['surface']} · {c['title']}{' ERROR' if c['error'] else ''}" for c in self.calls]


class SpillsView(DshView):
    """The session's saved full results, each named by its query, each opening the saved-result window."""

    spills = List().tag(sync=True)  # [{locator, tool, size, created, name}]

    def __init__(self, workspace, session: str, info=None) -> None:
        super().__init__(workspace, session)
        self.kind, self.title, self.subject = "spills", "saved results", session
        if info is None:
            info = spills_info(workspace.spill_list(session), session, workspace)
        names = spill_names(workspace, session, list(info.value))
        self.spills = [{**s, "name": names.get(s["locator"], s["tool"])} for s in info.value]
        n = len(self.spills)
        self.summary = f"{n} saved {'result' if n == 1 else 'results'}"
        self.model_text = info.text
        self.footer = info.footer()
        if not self.spills:
            self.notice = info.text

    def handlers(self) -> dict:
        return {**super().handlers(), "open": self.open_spill}

    def open_spill(self, index):
        if isinstance(index, str):  # a locator
            index = next(i for i, s in enumerate(self.spills) if s["locator"] == index)
        spill = self.spills[int(index)]
        window = SpillWindow(self, spill["locator"], name=spill["name"], tool=spill["tool"])
        return self.open_window(window, f"spill:{index}")
