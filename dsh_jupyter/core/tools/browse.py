"""A listing page for a person's view (the widgets): sorted or filtered over the whole folder.

Not a tool: no schema, no model text, no call log (``Workspace.browse`` is its only caller). It
opens the folder exactly as ``list`` does (``listing.opened_folder``: through descriptors beneath
the root, hidden and protected entries left out and counted), so a person sees no more than the
model would, only in another order.
"""

from __future__ import annotations

import os

from ..context import CallContext
from ..errors import Codes, ToolError
from ..fsio import entry_details, scan_directory
from ..paths import display_path
from .listing import _row, _visible, opened_folder

__all__ = ["browse_listing", "BROWSE_SORTS"]

BROWSE_SORTS = ("model", "name", "size", "modified")


def browse_listing(ctx: CallContext, path: str | None = None, offset: int = 1, limit: int | None = None,
                   sort: str = "model", descending: bool = False, name_filter: str | None = None) -> dict:
    """One page: ``list``'s value keys plus ``matchedEntries``, ``sort``, ``descending``, ``filter``, ``stamp``.

    ``matchedEntries`` counts the entries left by ``name_filter`` (``offset`` counts those);
    ``stamp`` is the folder's inode, mtime and ctime in ns, a cheap "changed since?" check.
    ``sort`` is ``model`` (the tool's own order), ``name`` (case-insensitive), ``size`` (files by
    size; directories and other entries count as -1) or ``modified``. ``limit`` 0 is the cheap
    check: ``path`` and ``stamp`` only, from one ``fstat`` of the folder, without scanning it.
    """
    if sort not in BROWSE_SORTS:
        raise ToolError(Codes.ARGUMENT_INVALID, f"sort must be one of {', '.join(BROWSE_SORTS)}")
    cap = ctx.settings.list_max_entries
    limit = cap if limit is None else min(max(limit, 0), cap)
    if limit == 0:
        try:
            with opened_folder(ctx, path, "list") as (target, fd):
                st = os.fstat(fd)
                return {"path": target.display, "stamp": [st.st_ino, st.st_mtime_ns, st.st_ctime_ns]}
        except ToolError as exc:
            if exc.code not in (Codes.FS_NOT_FOUND, Codes.FS_NOT_DIRECTORY):
                raise
            _raw, lexical = ctx.resolver.lexical(ctx.cwd, path)
            return {"path": display_path(lexical, ctx.cwd), "stamp": None}  # gone: no stamp, no scan
    with opened_folder(ctx, path, "list") as (target, fd):
        st = os.fstat(fd)
        stamp = [st.st_ino, st.st_mtime_ns, st.st_ctime_ns]
        try:
            entries = scan_directory(fd)
        except OSError as exc:
            raise target.error(exc) from None
        entries, hidden = _visible(ctx, entries, target.real)
        rows = entries.page(0, len(entries))
        if name_filter:
            needle = name_filter.casefold()
            rows = [r for r in rows if needle in r[0].casefold()]
        if offset < 1 or offset > max(len(rows), 1):
            raise ToolError(Codes.ARGUMENT_INVALID, f"offset {offset} is out of range ({len(rows)} entries)")
        details = None
        if sort in ("size", "modified"):
            details = {name: entry_details(fd, name) for name, _ in rows}
            field = "size" if sort == "size" else "mtime"
            rows.sort(key=lambda r: details[r[0]].get(field, -1) if field == "mtime" or r[1] == "file" else -1,
                      reverse=descending)  # stable either way: ties keep the model's order
        elif sort == "name":
            rows.sort(key=lambda r: r[0].casefold(), reverse=descending)
        elif descending:
            rows.reverse()
        page = []
        for name, kind in rows[offset - 1 : offset - 1 + limit]:
            row = _row(name, kind)
            row.update(details[name] if details is not None else entry_details(fd, name))
            page.append(row)
        return {
            "path": target.display,
            "offset": offset,
            "entries": page,
            "totalEntries": len(entries),
            "matchedEntries": len(rows),
            "counts": {"directories": len(entries.directories), "files": len(entries.files),
                       "other": len(entries.other)},
            "hiddenEntries": hidden,
            "sort": sort,
            "descending": bool(descending),
            "filter": name_filter or "",
            "stamp": stamp,
        }
