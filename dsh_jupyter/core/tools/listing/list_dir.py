"""``list_dir``: the compatibility listing, names as JSON, or every path below in pre-order (bounded).

It keeps the error codes (``not-found``, ``not-a-dir``, ``fs-error``) of the system it is
compatible with; ``list`` is the tool a model should prefer.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator

from ...errors import Codes, ToolError
from ...render.listing import render_list_dir
from ..context import CallContext
from ..spec import BOOLEAN, INTEGER, PATH, STRING, Rows, ToolSpec, nullable, object_schema, value_schema
from .tool import opened_folder

__all__ = ["LIST_DIR", "UNREADABLE_SHOWN", "execute_list_dir"]

UNREADABLE_SHOWN = 10  # folders a recursive listing names that it could not read (all are counted)

_SUBDIR = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _names(fd: int, keep=None) -> tuple[list[str], set[str]]:
    """The sorted names of the open folder ``fd`` that ``keep`` keeps, and which of them are
    folders (not following symlinks). Names are sorted as strings, the folders kept apart: a
    folder of 100,000 entries sorts in a third of the time tuples take."""
    with os.scandir(fd) as it:
        entries = list(it)
    names = [e.name for e in entries]
    folders = {e.name for e in entries if e.is_dir(follow_symlinks=False)}
    if keep is not None:
        names = keep(names)
    names.sort()
    return names, folders


def _items(prefix: str, names: list[str], folders: set[str]) -> Iterator[tuple[str, str, bool]]:
    """``(prefix, name, is a folder)`` of each name, made as the walk reaches it (a walk that stops
    at its cap never builds the rest of a big folder's)."""
    return ((prefix, name, name in folders) for name in names)


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

        def keep(names: list[str]) -> list[str]:
            kept = vis.shown_names(names)
            if protected:
                kept = [name for name in kept if name not in protected]
            left_out[0] += len(names) - len(kept)
            return kept

        return keep

    unreadable: list[str] = []  # folders listed but not entered: they could not be opened or read

    def done(value: dict) -> dict:
        if left_out[0]:
            value["hiddenEntries"] = left_out[0]  # left out as Jupyter leaves them out; counted
        if unreadable:
            value["unreadable"] = {"count": len(unreadable), "first": unreadable[:UNREADABLE_SHOWN]}
        return value

    try:
        if not recursive:
            return done({"entries": _names(fd, keeper(target.real))[0]})
        out: list[str] = []
        # Pre-order walk with an explicit stack of (folder fd, child iterator); symlinked
        # folders are listed, never entered, and each folder is opened from its parent's fd.
        stack: list[tuple[int | None, Iterator[tuple[str, str, bool]]]] = [
            (None, _items("", *_names(fd, keeper(target.real))))
        ]
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
                    return done(
                        {
                            "entries": out,
                            "truncated": True,
                            "totalEntries": None,
                            "note": f"the walk stopped after {limit} entries, so the total is not known; "
                            "list a subfolder to see the rest",
                        }
                    )
                rel = prefix + name
                out.append(rel)
                if is_dir:
                    try:
                        child = os.open(name, _SUBDIR, dir_fd=parent_fd if parent_fd is not None else fd)
                    except OSError as exc:
                        if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                            unreadable.append(rel)  # no permission, or out of descriptors: said, not hidden
                        continue  # swapped for a symlink, gone, or unreadable: listed, not entered
                    opened.append(child)
                    try:
                        grandchildren = _names(child, keeper(os.path.join(target.real, rel)))
                    except OSError:
                        unreadable.append(rel)
                        grandchildren = ([], set())
                    stack.append((child, _items(rel + "/", *grandchildren)))
        finally:
            for extra in opened:
                os.close(extra)
        return done({"entries": out, "totalEntries": len(out)})
    except OSError as exc:
        raise _compat(target.error(exc)) from None


LIST_DIR_OUTPUT = value_schema(
    {
        "entries": {"type": "array", "items": STRING},
        "truncated": BOOLEAN,
        "totalEntries": nullable(INTEGER),  # null: a truncated walk does not know the total
        "note": STRING,  # why the total is not known
        "unreadable": value_schema({"count": INTEGER, "first": {"type": "array", "items": STRING}}),
        "hiddenEntries": INTEGER,
    },
    ("entries",),
)


LIST_DIR = ToolSpec(
    name="list_dir",
    title="List folder (JSON)",
    description=(
        'Compatibility listing: the names in a directory as JSON {"entries": [...]}, or, with '
        "recursive, every relative path below it in pre-order and their total (bounded; a capped "
        'walk says "truncated": true and that the total is not known; folders it could not read '
        'are counted under "unreadable").'
    ),
    input_schema=object_schema(
        {
            "path": {**PATH, "description": "Directory to list."},
            "recursive": {"type": "boolean", "description": "List all descendants (default false)."},
        },
        ("path",),
    ),
    output_schema=LIST_DIR_OUTPUT,
    guidance=(
        "list_dir exists for clients written against the older JSON listing; prefer list, which "
        "pages and states the complete count."
    ),
    execute=execute_list_dir,
    render=render_list_dir,
    rows=(Rows("entries", ("entry",)),),
)
