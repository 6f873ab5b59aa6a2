"""A notebook's outline: its markdown headings and its code cells' first lines, paged by cells.

Why it exists: a notebook of hundreds of cells is navigated by its headings; ``read`` with
``outline=true`` answers, for cells ``offset`` .. ``offset + limit - 1``, one entry per markdown
heading (ATX ``#`` .. ``######`` and setext ``===``/``---`` underlines; not inside a fenced code
block) with its level, the cell it is in and the cells its section holds (up to the next heading
of the same or a higher level, subsections included), and one per code cell with its first
non-blank line, cut at ``OUTLINE_LINE_CHARS``. Markdown cells without headings and raw cells have
no entry. The page stops between cells at ``read_max_bytes`` (a single cell with more headings
than fit shows as many as fit), so a 5,000-cell notebook's outline comes in pages too.

What it must never do: read anything (it is given the parsed cells), or pass a page off as the
whole (``capped`` and ``lastCell`` say where it stopped).
"""

from __future__ import annotations

import re

from ...errors import Codes, ToolError
from ...notebooks.format import Notebook
from ...render.outline import outline_row
from ...settings import Settings
from ...text.quoting import in_message

__all__ = ["OUTLINE_LINE_CHARS", "headings", "outline_page"]

OUTLINE_LINE_CHARS = 120  # characters kept of a code cell's first line (then "...")

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def headings(source: str) -> list[tuple[int, str]]:
    """The ``(level, text)`` of each markdown heading of ``source``, in order."""
    found: list[tuple[int, str]] = []
    fence = ""
    previous = ""  # the line before, when it could be a setext heading's text
    for line in source.split("\n"):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
            previous = ""
            continue
        if opened:
            fence, previous = opened.group(1), ""
            continue
        atx = _ATX.match(line)
        if atx:
            text = (atx.group(2) or "").strip()
            if text:
                found.append((len(atx.group(1)), text))
            previous = ""
            continue
        setext = _SETEXT.match(line)
        if setext and previous:
            found.append((1 if setext.group(1)[0] == "=" else 2, previous))
            previous = ""
            continue
        previous = line.strip() if line.strip() and not line.startswith(("    ", "\t")) else ""
    return found


def _first_line(source: str) -> str:
    for line in source.split("\n"):
        if line.strip():
            line = line.rstrip()
            return line if len(line) <= OUTLINE_LINE_CHARS else line[:OUTLINE_LINE_CHARS] + "..."
    return ""


def _entries(nb: Notebook) -> list[dict]:
    """Every entry of the notebook's outline, sections counted over the whole notebook."""
    out: list[dict] = []
    for cell in nb.cells:
        if cell.type == "markdown":
            for level, text in headings(cell.source):
                out.append({"cell": cell.index, "id": cell.id, "kind": "heading", "level": level, "text": text})
        elif cell.type == "code":
            out.append({"cell": cell.index, "id": cell.id, "kind": "code", "text": _first_line(cell.source)})
    open_: list[dict] = []  # the headings whose sections have not ended yet, levels rising
    for entry in out:
        if entry["kind"] == "heading":
            while open_ and open_[-1]["level"] >= entry["level"]:
                ended = open_.pop()
                ended["cells"] = max(1, entry["cell"] - ended["cell"])
            open_.append(entry)
    for entry in open_:
        entry["cells"] = len(nb.cells) + 1 - entry["cell"]
    return out


def outline_page(nb: Notebook, offset: int, limit: int, s: Settings, shown: str) -> dict:
    """The outline of cells ``offset`` .. ``offset + limit - 1`` (``offset`` may count back from the
    end), as many of them as fit in ``read_max_bytes``."""
    total = len(nb.cells)
    if offset < 0:
        offset = max(1, total + offset + 1)
    if offset > 1 and offset > total:
        unit = "cell" if total == 1 else "cells"
        raise ToolError(
            Codes.ARGUMENT_INVALID, f"offset {offset} is out of range for {in_message(shown)} ({total} {unit})"
        )
    entries = _entries(nb)
    last = min(total, offset + limit - 1)
    page: list[dict] = []
    used, capped = 0, False
    by_cell: dict[int, list[dict]] = {}
    for entry in entries:
        if offset <= entry["cell"] <= last:
            by_cell.setdefault(entry["cell"], []).append(entry)
    for index in range(offset, last + 1):
        rows = by_cell.get(index, [])
        cost = sum(len(outline_row(e).encode("utf-8", "surrogatepass")) + 1 for e in rows)
        if used + cost > s.read_max_bytes:
            capped = True
            if index == offset:  # one cell alone is over the cap: as many of its headings as fit
                for entry in rows:
                    step = len(outline_row(entry).encode("utf-8", "surrogatepass")) + 1
                    if page and used + step > s.read_max_bytes:
                        break
                    page.append(entry)
                    used += step
                last = index
            else:
                last = index - 1
            break
        page.extend(rows)
        used += cost
    return {
        "path": shown,
        "type": "outline",
        "offset": offset,
        "lastCell": last,
        "entries": page,
        "totalCells": total,
        "totalHeadings": sum(1 for e in entries if e["kind"] == "heading"),
        "capped": capped,
    }
