"""The listing widget: one page of a directory as a table, a pager, a breadcrumb, clickable names.

Why it exists: a directory of 100,000 entries must be browsable without the browser ever holding
more than one page. The view asks the core for one ``list`` page per click and shows it in a
table of reused row widgets: a page change rewrites the rows it needs (one message per changed
widget, inside ``hold_sync``) instead of creating and destroying hundreds of widgets; rows a short
page does not need are blanked, so the browser never keeps a previous page's names either.

What it must never do: hold more rows than one page (``rows`` and the row pool are capped at
``list_max_entries``), print a name other than as the model sees it, or drop the model's footer.
"""

from __future__ import annotations

import html
import os
import posixpath
import time

import ipywidgets as W
from ipywidgets.widgets.widget_string import LabelStyle  # not exported at the top level
from traitlets import Int, List, Unicode

from ...core.render.quoting import quote_name
from .base import Pager, ToolView, batched, close_tree
from .reading import ReadView

__all__ = ["ListingView"]

_COLUMNS = "minmax(14em, 3fr) 7em 9em 11em"
_ICONS = {"directory": "folder", "file": "file", "other": "link"}
_MARKS = {"directory": "/", "file": "", "other": "@"}


def child_path(parent: str, name: str) -> str:
    """The tool path of ``name`` inside the listed directory ``parent`` (a display path)."""
    return name if parent == "." else posixpath.join(parent, name)


def format_size(entry: dict) -> str:
    size = entry.get("size")
    return f"{size:,}" if size is not None and entry["type"] == "file" else ""  # a link's own size misleads


def format_mtime(entry: dict) -> str:
    mtime = entry.get("mtime")
    return "" if mtime is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(mtime))


class _Row:
    """The four cells of one table row; reused for whatever entry sits at its index on a page."""

    __slots__ = ("name", "kind", "size", "mtime")

    def __init__(self, index: int, on_click, shared: dict) -> None:
        # Layout and style objects are shared by every row: each one is a model in the browser too.
        self.name = W.Button(layout=shared["button_layout"], style=shared["button_style"])
        self.name.on_click(lambda _b: on_click(index))
        self.kind = W.Label(layout=shared["label_layout"], style=shared["label_style"])
        self.size = W.Label(layout=shared["label_layout"], style=shared["label_style"])
        self.mtime = W.Label(layout=shared["label_layout"], style=shared["label_style"])

    def cells(self) -> tuple[W.Widget, ...]:
        return (self.name, self.kind, self.size, self.mtime)

    def show(self, entry: dict | None) -> None:
        if entry is None:  # a row the current page does not use: keep no stale name in the browser
            self.name.description = self.name.tooltip = self.kind.value = self.size.value = self.mtime.value = ""
            return
        kind = entry["type"]
        label = quote_name(entry["name"]) + _MARKS[kind]
        self.name.description = label
        self.name.icon = _ICONS[kind]
        self.name.disabled = kind == "other"
        target = entry.get("target")
        self.name.tooltip = (
            f"{label} -> {target} (not followed)" if target else "list this directory" if kind == "directory"
            else "open a read window" if kind == "file" else f"{label} (not a regular file)"
        )
        self.kind.value = kind
        self.size.value = format_size(entry)
        self.mtime.value = format_mtime(entry)


class ListingView(ToolView):
    """``list`` as a navigable table; see the module docstring."""

    path = Unicode(".")  # the listed directory as the tool printed it
    offset = Int(1)
    total = Int(0)
    rows = List()  # the entries of the page shown: never more than one page

    reuse_rows = True  # False rebuilds every row widget per page (kept for the benchmark)

    def __init__(self, workspace, session: str, result=None, path: str | None = None, offset: int = 1) -> None:
        super().__init__(workspace, session)
        self.page_size = workspace.settings.list_max_entries
        self.breadcrumb = W.HBox()
        layout = {"grid_template_columns": _COLUMNS, "grid_gap": "0 0.5em", "width": "100%"}
        self.header = W.GridBox(
            [W.HTML(f"<b>{c}</b>") for c in ("name", "type", "size", "modified")], layout=W.Layout(**layout)
        )
        self.grid = W.GridBox(layout=W.Layout(**layout))
        self.pager = Pager(lambda offset: self.load(self.path, offset), noun="entries")
        self._pool: list[_Row] = []
        self._shared = {
            "button_layout": W.Layout(width="auto"),
            "button_style": W.ButtonStyle(),
            "label_layout": W.Layout(),
            "label_style": LabelStyle(),
        }
        self._crumbs: list[tuple[str, str]] = []
        self.assemble([self.pager], [self.breadcrumb, self.header, self.grid])
        if result is not None:
            self.show(result)
        else:
            self.load(path or ".", offset)

    # -- navigation ----------------------------------------------------------------------------

    def load(self, path: str, offset: int = 1) -> bool:
        """Fetch one page of ``path`` from the core and show it; False (page kept) on an error."""
        result = self.call("list", path=path, offset=offset)
        if self.accept(result):
            self.show(result)
            return True
        return False

    def next_page(self) -> bool:
        return self.load(self.path, self.offset + len(self.rows))

    def previous_page(self) -> bool:
        return self.load(self.path, max(1, self.offset - self.page_size))

    def jump(self, offset: int) -> bool:
        return self.load(self.path, offset)

    def open_entry(self, index: int):
        """A directory is listed in place; a file opens a read window below."""
        entry = self.rows[index]
        target = child_path(self.path, entry["name"])
        if entry["type"] == "directory":
            return self.load(target, 1)
        if entry["type"] == "file":
            return self.open_view(ReadView(self.workspace, self.session, path=target))
        return None

    def crumbs(self) -> list[tuple[str, str]]:
        """(label, path) from the top down to the listed directory."""
        path = self.path
        if path == ".":
            return [(".", ".")]
        if not os.path.isabs(path):
            parts = path.split("/")
            return [(".", ".")] + [(p, "/".join(parts[: i + 1])) for i, p in enumerate(parts)]
        root = self.workspace.root
        if path == root or path.startswith(root.rstrip("/") + "/"):
            rest = path[len(root):].strip("/")
            parts = rest.split("/") if rest else []
            return [(root, root)] + [(p, posixpath.join(root, *parts[: i + 1])) for i, p in enumerate(parts)]
        return [(path, path)]

    # -- showing a page ------------------------------------------------------------------------

    def show(self, result) -> None:
        value = result.value
        entries = value["entries"]
        if len(entries) > self.page_size:  # a result from a workspace with a larger cap
            raise ValueError(f"a list page holds at most {self.page_size} entries")
        rows = self._rows_for(len(entries))
        with self.hold_sync(), batched([self.grid, self.title, self.footer_line, *self._cells()]):
            for i, row in enumerate(self._pool):
                row.show(entries[i] if i < len(entries) else None)
            self.grid.children = [cell for row in rows for cell in row.cells()]
            self.path = value["path"]
            self.offset = value["offset"]
            self.total = value["totalEntries"]
            self.rows = entries
            self.title.value = f"<b>list</b> <code>{html.escape(quote_name(value['path']))}</code>"
            self.show_model(result)
        last = value["offset"] + len(entries) - 1
        self.pager.update(value["offset"], len(entries), value["totalEntries"], self.page_size,
                          last < value["totalEntries"])
        self._show_crumbs()

    def _cells(self):
        for row in self._pool:
            yield from row.cells()

    def _rows_for(self, n: int) -> list[_Row]:
        if not self.reuse_rows:
            for row in self._pool:
                for cell in row.cells():
                    cell.close()
            self._pool = []
        while len(self._pool) < n:
            self._pool.append(_Row(len(self._pool), self.open_entry, self._shared))
        return self._pool[:n]

    def _show_crumbs(self) -> None:
        crumbs = self.crumbs()
        if crumbs == self._crumbs:
            return  # same directory, another page: the breadcrumb stays as it is
        self._crumbs = crumbs
        old = self.breadcrumb.children
        buttons = []
        for i, (label, path) in enumerate(crumbs):
            button = W.Button(description=label, tooltip=f"list {path}", layout=W.Layout(width="auto"))
            button.disabled = i == len(crumbs) - 1
            button.on_click(lambda _b, p=path: self.load(p, 1))
            buttons.append(button)
        self.breadcrumb.children = buttons
        for button in old:
            close_tree(button)

    def close_parts(self) -> None:
        super().close_parts()
        for row in self._pool:
            for cell in row.cells():
                cell.close()
        for part in (*self.pager.parts(), *self.header.children, *self._shared.values()):
            part.close()
