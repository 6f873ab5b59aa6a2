"""Model text for ``list`` and ``list_dir``.

The footer of a listing always states the complete count and composition, so a page of a large
directory can never read as the whole of it; the next offset is spelled out until the last page.
"""

from __future__ import annotations

import json
import re

from ..text.quoting import quote_name
from .common import count, envelope, human_size, utc_time

__all__ = ["list_footer", "list_next_offset", "list_page_footer", "render_list", "render_list_dir"]

_MARK = {"directory": "/", "file": "", "other": "@"}


def _composition(counts: dict) -> str:
    text = f"{count(counts['directories'], 'directory', 'directories')}, {count(counts['files'], 'file')}"
    if counts.get("other", 0) > 0:
        text += f", {counts['other']} other"
    return text


def list_footer(offset: int, shown: int, total: int, counts: dict, hidden: int = 0) -> str:
    """The footer: the complete count and composition, and how many entries were left out.

    Hidden entries (and protected folders) are not listed, but they are counted, so a listing
    that left something out never reads as the whole folder.
    """
    left_out = f"; {count(hidden, 'hidden entry', 'hidden entries')} not shown" if hidden else ""
    if total == 0:
        return f"(Empty directory{left_out})"
    if offset == 1 and shown == total:
        return f"({count(total, 'entry', 'entries')}: {_composition(counts)}{left_out})"
    last = offset + shown - 1
    order = "Directories first, then files, then other, each alphabetical."
    tail = "End of listing." if last >= total else f"Use offset={last + 1} to continue."
    return f"(Showing entries {offset}-{last} of {total}: {_composition(counts)}{left_out}. {order} {tail})"


def list_page_footer(value: dict) -> str:
    """``list_footer`` of a ``list`` value (its ``footer``)."""
    return list_footer(
        value["offset"], len(value["entries"]), value["totalEntries"], value["counts"], value.get("hiddenEntries", 0)
    )


def list_next_offset(value: dict) -> int | None:
    """The offset the footer names for the next page (its ``nextOffset``); None on the last page."""
    after = value["offset"] + len(value["entries"])
    return after if after <= value["totalEntries"] else None


# With details, a file's row ends with this; a name that holds it is quoted, so a bare name
# cannot pass for a row with details of its own.
_DETAILS = "  ("


def _with_details(entry: dict) -> str:
    """``name  (1.2 KiB, 1234 bytes, 2026-11-30 14:02:11 UTC)`` for a file (``(7 bytes, …)`` under
    1 KiB); other rows as ever."""
    name = entry["name"]
    if entry["type"] != "file":
        return quote_name(name) + _MARK[entry["type"]]
    shown = quote_name(name, force=_DETAILS in name)
    size, mtime = entry.get("size"), entry.get("mtime")
    if size is None or mtime is None:
        return f"{shown}  (size and time unknown)"
    exact = count(size, "byte")
    return f"{shown}  ({exact if size < 1024 else human_size(size) + ', ' + exact}, {utc_time(mtime)})"


def render_list(value: dict) -> str:
    """``value`` is the canonical ``list`` value (path, offset, entries, totalEntries, counts);
    with ``details`` each file row ends with its size and modification time."""
    if value.get("details"):
        lines = [_with_details(e) for e in value["entries"]]
    else:
        lines = [quote_name(e["name"]) + _MARK[e["type"]] for e in value["entries"]]
    return envelope(value["path"], "directory", lines, list_page_footer(value))


# What json.dumps(ensure_ascii=False) leaves raw but a name must not show raw (see quoting.py).
_RAW_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


_PAGE_KEYS = ("nextOffset", "footer")


def render_list_dir(value: dict) -> str:
    """``list_dir`` answers with its JSON value as text, as the system it mirrors does.

    Like every name the tools print, no line separator, bidirectional control or undecodable
    byte appears raw: each is a JSON ``\\uXXXX`` escape, so the text decodes to the same names.
    """
    # what every value gains after rendering (``ToolSpec.page``) is not part of this JSON
    shown = {k: v for k, v in value.items() if k not in _PAGE_KEYS}
    text = json.dumps(shown, ensure_ascii=False).replace("</", "<\\/")
    return _RAW_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
