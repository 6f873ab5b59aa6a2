"""The official SDK's low-level MCP ``Server`` over a ``Workspace``, for the Streamable HTTP endpoint.

Why it exists: the Streamable HTTP protocol (sessions, SSE and JSON answers, the GET stream,
resumption, the 2026-07-28 entry) is the official SDK's job. This module wires the SDK's
``Server`` handlers to ``Workspace.call``, with the tool list and call results of ``tools``, the
progress notifications of ``progress`` and the saved results of ``resources`` (the same shapes
the stdio server writes); the HTTP endpoint says how a request maps to a dsh session,
a cancel event and the right to write (``CallScope``) and how a blocking call is taken off the
event loop (``submit``). The stdio server does not use it: see ``stdio`` for why.

What it must never do: run a tool on the event loop, let the SDK validate tool arguments (the
core answers argument problems as ``ARGUMENT_INVALID`` results, with the same text as REST), run
a writing tool for a caller the transport has not cleared to write, leave ripgrep running
when the request that started it is cancelled, or send a progress notification once the call's
answer is on its way (the pump is cancelled and awaited before the handler returns).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcp import MCPError, types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from .. import __version__
from ..core.policy import Caller, CallRefused
from ..core.workspace import Workspace
from .progress import Ticker, progress_token, pump
from .resources import LINK_VERSIONS, ResourceError, list_resources, list_templates, read_resource
from .tools import call_result, instructions, tool_definitions

__all__ = ["FORBIDDEN", "SURFACE", "CallScope", "build_server"]

SURFACE = "mcp"  # the call log's surface for every call made through MCP

# JSON-RPC error code for a tool call the caller may not make (the server-defined range).
FORBIDDEN = -32003


@dataclass(frozen=True)
class CallScope:
    """What the transport knows about one request: its dsh session, cancel event and caller."""

    session: str | None = None
    cancel: threading.Event | None = None
    caller: Caller = field(default_factory=lambda: Caller(SURFACE))


Submit = Callable[..., Awaitable[Any]]  # (call, search=False) -> what call returns, off the event loop


def build_server(
    workspace: Workspace,
    submit: Submit,
    scope_of: Callable[[ServerRequestContext], CallScope] = lambda ctx: CallScope(),
) -> Server:
    """The SDK server offering ``workspace``'s tools; ``submit`` runs a blocking call off the loop."""
    tools = [types.Tool.model_validate(tool) for tool in tool_definitions(workspace.registry)]

    async def list_tools(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        scope = scope_of(ctx)
        try:
            admission = workspace.admit(params.name, scope.session, scope.caller)  # no I/O: on the loop
        except CallRefused as exc:
            raise MCPError(FORBIDDEN, exc.message) from None
        cancel = scope.cancel or threading.Event()
        token = progress_token(ctx.params)
        ticker = Ticker(params.name if params.name in workspace.registry else "call") if token is not None else None
        call = functools.partial(
            workspace.call,
            params.name,
            params.arguments or {},
            cancel=cancel,
            admission=admission,
            progress=None if ticker is None else ticker.report,
        )
        pumping = None
        if ticker is not None:

            async def send(progress: float, message: str) -> None:
                await ctx.session.report_progress(progress, None, message)

            pumping = asyncio.get_running_loop().create_task(pump(ticker, send))
        try:
            result = await submit(call, search=admission.searches)
        except CallRefused as exc:
            raise MCPError(FORBIDDEN, exc.message) from None
        except BaseException:
            cancel.set()  # the request was cancelled (or the server is stopping): kill rg's group
            raise
        finally:
            if pumping is not None:
                pumping.cancel()
                await asyncio.wait([pumping])  # no notification after this: the answer follows
        return types.CallToolResult.model_validate(call_result(result, links=ctx.protocol_version in LINK_VERSIONS))

    async def list_resources_(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        scope = scope_of(ctx)
        found = await submit(functools.partial(list_resources, workspace, scope.session, scope.caller))
        return types.ListResourcesResult.model_validate({"resources": found})

    async def list_templates_(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult.model_validate({"resourceTemplates": list_templates()})

    async def read_resource_(
        ctx: ServerRequestContext, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        scope = scope_of(ctx)
        try:
            page = await submit(
                functools.partial(read_resource, workspace, str(params.uri), scope.session, scope.caller)
            )
        except ResourceError as exc:
            raise MCPError(exc.rpc, exc.message, {"code": exc.code}) from None
        return types.ReadResourceResult.model_validate(page)

    return Server(
        "dsh-jupyter",
        version=__version__,
        instructions=instructions(workspace.registry),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources_,
        on_list_resource_templates=list_templates_,
        on_read_resource=read_resource_,
    )
