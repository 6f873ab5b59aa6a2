"""What a client is told while a call runs: one line per progress notification.

Why it exists: an MCP client that asked for progress (a ``progressToken``) shows these lines to
its user while a long call runs, and takes each as a sign of life; they say how long the call
has run and, for a search, what the core's progress report says (``1,204 matches in 310 files
so far``), the same words a person's search panel shows.

What it must never do: touch the filesystem, or name a path (a progress line goes out before the
call's answer, which is the only place a path is named).
"""

from __future__ import annotations

__all__ = ["render_progress"]


def render_progress(tool: str, seconds: float, report: str | None = None) -> str:
    """``grep running for 3 s: 1,204 matches in 310 files so far`` (without a report, up to the colon)."""
    head = f"{tool} running for {int(seconds)} s"
    return f"{head}: {report}" if report else head
