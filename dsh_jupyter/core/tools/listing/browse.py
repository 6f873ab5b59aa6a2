"""A listing page for a person's view (the widgets): sorted or filtered over the whole folder.

Not a tool: no schema, no model text, no call log (``Workspace.browse`` is its only caller). It
opens the folder exactly as ``list`` does (``tool.opened_folder``: through descriptors beneath
the root, hidden and protected entries left out and counted), so a person sees no more than the
model would, only in another order. It rides on the same kept scan as ``list`` (``caches.folders``):
the name and model orders and a filter's matches are views of the scan, made once and reused
while the folder is unchanged, so a "next" click costs its page. Sorting by size or modification
time stats every entry on every call: a file's size can change without its folder changing.
"""

from __future__ import annotations

import os

from ...errors import Codes, ToolError
from ...fs.files import entry_details
from ...fs.resolver import display_path
from ..context import CallContext
from .tool import _row, folder_scan, opened_folder, visible_entries

__all__ = ["BROWSE_SORTS", "browse_listing"]

BROWSE_SORTS = ("model", "name", "size", "modified")


def browse_listing(
    ctx: CallContext,
    path: str | None = None,
    offset: int = 1,
    limit: int | None = None,
    sort: str = "model",
    descending: bool = False,
    name_filter: str | None = None,
) -> dict:
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
        return _stamp_only(ctx, path)
    with opened_folder(ctx, path, "list") as (target, fd):
        st = os.fstat(fd)
        stamp = [st.st_ino, st.st_mtime_ns, st.st_ctime_ns]
        try:
            scan = folder_scan(ctx, fd)
        except OSError as exc:
            raise target.error(exc) from None
        entries, hidden = visible_entries(ctx, scan, target.real)
        real = (ctx.resolver.visibility, target.real)  # the views depend on the rules and the folder
        # Views of the scan (kept with it; never modified): every row, a filter's rows, an order.
        rows = scan.view(("rows", real), lambda: entries.page(0, len(entries)))
        if name_filter:
            needle = name_filter.casefold()
            everything = rows
            rows = scan.view(("filter", real, needle), lambda: [r for r in everything if needle in r[0].casefold()])
        if offset < 1 or offset > max(len(rows), 1):
            raise ToolError(Codes.ARGUMENT_INVALID, f"offset {offset} is out of range ({len(rows)} entries)")
        place = (target.real, ctx.resolver.root)  # where a link's target is shown from
        rows, details = _ordered(scan, fd, rows, real, sort, descending, name_filter, place)
        page = []
        for name, kind in rows[offset - 1 : offset - 1 + limit]:
            row = _row(name, kind)
            row.update(details[name] if details is not None else entry_details(fd, name, place))
            page.append(row)
        return {
            "path": target.display,
            "offset": offset,
            "entries": page,
            "totalEntries": len(entries),
            "matchedEntries": len(rows),
            "counts": {
                "directories": len(entries.directories),
                "files": len(entries.files),
                "other": len(entries.other),
            },
            "hiddenEntries": hidden,
            "sort": sort,
            "descending": bool(descending),
            "filter": name_filter or "",
            "stamp": stamp,
        }


def _stamp_only(ctx: CallContext, path: str | None) -> dict:
    """The cheap check: the folder's display path and stamp from one ``fstat``, no scan."""
    try:
        with opened_folder(ctx, path, "list") as (target, fd):
            st = os.fstat(fd)
            return {"path": target.display, "stamp": [st.st_ino, st.st_mtime_ns, st.st_ctime_ns]}
    except ToolError as exc:
        if exc.code not in (Codes.FS_NOT_FOUND, Codes.FS_NOT_DIRECTORY):
            raise
        _raw, lexical = ctx.resolver.lexical(ctx.cwd, path)
        return {"path": display_path(lexical, ctx.cwd), "stamp": None}  # gone: no stamp, no scan


def _ordered(
    scan, fd: int, rows: list, real: tuple, sort: str, descending: bool, name_filter: str | None, place: tuple
):
    """``rows`` in the asked order, and the entries' details when the order needed them (else None)."""
    if sort in ("size", "modified"):
        details = {name: entry_details(fd, name, place) for name, _ in rows}
        field = "size" if sort == "size" else "mtime"
        ordered = sorted(
            rows,
            key=lambda r: details[r[0]].get(field, -1) if field == "mtime" or r[1] == "file" else -1,
            reverse=descending,
        )  # stable either way: ties keep the model's order
        return ordered, details
    if sort == "name":
        key = ("order", real, name_filter or "", sort, descending)
        return scan.view(key, lambda: sorted(rows, key=lambda r: r[0].casefold(), reverse=descending)), None
    if descending:
        return scan.view(("order", real, name_filter or "", sort, descending), lambda: rows[::-1]), None
    return rows, None
