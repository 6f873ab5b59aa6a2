"""Model text for ``write``, ``edit`` and ``move``: one sentence saying what changed; an edit adds its diff."""

from __future__ import annotations

from ..text.quoting import quote_name
from .common import count

__all__ = ["render_edit", "render_move", "render_write"]


_LIVE = " The change went to the notebook open in Jupyter, which saves it."


def render_write(value: dict) -> str:
    status = "Created file" if value["operation"] == "create" else "Updated file"
    if value.get("live"):
        status += "." + _LIVE
    return f"<path>{quote_name(value['path'])}</path>\n<type>file</type>\n<content>\n{status}\n</content>"


def render_edit(value: dict) -> str:
    """What the edit changed (or, in a dry run, would change), then its unified diff."""
    path = quote_name(value["path"])
    live = _LIVE if value.get("live") else ""
    n = value["replacements"]
    if value.get("dryRun"):
        what = f"The {value['edits']} edits" if "edits" in value else "The edit"
        head = f"Dry run: {path} was not changed. {what} would make {count(n, 'replacement')}:"
    elif "edits" in value:
        head = (
            f"The file {path} has been updated successfully: {count(value['edits'], 'edit')}, "
            f"{count(n, 'replacement')}.{live}"
        )
    elif value.get("replaceAll"):
        head = f"The file {path} has been updated. All occurrences were successfully replaced.{live}"
    else:
        head = f"The file {path} has been updated successfully.{live}"
    if not value["diff"]:  # an edit whose steps undid each other
        return f"{head}\n(The text is the same as before: the diff is empty.)"
    shown = value["diff"].count("\n") + 1
    footer = f"\n(Showing {shown} of {value['diffLines']} diff lines.)" if shown < value["diffLines"] else ""
    return f"{head}\n{value['diff']}{footer}"
    if value.get("replaceAll"):
        return f"The file {path} has been updated. All occurrences were successfully replaced.{live}"
    return f"The file {path} has been updated successfully.{live}"


def render_move(value: dict) -> str:
    kind = {"file": "file ", "directory": "directory "}.get(value["type"], "")
    text = f"Moved {kind}{quote_name(value['source'])} to {quote_name(value['destination'])}"
    if value.get("replaced"):
        return text + ", replacing the file that was there."
    if value.get("createdParents"):
        return text + ", creating the missing parent directories."
    return text + "."
