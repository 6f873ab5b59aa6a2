"""What glob and find take from the workspace index: the files below a search root, with their times.

Why: glob and find need the list of files rg would walk, nothing of their text; the index holds
exactly that list, kept fresh (``keeper``), so on a big tree they read it instead of walking.

What it must never do: answer when the index may not (the value says ``source: "rg"`` and why),
or hand back paths in any form but the one rg's walk gives (relative to the search root).
"""

from __future__ import annotations

import os

from ..context import CallContext
from ..search.root import SearchRoot
from .keeper import NotServed

__all__ = ["indexed_files", "indexed_text", "say_rg"]


def say_rg(value: dict, note: str) -> None:
    value["source"], value["index_note"] = "rg", note


def indexed_files(
    ctx: CallContext, root: SearchRoot, value: dict, endings: tuple[str, ...] | None = None, by_time: bool = False
) -> tuple[list[str], list[int] | None] | None:
    """The files below ``root`` (relative to it) from the index (``value["source"]`` "index"):
    those ending in one of ``endings`` (None: all; a filter that only narrows, the caller's glob
    decides), oldest first and equal times by path when ``by_time``, and None beside them; or,
    when a path is not UTF-8 (SQLite would order its bytes, not its surrogate escapes), every
    file unsorted with its modification time (ns), for the caller to sort. None: rg walks (the
    value says why once an index is in play)."""
    keeper = ctx.index
    if keeper is None or not root.is_dir:
        return None
    keeper.start()
    if not keeper.in_play():
        return None
    times: list[int] | None = None
    try:
        with keeper.serving(ctx, root) as served:
            paths = served.store.paths(served.prefix, endings, by_time)
            if paths is None:
                raw, times = served.store.paths_and_times(served.prefix)
                cut = len(os.fsencode(served.prefix)) + 1 if served.prefix else 0
                paths = [os.fsdecode(p[cut:]) for p in raw]
    except NotServed as exc:
        say_rg(value, str(exc))
        return None
    value["source"] = "index"
    return paths, times


def indexed_text(ctx: CallContext, root: SearchRoot, value: dict) -> str | None:
    """The files below ``root`` (relative to it) from the index, joined by NULs in the table's
    order (``value["source"]`` "index"); None: rg walks (the value says why once an index is in play)."""
    keeper = ctx.index
    if keeper is None or not root.is_dir:
        return None
    keeper.start()
    if not keeper.in_play():
        return None
    try:
        with keeper.serving(ctx, root) as served:
            text = served.store.joined(served.prefix)
    except NotServed as exc:
        say_rg(value, str(exc))
        return None
    value["source"] = "index"
    return text
