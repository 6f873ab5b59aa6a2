"""Executors for ``list`` (paged, direct children) and ``list_dir`` (compatibility)."""

from __future__ import annotations

import os
import stat

from ..context import CallContext
from ..errors import Codes, ToolError
from ..fsio import entry_details, scan_directory
from ..paths import printable
from ..render.quoting import in_message

__all__ = ["execute_list", "execute_list_dir", "browse_listing", "BROWSE_SORTS"]


def _scan(ctx: CallContext, path: str | None, verb: str):
    target = ctx.resolver.resolve(ctx.cwd, path, verb=verb)
    if not target.exists:
        raise ToolError(Codes.FS_NOT_FOUND, f'cannot {verb} {in_message(target.display)}: not found')
    if not os.path.isdir(target.real):
        raise ToolError(Codes.FS_NOT_DIRECTORY, f'cannot {verb} {in_message(target.display)}: not a directory')
    try:
        return target, scan_directory(target.real)
    except NotADirectoryError:
        raise ToolError(Codes.FS_NOT_DIRECTORY, f'cannot {verb} {in_message(target.display)}: not a directory') from None
    except OSError as exc:
        raise ToolError(Codes.FS_ERROR, f'cannot {verb} {in_message(target.display)}: {exc.strerror or exc}') from None


def execute_list(ctx: CallContext, args: dict) -> dict:
    """One page of one directory. Records no observation: seeing a name is not reading a file."""
    offset = args.get("offset", 1)
    target, entries = _scan(ctx, args.get("path"), "list")
    total = len(entries)
    if offset > max(total, 1):
        raise ToolError(
            Codes.ARGUMENT_INVALID,
            f'offset {offset} is out of range for {in_message(target.display)} ({total} {"entry" if total == 1 else "entries"})',
        )
    counts = {"directories": len(entries.directories), "files": len(entries.files), "other": len(entries.other)}
    rows = []
    for name, kind in entries.page(offset - 1, ctx.settings.list_max_entries):
        row = {"name": printable(name), "type": kind}
        row.update(entry_details(target.real, name))
        rows.append(row)
    return {
        "path": target.display,
        "offset": offset,
        "entries": rows,
        "totalEntries": total,
        "counts": counts,
    }


BROWSE_SORTS = ("model", "name", "size", "modified")


def browse_listing(ctx: CallContext, path: str | None = None, offset: int = 1, limit: int | None = None,
                   sort: str = "model", descending: bool = False, name_filter: str | None = None) -> dict:
    """One page of a directory for a person's view: sorted or filtered over the whole listing.

    Not a tool: no schema, no model text, no call log (``Workspace.browse`` is its only caller).
    It scans through ``_scan``, the one place ``list`` opens a directory, and returns the
    ``list`` value's keys plus ``matchedEntries`` (entries left by ``name_filter``, which
    ``offset`` counts), ``sort``, ``descending``, ``filter`` and ``stamp`` (the directory's
    inode, mtime and ctime in ns: a cheap "changed since?" check). ``sort`` is ``model`` (the
    tool's own order), ``name`` (case-insensitive), ``size`` (files by size; directories and
    other entries count as -1) or ``modified``. ``limit`` 0 is the cheap check: ``path`` and
    ``stamp`` only, from one stat of the directory, without scanning it.
    """
    if sort not in BROWSE_SORTS:
        raise ToolError(Codes.ARGUMENT_INVALID, f"sort must be one of {', '.join(BROWSE_SORTS)}")
    cap = ctx.settings.list_max_entries
    limit = cap if limit is None else min(max(limit, 0), cap)
    if limit == 0:
        target = ctx.resolver.resolve(ctx.cwd, path, verb="list")
        try:
            st = os.stat(target.real) if target.exists else None
        except OSError:
            st = None
        if st is None or not stat.S_ISDIR(st.st_mode):
            return {"path": target.display, "stamp": None}
        return {"path": target.display, "stamp": [st.st_ino, st.st_mtime_ns, st.st_ctime_ns]}
    target, entries = _scan(ctx, path, "list")
    st = os.stat(target.real)
    rows = entries.page(0, len(entries))
    if name_filter:
        needle = name_filter.casefold()
        rows = [r for r in rows if needle in r[0].casefold()]
    if offset < 1 or offset > max(len(rows), 1):
        raise ToolError(Codes.ARGUMENT_INVALID, f"offset {offset} is out of range ({len(rows)} entries)")
    details = None
    if sort in ("size", "modified"):
        details = {name: entry_details(target.real, name) for name, _ in rows}
        field = "size" if sort == "size" else "mtime"
        rows.sort(key=lambda r: details[r[0]].get(field, -1) if field == "mtime" or r[1] == "file" else -1,
                  reverse=descending)  # stable either way: ties keep the model's order
    elif sort == "name":
        rows.sort(key=lambda r: r[0].casefold(), reverse=descending)
    elif descending:
        rows.reverse()
    page = []
    for name, kind in rows[offset - 1 : offset - 1 + limit]:
        row = {"name": printable(name), "type": kind}
        row.update(details[name] if details is not None else entry_details(target.real, name))
        page.append(row)
    return {
        "path": target.display,
        "offset": offset,
        "entries": page,
        "totalEntries": len(entries),
        "matchedEntries": len(rows),
        "counts": {"directories": len(entries.directories), "files": len(entries.files), "other": len(entries.other)},
        "sort": sort,
        "descending": bool(descending),
        "filter": name_filter or "",
        "stamp": [st.st_ino, st.st_mtime_ns, st.st_ctime_ns],
    }


def execute_list_dir(ctx: CallContext, args: dict) -> dict:
    """Names (flat) or relative paths in pre-order (recursive), bounded by list_dir_max_entries."""
    verb = "list"
    try:
        target = ctx.resolver.resolve(ctx.cwd, args["path"], verb=verb)
    except ToolError as exc:
        if exc.code in (Codes.FS_OUTSIDE_ROOT, Codes.ARGUMENT_INVALID):
            raise
        raise ToolError(Codes.LIST_DIR_FS_ERROR, exc.message) from None
    if not target.exists:
        raise ToolError(Codes.LIST_DIR_NOT_FOUND, f'cannot list {in_message(target.display)}: not found')
    if not os.path.isdir(target.real):
        raise ToolError(Codes.LIST_DIR_NOT_A_DIR, f'cannot list {in_message(target.display)}: not a directory')
    limit = ctx.settings.list_dir_max_entries
    out: list[str] = []

    def names(real: str) -> list[tuple[str, bool]]:
        with os.scandir(real) as it:
            found = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        found.sort()
        return found

    try:
        if not args.get("recursive"):
            return {"entries": [printable(n) for n, _ in names(target.real)]}
        # Pre-order walk with an explicit stack of child iterators (no recursion limit);
        # symlinked directories are listed, never entered.
        stack = [iter([(target.real, "", n, d) for n, d in names(target.real)])]
        while stack:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
                continue
            real, prefix, name, is_dir = item
            if len(out) >= limit:
                return {"entries": out, "truncated": True, "totalEntries": None}
            rel = prefix + name
            out.append(printable(rel))
            if is_dir:
                child = os.path.join(real, name)
                try:
                    grandchildren = names(child)
                except OSError:
                    grandchildren = []  # an unreadable subdirectory is listed but not entered
                stack.append(iter([(child, rel + "/", n, d) for n, d in grandchildren]))
    except OSError as exc:
        raise ToolError(Codes.LIST_DIR_FS_ERROR, f'cannot list {in_message(target.display)}: {exc.strerror or exc}') from None
    return {"entries": out}
