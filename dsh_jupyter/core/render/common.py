"""Small shared pieces of model text: counted nouns and the path/type/content envelope."""

from __future__ import annotations

import time
from collections.abc import Iterable

from ..text.quoting import quote_name

__all__ = ["READ_OPEN_NOTES", "count", "envelope", "human_size", "utc_time"]

# What a read says when a person has the file open in JupyterLab (value["open"], tools.opened), one
# sentence before the footer; a shared notebook keeps its own (render.notebook.LIVE_NOTE).
READ_OPEN_NOTES = {
    "shared": "(This file is open in JupyterLab: shown as its live document, unsaved changes included.)",
    "tab": "(This file is open in JupyterLab, with no unsaved changes.)",
    "unsaved": "(This file is open in JupyterLab with unsaved changes, which this read does not show; a change to "
    "it is refused until they are saved.)",
}


def count(n: int, singular: str, plural: str | None = None) -> str:
    """``1 entry``, ``2 entries``: the singular only when the count is exactly one."""
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"


def envelope(display: str, kind: str, lines: Iterable[str], footer: str) -> str:
    """``<path>P</path>``, ``<type>K</type>``, the lines, a blank line, the footer, ``</content>``.

    With no lines (an empty directory, an empty file) the footer follows ``<content>`` directly,
    as the reference prints it: the blank line separates lines from the footer, and there are none.
    """
    rows = lines if isinstance(lines, list) else list(lines)
    body = "\n".join(rows) + "\n\n" if rows else ""
    return f"<path>{quote_name(display)}</path>\n<type>{kind}</type>\n<content>\n{body}{footer}\n</content>"


def human_size(n: int) -> str:
    """Bytes as a person reads them: ``532 B``, ``1.2 KiB``, ``16.4 MiB`` (binary units, one decimal)."""
    value, unit = float(n), 0
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
    while value >= 1024 and unit < len(units) - 1:
        value /= 1024
        unit += 1
    return f"{n} B" if unit == 0 else f"{value:.1f} {units[unit]}"


def utc_time(seconds: float) -> str:
    """A modification time to the second, in UTC: ``2026-11-30 14:02:11 UTC``."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))
