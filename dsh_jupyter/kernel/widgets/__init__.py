"""Navigable views of dsh results: one anywidget front end (``frontend.py``) over synced traitlets.

``view_for(result)`` picks the view for a result the magic returned; the views can also be built
directly, e.g. ``ListingView(workspace, "default", path="src")``. Every view fetches one page at
a time through the core, logs its tool calls with surface ``widget``, repeats the model's footer
and has a "model view" toggle that shows the exact text the model saw.

This package imports ``kernel.results``; ``kernel.results`` never imports it (the kernel layer
registers ``view_for`` with the results when the extension loads), so the dependency is one-way.
"""

from __future__ import annotations

from .base import DshView
from .calls import CallLogView, SpillsView
from .listing import ListingView
from .reading import ReadView, SpillView
from .replacing import ReplaceView
from .search import GlobView, GrepView
from .windows import ReadWindow, SpillWindow

__all__ = [
    "CallLogView",
    "DshView",
    "GlobView",
    "GrepView",
    "ListingView",
    "ReadView",
    "ReadWindow",
    "ReplaceView",
    "SpillView",
    "SpillWindow",
    "SpillsView",
    "view_for",
]


def view_for(result):
    """The view of a ``KernelResult``/``InfoResult``, or None (errors, write, edit, move, list_dir, …)."""
    if result.is_error or result.workspace is None:
        return None
    ws, session = result.workspace, result.session
    args = getattr(result, "args", None) or {}
    if result.tool == "list":
        return ListingView(ws, session, result=result)
    if result.tool == "read":
        if args.get("outline"):  # a notebook's outline: rows that open the cells they name
            return ReadView(ws, session, result=result, limit=args.get("limit"), outline=True)
        # one output read whole pages by its lines: every page asks for the same cell and output
        extra = {k: args[k] for k in ("cell_id", "output")} if args.get("output") is not None else {}
        return ReadView(ws, session, result=result, limit=args.get("limit"), extra=extra)
    if result.tool == "glob":
        return GlobView(ws, session, result)
    if result.tool == "grep":
        return GrepView(ws, session, result)
    if result.tool == "replace" and "occurrences" in result.value:  # a preview (an apply has no boxes)
        return ReplaceView(ws, session, result)
    if result.tool == "calls":
        return CallLogView(ws, session, info=result)
    if result.tool == "spills":
        return SpillsView(ws, session, info=result)
    return None
