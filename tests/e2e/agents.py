"""Agents for the browser tests: one dsh session each, calling the tools over REST or over MCP.

``RestAgent`` posts to ``/dsh/api/tools/<tool>``; ``McpAgent`` holds one session of the MCP SDK's
own client (``ClientSession`` over ``streamable_http_client``, as ``tests/mcp_surface`` connects) on
the server's ``/dsh/mcp?session=<name>`` endpoint, on an event loop of its own thread, so a test's
thread (the one Playwright plays the person on) or any worker thread can call it, and two agents
can call at the same time. Both answer an ``Answer``: the model's text, the value, and the error's
code when the call was refused.

Neither retries, waits or interprets anything: a scenario decides what to do with a refusal.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass

__all__ = ["Answer", "McpAgent", "RestAgent"]

CALL_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Answer:
    tool: str
    text: str
    value: dict
    code: str | None  # the error's code; None for a success

    @property
    def ok(self) -> bool:
        return self.code is None


class RestAgent:
    """A dsh session over ``POST /dsh/api/tools/<tool>``."""

    surface = "REST"

    def __init__(self, lab, session: str) -> None:
        self.lab, self.session = lab, session

    def call(self, tool: str, **args) -> Answer:
        status, data = self.lab.request(
            "POST", f"dsh/api/tools/{tool}", {"session": self.session, "args": args}, timeout=CALL_TIMEOUT_S
        )
        assert status == 200 and isinstance(data, dict), (tool, args, status, data)
        value = data.get("value") or {}
        return Answer(tool, data["text"], value, value.get("code") if data.get("isError") else None)

    def close(self) -> None:
        pass


class McpAgent:
    """A dsh session over the server's MCP endpoint, through the MCP SDK's client."""

    surface = "MCP"

    def __init__(self, lab, session: str) -> None:
        self.lab, self.session = lab, session
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"mcp-{session}", daemon=True)
        self._thread.start()
        self._client = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._failed: list[BaseException] = []
        self._lock = threading.Lock()  # one call at a time per session, as one agent calls
        self._held = asyncio.run_coroutine_threadsafe(self._hold(), self._loop)
        if not self._ready.wait(60) or self._failed:
            self.close()
            raise RuntimeError(f"the MCP client did not connect: {self._failed[:1]}")

    async def _hold(self) -> None:
        import httpx2
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        url = f"{self.lab.url}dsh/mcp?session={self.session}"
        headers = {"Authorization": f"token {self.lab.token}"}
        self._stop = asyncio.Event()
        try:
            async with (
                httpx2.AsyncClient(headers=headers, timeout=CALL_TIMEOUT_S) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                self._client = client
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:  # reported to the caller of __init__
            self._failed.append(exc)
            self._ready.set()

    def call(self, tool: str, **args) -> Answer:
        assert self._client is not None
        with self._lock:
            future = asyncio.run_coroutine_threadsafe(self._client.call_tool(tool, args), self._loop)
            result = future.result(CALL_TIMEOUT_S)
        assert [c.type for c in result.content] == ["text"], result.content
        text = result.content[0].text
        if result.is_error:
            value = (result.meta or {}).get("dsh-jupyter/error") or {}
            return Answer(tool, text, value, value.get("code"))
        return Answer(tool, text, result.structured_content or {}, None)

    def close(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        try:
            self._held.result(30)
        except Exception:  # closing: the server may be gone already
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()
