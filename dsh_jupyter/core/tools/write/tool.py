"""``write``: a file created or replaced whole, its mode, line endings and BOM kept.

The check-and-write runs inside the state store's write gate, through what ``write``, ``edit`` and
``move`` share (``tools/writing.py``): look at the file through its folder's descriptor, check this
session's observation of exactly that version, write a temporary file beside it and move it into
place (``fs.files.create_file`` / ``replace_file``), then record the new version. A file that
appeared meanwhile is never replaced, a replaced file that someone else replaced first is put
back, and a write that fails removes its temporary file and the folders it created. A file a
person has open in JupyterLab is written through its document (``tools/opened``).

Line endings are kept: a CRLF file stays CRLF when the model sends ``\\n`` (models almost always
do); its final newline and its byte-order mark stay too.
"""

from __future__ import annotations

import os

from ...documents import Presence
from ...errors import Codes, ToolError
from ...fs.files import can_write, create_file, file_version
from ...fs.resolver import display_path
from ...fs.textwindow import BINARY_SNIFF_BYTES
from ...notebooks.format import NotNotebook, is_notebook_name, parse_notebook
from ...render.writing import render_write
from ...state.gate import changed_since_read, check_observed, state_unavailable
from ...text.quoting import in_message
from ..cells import check_written
from ..context import CallContext
from ..opened.documents import (
    SHARED,
    TAB,
    base_for_merge,
    merged,
    presence,
    record_if_saved,
    record_version,
    save_in_tabs,
    unsaved,
)
from ..spec import BOOLEAN, INTEGER, OPEN, PATH, STRING, TEXT, ToolSpec, object_schema, value_schema
from ..writing import (
    BOM,
    check_writable,
    current_stat,
    encode_text,
    open_existing,
    record_written,
    refuse_path,
    replace_gated,
)

__all__ = ["WRITE", "execute_write"]


def _is_crlf(sample: bytes) -> bool:
    lf = sample.count(b"\n")
    return lf > 0 and sample.count(b"\r\n") == lf


def execute_write(ctx: CallContext, args: dict) -> dict:
    path: str = args["file_path"]
    refuse_path(ctx, path, "write")
    data = encode_text(args["content"])
    notebook = is_notebook_name(path)
    if notebook:  # a notebook is saved only when nbformat validates it; before any folder is made
        check_written(data, display_path(ctx.resolver.lexical(ctx.cwd, path)[1], ctx.cwd))
    with ctx.resolve(path, "write", make_parents=True) as target:
        pres = presence(ctx, target) if target.exists else None  # a person has it open (tools.opened)
        if pres is not None and pres.shared:
            return _write_shared(ctx, target, data, notebook)
        tabs = pres  # open in a tab, without collaboration: the tab saves it, or refuses
        if tabs is not None and tabs.unsaved:
            raise unsaved("write", target.display)
        try:
            if tabs is not None:
                kept = _in_tabs(ctx, target, tabs, data, notebook)
                if kept is not None:
                    return {"path": target.display, "operation": "update", "bytes": len(kept), "open": TAB}
            with ctx.changing("write", target.display, lambda: [target.change()]) as gate:
                old = current_stat(target)
                if old is None:
                    _create(ctx, gate, target, data)
                else:
                    fd, fst = open_existing(target, old, "write")
                    try:
                        head = os.pread(fd, BINARY_SNIFF_BYTES, 0)
                        if b"\0" in head:
                            raise ToolError(
                                Codes.FS_NOT_TEXT,
                                f"cannot write {in_message(target.display)}: binary "
                                "file; write replaces text files only",
                            )
                        check_writable(target, fst, "write")
                        check_observed(gate, ctx.session_key, target.real, fst, "write", target.display)
                        data = _keep_style(fd, fst, head, data)
                    finally:
                        os.close(fd)
                    replace_gated(ctx, gate, target, data, fst, "write")
        except BaseException:
            target.entry.remove_created()
            raise
        return {"path": target.display, "operation": "create" if old is None else "update", "bytes": len(data)}


def _checked(ctx: CallContext, gate, target, data: bytes) -> tuple[bytes, os.stat_result]:
    """Everything that can refuse replacing the existing file (binary, permission, this session's
    read of its current version); ``data`` in the file's style (line endings, BOM, final newline)."""
    old = current_stat(target)
    if old is None:
        raise changed_since_read("write", target.display)
    fd, fst = open_existing(target, old, "write")
    try:
        head = os.pread(fd, BINARY_SNIFF_BYTES, 0)
        if b"\0" in head:
            raise ToolError(
                Codes.FS_NOT_TEXT,
                f"cannot write {in_message(target.display)}: binary file; write replaces text files only",
            )
        check_writable(target, fst, "write")
        check_observed(gate, ctx.session_key, target.real, fst, "write", target.display)
        return _keep_style(fd, fst, head, data), fst
    finally:
        os.close(fd)


def _in_tabs(ctx: CallContext, target, tabs: Presence, data: bytes, notebook: bool) -> bytes | None:
    """The write handed to the tabs that have the file open, which save it; the bytes saved, or
    None when no tab has it open any more (then it is written as a file)."""
    if ctx.store is None:
        raise state_unavailable("write", target.display)
    kept, checked = _checked(ctx, ctx.store, target, data)  # a first check, without the gate
    if not save_in_tabs(ctx, target, tabs, kept, notebook, "write", file_version(checked)):
        return None
    record_if_saved(ctx, target, kept, "write")
    return kept


def _write_shared(ctx: CallContext, target, data: bytes, notebook: bool) -> dict:
    """A write of a file open with collaboration: merged into its shared document (``tools.opened``).

    The base is what this session read; the person's changes since are kept, and where they and
    the write change the same lines or cells nothing is changed (``FS_OPEN_CONFLICT``).
    """
    shown = target.display
    st = target.entry.st
    if st is not None:
        check_writable(target, st, "write")
    base = base_for_merge(ctx, target, "write")
    if notebook:
        content: str | dict = parse_notebook(data).data
        if isinstance(base, str):  # the session read the file: its text is the notebook it read
            try:
                base = parse_notebook(base.encode("utf-8", "surrogateescape")).data
            except NotNotebook:
                raise changed_since_read("write", shown) from None
    else:
        content = data.decode("utf-8", "surrogateescape").replace("\r\n", "\n")
        if not isinstance(base, str):
            raise changed_since_read("write", shown)
    with ctx.changing("write", shown, lambda: [target.change()]) as gate:
        version, kept = merged(ctx, target, base, content, notebook, "write")
        record_version(ctx, gate, target, version, "write")
    value: dict = {"path": shown, "operation": "update", "bytes": len(data), "open": SHARED}
    if notebook:
        value["live"] = True
    if kept:
        value["merged"] = True  # the person's changes since the read were kept beside the write's
    return value


def _create(ctx: CallContext, gate, target, data: bytes) -> None:
    entry = target.entry
    if not can_write(entry.dir_fd, None, os.stat(".", dir_fd=entry.dir_fd)):
        raise ToolError(Codes.FS_PERMISSION_DENIED, f"cannot write {in_message(target.display)}: permission denied")
    try:
        new = create_file(entry.dir_fd, entry.name, data)
    except FileExistsError:
        raise ToolError(
            Codes.FS_NOT_OBSERVED,
            f"cannot write {in_message(target.display)}: it was created by someone else since this session looked; "
            "read it first",
        ) from None
    except OSError as exc:
        raise target.error(exc) from None
    record_written(ctx, gate, target, new, "write")


def _keep_style(fd: int, old: os.stat_result, sample: bytes, data: bytes) -> bytes:
    """Keep the replaced file's CRLF endings, its final newline and its byte-order mark."""
    try:
        sample = os.pread(fd, 65536, 0) if len(sample) < 65536 and old.st_size > len(sample) else sample
        last = os.pread(fd, 1, old.st_size - 1) if old.st_size else b""
    except OSError:
        return data
    crlf = _is_crlf(sample)
    if sample.startswith(BOM) and not data.startswith(BOM):
        data = BOM + data
    if crlf and b"\n" in data and b"\r" not in data:
        data = data.replace(b"\n", b"\r\n")
    if last == b"\n" and data and not data.endswith(b"\n"):
        data += b"\r\n" if crlf else b"\n"
    return data


WRITE_OUTPUT = value_schema(
    {
        "path": STRING,
        "operation": {"enum": ["create", "update"]},
        "bytes": INTEGER,
        "live": BOOLEAN,
        "open": OPEN,
        "merged": BOOLEAN,  # a shared document's changes since this session read it were kept
    },
    ("path", "operation", "bytes"),
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
    destructive=True,  # replaces a whole file
)
