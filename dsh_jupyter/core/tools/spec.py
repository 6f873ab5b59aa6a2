"""``ToolSpec``: what one tool is made of — name, title, schemas, guidance, functions, flags.

Each tool module defines its spec beside its executor (``tools/read/tool.py`` holds ``READ``); the
registry is the list of them and imports the tools, never the other way round.

Schemas use standard JSON Schema keywords only (the subset drafts 7 and 2020-12 share), so a
strict validator — ajv with ``strict: true`` in the TypeScript MCP SDK's clients, or
``jsonschema`` — compiles every one of them. ``schema.validate_args`` checks arguments against
the same schemas with messages of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "BOOLEAN",
    "GLOBS",
    "INTEGER",
    "NAME",
    "NOT_BLANK",
    "NO_NUL",
    "NUMBER",
    "OFFSET",
    "PATH",
    "STRING",
    "TEXT",
    "ToolSpec",
    "nullable",
    "object_schema",
    "rows",
    "value_schema",
]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str  # a short human name for client UIs ("Read file")
    description: str
    input_schema: dict
    output_schema: dict  # every success value the tool can return (error results carry none)
    guidance: str
    execute: Callable[..., dict]
    render: Callable[[dict], str]
    writes: bool = False  # changes files: needs contents:write on the server
    searches: bool = False  # runs ripgrep: offered only when rg is found; runs on the search pool
    idempotent: bool = True  # the same call again changes nothing more (MCP's idempotentHint)
    rows_key: str | None = None  # the value's list that to_frame() turns into rows

    def definition(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "guidance": self.guidance,
        }


def object_schema(props: dict, required: tuple[str, ...] = ()) -> dict:
    """A flat JSON Schema object: these properties, these required, nothing else allowed."""
    return {"type": "object", "properties": props, "required": list(required), "additionalProperties": False}


# Strings a caller names things with hold no NUL (no path, glob or id can); file text may.
# The patterns are written so that ECMAScript (ajv) and Python's ``re`` read them alike.
NO_NUL = "^[^\\u0000]*$"
# ... and a path also holds something besides whitespace: "   " names no file a caller could mean.
NOT_BLANK = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$"

PATH = {"type": "string", "minLength": 1, "pattern": NOT_BLANK}
NAME = {"type": "string", "minLength": 1, "pattern": NO_NUL}  # a pattern, glob or cell id
TEXT = {"type": "string"}  # file content: anything, NUL included
OFFSET = {"type": "integer", "minimum": 1}
# Globs to leave out of a search: one, or a list of them.
GLOBS = {"anyOf": [NAME, {"type": "array", "items": NAME, "maxItems": 100}]}
# glob's and grep's ``exclude`` argument.
EXCLUDE = {
    **GLOBS,
    "description": "Globs to leave out, one or a list, gitignore style and relative to path: "
    "node_modules/**, *.min.js, build (at any depth). No leading !.",
}

# Value types of output schemas.
STRING, INTEGER, BOOLEAN, NUMBER = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {"type": "number"}


def nullable(schema: dict) -> dict:
    """``schema`` or null (``anyOf``: strict ajv refuses a union ``type`` list by default)."""
    return {"anyOf": [schema, {"type": "null"}]}


# How a person has the file open in JupyterLab (``tools.opened``): its shared document (collaboration),
# a tab without unsaved changes, or a tab with unsaved changes (read only: a change is refused).
OPEN = {"enum": ["shared", "tab", "unsaved"]}


def value_schema(props: dict, required: tuple[str, ...] | None = None) -> dict:
    """An output value: these properties (all required unless ``required`` says which); more allowed.

    Extra keys are allowed so that a value may gain fields without breaking clients that validate.
    """
    return {"type": "object", "properties": props, "required": list(props if required is None else required)}


def rows(props: dict, required: tuple[str, ...]) -> dict:
    """An array of objects with these properties (``required`` of them always present)."""
    return {"type": "array", "items": value_schema(props, required)}
