"""The root glob and grep search from: opened beneath the workspace, and what below it is never shown.

Why it exists: rg must never be handed a path string a swapped folder could lead outside. The
search root is resolved beneath the workspace (or this session's spill folder) and opened, and rg
starts in that folder's descriptor (``/proc/self/fd/N``) and searches ``.``, or reads that one
file given as ``/proc/self/fd/N`` (``search.run``).

What it must never do: open a FIFO or a device (opening one can block forever), leave a
descriptor open after the search, or leave a protected folder or the spill root out of
``excluded_below`` when it lies below the search root.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from ...errors import Codes, ToolError
from ...fs.resolver import Target, is_within
from ..context import CallContext
from .flags import VCS_IN_PATH

__all__ = ["SearchRoot", "excluded_below", "inside_vcs", "open_search_root"]


@dataclass
class SearchRoot:
    """An opened search root: the target, a descriptor rg starts from, how rg names it."""

    target: Target
    fd: int  # a folder descriptor (rg's working directory) or a file descriptor (rg's one input)
    is_dir: bool
    prefix: str  # what rg's paths are prefixed with in display ("" or "DISPLAY/")
    real: str  # the physical path of the search root


@contextlib.contextmanager
def open_search_root(ctx: CallContext, path: str | None, verb: str, spills: bool):
    """Open the search root beneath the workspace (or this session's spill folder) for rg."""
    with ctx.resolve(path, verb, spills=spills) as target:
        if not target.exists:
            raise target.not_found()
        if target.is_dir:
            fd, _st = target.open_dir(ToolError(Codes.FS_NOT_DIRECTORY, "unused"))
            is_dir = True
        else:
            # Never hand rg a FIFO or a device: opening one can block forever.
            fd, _st = target.open_regular()
            is_dir = False
        try:
            prefix = "" if target.lexical == ctx.cwd else target.display.rstrip("/") + "/"
            yield SearchRoot(target, fd, is_dir, prefix, target.real)
        finally:
            os.close(fd)


def inside_vcs(ctx: CallContext, root: SearchRoot) -> bool:
    if root.target.in_spill:
        return False
    rel = ctx.resolver.tree.relative(root.real)
    return bool(rel and VCS_IN_PATH.search(rel))


def excluded_below(ctx: CallContext, root: SearchRoot) -> list[str]:
    """Folders below the search root that are never shown, relative to it (protected folders)."""
    if root.target.in_spill:
        return []
    out = set(ctx.resolver.visibility.protected_below(root.real))
    spill = ctx.resolver.spill_root
    if spill and is_within(spill, root.real) and spill != root.real:
        out.add(os.path.relpath(spill, root.real))
    return sorted(out)
