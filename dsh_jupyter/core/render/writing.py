"""Model text for ``write``, ``edit`` and ``move``: one sentence saying what changed; an edit adds its diff."""

from __future__ import annotations

from ..text.quoting import quote_name
from .common import count

__all__ = ["render_edit", "render_move", "render_write", "where_changed"]


_LIVE = " The change went to the notebook open in Jupyter, which saves it."
# A person has the file open in JupyterLab (value["open"], tools.opened): where the change went.
_OPEN = {
    "shared": " The change went to the file open in JupyterLab, which saves it.",
    "tab": " The change went to the file open in JupyterLab, which saved it.",
}
_MERGED = " The person's changes since this session read it were kept."
_MOVED_OPEN = " It was open in JupyterLab, and its tab follows it."


def where_changed(value: dict) -> str:
    """The sentence on where a change went: an open notebook's document, an open file, or nothing."""
    if value.get("live"):
        said = _LIVE
    else:
        said = _OPEN.get(value.get("open", ""), "")
    return said + (_MERGED if value.get("merged") else "")


def render_write(value: dict) -> str:
    status = "Created file" if value["operation"] == "create" else "Updated file"
    where = where_changed(value)
    if where:
        status += "." + where
    return f"<path>{quote_name(value['path'])}</path>\n<type>file</type>\n<content>\n{status}\n</content>"


def render_edit(value: dict) -> str:
    """What the edit changed (or, in a dry run, would change), then its unified diff."""
    path = quote_name(value["path"])
    live = where_changed(value)
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


def render_move(value: dict) -> str:
    kind = {"file": "file ", "directory": "directory "}.get(value["type"], "")
    text = f"Moved {kind}{quote_name(value['source'])} to {quote_name(value['destination'])}"
    if value.get("replaced"):
        text += ", replacing the file that was there."
    elif value.get("createdParents"):
        text += ", creating the missing parent directories."
    else:
        text += "."
    return text + (_MOVED_OPEN if value.get("open") else "")
