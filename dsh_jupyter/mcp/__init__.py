"""The MCP surface: the same tools for any Model Context Protocol client.

Why it exists: agents speak MCP. This package maps the core's registry and results onto the
official SDK's low-level ``Server`` (``tools``, ``server``) and runs it over stdio (``stdio``,
``python -m dsh_jupyter.mcp``); the Jupyter server's Streamable HTTP endpoint
(``dsh_jupyter.server.mcp_bridge``) serves the same ``Server``.

What it must never do: import Jupyter or tornado (the stdio server runs without them), build
model-visible text (that comes from the core's render functions), or be imported by
``import dsh_jupyter`` (the SDK is loaded only by the surfaces that use it).
"""
