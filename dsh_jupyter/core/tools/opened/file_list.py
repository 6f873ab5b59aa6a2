"""The files a person has open in JupyterLab, as a person's view lists them beside the agent's calls.

Not a tool: no schema, no model text, no call log (``Workspace.open_files`` is its only caller).
The server knows what is open (``core/documents.py``: ``LiveDocuments.open_files``, the shared
documents of collaboration and the tabs pages report); this module decides what of it may be
shown, by ``list``'s rules, and names each file as ``list`` would from the root: its real path
made relative to the root, ``/``-separated.

What it must never do: show a file ``list`` would not show — outside the root, hidden (as it
really lies), matched by a hide glob, inside a protected folder, or a protected file under
another name (a hard link) — nor name any file by its absolute path, nor change anything (it is
served on a GET). What it leaves out it counts (``notShown``), and a list longer than
``OPEN_FILES_MAX`` says how long it was (``total``): never cut silently.
"""

from __future__ import annotations

import os

from ...documents import Presence
from ...errors import ToolError
from ...fs.resolver import is_within
from ...fs.visibility import Visibility

__all__ = ["OPEN_FILES_MAX", "open_files_value"]

# One person has a few dozen files open; the reports allow 1,000 per page and 64 pages per caller,
# so the answer is bounded here. Past it the value lists the first by path and says how many there were.
OPEN_FILES_MAX = 1000


def _shown(real: str, visibility: Visibility) -> str | None:
    """The root-relative path of ``real`` when ``list`` would show it, else None."""
    root = visibility.root
    if real == root or not is_within(real, root):
        return None
    rel = real[len(root) :].lstrip(os.sep).replace(os.sep, "/")
    if visibility.is_protected(real) or visibility.hidden_path(rel) or visibility.globbed_path(rel):
        return None
    try:
        st: os.stat_result | None = os.stat(real)
    except OSError:  # gone from the disk while still open: shown, there is nothing to protect
        st = None
    try:
        visibility.check_identity(st, "show", rel)
    except ToolError:
        return None
    return rel


def open_files_value(found: list[tuple[str, Presence]], visibility: Visibility) -> dict:
    """``{files: [{path, shared, tabs, unsaved}], total, notShown}`` of the open files ``found``.

    ``files`` in path order (by code point), at most ``OPEN_FILES_MAX``; ``total`` counts every
    file that may be shown; ``notShown`` those left out by the rules above. ``unsaved`` is None
    for a shared document (its unsaved typing is in the document every tab shows, and the tools
    read it); ``tabs`` is, for a shared document, its connections (one per page).
    """
    shown: list[tuple[str, Presence]] = []
    for real, presence in found:
        rel = _shown(real, visibility)
        if rel is not None:
            shown.append((rel, presence))
    shown.sort(key=lambda item: item[0])
    files = [
        {"path": rel, "shared": p.shared, "tabs": p.tabs, "unsaved": None if p.shared else p.unsaved}
        for rel, p in shown[:OPEN_FILES_MAX]
    ]
    return {"files": files, "total": len(shown), "notShown": len(found) - len(shown)}
