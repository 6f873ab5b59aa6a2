"""Executors for ``list`` (paged, direct children) and ``list_dir`` (compatibility).

Both read folders only through descriptors: the folder is opened beneath the root, scanned with
``scandir`` on its descriptor, and entry details are ``fstatat`` calls in it; a recursive
``list_dir`` opens each subfolder with ``O_NOFOLLOW`` from its parent's descriptor, so a folder
swapped for a symlink mid-walk is listed but never entered. A folder's sorted scan (and the
visible part of it) comes from the workspace's ``dircache.FolderCache`` when the folder's stamp,
taken from the descriptor just opened, proves the kept scan current; so a second page of a big
folder costs the page, not the folder.
"""

from __future__ import annotations

import contextlib
import errno
import os

from .context import CallContext
from ..errors import Codes, ToolError
from ..caches.folders import FolderScan, uncached_scan
from ..fs.files import Listing, entry_details
from ..text.quoting import has_raw_bytes, in_message

__all__ = ["execute_list", "execute_list_dir", "opened_folder", "folder_scan", "visible_entries"]

_SUBDIR = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


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
    return scan.view(("visible", ctx.resolver.visibility, folder_real), lambda: _visible(ctx, scan.listing, folder_real),
                     size=lambda kept: 0 if kept[0] is scan.listing else len(kept[0]))


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
            raise ToolError(
                Codes.ARGUMENT_INVALID,
                f'offset {offset} is out of range for {in_message(target.display)} ({total} {"entry" if total == 1 else "entries"})',
            )
        counts = {"directories": len(entries.directories), "files": len(entries.files), "other": len(entries.other)}
        rows = []
        for name, kind in entries.page(offset - 1, ctx.settings.list_max_entries):
            row = _row(name, kind)
            row.update(entry_details(fd, name))
            rows.append(row)
        return {
            "path": target.display,
            "offset": offset,
            "entries": rows,
            "totalEntries": total,
            "counts": counts,
            "hiddenEntries": hidden,
        }


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


def _names(fd: int, keep=None) -> list[tuple[str, bool]]:
    with os.scandir(fd) as it:
        found = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
    if keep is not None:
        found = [f for f in found if keep(f[0])]
    found.sort()
    return found


def execute_list_dir(ctx: CallContext, args: dict) -> dict:
    """Names (flat) or relative paths in pre-order (recursive), bounded by list_dir_max_entries."""
    try:
        cm = opened_folder(ctx, args["path"], "list")
        target, fd = cm.__enter__()
    except ToolError as exc:
        raise _compat(exc) from None
    try:
        return _list_dir(ctx, target, fd, bool(args.get("recursive")))
    finally:
        cm.__exit__(None, None, None)


def _compat(exc: ToolError) -> ToolError:
    """list_dir keeps the error codes of the system it is compatible with."""
    if exc.code in (Codes.FS_OUTSIDE_ROOT, Codes.ARGUMENT_INVALID, Codes.FS_HIDDEN, Codes.FS_PROTECTED):
        return exc
    code = {Codes.FS_NOT_FOUND: Codes.LIST_DIR_NOT_FOUND, Codes.FS_NOT_DIRECTORY: Codes.LIST_DIR_NOT_A_DIR}
    return ToolError(code.get(exc.code, Codes.LIST_DIR_FS_ERROR), exc.message)


def _list_dir(ctx: CallContext, target, fd: int, recursive: bool) -> dict:
    limit = ctx.settings.list_dir_max_entries
    vis = ctx.resolver.visibility
    left_out = [0]
    filtering = not vis.allow_hidden or bool(vis.hide_globs) or bool(vis.protected)

    def keeper(folder_real: str | None):
        if not filtering:
            return None
        protected = vis.protected_names(folder_real) if folder_real is not None else frozenset()

        def keep(name: str) -> bool:
            ok = vis.shown(name) and name not in protected
            left_out[0] += not ok
            return ok

        return keep

    def done(value: dict) -> dict:
        if left_out[0]:
            value["hiddenEntries"] = left_out[0]  # left out as Jupyter leaves them out; counted
        return value

    try:
        if not recursive:
            return done({"entries": [name for name, _ in _names(fd, keeper(target.real))]})
        out: list[str] = []
        # Pre-order walk with an explicit stack of (folder fd, child iterator); symlinked
        # folders are listed, never entered, and each folder is opened from its parent's fd.
        stack = [(None, iter([("", n, d) for n, d in _names(fd, keeper(target.real))]))]
        opened: list[int] = []
        try:
            while stack:
                parent_fd, items = stack[-1]
                item = next(items, None)
                if item is None:
                    stack.pop()
                    if parent_fd is not None:
                        os.close(parent_fd)
                        opened.remove(parent_fd)
                    continue
                prefix, name, is_dir = item
                if len(out) >= limit:
                    return done({"entries": out, "truncated": True, "totalEntries": None})
                rel = prefix + name
                out.append(rel)
                if is_dir:
                    try:
                        child = os.open(name, _SUBDIR, dir_fd=parent_fd if parent_fd is not None else fd)
                    except OSError as exc:
                        if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT, errno.EACCES, errno.EPERM):
                            raise
                        continue  # swapped for a symlink, gone, or unreadable: listed, not entered
                    opened.append(child)
                    try:
                        grandchildren = _names(child, keeper(os.path.join(target.real, rel)))
                    except OSError:
                        grandchildren = []
                    stack.append((child, iter([(rel + "/", n, d) for n, d in grandchildren])))
        finally:
            for extra in opened:
                os.close(extra)
        return done({"entries": out})
    except OSError as exc:
        raise _compat(target.error(exc)) from None
