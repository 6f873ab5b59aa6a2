"""The registry's tools and a core ``Result`` in the shapes MCP puts on the wire, as plain JSON.

Why it exists: the Streamable HTTP endpoint inside the Jupyter server and the stdio server must
offer one and the same tool list and answer a call the same way, so an agent sees the same names,
schemas and text as ``GET /dsh/api/tools`` whichever way it connects. The shapes are plain dicts
(the stdio server writes them as they are; the HTTP endpoint hands them to the SDK's models), so
this module imports no SDK.

Error results carry no ``structuredContent``. MCP clients built on the TypeScript SDK (Claude
Code, Cursor, VS Code, the Inspector, mcp-remote) check ``structuredContent`` against the tool's
``outputSchema`` whenever it is present, also when ``isError`` is true, and turn a mismatch into
an exception the model never reads. So an error answers its text (``Error: <message>``, the same
as every surface) and puts ``{name, code, message}`` in ``_meta`` under ``dsh-jupyter/error``
for programs that match on the stable code.

What it must never do: write model-visible text of its own (a call's text block is exactly the
core's ``Result.text``; image blocks carry only the result's own images, after it), declare an
output schema that a successful value could fail, or import Jupyter, tornado or the MCP SDK.
"""

from __future__ import annotations

from ..core.result import Result
from ..core.tools.spec import ToolSpec
from .resources import resource_link

__all__ = ["ERROR_META", "call_result", "instructions", "tool_annotations", "tool_definitions"]

# The ``_meta`` key of an error result's ``{name, code, message}`` (MCP's prefix/name form).
ERROR_META = "dsh-jupyter/error"


def tool_annotations(spec: ToolSpec) -> dict:
    """Hints for clients that ask before a tool changes files, from the spec; nothing leaves the root.

    ``destructiveHint`` (said of a tool that writes) marks one that can make a file's old content
    unreachable, where a client should warn before it happens (``ToolSpec.destructive``).
    """
    out: dict = {"title": spec.title, "readOnlyHint": not spec.writes}
    if spec.writes:
        out["destructiveHint"] = spec.destructive
    out["idempotentHint"] = spec.idempotent
    out["openWorldHint"] = False
    return out


def tool_definitions(registry: dict[str, ToolSpec]) -> list[dict]:
    """One MCP tool per registry entry, in the registry's order, with the REST definition's fields."""
    tools = []
    for spec in registry.values():
        definition = spec.definition()
        tools.append(
            {
                "name": definition["name"],
                "title": spec.title,
                "description": definition["description"],
                "inputSchema": definition["inputSchema"],
                "outputSchema": spec.output_schema,
                "annotations": tool_annotations(spec),
            }
        )
    return tools


def instructions(registry: dict[str, ToolSpec]) -> str:
    """The server instructions: each tool's guidance from the registry, under the tool's name."""
    return "\n\n".join(f"{spec.name}: {spec.guidance}" for spec in registry.values())


def call_result(result: Result, links: bool = False) -> dict:
    """The MCP answer to one call: the model text first, then the result's images; the value beside.

    The text is one text block; each image the result carries (an image file, a notebook page's
    output images, numbered by the text in this order) follows as an image block. A success
    carries the value as ``structuredContent``; an error carries it in ``_meta`` (see the module
    docstring for why) and never an image. With ``links`` (the client's protocol revision knows
    them: ``resources.LINK_VERSIONS``), a capped answer's saved result follows the text as a
    ``resource_link`` to it (``resources``).
    """
    content: list[dict] = [{"type": "text", "text": result.text}]
    if result.is_error:
        return {"content": content, "isError": True, "_meta": {ERROR_META: result.value}}
    link = resource_link(result) if links else None
    if link is not None:
        content.append(link)
    content.extend({"type": "image", "data": image.base64(), "mimeType": image.mime} for image in result.images)
    return {"content": content, "structuredContent": result.value, "isError": False}
