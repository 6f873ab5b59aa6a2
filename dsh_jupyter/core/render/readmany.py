"""Model text for ``read`` of several files (``file_paths``): one envelope per file, in order.

Why it exists: reading five small files should be one call, not five round trips, and must still
read as five reads: each file answers exactly the envelope a read of it alone answers (its own
footer says which lines it shows), a file that could not be read answers its error in place of its
envelope without failing the others, and when the answer's byte bound left files unread, a last
footer names them, so the answer never passes for all of them.

What it must never do: touch the filesystem, or name a path except through ``quote_name``.
"""

from __future__ import annotations

from ..text.quoting import in_message, quote_name
from .common import count

__all__ = ["many_page_footer", "render_file_error", "render_many"]


def render_file_error(entry: dict) -> str:
    """``<path>missing.txt</path>`` then ``<error code="FS_NOT_FOUND">the message</error>``."""
    error = entry["error"]
    return f'<path>{quote_name(entry["path"])}</path>\n<error code="{error["code"]}">{error["message"]}</error>'


def many_page_footer(value: dict) -> str:
    """What the byte bound left unread, named; "" when every file was read."""
    unread = value["notRead"]
    if not unread:
        return ""
    read = value["totalFiles"] - len(unread)
    names = ", ".join(in_message(p) for p in unread)
    return (
        f"({read} of {count(value['totalFiles'], 'file')} answered above; not read, to stay within read_max_bytes "
        f"({value['maxBytes']} bytes for the whole answer): {names}. Read them in another call.)"
    )


def render_many(value: dict, render_one) -> str:
    """``value``: files (each a read's value, or ``{path, error}``), totalFiles, notRead, maxBytes."""
    parts = [render_file_error(f) if "error" in f else render_one(f) for f in value["files"]]
    footer = many_page_footer(value)
    if footer:
        parts.append(footer)
    return "\n\n".join(parts)
