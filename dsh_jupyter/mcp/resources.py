"""A session's saved results (spills) as MCP resources, the same on both transports.

Why it exists: a capped glob or grep saves its whole result and names the file in its text; a
client that shows MCP resources (Claude Code, Codex, Gemini CLI) can then list them with their
size, open one, and follow the ``resource_link`` a capped answer carries beside that text. Each
saved result of the connection's dsh session is one resource, ``dsh-jupyter://spill/NAME`` (NAME
is the file's name, as the text shows it), read in pages with ``read``'s line window:
``dsh-jupyter://spill/NAME?offset=N&limit=M`` (both optional; without them, ``read``'s first
page). A page is exactly what ``read`` of the file answers, through ``Workspace.spill_page``: the
same visibility and ownership rules (another session's result is not found; one made where more
was shown is refused, ``FS_HIDDEN``), never a tool call, never a write. Results are plain dicts
(the stdio server writes them; the SDK server validates them into its models).

What it must never do: read a file other than through ``Workspace.spill_page`` (which refuses
anything but this session's own saved results), list a result withheld here (its label names a
pattern this surface hides), or write model-visible text of its own (``core.render``).
"""

from __future__ import annotations

import os
import posixpath
import re
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from ..core.errors import ToolError
from ..core.policy import Caller, CallRefused
from ..core.render.saved import PAGE_TEMPLATE_DESCRIPTION, render_bad_resource_uri
from ..core.result import Result
from ..core.state.spills import session_folder
from ..core.workspace import Workspace

__all__ = [
    "LINK_VERSIONS",
    "MIME_TYPE",
    "PAGE_META",
    "PREFIX",
    "ResourceError",
    "list_resources",
    "list_templates",
    "read_resource",
    "resource_link",
    "spill_uri",
]

PREFIX = "dsh-jupyter://spill/"
MIME_TYPE = "text/plain"
_WHOLE = re.compile(r"-?[0-9]{1,18}")
PAGE_META = "dsh-jupyter/page"  # a read's ``_meta`` key: {offset, limit, nextOffset}
# The protocol revisions that know ``resource_link`` content (older clients' schemas refuse it).
LINK_VERSIONS = frozenset({"2025-06-18", "2025-11-25", "2026-07-28"})
# JSON-RPC error codes: MCP's "resource not found", invalid params, and this server's refusal.
NOT_FOUND, INVALID_PARAMS, FORBIDDEN = -32002, -32602, -32003
_RPC = {"FS_NOT_FOUND": NOT_FOUND, "FS_HIDDEN": FORBIDDEN, "ARGUMENT_INVALID": INVALID_PARAMS}


class ResourceError(Exception):
    """A read that cannot be answered: its JSON-RPC ``rpc`` code, the dsh ``code`` and one sentence."""

    def __init__(self, rpc: int, code: str, message: str) -> None:
        super().__init__(message)
        self.rpc, self.code, self.message = rpc, code, message

    def error(self) -> dict:
        return {"code": self.rpc, "message": self.message, "data": {"code": self.code}}


def spill_uri(locator: str) -> str:
    """The resource address of a saved result named ``locator`` (as the text shows it)."""
    return PREFIX + quote(posixpath.basename(locator), safe="")


def resource_link(result: Result) -> dict | None:
    """The ``resource_link`` content item for a capped answer's saved result, or None."""
    locator = None if result.is_error else result.value.get("spill")
    if not isinstance(locator, str):
        return None
    return {
        "type": "resource_link",
        "uri": spill_uri(locator),
        "name": posixpath.basename(locator),
        "title": f"{result.tool} {result.value.get('pattern', '')}".rstrip(),
        "mimeType": MIME_TYPE,
    }


def list_resources(workspace: Workspace, session: str | None, caller: Caller) -> list[dict]:
    """The session's saved results that may be read here, oldest first (none: an unknown session)."""
    try:
        rows = workspace.spill_list(session, None, caller) or []
    except (ToolError, CallRefused):
        return []
    return [
        {
            "uri": spill_uri(row["locator"]),
            "name": posixpath.basename(row["locator"]),
            "title": row["label"],
            "mimeType": MIME_TYPE,
            "size": row["size"],
        }
        for row in rows
        if not row.get("withheld")
    ]


def list_templates() -> list[dict]:
    """The one template: a page of a saved result."""
    return [
        {
            "uriTemplate": PREFIX + "{name}{?offset,limit}",
            "name": "saved-result-page",
            "title": "Saved result page",
            "description": PAGE_TEMPLATE_DESCRIPTION,
            "mimeType": MIME_TYPE,
        }
    ]


def _parse(uri: str) -> tuple[str, dict[str, int]]:
    """(file name, {offset, limit}) of a saved result's address; ``ResourceError`` for any other."""
    parts = urlsplit(uri)
    name = unquote(parts.path.lstrip("/")) if uri.startswith(PREFIX) else ""
    if not name or "/" in name or name in (".", "..") or "\0" in name or parts.fragment:
        raise ResourceError(NOT_FOUND, "FS_NOT_FOUND", render_bad_resource_uri(uri))
    window: dict[str, int] = {}
    for key, raw in parse_qsl(parts.query, keep_blank_values=True):
        known = key in ("offset", "limit") and key not in window
        if not known or not _WHOLE.fullmatch(raw):
            message = render_bad_resource_uri(uri, key, repeated=key in window)
            raise ResourceError(INVALID_PARAMS, "ARGUMENT_INVALID", message)
        window[key] = int(raw)
    return name, window


def read_resource(workspace: Workspace, uri: str, session: str | None, caller: Caller) -> dict:
    """``resources/read`` of ``uri``: one page, rendered as ``read`` renders it; ``ResourceError`` if refused."""
    name, window = _parse(uri)
    try:
        rows = workspace.spill_list(session, None, caller) or []
        locator = next((r["locator"] for r in rows if posixpath.basename(r["locator"]) == name), None)
        if locator is None:  # not this session's, or removed: the core says which, by its shown name
            folder = os.path.join(workspace.spills.root, session_folder(workspace.key(session)))
            locator = workspace.resolver.spill_display(os.path.join(folder, name), workspace.root)
        result = workspace.spill_page(locator, session, window.get("offset", 1), window.get("limit"), caller=caller)
    except CallRefused as exc:
        raise ResourceError(FORBIDDEN, exc.code, exc.message) from None
    except ToolError as exc:
        raise ResourceError(_RPC.get(exc.code, INVALID_PARAMS), exc.code, exc.message) from None
    if result.is_error:
        code, message = result.value["code"], result.value["message"]
        raise ResourceError(_RPC.get(code, INVALID_PARAMS), code, message)
    page = {"offset": result.value.get("offset"), "nextOffset": result.value.get("nextOffset")}
    return {"contents": [{"uri": uri, "mimeType": MIME_TYPE, "text": result.text}], "_meta": {PAGE_META: page}}
