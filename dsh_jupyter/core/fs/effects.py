"""What a change to the tree does, and the one rule that keeps every change away from protected places.

Why it exists: a protected folder (Jupyter's config, data and runtime folders, IPython's, the state
and spill folders, ``protected_paths``) is as dangerous to *create* as to change. With the root at
the home folder and no ``~/.config`` yet, a folder ``payload`` holding
``jupyter/jupyter_server_config.py`` moved to ``.config`` plants Jupyter's config folder, and the
next server runs that file; a check that asks whether a destination lies *inside* a protected
folder lets it through, because ``.config`` does not. So every operation that changes the tree
(``write``, ``edit``, ``move``, and any later one) states what it does — each path it creates,
replaces or removes, where that path really lies now (``Change``) — and ``refuse`` decides, with one
rule for all of them: no such path may be a protected path, lie inside one, or lie above one (a
folder that holds, or would hold, a protected path), whether or not the protected path exists yet.

The protected paths are taken again at each decision (``Visibility.protected_now``): a symlink
made since the server started can move where a missing protected folder would land.

What it must never do: decide from a path string a tool was given (a ``Change`` names where the
path lies, from the descriptors the tool holds), or be left out by a tool that changes the tree
(tools take the write gate only through ``CallContext.changing``, which asks it first).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import Codes, ToolError
from ..text.quoting import in_message
from .visibility import PROTECTED_MESSAGE

__all__ = ["CREATE", "REMOVE", "REPLACE", "Change", "refuse"]

CREATE, REPLACE, REMOVE = "create", "replace", "remove"

_KINDS = "a protected folder (Jupyter's runtime, data or config folder, or this tool's state)"


@dataclass(frozen=True)
class Change:
    """One path an operation creates, replaces or removes.

    ``real`` is where it lies (absolute, symlinks resolved, from the descriptor of its folder);
    ``verb`` and ``display`` say how the refusal names it (``cannot move to "P": …``); ``made_for``
    is set for a folder made on the way to another path (a missing parent), and is that path's
    display form, which the refusal names first.
    """

    kind: str
    real: str
    verb: str
    display: str
    made_for: str | None = None


def _within(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def refuse(changes: Iterable[Change], protected: Iterable[str]) -> None:
    """Raise ``FS_PROTECTED`` for the first change that touches a protected path; else nothing."""
    protected = tuple(protected)
    for change in changes:
        for top in protected:
            if _within(change.real, top):
                shown = change.made_for if change.made_for is not None else change.display
                raise ToolError(Codes.FS_PROTECTED, f"cannot {change.verb} {in_message(shown)}: {PROTECTED_MESSAGE}")
            if _within(top, change.real):
                raise ToolError(Codes.FS_PROTECTED, _above(change, top))


def _above(change: Change, top: str) -> str:
    if change.made_for is not None:
        return (
            f"cannot {change.verb} {in_message(change.made_for)}: {_KINDS} belongs inside "
            f"{in_message(change.display)}, and no tool makes one"
        )
    head = f"cannot {change.verb} {in_message(change.display)}"
    if change.kind == REMOVE and os.path.lexists(top):
        return f"{head}: it holds {_KINDS}, and those never move"
    if change.kind == REMOVE:
        return f"{head}: {_KINDS} belongs inside it, and those never move"
    return f"{head}: {_KINDS} belongs inside it, and no tool makes one"
