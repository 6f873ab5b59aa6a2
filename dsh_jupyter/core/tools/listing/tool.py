"""``list``: one page of a folder's direct children, with the complete count in the footer.

Folders are read only through descriptors: the folder is opened beneath the root, scanned with
``scandir`` on its descriptor, and entry details are ``fstatat`` calls in it (``list_dir`` and the
widgets' ``browse`` open folders the same way, through ``opened_folder``). A folder's sorted scan (and the
visible part of it) comes from the workspace's ``caches.folders.FolderCache`` when the folder's stamp,
taken from the descriptor just opened, proves the kept scan current; so a second page of a big
folder costs the page, not the folder.
"""

from __future__ import annotations

import contextlib
import os

from ...caches.folders import FolderScan, uncached_scan
from ...errors import Codes, ToolError
from ...fs.files import Listing, entry_details
from ...render.listing import list_next_offset, list_page_footer, render_list
from ...text.quoting import has_raw_bytes, in_message
from ..context import CallContext
from ..spec import (
    BOOLEAN,
    INTEGER,
    NUMBER,
    OFFSET,
    PATH,
    STRING,
    Rows,
    ToolSpec,
    nullable,
    object_schema,
    rows,
    value_schema,
)

__all__ = ["LIST", "execute_list", "folder_scan", "opened_folder", "visible_entries"]


@contextlib.contextmanager
def opened_folder(ctx: CallContext, path: str | None, verb: str):
    """``(target, fd)`` of a folder opened beneath the root; ``FS_NOT_FOUND``/``FS_NOT_DIRECTORY``."""
    with ctx.resolve(path, verb) as target:
        not_dir = ToolError(Codes.FS_NOT_DIRECTORY, f"cannot {verb} {in_message(target.display)}: not a directory")
        fd, _st = target.open_dir(not_dir)
        try:
            yield target, fd
        finally:
            os.close(fd)


def folder_scan(ctx: CallContext, fd: int) -> FolderScan:
    """The sorted scan of the open folder ``fd``: kept from an earlier call while provably current."""
    cache = ctx.folders
    return cache.scan(fd) if cache is not None else uncached_scan(fd)


def visible_entries(ctx: CallContext, scan: FolderScan, folder_real: str) -> tuple[Listing, int]:
    """``_visible`` of a scan, computed once per scan and visibility (the rules and the folder are the key,
    so workspaces or callers with other rules never share a filtered view)."""
    return scan.view(
        ("visible", ctx.resolver.visibility, folder_real),
        lambda: _visible(ctx, scan.listing, folder_real),
        size=lambda kept: 0 if kept[0] is scan.listing else len(kept[0]),
    )


def _row(name: str, kind: str) -> dict:
    row = {"name": name, "type": kind}
    if has_raw_bytes(name):
        row["encoding"] = "bytes"  # the name holds bytes that are not UTF-8 (shown as \\udcXX)
    return row


def execute_list(ctx: CallContext, args: dict) -> dict:
    """One page of one directory. Records no observation: seeing a name is not reading a file."""
    offset = args.get("offset", 1)
    with opened_folder(ctx, args.get("path"), "list") as (target, fd):
        try:
            scan = folder_scan(ctx, fd)
        except OSError as exc:
            raise target.error(exc) from None
        entries, hidden = visible_entries(ctx, scan, target.real)
        total = len(entries)
        if offset > max(total, 1):
            noun = "entry" if total == 1 else "entries"
            raise ToolError(
                Codes.ARGUMENT_INVALID,
                f"offset {offset} is out of range for {in_message(target.display)} ({total} {noun})",
            )
        counts = {"directories": len(entries.directories), "files": len(entries.files), "other": len(entries.other)}
        rows = []
        for name, kind in entries.page(offset - 1, ctx.settings.list_max_entries):
            row = _row(name, kind)
            row.update(entry_details(fd, name, (target.real, ctx.resolver.root)))
            rows.append(row)
        value = {
            "path": target.display,
            "offset": offset,
            "entries": rows,
            "totalEntries": total,
            "counts": counts,
            "hiddenEntries": hidden,
        }
        if args.get("details"):
            value["details"] = True
        return value


def _visible(ctx: CallContext, entries: Listing, folder_real: str) -> tuple[Listing, int]:
    """The listing without hidden, hide-glob and protected entries, and how many were left out."""
    vis = ctx.resolver.visibility
    protected = vis.protected_names(folder_real)
    if vis.allow_hidden and not vis.hide_globs and not protected:
        return entries, 0
    shown = vis.shown

    def keep(names: list[str]) -> list[str]:
        return [n for n in names if shown(n) and n not in protected]

    kept = Listing(keep(entries.directories), keep(entries.files), keep(entries.other))
    return kept, len(entries) - len(kept)


LIST_OUTPUT = value_schema(
    {
        "path": STRING,
        "offset": INTEGER,
        "entries": rows(
            {
                "name": STRING,
                "type": {"enum": ["file", "directory", "other"]},
                "size": nullable(INTEGER),
                "mtime": nullable(NUMBER),
                "target": nullable(STRING),
            },
            ("name", "type"),
        ),
        "totalEntries": INTEGER,
        "counts": value_schema({"directories": INTEGER, "files": INTEGER, "other": INTEGER}),
        "hiddenEntries": INTEGER,
        "details": BOOLEAN,
    },
    ("path", "offset", "entries", "totalEntries", "counts"),
)

LIST = ToolSpec(
    name="list",
    title="List folder",
    description=(
        "List the direct children of one directory (default: the session working directory), "
        "directories first, then files, then other entries, each alphabetical. One page holds at "
        "most a fixed number of entries; the footer always gives the complete count and the offset "
        "of the next page."
    ),
    input_schema=object_schema(
        {
            "path": {**PATH, "description": "Directory to list, relative to the working directory."},
            "offset": {**OFFSET, "description": "1-based entry to start the page at (default 1)."},
            "details": {
                **BOOLEAN,
                "description": "Add each file's size (human and exact) and modification time (UTC) to its row.",
            },
        }
    ),
    output_schema=LIST_OUTPUT,
    guidance=(
        "Start here when you need to know what a directory holds: list shows every entry with its "
        "type, empty directories included, and says how many there are in total. Page with the "
        "offset the footer gives. Use glob or grep once you know the file pattern or the text."
    ),
    execute=execute_list,
    render=render_list,
    rows=(Rows("entries", ("name", "type", "size", "mtime", "target")),),
    footer=list_page_footer,
    next_offset=list_next_offset,
)
