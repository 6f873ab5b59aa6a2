"""``ToolSpec``: what one tool is made of — name, title, schemas, guidance, functions, flags.

Each tool module defines its spec beside its executor (``tools/read/tool.py`` holds ``READ``); the
registry is the list of them and imports the tools, never the other way round.

Why it holds everything that varies by tool: the surfaces (``Result``'s rows, frame, footer and
HTML table; MCP's annotations; the magic's arguments, built from ``input_schema``) read it from
the spec and never name a tool, so a new tool is its module, its renderer and one line in the
registry. What it must never do: hold text of its own (``footer`` and ``header`` are pure render
functions from ``core/render``) or a surface's concern (no argparse, no HTTP).

Every success value also says how the page continues (``page``): ``nextOffset``, the ``offset``
argument of the next page (null on the last page, and for a tool that does not page), and
``footer``, the text's footer verbatim ("" when the page is the whole result) — so no surface
parses the text back. ``__post_init__`` adds both to ``output_schema``.

Schemas use standard JSON Schema keywords only (the subset drafts 7 and 2020-12 share), so a
strict validator — ajv with ``strict: true`` in the TypeScript MCP SDK's clients, or
``jsonschema`` — compiles every one of them. ``schema.validate_args`` checks arguments against
the same schemas with messages of its own.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "BOOLEAN",
    "GLOBS",
    "INDEX_FIELDS",
    "INTEGER",
    "NAME",
    "NOT_BLANK",
    "NO_NUL",
    "NUMBER",
    "OFFSET",
    "PAGE_FIELDS",
    "PATH",
    "STRING",
    "TEXT",
    "Rows",
    "ToolSpec",
    "nullable",
    "object_schema",
    "rows",
    "value_schema",
]


@dataclass(frozen=True)
class Rows:
    """One list of a value that ``Result.to_frame()`` turns into rows, and the frame's columns.

    A row that is not an object (a path, a name) becomes ``{columns[0]: row}``.
    """

    key: str
    columns: tuple[str, ...]


def no_footer(value: dict) -> str:
    """The footer of a tool whose every answer is whole (one that changes a file, say)."""
    return ""


def no_next_offset(value: dict) -> int | None:
    """The continuation of a tool that does not page."""
    return None


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
    # can make a file's old content unreachable, so a client should warn first (MCP's destructiveHint)
    destructive: bool = False
    # the value's lists that become rows: the first the value holds (the last when it holds none)
    rows: tuple[Rows, ...] = ()
    footer: Callable[[dict], str] = no_footer  # the text's footer, verbatim, from the value
    next_offset: Callable[[dict], int | None] = no_next_offset  # the next page's offset, from the value
    header: Callable[[dict], str] | None = None  # a count line a table shows above its rows

    def __post_init__(self) -> None:
        object.__setattr__(self, "output_schema", with_page_fields(self.output_schema))

    def page(self, value: dict) -> dict:
        """What a success ``value`` gains: ``nextOffset`` and ``footer`` (see the module docstring)."""
        return {"nextOffset": self.next_offset(value), "footer": self.footer(value)}

    def frame(self, value: dict) -> Rows | None:
        """The rows ``value`` holds: the first of ``rows`` it has, else the last (an error's empty frame)."""
        for rows_ in self.rows:
            if rows_.key in value:
                return rows_
        return self.rows[-1] if self.rows else None

    def definition(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "guidance": self.guidance,
        }


# What every success value holds besides the tool's own fields (``ToolSpec.page``).
PAGE_FIELDS = {
    "nextOffset": {
        "anyOf": [{"type": "integer"}, {"type": "null"}],
        "description": "The offset argument of the next page; null on the last page or when the tool does not page.",
    },
    "footer": {
        "type": "string",
        "description": "The text's footer verbatim: what says how much of the whole this page is ('' if none).",
    },
}


def with_page_fields(schema: dict) -> dict:
    """``schema`` with ``PAGE_FIELDS`` required (in each ``anyOf`` branch of a union of objects);
    a schema that has them already is returned as it is."""
    out = copy.deepcopy(schema)
    targets = out["anyOf"] if "anyOf" in out and "properties" not in out else [out]
    for target in targets:
        target.setdefault("properties", {}).update(copy.deepcopy(PAGE_FIELDS))
        target["required"] = [*(r for r in target.get("required", []) if r not in PAGE_FIELDS), *PAGE_FIELDS]
    return out


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

# Which way a search went once a workspace index is in play (``tools.indexing``): "index" or "rg",
# and when "rg", why the index did not answer.
INDEX_FIELDS = {"source": {"enum": ["index", "rg"]}, "index_note": STRING}


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
