"""Progress notifications for a running tool call, the same on both transports.

Why it exists: MCP clients time out a tool call that stays silent (many after 60 s; some reset
the clock on each progress notification), and a person waiting on a long grep wants a sign of
life. A client asks for progress by sending ``_meta.progressToken`` with ``tools/call``; then,
from ``FIRST_AFTER_S`` after the call started and every ``EVERY_S`` until it answers, the server
sends ``notifications/progress`` with that token, the seconds the call has run as ``progress``
(so it always grows, as the protocol asks) and a line from ``core.render.progress`` that carries
what the core reported (a search's ``1,204 matches in 310 files so far``, the REST progress
text). A call that answers within ``FIRST_AFTER_S`` sends none. ``Ticker`` is what both
transports share; ``ThreadPump`` sends for the stdio server (a thread), ``pump`` for the SDK
server (a task on its event loop).

What it must never do: send a notification once the call's answer has been sent or the call was
cancelled (both pumps are stopped, and the stdio one joined, before the answer is written), send
one for a request that carried no token, or put a client's text (an unknown tool's name) in it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, Mapping

from ..core.render.progress import render_progress

__all__ = ["EVERY_S", "FIRST_AFTER_S", "ThreadPump", "Ticker", "progress_token", "pump"]

FIRST_AFTER_S = 1.0  # a call that answers sooner sends no progress at all
EVERY_S = 1.0  # then one notification a second, at most
_POLL_S = 0.05  # how soon the stdio pump sees its call cancelled

Token = str | int


def progress_token(params: Mapping | None) -> Token | None:
    """The request's ``_meta.progressToken`` (a string or an integer, never a bool), or None."""
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    token = meta.get("progressToken") if isinstance(meta, Mapping) else None
    if isinstance(token, bool) or not isinstance(token, (str, int)):
        return None
    return token


class Ticker:
    """One call's progress: the core's latest report (``report``) and the next notification."""

    def __init__(self, tool: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.tool = tool
        self._clock = clock
        self.started = clock()
        self.text: str | None = None
        self._last = 0.0

    def report(self, text: str) -> None:
        """What ``Workspace.call(progress=...)`` is told by a search (any thread)."""
        self.text = text

    def next(self) -> tuple[float, str]:
        """``(progress, message)`` of a notification sent now: seconds run, growing every time."""
        seconds = max(round(self._clock() - self.started, 1), round(self._last + 0.1, 1))
        self._last = seconds
        return seconds, render_progress(self.tool, seconds, self.text)


class ThreadPump:
    """Sends ``ticker``'s notifications from a thread until ``stop()`` (the stdio server)."""

    def __init__(self, ticker: Ticker, send: Callable[[float, str], None], cancel: threading.Event) -> None:
        self._ticker, self._send, self._cancel = ticker, send, cancel
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dsh-mcp-progress", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        due = time.monotonic() + FIRST_AFTER_S
        while not self._stop.wait(min(_POLL_S, max(due - time.monotonic(), 0.0))):
            if self._cancel.is_set():
                return  # cancelled: not one more, though the call may take a moment to end
            if time.monotonic() >= due:
                progress, message = self._ticker.next()
                self._send(progress, message)
                due = time.monotonic() + EVERY_S

    def stop(self) -> None:
        """No notification is sent once this returns (a send under way has finished)."""
        self._stop.set()
        self._thread.join()


async def pump(ticker: Ticker, send: Callable[[float, str], Awaitable[None]]) -> None:
    """Send ``ticker``'s notifications until cancelled (the SDK server runs it beside the call)."""
    import asyncio  # here: the stdio server, which never runs this, starts without it

    await asyncio.sleep(FIRST_AFTER_S)
    while True:
        progress, message = ticker.next()
        try:
            await send(progress, message)
        except Exception:  # the client's stream is gone: the call goes on, and its cancel decides
            return
        await asyncio.sleep(EVERY_S)
