"""The MCP surface: the same tools for any Model Context Protocol client.

Why it exists: agents speak MCP. ``tools`` maps the core's registry and results onto MCP's tool
list and call results (plain JSON, the same for both transports); ``server`` wires them into the
official SDK's low-level ``Server``, which the Jupyter server's Streamable HTTP endpoint
(``dsh_jupyter.server.mcp_bridge``) serves; ``jsonrpc`` speaks the stdio side itself and
``stdio`` is the program (``dsh-jupyter-mcp``, ``python -m dsh_jupyter.mcp``), which starts
without importing the SDK.

What it must never do: import Jupyter or tornado (the stdio server runs without them), build
model-visible text (that comes from the core's render functions), or be imported by
``import dsh_jupyter`` (the SDK is loaded only by the surfaces that use it).
"""
