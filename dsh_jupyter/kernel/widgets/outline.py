"""A notebook's outline as a read window, and the links between a notebook's windows.

Why it exists: a person finds a place in a long notebook by its table of contents, as the model
does with ``read(outline=true)``. The outline window shows the model's outline rows (the core's
``outline_row``: a heading with the cell it starts at and its section's size, a code cell's first
line), each a link to the cells page starting there; a page of cells has an "outline" switch, and
each output's header row a link to that output read whole (``read(cell_id, output)``), paged by its
lines. Every window opened from another has "back" to it.

What it must never do: show other text than the model's (rows come from the core's renderer), or
fetch more than one page per action (each page is one ``read`` call).
"""

from __future__ import annotations

from ...core.render.outline import outline_row
from .windows import ReadWindow

__all__ = ["OutlineWindow", "window_for_link"]


class OutlineWindow(ReadWindow):
    """``read(outline=true)`` of a notebook, a page of outline rows; "next" follows ``nextOffset``."""

    label = "outline"
    noun = "cells"
    can_end = False  # an outline pages forward by cells; it has no "last page" of its own

    def fetch(self, offset: int):
        args = {"file_path": self.path, "outline": True, "offset": offset}
        if self.limit is not None:
            args["limit"] = self.limit
        return self.view.call("read", **args)

    def show(self, result) -> None:
        value = result.value
        self.image, self.notebook = None, False
        self.offset = value["offset"]
        self.lines = value["entries"]
        self.total = value["totalCells"]
        self.last_cell = value["lastCell"]
        self.next_offset = value.get("nextOffset")
        self.headings = value["totalHeadings"]
        self._shown(result)

    @property
    def has_more(self) -> bool:
        return getattr(self, "next_offset", None) is not None

    def next_page(self) -> bool:
        if not self.has_more:
            return False
        here = self.offset
        if self.load(self.next_offset):
            self.history.append(here)
            return True
        return False

    @property
    def status(self) -> str:
        if not self.lines:
            return "no cells"
        return f"outline of cells {self.offset:,}-{self.last_cell:,} of {self.total:,}"

    def links(self) -> list:
        """Per row: the cells page that starts at the row's cell."""
        return [{"open": "cells", "path": self.path, "offset": entry["cell"]} for entry in self.lines]

    def rows(self) -> tuple[list[list], int | None, dict]:
        rows = [
            [f"#{entry['cell']}", outline_row(entry), "heading" if entry["kind"] == "heading" else "outline"]
            for entry in self.lines
        ]
        return rows, None, {"links": self.links(), "switch": "cells"}

    def state(self) -> dict:
        return {**super().state(), "unit": "cell"}


def window_for_link(view, target: dict) -> ReadWindow:
    """The window a notebook link opens: a cells page, one output read whole, or the outline."""
    path = target["path"]
    if target["open"] == "outline":
        return OutlineWindow(view, path, offset=max(1, int(target.get("offset") or 1)))
    if target["open"] == "output":
        return ReadWindow(view, path, extra={"cell_id": target["cell_id"], "output": int(target["output"])})
    return ReadWindow(view, path, offset=max(1, int(target["offset"])))
