"""The listing widget: a directory like a file browser, one page at a time, the model's footer kept.

Why it exists: a directory of 100,000 entries must be browsable without the browser ever holding
more than one page, and a person wants what a file browser offers: sorting, a name filter, a
breadcrumb, files opening in place. Pages in the model's own order are real ``list`` calls
(logged with surface ``widget``; their text is the model text and their footer is shown). A
sort by name, size or modification time, or a name filter, is a person's view the model never
sees: those pages come from ``Workspace.browse`` (sorted or filtered over the whole directory,
not the page; not a tool call, not logged), and the footer shown is still the model's, from the
``list`` call that entered the folder, labelled as such by the front end.

Every page carries the directory's stamp (inode, mtime, ctime). The next action checks it, so a
listing that has gone stale says so and offers a refresh.

What it must never do: hold more rows than one page, print a name other than as the model sees
it (``label``), pass a sorted page off as the model's order, or drop the model's footer.
"""

from __future__ import annotations

import os
import posixpath

from traitlets import Bool, Int, List, Unicode

from ...core.errors import ToolError
from ...core.text.quoting import quote_name
from ...core.tools.listing.browse import BROWSE_SORTS
from .base import DshView
from .windows import ReadWindow

__all__ = ["MODEL_ORDER", "ListingView", "child_path"]

_MARKS = {"directory": "/", "file": "", "other": "@"}
MODEL_ORDER = "the model's order: directories first, then files, then other, each alphabetical"
_SORT_WORDS = {
    "name": ("by name, A to Z", "by name, Z to A"),
    "size": ("by size, smallest first", "by size, largest first"),
    "modified": ("by modification time, oldest first", "by modification time, newest first"),
    "model": (MODEL_ORDER, "the model's order reversed"),
}


def child_path(parent: str, name: str) -> str:
    """The tool path of ``name`` inside the listed directory ``parent`` (a display path)."""
    return name if parent == "." else posixpath.join(parent, name)


def row(entry: dict) -> dict:
    """One entry as plain data for the front end; ``label`` is the name exactly as the model prints it."""
    out = {
        "name": entry["name"],
        "label": quote_name(entry["name"]) + _MARKS[entry["type"]],
        "type": entry["type"],
        "size": entry.get("size") if entry["type"] == "file" else None,  # a link's own size misleads
        "mtime": entry.get("mtime"),
    }
    if entry.get("target"):
        out["target"] = entry["target"]
    return out


class ListingView(DshView):
    """``list`` as a navigable, sortable, filterable table; see the module docstring."""

    path = Unicode(".").tag(sync=True)  # the listed directory as the tool printed it
    offset = Int(1).tag(sync=True)
    total = Int(0).tag(sync=True)  # entries in the directory
    matched = Int(0).tag(sync=True)  # entries the name filter leaves (= total without a filter)
    rows = List().tag(sync=True)  # the page shown: never more than one page
    crumbs = List().tag(sync=True)  # [[label, path], ...] from the top down to ``path``
    sort = Unicode("model").tag(sync=True)
    descending = Bool(False).tag(sync=True)
    filter = Unicode("").tag(sync=True)
    order = Unicode(MODEL_ORDER).tag(sync=True)  # how the rows are ordered, in words

    def __init__(self, workspace, session: str, result=None, path: str | None = None, offset: int = 1) -> None:
        super().__init__(workspace, session)
        self.kind, self.title = "listing", "list"
        self.page_size = workspace.settings.list_max_entries
        self.stamp = None
        # asked with details: every page it fetches asks for them too (the table shows sizes and
        # times either way; the model view shows the text the model would get)
        self.details = bool(result is not None and result.value.get("details"))
        with self.hold_sync():
            if result is not None:
                self.show_model(result)
                self._show(result.value, self._stamp_of(result.value["path"]))
            else:
                self.load(path or ".", offset)

    def handlers(self) -> dict:
        return {
            **super().handlers(),
            "page": self.page,
            "open": self.open_entry,
            "crumb": lambda path: self.load(path, 1),
            "up": self.up,
            "sort": self.sort_by,
            "filter": self.filter_names,
            "refresh": self.refresh,
            "poll": self.poll,
        }

    # -- fetching --------------------------------------------------------------------------------

    def model_order(self) -> bool:
        """True when the rows are the model's own pages (no sort, no filter)."""
        return self.sort == "model" and not self.descending and not self.filter

    def load(self, path: str, offset: int = 1) -> bool:
        """Show one page of ``path``; False (page kept, error shown) when the call failed."""
        entering = path != self.path or self.stamp is None
        if path != self.path:
            self.filter = ""  # a filter belongs to the folder it was typed in
        if self.model_order() or entering:
            # The model's own page: the rows when unsorted; else the footer and model text of the folder.
            more = {"details": True} if self.details else {}
            result = self.call("list", path=path, offset=offset if self.model_order() else 1, **more)
            if not self.accept(result):
                return False
            self.show_model(result)
            if self.model_order():
                self._show(result.value, self._stamp_of(result.value["path"]))
                return True
            path = result.value["path"]
        try:
            value = self.workspace.browse(
                path,
                offset,
                sort=self.sort,
                descending=self.descending,
                name_filter=self.filter or None,
                session=self.session,
            )
        except ToolError as exc:
            self.error = f"Error: {exc.message}"
            return False
        self.error = ""
        self._show(value, value["stamp"])
        return True

    def _stamp_of(self, path: str):
        try:
            return self.workspace.browse(path, limit=0, session=self.session)["stamp"]
        except ToolError:
            return None

    def show_model(self, result) -> None:
        super().show_model(result)
        value = result.value
        last = value["offset"] + len(value["entries"]) - 1
        self._model_page = f"entries {value['offset']:,}-{last:,} in its own order" if value["entries"] else "its page"

    def check_changed(self) -> bool:
        """Compare the folder's stamp with the page's; True (and a notice) when it changed."""
        now = self._stamp_of(self.path)
        if self.stamp is not None and now != self.stamp:
            self.notice = "This folder changed since this page was fetched. Refresh to see it as it is now."
            return True
        return False

    def poll(self) -> bool:
        """Asked every few seconds while the listing is on screen: a folder that changed is listed
        again as it is now; while a file is open below a row, the page stays and the notice says
        so (a reload would move the row the window belongs to). True when something changed."""
        if self.stamp is None or self._stamp_of(self.path) == self.stamp:
            return False
        if self.opened is not None:
            return self.check_changed()
        return self.refresh()

    # -- actions ---------------------------------------------------------------------------------

    def page(self, where) -> bool:
        if where == "next":
            return self.next_page()
        if where == "previous":
            return self.previous_page()
        return self.jump(int(where))

    def next_page(self) -> bool:
        if self.offset + len(self.rows) > self.matched:
            return False
        return self.load(self.path, self.offset + len(self.rows))

    def previous_page(self) -> bool:
        if self.offset <= 1:
            return False
        return self.load(self.path, max(1, self.offset - self.page_size))

    def jump(self, offset: int) -> bool:
        return self.load(self.path, offset)

    def refresh(self) -> bool:
        self.notice = ""
        self.stamp = None  # a fresh start: the folder as it is now, not a change since the last page
        return self.load(self.path, self.offset if self.offset <= max(self.matched, 1) else 1)

    def up(self) -> bool:
        crumbs = self.crumbs
        return len(crumbs) > 1 and self.load(crumbs[-2][1], 1)

    def sort_by(self, key: str, descending: bool | None = None) -> bool:
        """Sort the whole listing by ``key`` (``model`` goes back to the model's order)."""
        if key not in BROWSE_SORTS:
            raise ValueError(f"sort must be one of {', '.join(BROWSE_SORTS)}")
        if descending is None:
            descending = not self.descending if key == self.sort and key != "model" else False
        self.sort, self.descending = key, bool(descending)
        return self.load(self.path, 1)

    def filter_names(self, text: str) -> bool:
        """Show only entries whose name holds ``text`` (case-insensitive), over the whole listing."""
        self.filter = text
        return self.load(self.path, 1)

    def open_entry(self, index: int):
        """A directory is listed in place; a file opens a read window below its row."""
        entry = self.rows[int(index)]
        target = child_path(self.path, entry["name"])
        if entry["type"] == "directory":
            return self.load(target, 1)
        if entry["type"] == "file":
            window = self.open_window(ReadWindow(self, target), f"row:{index}")
            self.check_changed()
            return window
        return None

    def crumbs_for(self, path: str) -> list[list[str]]:
        """[label, path] from the top down to the listed directory."""
        if path == ".":
            return [[".", "."]]
        if not os.path.isabs(path):
            parts = path.split("/")
            return [[".", "."]] + [[p, "/".join(parts[: i + 1])] for i, p in enumerate(parts)]
        root = self.workspace.root
        if path == root or path.startswith(root.rstrip("/") + "/"):
            rest = path[len(root) :].strip("/")
            parts = rest.split("/") if rest else []
            return [[root, root]] + [[p, posixpath.join(root, *parts[: i + 1])] for i, p in enumerate(parts)]
        return [[path, path]]

    # -- showing a page --------------------------------------------------------------------------

    def _show(self, value: dict, stamp) -> None:
        entries = value["entries"]
        if len(entries) > self.page_size:  # a result from a workspace with a larger cap
            raise ValueError(f"a list page holds at most {self.page_size} entries")
        same_dir = value["path"] == self.path and self.stamp is not None
        if same_dir and stamp != self.stamp:
            self.notice = "This folder changed since the previous page was fetched: entries may have moved."
        elif not same_dir:
            self.notice = ""
        self.close_opened()  # the row that opened it is gone
        self.stamp = stamp
        self.path = value["path"]
        self.offset = value["offset"]
        self.total = value["totalEntries"]
        self.matched = value.get("matchedEntries", value["totalEntries"])
        self.rows = [row(e) for e in entries]
        self.crumbs = self.crumbs_for(value["path"])
        self.subject = quote_name(value["path"])
        words = _SORT_WORDS[self.sort][1 if self.descending else 0]
        if self.sort == "model" and not self.descending:
            self.order = MODEL_ORDER
        else:
            self.order = f"Sorted {words}, over all {self.matched:,} entries: not the model's order"
        if self.filter:
            self.order += f"; {self.matched:,} of {self.total:,} names contain {quote_name(self.filter)}"
        self.footer_note = (
            ""
            if self.model_order()
            else (f"(of the model's own page, {getattr(self, '_model_page', 'its page')}; it never sees this view)")
        )
        last = self.offset + len(entries) - 1
        of = f"{self.matched:,}" + (" matching" if self.filter else "")
        self.status = f"entries {self.offset:,}-{last:,} of {of}" if entries else f"no entries of {of}"
        self.summary = f"{self.total:,} {'entry' if self.total == 1 else 'entries'}"
        self.pager = {
            "prev": self.offset > 1,
            "next": last < self.matched,
            "offset": self.offset,
            "noun": "entries",
            "step": self.page_size,
        }
