"""The registry's tools as MCP ``Tool`` entries, and a core ``Result`` as a ``CallToolResult``.

Why it exists: the Streamable HTTP endpoint inside the Jupyter server and the stdio server must
offer one and the same tool list, so an agent sees the same names, descriptions and input
schemas as ``GET /dsh/api/tools`` whichever way it connects. This module holds that mapping and
the few MCP-only facts the registry does not carry: annotations (hints for clients that ask
before a tool changes files) and output schemas for ``structuredContent``.

What it must never do: write model-visible text of its own (a call's ``content`` is exactly the
core's ``Result.text``, built by the core's render functions), declare an output schema that a
successful value could fail (the SDK client validates every successful result against it and
raises on a mismatch), or import Jupyter or tornado.
"""

from __future__ import annotations

from mcp import types

from ..core.registry import ToolSpec
from ..core.result import Result

__all__ = ["OUTPUT_SCHEMAS", "annotations", "call_result", "instructions", "tool_list"]

# Tools that replace a whole file: the one case where a client should warn before it happens.
_DESTRUCTIVE = frozenset({"write"})


def _nullable(kind: str) -> dict:
    return {"type": [kind, "null"]}


def _rows(props: dict, required: tuple[str, ...]) -> dict:
    return {"type": "array", "items": {"type": "object", "properties": props, "required": list(required)}}


def _value(props: dict) -> dict:
    # Extra keys are allowed: a value may gain fields without breaking clients that validate.
    return {"type": "object", "properties": props, "required": list(props)}


_STR, _INT, _BOOL = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}

# The part of each tool's success value (SPEC section 4) that is always present, with its type.
OUTPUT_SCHEMAS: dict[str, dict] = {
    "list": _value({
        "path": _STR,
        "offset": _INT,
        "entries": _rows({"name": _STR, "type": {"enum": ["file", "directory", "other"]}}, ("name", "type")),
        "totalEntries": _INT,
        "counts": _value({"directories": _INT, "files": _INT, "other": _INT}),
    }),
    "glob": _value({
        "pattern": _STR,
        "root": _STR,
        "paths": {"type": "array", "items": _STR},
        "totalPaths": _INT,
        "sampled": _BOOL,
        "spill": _nullable("string"),
    }),
    "grep": _value({
        "pattern": _STR,
        "matches": _rows({"path": _STR, "line": _INT, "text": _STR}, ("path", "line", "text")),
        "totalMatches": _INT,
        "files": _INT,
        "spill": _nullable("string"),
    }),
    "read": _value({
        "path": _STR,
        "offset": _INT,
        "lines": _rows({"number": _INT, "text": _STR}, ("number", "text")),
        "totalLines": _nullable("integer"),
    }),
    "write": _value({"path": _STR, "operation": {"enum": ["create", "update"]}, "bytes": _INT}),
    "edit": _value({"path": _STR, "replacements": _INT}),
    "list_dir": _value({"entries": {"type": "array", "items": _STR}}),
}


def annotations(spec: ToolSpec) -> types.ToolAnnotations:
    """Hints: the reading tools change nothing; ``write`` may replace a file; nothing leaves the root."""
    if not spec.writes:
        return types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
    return types.ToolAnnotations(
        read_only_hint=False, destructive_hint=spec.name in _DESTRUCTIVE, open_world_hint=False
    )


def tool_list(registry: dict[str, ToolSpec]) -> list[types.Tool]:
    """One MCP tool per registry entry, in the registry's order, with the REST definition's fields."""
    tools = []
    for spec in registry.values():
        definition = spec.definition()
        tools.append(types.Tool(
            name=definition["name"],
            description=definition["description"],
            input_schema=definition["inputSchema"],
            output_schema=OUTPUT_SCHEMAS.get(spec.name),
            annotations=annotations(spec),
        ))
    return tools


def instructions(registry: dict[str, ToolSpec]) -> str:
    """The server instructions: each tool's guidance from the registry, under the tool's name."""
    return "\n\n".join(f"{spec.name}: {spec.guidance}" for spec in registry.values())


def call_result(result: Result) -> types.CallToolResult:
    """The MCP answer to one call: the model text as the only content, the value as structured content."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=result.text)],
        structured_content=result.value,
        is_error=result.is_error,
    )
