"""The tool registry: each tool's name, description, argument schema, guidance and functions.

One table, read by every surface: the REST ``GET /tools``, the magic's ``%dsh tools`` and
``Workspace.run``. ``glob`` and ``grep`` are offered only when a ripgrep binary was found when
the registry was built: a schema shown to a model is a promise that the tool can run.
"""

from __future__ import annotations

import logging

from .render.listing import render_list, render_list_dir
from .render.reading import render_edit, render_read, render_write
from .tools.listing import execute_list, execute_list_dir
from .tools.mutation import execute_edit, execute_write
from .tools.read import execute_read
from .tools.search import GLOB, GREP
from .tools.spec import NAME, OFFSET, PATH, TEXT, ToolSpec, nullable, object_schema, value_schema

__all__ = ["ToolSpec", "build_registry"]  # ToolSpec lives in toolspec.py; re-exported for callers

log = logging.getLogger(__name__)

_STR, _INT, _BOOL, _NUM = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {"type": "number"}
_LINES = {"type": "array", "items": value_schema({"number": _INT, "text": _STR})}


def _rows(props: dict, required: tuple[str, ...]) -> dict:
    return {"type": "array", "items": value_schema(props, required)}


LIST_OUTPUT = value_schema({
    "path": _STR,
    "offset": _INT,
    "entries": _rows({"name": _STR, "type": {"enum": ["file", "directory", "other"]}, "size": nullable(_INT),
                      "mtime": nullable(_NUM), "target": nullable(_STR)}, ("name", "type")),
    "totalEntries": _INT,
    "counts": value_schema({"directories": _INT, "files": _INT, "other": _INT}),
    "hiddenEntries": _INT,
}, ("path", "offset", "entries", "totalEntries", "counts"))

# read answers one of two shapes: numbered lines of a text file, or the cells of a notebook.
_TEXT_READ = value_schema({
    "path": _STR,
    "offset": _INT,
    "lines": _LINES,
    "totalLines": nullable(_INT),  # null: a streamed window that ended before the end of the file
    "capped": _BOOL,
    "note": _STR,
}, ("path", "offset", "lines", "totalLines"))
_OUTPUT = value_schema({
    "number": _INT, "outputType": _STR, "text": nullable(_STR), "more": _INT, "name": _STR,
    "data": _rows({"mime": _STR, "bytes": _INT}, ("mime", "bytes")),
    "ename": _STR, "evalue": _STR, "omitted": _INT,
}, ("number", "outputType"))
_CELL = value_schema({
    "index": _INT,
    "id": nullable(_STR),
    "type": _STR,
    "executionCount": nullable(_INT),
    "lines": _LINES,
    "totalLines": _INT,
    "attachments": _rows({"name": _STR, "mime": _STR, "bytes": _INT}, ("name", "mime", "bytes")),
    "outputs": {"type": "array", "items": _OUTPUT},
    "cut": nullable(value_schema({"linesShown": _INT, "linesTotal": _INT, "attachmentsHidden": _INT,
                                  "outputsHidden": _INT})),
}, ("index", "type", "lines", "outputs"))
_NOTEBOOK_READ = value_schema({
    "path": _STR,
    "type": {"const": "notebook"},
    "offset": _INT,
    "cells": {"type": "array", "items": _CELL},
    "totalCells": _INT,
    "capped": _BOOL,
    "live": _BOOL,
}, ("path", "type", "offset", "cells", "totalCells"))
READ_OUTPUT = {"type": "object", "anyOf": [_TEXT_READ, _NOTEBOOK_READ]}

WRITE_OUTPUT = value_schema({"path": _STR, "operation": {"enum": ["create", "update"]}, "bytes": _INT,
                             "live": _BOOL}, ("path", "operation", "bytes"))
EDIT_OUTPUT = value_schema({"path": _STR, "replaceAll": _BOOL, "replacements": _INT,
                            "cells": {"type": "array", "items": _INT}, "live": _BOOL}, ("path", "replacements"))
LIST_DIR_OUTPUT = value_schema({
    "entries": {"type": "array", "items": _STR},
    "truncated": _BOOL,
    "totalEntries": {"type": "null"},  # a truncated walk does not know the total
}, ("entries",))


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
    rows_key="entries",
)

READ = ToolSpec(
    name="read",
    title="Read file",
    description=(
        "Read a UTF-8 text file as numbered lines. offset is the 1-based first line, limit the "
        "number of lines (default and maximum 2000). The footer says which lines were shown and "
        "the offset to continue from. Saved full search results can be read the same way. A "
        "notebook (.ipynb) is shown as cells: each cell's id, type and numbered source lines, and "
        "its outputs summarised; for a notebook offset and limit count cells, not lines."
    ),
    input_schema=object_schema(
        {
            "file_path": {**PATH, "description": "File to read, relative to the working directory."},
            "offset": {**OFFSET, "description": "1-based line to start at (default 1); for a notebook, 1-based cell."},
            "limit": {"type": "integer", "minimum": 1,
                      "description": "Lines to return (default 2000); for a notebook, cells."},
        },
        ("file_path",),
    ),
    output_schema=READ_OUTPUT,
    guidance=(
        "Use read to look inside a text file; results carry line numbers. Large files come in "
        "windows: continue with the offset the footer names. Reading a file is also what allows "
        "this session to write or edit it afterwards."
    ),
    execute=execute_read,
    render=render_read,
    rows_key="lines",
)

WRITE = ToolSpec(
    name="write",
    title="Write file",
    description=(
        "Create a file (and missing parent directories) or replace a whole file. Replacing an "
        "existing file requires that this session has read its current version. A notebook "
        "(.ipynb) must be valid nbformat JSON, or nothing is written."
    ),
    input_schema=object_schema(
        {
            "file_path": {**PATH, "description": "File to write, relative to the working directory."},
            "content": {**TEXT, "description": "The complete new content."},
        },
        ("file_path", "content"),
    ),
    output_schema=WRITE_OUTPUT,
    guidance=(
        "Use write to create a file or replace one completely. Read an existing file first: a "
        "write over a file this session has not read, or that changed since, is refused. Prefer "
        "edit for a targeted change."
    ),
    execute=execute_write,
    render=render_write,
    writes=True,
)

EDIT = ToolSpec(
    name="edit",
    title="Edit file",
    description=(
        "Replace the literal text old_string with new_string in a file. old_string must occur "
        "exactly once unless replace_all is true. Requires that this session has read the file's "
        "current version. In a notebook (.ipynb) the text is replaced inside cell sources only "
        "(outputs, metadata and ids are kept) and cell_id narrows the edit to one cell."
    ),
    input_schema=object_schema(
        {
            "file_path": {**PATH, "description": "File to edit, relative to the working directory."},
            "old_string": {**TEXT, "minLength": 1, "description": "Exact text to replace."},
            "new_string": {**TEXT, "description": "Replacement text, inserted literally."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
            "cell_id": {**NAME,
                        "description": "Notebooks only: the id of the one cell to edit, as read shows it."},
        },
        ("file_path", "old_string", "new_string"),
    ),
    output_schema=EDIT_OUTPUT,
    guidance=(
        "Use edit for targeted changes: give enough surrounding text in old_string to make it "
        "unique, or set replace_all. Read the file first in this session; after your own write or "
        "edit no new read is needed."
    ),
    execute=execute_edit,
    render=render_edit,
    writes=True,
    idempotent=False,  # the same edit again may change the file again ("a" -> "aa")
)

LIST_DIR = ToolSpec(
    name="list_dir",
    title="List folder (JSON)",
    description=(
        "Compatibility listing: the names in a directory as JSON {\"entries\": [...]}, or, with "
        "recursive, every relative path below it in pre-order (bounded; a capped walk says "
        "\"truncated\": true)."
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
    rows_key="entries",
)


def build_registry(rg: str | None) -> dict[str, ToolSpec]:
    """The tools on offer, in the order a model should meet them."""
    tools = [LIST, READ, WRITE, EDIT, LIST_DIR]
    if rg is not None:
        tools[1:1] = [GLOB, GREP]
    else:
        log.warning("no ripgrep binary found: the glob and grep tools are not offered")
    return {t.name: t for t in tools}
