"""What glob and find take from the workspace index: the files below a search root, with their times.

Why: glob and find need the list of files rg would walk, nothing of their text; the index holds
exactly that list, kept fresh (``keeper``), so on a big tree they read it instead of walking.

What it must never do: answer when the index may not (the value says ``source: "rg"`` and why),
or hand back paths in any form but the one rg's walk gives (relative to the search root).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

from ..context import CallContext
from ..search.root import SearchRoot
from .keeper import NotServed, Served

T = TypeVar("T")

__all__ = ["ask_index", "indexed_files", "indexed_text", "say_rg"]


def say_rg(value: dict, note: str) -> None:
    value["source"], value["index_note"] = "rg", note


def ask_index(ctx: CallContext, root: SearchRoot, value: dict, read: Callable[[Served], T]) -> T | None:
    """``read(served)`` on the index brought up to date, for a search below ``root`` (the value
    says ``source: "index"``); None when it may not answer — no index, a file root, one not in
    play yet (the value says nothing), or ``NotServed`` from the keeper or from ``read`` (the
    value says ``source: "rg"`` and why). The one way every tool asks the index."""
    keeper = ctx.index
    if keeper is None or not root.is_dir:
        return None
    keeper.start()
    if not keeper.in_play():
        return None
    try:
        with keeper.serving(ctx, root) as served:
            got = read(served)
    except NotServed as exc:
        say_rg(value, str(exc))
        return None
    value["source"] = "index"
    return got


def indexed_files(
    ctx: CallContext, root: SearchRoot, value: dict, endings: tuple[str, ...] | None = None, by_time: bool = False
) -> tuple[list[str], list[int] | None] | None:
    """The files below ``root`` (relative to it) from the index (``value["source"]`` "index"):
    those ending in one of ``endings`` (None: all; a filter that only narrows, the caller's glob
    decides), oldest first and equal times by path when ``by_time``, and None beside them; or,
    when a path is not UTF-8 (SQLite would order its bytes, not its surrogate escapes), every
    file unsorted with its modification time (ns), for the caller to sort. None: rg walks (the
    value says why once an index is in play)."""

    def read(served: Served) -> tuple[list[str], list[int] | None]:
        paths = served.store.paths(served.prefix, endings, by_time)
        if paths is not None:
            return paths, None
        raw, times = served.store.paths_and_times(served.prefix)
        cut = len(os.fsencode(served.prefix)) + 1 if served.prefix else 0
        return [os.fsdecode(p[cut:]) for p in raw], times

    return ask_index(ctx, root, value, read)


def indexed_text(ctx: CallContext, root: SearchRoot, value: dict) -> str | None:
    """The files below ``root`` (relative to it) from the index, joined by NULs in the table's
    order (``value["source"]`` "index"); None: rg walks (the value says why once an index is in play)."""
    return ask_index(ctx, root, value, lambda served: served.store.joined(served.prefix))
