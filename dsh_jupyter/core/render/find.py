"""Model text for ``find``: the page of paths, best first, and a footer that names the total.

Why it exists: a fuzzy find answers a ranking, and a page of it must never read as every match;
the footer says how many paths match in all, which ranks the page holds and how to go on. What
was left out (folders rg could not read, files the ignore rules name) is said on every page.

What it must never do: touch the filesystem, or print a path except through ``quote_name``.
"""

from __future__ import annotations

from ..text.quoting import in_message, quote_name
from .common import count

__all__ = ["find_next_offset", "find_page_footer", "render_find"]

IGNORED = "(Files named by .gitignore or .ignore rules were left out (setting respect_ignore_files).)"


def find_next_offset(value: dict) -> int | None:
    """The offset of the next page; None after the last matching path."""
    last = value["offset"] + len(value["paths"]) - 1
    return last + 1 if value["paths"] and last < value["totalPaths"] else None


def _notes(value: dict) -> list[str]:
    notes = []
    unreadable = value.get("unreadable", 0)
    if unreadable:
        verb = "was" if unreadable == 1 else "were"
        notes.append(f"({count(unreadable, 'folder')} could not be read and {verb} left out.)")
    if value.get("ignoreFiles"):
        notes.append(IGNORED)
    total, shown, first = value["totalPaths"], len(value["paths"]), value["offset"]
    query = in_message(value["query"])
    if not total:
        return notes
    if first == 1 and shown == total:
        notes.append(f"({count(total, 'path')} {'matches' if total == 1 else 'match'} {query}, best first.)")
        return notes
    last = first + shown - 1
    more = f" Use offset={last + 1} to continue." if last < total else ""
    notes.append(f"(Showing paths {first}-{last} of {total} matching {query}, best first.{more})")
    return notes


def find_page_footer(value: dict) -> str:
    """The footer of a find page (its ``footer``): what was left out, then the total and the ranks shown."""
    return "\n\n".join(_notes(value))


def render_find(value: dict) -> str:
    """``value``: query, root, paths (this page, best first), totalPaths, offset (``tools.find``)."""
    lines = [quote_name(p) for p in value["paths"]] or [f"No paths match {in_message(value['query'])}"]
    footer = find_page_footer(value)
    return "\n".join(lines) + (f"\n\n{footer}" if footer else "")
