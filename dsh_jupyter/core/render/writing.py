"""Model text for ``write``, ``edit`` and ``move``: one sentence saying what changed."""

from __future__ import annotations

from ..text.quoting import quote_name

__all__ = ["render_edit", "render_move", "render_write"]


_LIVE = " The change went to the notebook open in Jupyter, which saves it."


def render_write(value: dict) -> str:
    status = "Created file" if value["operation"] == "create" else "Updated file"
    if value.get("live"):
        status += "." + _LIVE
    return f"<path>{quote_name(value['path'])}</path>\n<type>file</type>\n<content>\n{status}\n</content>"


def render_edit(value: dict) -> str:
    path = quote_name(value["path"])
    live = _LIVE if value.get("live") else ""
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
