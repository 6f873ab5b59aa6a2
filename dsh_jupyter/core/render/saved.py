"""Words about saved results (spills) offered as resources: a page's description, a bad address.

Why it exists: an MCP client lists a session's saved results as resources and reads them in
pages; what it shows of them (the page template's description) and the errors only a resource
address can have (one this server never hands out, a bad window in its query) are
model-visible, so they are made here like every other text.

What it must never do: touch the filesystem, or quote an address except through ``in_message``.
"""

from __future__ import annotations

from ..text.quoting import in_message

__all__ = ["PAGE_TEMPLATE_DESCRIPTION", "SAVED_FORM", "render_bad_resource_uri"]

SAVED_FORM = "dsh-jupyter://spill/NAME?offset=N&limit=M"
PAGE_TEMPLATE_DESCRIPTION = (
    "One page of a saved full result, in the line window read gives: offset is the first line (1-based, "
    "negative counts from the end), limit the most lines."
)


def render_bad_resource_uri(uri: str, key: str | None = None, repeated: bool = False) -> str:
    """Why ``uri`` names no page of a saved result: not such an address (``key`` None), an unknown or
    repeated query parameter, or a window parameter that is not a whole number."""
    if key is None:
        why = "not a saved result's address"
    elif key not in ("offset", "limit") or repeated:
        why = f"unknown or repeated query parameter {in_message(key)}"
    else:
        why = f"{key} must be a whole number"
    return f"cannot read {in_message(uri)}: {why} ({SAVED_FORM})"
