"""``ToolSpec``: what one tool is made of — name, description, schema, guidance, functions.

It lives apart from the registry so that a tool module (``tools/search.py`` defines ``GLOB`` and
``GREP`` beside their executors) can build its spec without importing the registry that lists
it: the registry imports the tools, never the other way round.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ToolSpec", "PATH", "OFFSET", "object_schema"]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict
    guidance: str
    execute: Callable[..., dict]
    render: Callable[[dict], str]
    writes: bool = False  # needs contents:write on the server
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


# A path argument: a non-empty string that is not only whitespace (``x-not-blank``, checked by
# ``schema.validate_args``): "   " names no file a caller could mean.
PATH = {"type": "string", "minLength": 1, "x-not-blank": True}
OFFSET = {"type": "integer", "minimum": 1}
