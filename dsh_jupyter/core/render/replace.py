"""Model text for ``replace``: a preview (each occurrence with its id, place, line before and
after) or what an applied change did.

Why it exists: a preview is what the model chooses from, so every occurrence shows the id it
passes back, where it is (``Line L``, or ``Cell C, line L`` in a notebook) and the line as it
is (``-``) and as it would be (``+``); the footer names the exact totals, the page shown, where
the whole preview is saved and how to apply it. An applied change names every file it changed,
and how, for a file open in JupyterLab.

What it must never do: touch the filesystem, print a path except through ``quote_name``, or let a
page read as the whole preview when it is not.
"""

from __future__ import annotations

from ..text.quoting import in_message, quote_name
from .common import count

__all__ = ["preview_body", "render_replace", "replace_next_offset", "replace_page_footer"]

IGNORED = "(Files named by .gitignore or .ignore rules were left out (setting respect_ignore_files).)"


def replace_next_offset(value: dict) -> int | None:
    """The offset of the next preview page; None after the last occurrence (and for an applied change)."""
    if value.get("applied"):
        return None
    last = value["offset"] + len(value["occurrences"]) - 1
    return last + 1 if value["occurrences"] and last < value["totalOccurrences"] else None


def _place(row: dict) -> str:
    if row.get("cell") is not None:
        return f"Cell {row['cell']}, line {row['line']}"
    return f"Line {row['line']}"


def preview_body(rows: list[dict]) -> list[str]:
    """The rows grouped by file: ``path:``, then each occurrence's place and id, its line before
    and after."""
    lines: list[str] = []
    last = None
    for row in rows:
        if row["path"] != last:
            last = row["path"]
            lines.append(f"{quote_name(row['path'])}:")
        lines.append(f"  {_place(row)} [{row['id']}]")
        lines.append(f"  - {row['before']}")
        lines.append(f"  + {row['after']}")
    return lines


def _notes(value: dict) -> list[str]:
    notes = []
    unreadable = value.get("unreadable", 0)
    if unreadable:
        verb = "was" if unreadable == 1 else "were"
        notes.append(f"({count(unreadable, 'file')} could not be read and {verb} left out.)")
    too_large = value.get("tooLarge", 0)
    if too_large:
        verb = "was" if too_large == 1 else "were"
        notes.append(
            f"({count(too_large, 'file')} larger than edit_max_bytes {verb} left out (setting edit_max_bytes).)"
        )
    if value.get("ignoreFiles"):
        notes.append(IGNORED)
    total, shown, first = value["totalOccurrences"], len(value["occurrences"]), value["offset"]
    if not total:
        return notes
    if shown < total:
        last = first + shown - 1
        more = "End of preview." if last >= total else f"Use offset={last + 1} to continue."
        notes.append(f"(Showing occurrences {first}-{last} of {total} in path order. {more})")
    if value.get("spill"):
        notes.append(
            f"(The whole preview is saved in {quote_name(value['spill'])}: read it with offset/limit or grep it.)"
        )
    notes.append(
        "(Nothing was changed. To apply, call replace again with the same arguments and occurrences: "
        f'a list of ids, or "all" with expected_count={total}.)'
    )
    return notes


def replace_page_footer(value: dict) -> str:
    """The footer of a replace answer (its ``footer``): what was left out, the page, how to apply."""
    if value.get("applied"):
        return ""
    return "\n\n".join(_notes(value))


LIVE_NOTES = {
    "shared": " (open in JupyterLab: changed in its live document, which JupyterLab saves)",
    "tab": " (open in JupyterLab: the tab took the change and saved it)",
}


def _changed_row(row: dict) -> str:
    """``path: N``, and how a file open in JupyterLab was changed (``LIVE_NOTES``)."""
    return f"{quote_name(row['path'])}: {row['replacements']}" + LIVE_NOTES.get(row.get("open") or "", "")


def render_replace(value: dict) -> str:
    """``value``: a preview (occurrences, totalOccurrences, files, offset) or an applied change
    (applied, replacements, changed) of ``tools.replace``."""
    if value.get("applied"):
        changed = value["changed"]
        head = (
            f"Replaced {count(value['replacements'], 'occurrence')} of {in_message(value['pattern'])} "
            f"in {count(len(changed), 'file')}:"
        )
        return "\n".join([head, *(_changed_row(row) for row in changed)])
    total = value["totalOccurrences"]
    if not total:
        lines = [f"No occurrences of {in_message(value['pattern'])} found"]
    else:
        lines = [
            f"Found {count(total, 'occurrence')} of {in_message(value['pattern'])} in {count(value['files'], 'file')}",
            "",
        ]
        lines += preview_body(value["occurrences"])
    for note in _notes(value):
        lines += ["", note]
    return "\n".join(lines)
