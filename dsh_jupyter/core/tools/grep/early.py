"""A search's first matches while it still runs, for the person who started it (a search panel).

Why it exists: a broad grep answers when rg has finished; a person's panel should show the first
files as soon as rg has written them. While rg writes its heading form (``rg.headingform``), the
first whole files' matches are handed to ``CallContext.preview`` with the progress report: at most
EARLY_MATCHES rows ``{path, line, text}``, in rg's order.

What it must never do: show a line the answer itself could not show. The rows pass the answer's
own filters: a VCS folder, a folder left out (protected, the spill store) and a protected file
reached under another name (a hard link) are dropped, and a text is cut to
``grep_max_line_bytes`` as the page cuts it. A search whose lines must be checked again beneath
the root (rg running unfenced) shows none early. The rows reach only the caller who started the
call (``progress.ProgressBoard``); nothing is written anywhere.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ...render.search import truncate_line
from ...rg.headingform import BlockStream
from ..context import CallContext
from ..search.flags import VCS_IN_PATH
from ..search.run import unfenced
from ..search.scans import drop_excluded
from .page import without_preview

__all__ = ["EARLY_MATCHES", "early_rows"]

EARLY_MATCHES = 100  # rows shown early at most: about what a panel shows above the fold, and more


def early_rows(ctx: CallContext, root, excluded: list[str]) -> Callable[[BlockStream], None] | None:
    """What tells ``ctx.preview`` the first whole files' matches of ``blocks`` so far; None when
    nobody asks or the rows cannot be vouched for before the answer (one file, rg unfenced)."""
    if ctx.preview is None or not root.is_dir or unfenced(ctx):
        return None
    tell = ctx.preview
    hidden = [root.prefix + rel for rel in excluded]
    linked = ctx.resolver.visibility.linked_protected()
    limit = ctx.settings.grep_max_line_bytes
    state = {"files": 0, "rows": 0}

    def protected(rel: str) -> bool:
        try:
            st = os.stat(rel, dir_fd=root.fd, follow_symlinks=False)
        except OSError:
            return True  # gone or changed since rg read it: nothing to vouch for
        return st.st_nlink > 1 and (st.st_dev, st.st_ino) in linked

    def show(blocks: BlockStream) -> None:
        files = blocks.files
        if files == state["files"] or state["rows"] >= EARLY_MATCHES:
            return
        head = blocks.head(files)
        rows: list[dict] = []
        for block, path in enumerate(head.paths):
            rel = path.removeprefix("./")
            shown = root.prefix + rel
            if VCS_IN_PATH.search(shown) or (hidden and not drop_excluded([shown], hidden)):
                continue
            if linked and protected(rel):
                continue
            for k in range(min(head.counts[block], EARLY_MATCHES - len(rows))):
                number, raw = head.line(block, k)
                text = raw.decode("utf-8", "replace").removesuffix("\r")
                rows.append({"path": shown, "line": number, "text": truncate_line(without_preview(text, limit), limit)})
            if len(rows) >= EARLY_MATCHES:
                break
        state["files"], state["rows"] = files, len(rows)
        if rows:
            tell(rows)

    return show
