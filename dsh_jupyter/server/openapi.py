"""The OpenAPI 3 document of ``/dsh/api``, built from the live tool registry.

Why it exists: agent builders generate clients from it and the tests fuzz the server with it, so
it must say exactly what the handlers do -- every path, parameter, body, result and error shape.
The tool request bodies embed each tool's own JSON Schema from the registry, so the document can
never drift from what ``GET /tools`` offers (``glob``/``grep`` appear only when rg was found).

What it must never do: import tornado or touch the filesystem (it is a pure function of the
registry and the base URL), or describe a response the handlers cannot produce.
"""

from __future__ import annotations

import copy
from typing import Any

from ..core.workspace import SURFACES

__all__ = ["OPENAPI_VERSION", "build_document"]

OPENAPI_VERSION = "3.0.3"
_REF = "#/components/schemas/"


def _ref(name: str) -> dict:
    return {"$ref": _REF + name}


def _obj(props: dict, required: tuple[str, ...] = (), *, closed: bool = False, **extra) -> dict:
    out = {"type": "object", "properties": props, **extra}
    if required:
        out["required"] = list(required)
    if closed:
        out["additionalProperties"] = False
    return out


_INT = {"type": "integer"}
_NUM = {"type": "number"}
_STR = {"type": "string"}
_BOOL = {"type": "boolean"}
_NULLABLE_STR = {"type": "string", "nullable": True}
# What the core accepts as a session id: 1-200 characters, no C0 control character or DEL.
_SESSION_ID = {"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[^\\u0000-\\u001f\\u007f]+$"}


def _arr(items: dict) -> dict:
    return {"type": "array", "items": items}


def _openapi(schema: Any) -> Any:
    """A tool's JSON Schema (output or input) in OpenAPI 3.0's dialect.

    3.0 has no ``const``, no ``{"type": "null"}`` and refuses an empty ``required``: a nullable
    field (``anyOf`` of a schema and null) becomes that schema with ``nullable: true``, ``const``
    becomes a one-value ``enum``. The tools' own schemas stay the one definition.
    """
    if isinstance(schema, list):
        return [_openapi(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    options = schema.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        (other,) = [o for o in options if o != {"type": "null"}]
        rest = {k: v for k, v in schema.items() if k != "anyOf"}
        return {**_openapi(rest), **_openapi(other), "nullable": True}
    out: dict = {}
    for key, value in schema.items():
        if key == "const":
            out["enum"] = [value]
        elif key == "required" and not value:
            continue
        elif key in ("properties",):
            out[key] = {name: _openapi(sub) for name, sub in value.items()}
        else:
            out[key] = _openapi(value)
    return out


_SCHEMAS = {
    "Error": _obj(
        {
            "code": {
                **_STR,
                "description": "Stable code, e.g. BODY_INVALID, BODY_TOO_LARGE, TOOL_UNKNOWN, "
                "SESSION_NOT_FOUND, ARGUMENT_INVALID, FORBIDDEN, STATE_UNAVAILABLE.",
            },
            "message": {**_STR, "description": "One sentence; never a traceback, the token or the root."},
            "reason": _NULLABLE_STR,
        },
        ("code", "message", "reason"),
        description="Every HTTP error (a protocol problem, never a tool's own failure).",
    ),
    "ToolErrorValue": _obj(
        {"name": _STR, "code": _STR, "message": _STR},
        ("name", "code", "message"),
        description="The value of a failed tool call (isError true, HTTP 200).",
    ),
    "ResultImage": _obj(
        {
            "mimeType": {**_STR, "enum": ["image/png", "image/jpeg", "image/gif", "image/webp"]},
            "bytes": _INT,
            "data": {**_STR, "format": "byte", "description": "The image's bytes, base64."},
            "cell": {**_INT, "description": "A notebook output's cell index (1-based)."},
            "output": {**_INT, "description": "A notebook output's number within its cell (1-based)."},
        },
        ("mimeType", "bytes", "data"),
        description="One image a result shows (an image file, or a notebook page's output image), in "
        "the value's images list only when the call asked with include_images; the text numbers them "
        "in this order.",
    ),
    "ToolDefinition": _obj(
        {
            "name": _STR,
            "description": _STR,
            "inputSchema": {"type": "object", "description": "JSON Schema of args."},
            "guidance": _STR,
        },
        ("name", "description", "inputSchema", "guidance"),
    ),
    "SessionInfo": _obj(
        {
            "id": _STR,
            "cwd": {**_STR, "description": "Relative to the root; '.' for the root itself."},
            "created": _NUM,
            "user": {**_STR, "description": "Who created the session."},
            "observations": _INT,
            "spills": _INT,
            "calls": _INT,
            "lastCall": {
                **_NUM,
                "nullable": True,
                "description": "When the newest call in the session's log started; null when it has none.",
            },
        },
        ("id", "cwd", "created", "user", "observations", "spills", "calls", "lastCall"),
    ),
    "SessionMove": _obj(
        {"cwd": {**_STR, "minLength": 1, "description": "New working directory, resolved against the root."}},
        ("cwd",),
        closed=True,
    ),
    "Status": _obj(
        {
            "confinement": {
                "type": "string",
                "enum": ["landlock", "descriptors-only"],
                "description": "How ripgrep is fenced in.",
            },
            "landlockAbi": _INT,
            "detail": _STR,
            "resolver": {
                "type": "string",
                "enum": ["openat2", "walk"],
                "description": "How paths are resolved beneath the root (both race-free).",
            },
            "tools": _arr(_STR),
            "index": _obj(
                {
                    "state": {
                        "type": "string",
                        "enum": [
                            "off",
                            "idle",
                            "counting",
                            "small",
                            "building",
                            "ready",
                            "lost",
                            "failed",
                            "elsewhere",
                        ],
                        "description": "The workspace index: off (index_min_files 0), not built yet, counting "
                        "the files, not needed, building, ready, or not used (note says why).",
                    },
                    "note": _STR,
                    "listed": _INT,
                    "read": _INT,
                    "files": _INT,
                    "diskBytes": _INT,
                    "buildSeconds": _NUM,
                },
                ("state",),
            ),
        },
        ("confinement", "landlockAbi", "detail", "resolver", "tools", "index"),
    ),
    "SessionCreate": _obj(
        {
            "id": {**_SESSION_ID, "nullable": True, "description": "Session id (generated when absent or null)."},
            "cwd": {
                **_STR,
                "nullable": True,
                "description": "Working directory, resolved against the root (default: the root).",
            },
        },
        closed=True,
    ),
    "CallRecord": _obj(
        {
            "callId": _STR,
            "tool": _STR,
            "args": {"type": "object"},
            "text": _STR,
            "isError": _BOOL,
            "surface": {"type": "string", "enum": list(SURFACES)},
            "user": {**_STR, "description": "Who made the call (the authenticated user, or the OS user)."},
            "started": _NUM,
            "durationMs": _NUM,
            "open": {
                "type": "string",
                "enum": ["shared", "tab", "unsaved", None],
                "nullable": True,
                "description": "How a person had the call's file open in JupyterLab when it ran (its value's "
                "open): a shared document, a tab, a tab with unsaved changes; null: not open, or the call failed.",
            },
        },
        ("callId", "tool", "args", "text", "isError", "surface", "user", "started", "durationMs"),
    ),
    "CallLog": _obj(
        {"session": _STR, "offset": _INT, "total": _INT, "calls": _arr(_ref("CallRecord"))},
        ("session", "offset", "total", "calls"),
    ),
    "OpenFile": _obj(
        {
            "path": {**_STR, "description": "Relative to the root, symlinks resolved, '/'-separated."},
            "shared": {**_BOOL, "description": "A shared document (real-time collaboration); else open in tabs."},
            "tabs": {**_INT, "description": "Tabs that have it open; for a shared document, its connections."},
            "unsaved": {
                **_BOOL,
                "nullable": True,
                "description": "A tab's copy holds changes not saved to the file (null for a shared document).",
            },
        },
        ("path", "shared", "tabs", "unsaved"),
    ),
    "OpenFiles": _obj(
        {
            "files": {**_arr(_ref("OpenFile")), "maxItems": 1000, "description": "By path (code point order)."},
            "total": {**_INT, "description": "Every open file that may be shown (files holds the first 1000)."},
            "notShown": {
                **_INT,
                "description": "Open files left out as list leaves them out: hidden, hide globs, protected, "
                "or outside the root.",
            },
        },
        ("files", "total", "notShown"),
    ),
    "Spill": _obj(
        {
            "locator": {**_STR, "description": "Absolute path of the saved result."},
            "tool": _STR,
            "size": _INT,
            "created": _NUM,
            "label": {**_STR, "description": "The search that made it, e.g. 'grep TODO'."},
            "user": _STR,
        },
        ("locator", "tool", "size", "created", "label", "user"),
    ),
}


def _result_schema(tools: list[str]) -> dict:
    values = [_ref(f"Value_{t}") for t in tools] + [_ref("ToolErrorValue")]
    return _obj(
        {
            "tool": _STR,
            "session": _STR,
            "callId": _STR,
            "isError": _BOOL,
            "text": {**_STR, "description": "Exactly what the model sees."},
            "value": {"anyOf": values},
        },
        ("tool", "session", "callId", "isError", "text", "value"),
        description="One tool call. A tool's own failure is isError true with HTTP 200.",
    )


def _input_schema(schema: dict) -> dict:
    """A tool's JSON Schema as an OpenAPI 3.0 schema (3.0 refuses an empty ``required``)."""
    return _openapi(copy.deepcopy(schema))


def _json(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*statuses: int) -> dict:
    text = {
        400: "Malformed request: invalid JSON, a body or field of the wrong type, a bad query parameter.",
        403: "Not authenticated (no or wrong token), refused by the authorizer, a failed XSRF check, or "
        "refused by the call policy: a write without contents:write, or a session that does not exist named "
        "by a caller without contents:write where the route would use it.",
        404: "Unknown tool or session.",
        409: "The session exists with another cwd; moving it is PATCH (contents:write).",
        413: "Request body larger than the server's max_body_bytes (default 10 MiB).",
        503: "The session state database is unavailable.",
    }
    return {str(s): _json(_ref("Error"), text[s]) for s in statuses}


def _query(name: str, description: str, schema: dict, required: bool = False) -> dict:
    return {"name": name, "in": "query", "required": required, "description": description, "schema": schema}


_USER_FILTER = {
    "name": "user",
    "in": "query",
    "required": False,
    "schema": {"type": "string"},
    "description": "Only what this user (as Jupyter names them) created or called.",
}
_SESSION_PARAM = {
    "name": "session",
    "in": "path",
    "required": True,
    "description": "Session id.",
    "schema": _SESSION_ID,
}


def _tool_operation(op_id: str, summary: str, args_schema: dict, description: str, writes: bool) -> dict:
    need = "contents:read and contents:write" if writes else "contents:read"
    body = _obj(
        {
            "session": {**_SESSION_ID, "nullable": True, "description": "Session id (default: 'default')."},
            "args": args_schema,
            "include_images": {
                **_BOOL,
                "default": False,
                "description": "Also put the images the result shows (read of an image file, a notebook "
                "page's output images) in value.images, base64. Off by default: the text and value "
                "describe them without their bytes.",
            },
            "progress_id": {
                **_STR,
                "pattern": "^[A-Za-z0-9_-]{1,64}$",
                "description": "A name the client picks for this call: while it runs, GET /progress/{id} says "
                "how far a search got, to this caller only.",
            },
            "respect_ignore_files": {
                **_BOOL,
                "description": "This call alone leaves out (true) or searches (false) what the workspace's "
                ".gitignore and .ignore files name; left out, the setting respect_ignore_files holds.",
            },
        },
        closed=True,
    )
    return {
        "summary": summary,
        "description": f"{description}\n\nRequires {need}.",
        "operationId": op_id,
        "tags": ["tools"],
        "requestBody": {"required": False, "content": {"application/json": {"schema": body}}},
        "responses": {
            "200": _json(_ref("ToolResult"), "The call's result (tool failures too)."),
            **_errors(400, 403, 404, 413, 503),
        },
    }


def _tool_paths(registry: dict) -> dict:
    """``/tools``, one path per tool (its own input schema), and the call by name."""
    paths: dict = {
        "/tools": {
            "get": {
                "summary": "List the tools",
                "operationId": "list_tools",
                "tags": ["tools"],
                "responses": {
                    "200": _json(_arr(_ref("ToolDefinition")), "Each tool with its JSON Schema."),
                    **_errors(403),
                },
            }
        },
    }
    for t, spec in registry.items():
        paths[f"/tools/{t}"] = {
            "post": _tool_operation(
                f"call_{t}", f"Run {t}", _input_schema(spec.input_schema), spec.description, spec.writes
            )
        }
    generic = _tool_operation(
        "call_tool",
        "Run a tool by name",
        {"type": "object"},
        "Any tool by name (the paths above give each tool's exact args); an unknown "
        "name is 404. The writing tools need contents:write.",
        False,
    )
    generic["parameters"] = [{"name": "name", "in": "path", "required": True, "schema": _STR}]
    paths["/tools/{name}"] = {"post": generic}
    return paths


def _session_paths() -> dict:
    """Sessions: list, create, read, move, delete."""
    paths: dict = {}
    paths["/sessions"] = {
        "get": {
            "summary": "List sessions",
            "operationId": "list_sessions",
            "tags": ["sessions"],
            "parameters": [_USER_FILTER],
            "responses": {"200": _json(_arr(_ref("SessionInfo")), "The sessions of this root."), **_errors(403, 503)},
        },
        "post": {
            "summary": "Create a session (contents:write; an existing one is never moved: see PATCH)",
            "operationId": "create_session",
            "tags": ["sessions"],
            "requestBody": {"required": False, "content": {"application/json": {"schema": _ref("SessionCreate")}}},
            "responses": {
                "201": _json(_ref("SessionInfo"), "Created."),
                "200": _json(_ref("SessionInfo"), "The session existed (at the cwd given, or none given)."),
                **_errors(400, 403, 404, 409, 413, 503),
            },
        },
    }
    paths["/sessions/{session}"] = {
        "parameters": [_SESSION_PARAM],
        "get": {
            "summary": "One session",
            "operationId": "get_session",
            "tags": ["sessions"],
            "responses": {"200": _json(_ref("SessionInfo"), "The session."), **_errors(400, 403, 404, 503)},
        },
        "patch": {
            "summary": "Move a session's working directory (contents:write)",
            "operationId": "move_session",
            "tags": ["sessions"],
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("SessionMove")}}},
            "responses": {"200": _json(_ref("SessionInfo"), "Moved."), **_errors(400, 403, 404, 413, 503)},
        },
        "delete": {
            "summary": "Delete a session, its observations, call log and spill files (contents:write)",
            "operationId": "delete_session",
            "tags": ["sessions"],
            "responses": {"204": {"description": "Deleted."}, **_errors(400, 403, 404, 503)},
        },
    }
    return paths


def _record_paths() -> dict:
    """A session's call log and saved results, and one page of a saved result."""
    paths: dict = {}
    paths["/sessions/{session}/calls"] = {
        "parameters": [_SESSION_PARAM],
        "get": {
            "summary": "The call log, newest last",
            "operationId": "list_calls",
            "tags": ["sessions"],
            "parameters": [
                _query(
                    "offset",
                    "0-based index of the first call.",
                    {"type": "integer", "minimum": 0, "maximum": 2**53, "default": 0},
                ),
                _query("limit", "Calls per page.", {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}),
                _USER_FILTER,
            ],
            "responses": {"200": _json(_ref("CallLog"), "One page of the log."), **_errors(400, 403, 404, 503)},
        },
    }
    paths["/sessions/{session}/spills"] = {
        "parameters": [_SESSION_PARAM],
        "get": {
            "summary": "Saved full results of the session",
            "operationId": "list_spills",
            "tags": ["sessions"],
            "parameters": [_USER_FILTER],
            "responses": {"200": _json(_arr(_ref("Spill")), "Spill locators."), **_errors(400, 403, 404, 503)},
        },
    }
    paths["/spill"] = {
        "get": {
            "summary": "One page of a saved result, rendered as read renders it (not a tool call: not logged)",
            "operationId": "spill_page",
            "tags": ["sessions"],
            "parameters": [
                _query("locator", "A locator from /sessions/{session}/spills.", {**_STR, "minLength": 1}, True),
                _query("session", "The owning session (default 'default').", _SESSION_ID),
                _query("offset", "1-based first line (read's rules apply).", _INT),
                _query("limit", "Lines (read's rules apply).", _INT),
            ],
            "responses": {
                "200": _json(
                    _ref("ToolResult"),
                    "A read result (a locator that names no saved result of this session is isError FS_NOT_FOUND).",
                ),
                **_errors(400, 403, 503),
            },
        },
    }
    paths["/progress/{progress_id}"] = {
        "get": {
            "summary": "How far a running call this caller gave this progress_id got (another's is not running)",
            "operationId": "progress",
            "tags": ["tools"],
            "parameters": [
                {
                    "name": "progress_id",
                    "in": "path",
                    "required": True,
                    "description": "The id the call was posted with, by this caller.",
                    "schema": {**_STR, "pattern": "^[A-Za-z0-9_-]{1,64}$"},
                }
            ],
            "responses": {
                "200": _json(
                    _obj(
                        {
                            "running": _BOOL,
                            "progress": {**_STR, "nullable": True},
                            "rows": {
                                "type": "array",
                                "items": _obj({"path": _STR, "line": _INT, "text": _STR}, ("path", "line", "text")),
                            },
                        }
                    ),
                    "running: the call has not answered yet; progress: e.g. '1,204 matches in 310 files so far' "
                    "(null before the first report, or when not running); rows: a running search's first "
                    "matches (at most 100), once it has some.",
                ),
                **_errors(403),
            },
        },
    }
    paths["/browse"] = {
        "get": {
            "summary": "A listing page for a person's view: sorted or filtered over the whole folder (not a tool call)",
            "operationId": "browse",
            "tags": ["sessions"],
            "parameters": [
                _query("path", "Folder, as list takes it (default: the session's directory).", _STR),
                _query("offset", "1-based first entry of the sorted, filtered whole.", _INT),
                _query("limit", "Entries (0: only path and stamp, no scan).", _INT),
                _query("sort", "model (list's order), name, size or modified.", _STR),
                _query("descending", "true for the reverse order.", _STR),
                _query("filter", "Keep names holding this text (any case).", _STR),
                _query(
                    "session",
                    "Whose directory a relative path starts from (default 'default'; one that does not exist yet: "
                    "the root, and nothing is created).",
                    _SESSION_ID,
                ),
            ],
            "responses": {
                "200": _json(
                    {"type": "object", "additionalProperties": True},
                    "list's value plus matchedEntries, sort, descending, filter and stamp (inode, mtime_ns, "
                    "ctime_ns); with limit 0 only path and stamp.",
                ),
                **_errors(400, 403, 404, 503),
            },
        },
    }
    return paths


def _meta_paths() -> dict:
    """How the tools are confined here, and this document."""
    paths: dict = {}
    paths["/status"] = {
        "get": {
            "summary": "How the tools are confined here",
            "operationId": "status",
            "tags": ["meta"],
            "responses": {"200": _json(_ref("Status"), "Confinement and resolver modes."), **_errors(403)},
        }
    }
    paths["/documents"] = {
        "get": {
            "summary": "The files a person has open in JupyterLab (not a tool call: not logged, no session)",
            "description": "Shared documents with a page connected, and the files JupyterLab pages report open in "
            "their tabs, named as list names them; every caller who may read sees the same list.\n\n"
            "Requires contents:read.",
            "operationId": "open_files",
            "tags": ["meta"],
            "responses": {"200": _json(_ref("OpenFiles"), "What is open now."), **_errors(403)},
        }
    }
    paths["/openapi.json"] = {
        "get": {
            "summary": "This document",
            "operationId": "openapi",
            "tags": ["meta"],
            "responses": {"200": _json({"type": "object"}, "OpenAPI 3 document."), **_errors(403)},
        }
    }
    return paths


_PAGE_PARAM = {
    "name": "client",
    "in": "path",
    "required": True,
    "description": "The page's id, made at each page load (32 hex digits from the extension).",
    "schema": {**_STR, "pattern": "^[A-Za-z0-9_-]{8,64}$"},
}
_PAGE_UNKNOWN = _json(
    _ref("Error"),
    "PAGE_UNKNOWN: no page with this id for this caller (never reported, forgotten, gone, or another "
    "caller's); the page reports its tabs again.",
)
_TAB_SCHEMAS = {
    "TabDocument": _obj(
        {
            "path": {**_STR, "minLength": 1, "description": "The contents API's path, relative to the root."},
            "kind": {"type": "string", "enum": ["file", "notebook"]},
            "dirty": {**_BOOL, "description": "The document has changes not saved to the file."},
            "tabs": {**_INT, "minimum": 1, "maximum": 1000, "default": 1, "description": "Tabs showing it."},
        },
        ("path", "kind", "dirty"),
        closed=True,
    ),
    "TabReport": {
        "oneOf": [
            _obj({"documents": {**_arr(_ref("TabDocument")), "maxItems": 1000}}, ("documents",), closed=True),
            _obj({"gone": {"type": "boolean", "enum": [True]}}, ("gone",), closed=True),
        ],
        "description": "What the page has open now (it replaces the last report), or that it is going away.",
    },
    "TabRequest": _obj(
        {
            "id": _STR,
            "seq": {**_INT, "description": "Numbered from 1 for each page; poll with after= the highest seen."},
            "type": {"type": "string", "enum": ["take", "save", "saved", "undo", "moved"]},
            "path": _STR,
            "notebook": _BOOL,
            "content": {**_STR, "description": "take: the file's new text, or the notebook's JSON."},
            "save": {**_BOOL, "description": "take: save at once, in the same turn (the only page asked)."},
            "expect": _obj(
                {"hash": _NULLABLE_STR, "hash_algorithm": _NULLABLE_STR, "last_modified": _NULLABLE_STR},
                description="take: the file on disk now, as a contents model names it.",
            ),
            "take": {**_STR, "description": "save, saved, undo: the id of the take it follows."},
            "model": {"type": "object", "description": "saved: the saved file's contents model (no content)."},
            "from": {**_STR, "description": "moved: the moved file or folder's old path."},
            "to": {**_STR, "description": "moved: its new path."},
            "moves": _arr(_obj({"from": _STR, "to": _STR}, ("from", "to"))),
        },
        ("id", "seq", "type"),
    ),
    "TabAnswer": _obj(
        {
            "request": {**_STR, "minLength": 1, "maxLength": 64},
            "status": {
                "type": "string",
                "enum": ["taken", "saved", "unsaved", "changed", "busy", "gone", "failed", "done"],
            },
            "canSave": _BOOL,
            "exact": {**_BOOL, "description": "saved: the saved document held exactly the change."},
            "model": {"type": "object", "description": "saved: the saved file's contents model."},
            "message": {**_STR, "description": "failed: why (at most 500 characters are kept)."},
        },
        ("request", "status"),
        closed=True,
    ),
}


def _tab_paths() -> dict:
    """How a JupyterLab page reports its open tabs and answers the server's requests."""
    return {
        "/tabs/{client}": {
            "post": {
                "summary": "A page's report of the documents its tabs have open, or that it is going away",
                "description": "Sent at once whenever what is open changes; the page is bound to the caller "
                "who first reported it. A beacon may carry Jupyter's _xsrf as a query argument.\n\n"
                "Requires contents:read.",
                "operationId": "tabs_report",
                "tags": ["tabs"],
                "parameters": [_PAGE_PARAM],
                "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("TabReport")}}},
                "responses": {
                    "200": _json(
                        _obj({"client": _STR, "documents": _INT, "gone": _BOOL}, ("client", "documents", "gone")),
                        "Recorded (in memory).",
                    ),
                    "404": _PAGE_UNKNOWN,
                    **_errors(400, 403, 413),
                },
            }
        },
        "/tabs/{client}/requests": {
            "get": {
                "summary": "The page's long poll: the server's requests numbered above after",
                "description": "Answered at once when requests wait, else after at most tabs_poll_s (20 s) with "
                "none. Reads only: a request leaves the queue when the page answers it.\n\n"
                "Requires contents:read.",
                "operationId": "tabs_requests",
                "tags": ["tabs"],
                "parameters": [
                    _PAGE_PARAM,
                    _query("after", "The highest seq seen (default 0).", {**_INT, "minimum": 0, "maximum": 2**53}),
                ],
                "responses": {
                    "200": _json(_obj({"requests": _arr(_ref("TabRequest"))}, ("requests",)), "Waiting requests."),
                    "404": _PAGE_UNKNOWN,
                    **_errors(400, 403),
                },
            }
        },
        "/tabs/{client}/answers": {
            "post": {
                "summary": "The page's answer to one request",
                "description": "An answer leads to a write (the page saves the file).\n\n"
                "Requires contents:read and contents:write.",
                "operationId": "tabs_answer",
                "tags": ["tabs"],
                "parameters": [_PAGE_PARAM],
                "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("TabAnswer")}}},
                "responses": {
                    "200": _json(
                        _obj({"accepted": _BOOL}, ("accepted",)),
                        "accepted false: nobody waits for this answer any more (a take is then given back).",
                    ),
                    "404": _PAGE_UNKNOWN,
                    **_errors(400, 403, 413),
                },
            }
        },
    }


def build_document(registry: dict, base_url: str = "/") -> dict:
    """The OpenAPI document for the tools in ``registry`` served under ``base_url``."""
    tools = list(registry)
    schemas = {**copy.deepcopy(_SCHEMAS), **copy.deepcopy(_TAB_SCHEMAS), "ToolResult": _result_schema(tools)}
    for t, spec in registry.items():
        value = _openapi(copy.deepcopy(spec.output_schema))
        # with include_images a success's value also lists the images its text describes
        value.setdefault("properties", {})["images"] = _arr(_ref("ResultImage"))
        schemas[f"Value_{t}"] = value
    paths = {**_tool_paths(registry), **_session_paths(), **_record_paths(), **_meta_paths(), **_tab_paths()}
    server = base_url.rstrip("/") + "/dsh/api"
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "dsh-jupyter REST API",
            "version": "1",
            "description": "Agent workspace tools inside a Jupyter server. Authenticate as for any "
            "Jupyter API: header 'Authorization: token <TOKEN>' (or ?token=).",
        },
        "servers": [{"url": server}],
        "security": [{"token_header": []}, {"token_query": []}],
        "tags": [{"name": "tools"}, {"name": "sessions"}, {"name": "meta"}, {"name": "tabs"}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "token_header": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "Authorization",
                    "description": "The value 'token <TOKEN>'.",
                },
                "token_query": {"type": "apiKey", "in": "query", "name": "token"},
            },
        },
    }
