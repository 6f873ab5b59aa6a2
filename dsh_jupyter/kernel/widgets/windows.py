"""Read windows: one page of a file (or of a saved full result), paged the way a reader expects.

Why it exists: a file opened from a listing, a glob path or a grep match is shown as ``read``
returns it, one window at a time, with the model's footer ("Showing lines A-B of T…"). The same
window is the body of ``%dsh read`` and the panel a listing or search opens in place, so it is
plain Python state, not a widget: its owner syncs ``state()`` into its ``panel`` trait.

A window's length is capped in lines *and* bytes, so "previous" cannot be computed from the
offset: a window of 2000 lines may stop at line 700 when lines are long. "next" therefore
remembers where it came from and "previous" goes back there, so previous exactly undoes next.
Only after a jump (or at the first window) does "previous" step back by the line limit.

An image file has no lines: its window carries the picture (the result's image, base64) and its
size, and the footer says what it is, as the model's text does.

What it must never do: load more than one window per call (each page is one ``read`` call with
offset/limit), or show lines without the footer that says which lines they are.
"""

from __future__ import annotations

import json
import os
import re

from ...core.errors import ToolError
from ...core.settings import ROOT_ENV
from ...core.text.quoting import quote_name
from .notebookrows import notebook_rows_and_outputs

__all__ = ["CONTEXT_LINES", "SPILL_PAGE_LINES", "ReadWindow", "SpillWindow", "contents_path"]

CONTEXT_LINES = 3  # a window opened at a line starts this many lines above it
SPILL_PAGE_LINES = 200  # lines per spill-viewer page (a saved glob result: one path per line)


def contents_path(workspace, session: str, path: str) -> str:
    """``path`` relative to the Jupyter server's root, for "open in the editor"; "" if unknown.

    Only a kernel started by a server running the dsh extension knows that root (``DSH_ROOT``);
    a saved result outside the workspace has no editor path.
    """
    server_root = os.environ.get(ROOT_ENV)
    if not server_root:
        return ""
    try:
        target = workspace.resolver.resolve(workspace.session_cwd(session), path, verb="read")
    except ToolError:
        return ""
    if target.in_spill or not target.exists:
        return ""
    rel = os.path.relpath(target.real, os.path.realpath(server_root))
    return "" if rel == ".." or rel.startswith(".." + os.sep) else rel.replace(os.sep, "/")


class ReadWindow:
    """``read`` as a window with previous / next / jump; see the module docstring."""

    kind = "read"
    label = "read"
    noun = "lines"

    def __init__(
        self,
        view,
        path: str,
        offset: int = 1,
        limit: int | None = None,
        highlight: int = 0,
        result=None,
        cell: int = 0,
        span: list[int] | None = None,
        extra: dict | None = None,
    ) -> None:
        self.view = view  # the owning DshView: its session, workspace and call()
        self.path = path
        self.extra = dict(extra or {})  # read arguments every page repeats (a notebook output's cell_id, output)
        self.limit = limit
        self.highlight = highlight  # a line to mark (the grep match that opened it), 0 for none
        self.span = span  # [start, end] characters of that line: the match, for "open in editor"; None for none
        self.cell = cell  # in a notebook: the cell of that line (a grep match in a cell), 0 for none
        self.notebook = False  # whether the page is a notebook's cells (read's cell view)
        self.image: dict | None = None  # an image file: {mimeType, data (base64), width, height, summary}
        self.offset = offset
        self.lines: list[dict] = []
        self.total: int | None = None
        self.footer = ""
        self.model_text = ""
        self.error = ""
        self.history: list[int] = []  # offsets "next" came from, so "previous" goes back exactly
        self.listener = None  # called after every change (the owner re-syncs its panel)
        self.editor_path = ""
        self.back: ReadWindow | None = None  # the window this one was opened from (a saved result), for "back"
        if result is not None:
            self.show(result)
        else:
            self.load(offset)

    # -- paging ----------------------------------------------------------------------------------

    def fetch(self, offset: int):
        args = {"file_path": self.path, "offset": offset, **self.extra}
        if self.limit is not None:
            args["limit"] = self.limit
        return self.view.call("read", **args)

    def load(self, offset: int) -> bool:
        """Fetch one window and show it; False (window kept, error shown) on a failed call."""
        result = self.fetch(offset)
        if result.is_error:
            self.error = result.text
            self._changed()
            return False
        self.show(result)
        return True

    def step(self) -> int:
        return self.limit or self.view.workspace.settings.read_limit

    @property
    def has_more(self) -> bool:
        last = self.offset + len(self.lines) - 1
        if self.offset < 0:  # numbered back from the end: -1 is the last line
            return bool(self.lines) and last < -1
        return bool(self.lines) and (self.total is None or last < self.total)

    can_end = True  # read takes offset=-N: "end" shows the last page (a saved result pages otherwise)

    def last_page(self) -> bool:
        """The file's last ``step()`` lines (read's negative offset: no count of a big file); like a
        jump, it keeps no history, so "previous" shows the lines before them."""
        if self.load(-self.step()):
            self.history = []
            return True
        return False

    def next_page(self) -> bool:
        if not self.has_more:
            return False
        here = self.offset
        if self.load(self.offset + len(self.lines)):
            self.history.append(here)
            return True
        return False

    def previous_page(self) -> bool:
        if self.offset == 1:
            return False
        if self.history:
            back = self.history[-1]
            if self.load(back):
                self.history.pop()
                return True
            return False
        if self.offset < 0:  # lines numbered from the end: the ones before them
            return self.load(self.offset - self.step())
        return self.load(max(1, self.offset - self.step()))

    def jump(self, line: int) -> bool:
        """Show the window starting at ``line``, or at the ``-line``-th last line when negative
        (jump history is not kept: previous steps back)."""
        if self.load(line if line < 0 else max(1, line)):
            self.history = []
            return True
        return False

    # -- state -----------------------------------------------------------------------------------

    def show(self, result) -> None:
        value = result.value
        self.image = _image_state(result)
        if self.image is not None:  # an image has no lines: the window shows the picture
            self.offset, self.lines, self.total, self.notebook = 1, [], None, False
            self._shown(result)
            return
        self.offset = value["offset"]
        # a notebook's page is cells: paging counts cells as read's offset/limit do
        self.notebook = value.get("type") == "notebook"
        self.lines = value["cells"] if self.notebook else value["lines"]
        self.total = value["totalCells"] if self.notebook else value["totalLines"]
        self._shown(result)

    def _shown(self, result) -> None:
        self.model_text = result.text
        self.footer = result.footer()
        self.error = ""
        if not self.editor_path:
            self.editor_path = self.editor_path_for(result.value["path"])
        self._changed()

    def editor_path_for(self, display: str) -> str:
        return contents_path(self.view.workspace, self.view.session, display)

    @property
    def status(self) -> str:
        noun = "cells" if self.notebook else self.noun
        if self.image is not None:
            return self.image["summary"]
        if not self.lines:
            return f"no {noun}"
        last = self.offset + len(self.lines) - 1
        if self.offset < 0:  # the end of a big file, which was not counted
            return f"{noun} {self.offset:,} to {last:,}, counted from the end"
        # a streamed window of a big file ends before the file does, whose lines were not counted
        of = f" of at least {last + 1:,}" if self.total is None else f" of {self.total:,}"
        return f"{noun} {self.offset:,}-{last:,}{of}"

    def state(self) -> dict:
        """Plain data for the front end: one window of ``[number, text]`` lines and its footer (for
        a notebook, ``[number, text, kind]`` rows of cells, and ``hitRow``: the marked row)."""
        rows, hit_row, extra = self.rows()
        return {
            **extra,
            "kind": self.kind,
            "title": self.label,
            "subject": quote_name(self.path),
            "path": self.path if self.can_end else "",  # a file's path for "copy path" (a saved result has none)
            "lines": rows,
            "hitRow": hit_row,
            "unit": "cell" if self.notebook else "line",
            "highlight": 0 if self.notebook else self.highlight,
            "highlightSpan": None if self.notebook or not self.highlight else self.span,
            "status": self.status,
            "footer": self.footer,
            "error": self.error,
            "prev": self.offset != 1,
            "next": self.has_more,
            "end": self.can_end and self.has_more,
            "offset": self.offset,
            "editor": self.editor_path,
            "back": self.back.label if self.back is not None else "",
            "image": self.image,
        }

    def rows(self) -> tuple[list[list], int | None, dict]:
        """The rows the front end draws, the marked row, and what else the page offers (a
        notebook's ``links`` per row and its ``switch`` to the outline)."""
        if not self.notebook:
            return [[line["number"], line["text"]] for line in self.lines], None, {}
        rows, hit_row, outputs = notebook_rows_and_outputs(self.lines, self.cell, self.highlight)
        # each output's header row opens that output read whole; "outline" switches views
        links = [
            None if out is None else {"open": "output", "path": self.path, "cell_id": out[0], "output": out[1]}
            for out in outputs
        ]
        return rows, hit_row, {"links": links, "switch": "outline"}

    def links(self) -> list:
        """Per shown row, what a click on it opens (``base.DshView._window_action``), or None."""
        return self.rows()[2].get("links") or [None] * len(self.lines)

    def _changed(self) -> None:
        if self.listener is not None:
            self.listener()


def _image_state(result) -> dict | None:
    """What the front end draws for an image file's read: its bytes as base64 and its size."""
    value = result.value
    if value.get("type") != "image" or not result.images:
        return None
    image = result.images[0]
    return {
        "mimeType": image.mime,
        "data": image.base64(),
        "width": value["width"],
        "height": value["height"],
        "summary": f"{value['format']} image, {value['width']}x{value['height']} pixels",
    }


_GREP_LINE = re.compile(r"Line (\d+): ")
# a match in a notebook cell, in its source or (group 2) in the text of one of its outputs
_GREP_CELL_LINE = re.compile(r'Cell (\d+)(?: \(id="[^"]*"\))?(, output \d+)?, line (\d+): ')


def unquote(name: str) -> str:
    """A name as ``quote_name`` printed it, back to the name (a JSON string when it was quoted)."""
    if len(name) >= 2 and name.startswith('"') and name.endswith('"'):
        try:
            return json.loads(name)
        except ValueError:
            return name
    return name


class SpillWindow(ReadWindow):
    """A saved full glob/grep result, paged with ``Workspace.spill_page`` (owner session only).

    Its paths are links: every line of a glob result, and in a grep result each file's line and
    each ``Line N:`` under it (a page that starts inside a file knows that file only when it was
    reached with "next").
    """

    kind = "spill"
    label = "saved result"
    can_end = False

    def __init__(
        self, view, locator: str, offset: int = 1, limit: int | None = SPILL_PAGE_LINES, name: str = "", tool: str = ""
    ) -> None:
        self.locator = locator
        self.name = name  # the query that made it ("grep TODO --include *.py")
        self.tool = tool  # "glob" or "grep": how its lines read
        self._carry: dict[int, str] = {}  # page offset -> the grep file that page starts inside
        super().__init__(view, locator, offset=offset, limit=limit)

    def next_page(self) -> bool:
        links = self.links()
        current = next((link[0] for link in reversed(links) if link), None)
        here_next = self.offset + len(self.lines)
        if current is not None and self.tool == "grep":
            self._carry[here_next] = current
        return super().next_page()

    def links(self) -> list:
        """Per shown line: ``[path, line]`` it opens (line 0: the file's start), ``[path, line, cell]``
        for a match in a notebook cell (line 0 for a line of an output: the cell, nothing marked),
        or None."""
        out: list = []
        if self.tool == "glob":
            return [[unquote(line["text"]), 0] if line["text"] else None for line in self.lines]
        if self.tool != "grep":
            return [None] * len(self.lines)
        current = self._carry.get(self.offset)
        for line in self.lines:
            text = line["text"]
            match = _GREP_LINE.match(text)
            in_cell = None if match else _GREP_CELL_LINE.match(text)
            if match:
                out.append([current, int(match.group(1))] if current is not None else None)
            elif in_cell:
                line_in = 0 if in_cell.group(2) else int(in_cell.group(3))
                out.append([current, line_in, int(in_cell.group(1))] if current is not None else None)
            elif not text or (line["number"] == 1 and text.startswith(("Found ", "No matches"))):
                out.append(None)
            else:
                current = unquote(text)
                out.append([current, 0])
        return out

    def fetch(self, offset: int):
        return self.view.workspace.spill_page(
            self.locator, session=self.view.session, offset=offset, limit=self.limit, surface="widget"
        )

    def editor_path_for(self, display: str) -> str:
        return ""  # saved results live outside the workspace

    def state(self) -> dict:
        return {**super().state(), "name": self.name, "links": self.links()}
