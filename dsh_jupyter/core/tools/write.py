"""``write``, and the gated, atomic write both ``write`` and ``edit`` end in: mode, line endings and BOM kept.

Both run their check-and-write inside the state store's write gate: look at the file through
its folder's descriptor, check this session's observation of exactly that version, write a
temporary file beside it and move it into place (``fs.files.create_file`` / ``replace_file``), then
record the new version (``edit`` computes its new content before it takes the gate, and inside
it only looks again and compares versions before ``replace_gated``). A file that appeared
meanwhile is never replaced, a replaced file that someone else replaced first is put back, and a
write that fails removes its temporary file and the folders it created.

Line endings are kept: a CRLF file stays CRLF when the model sends ``\\n`` (models almost always
do), and ``edit`` matches an ``old_string`` built from what ``read`` showed (``\\n`` between
lines) against CRLF lines too, changing only the edited region.
"""

from __future__ import annotations

import os
import re
import stat as statmod

from ..documents import Presence
from ..errors import Codes, ToolError
from ..fs.files import Changed, can_write, create_file, file_version, replace_file
from ..fs.resolver import RETRIES, display_path
from ..fs.rewrite import needs_in_place, rewrite_in_place
from ..fs.textwindow import BINARY_SNIFF_BYTES
from ..fs.visibility import backups_folder
from ..notebooks.format import NotNotebook, is_notebook_name, parse_notebook
from ..render.writing import render_write
from ..state.gate import changed_since_read, check_observed, observation_key, state_unavailable
from ..text.quoting import in_message
from .cells import check_written
from .context import CallContext
from .opened import (
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
from .spec import BOOLEAN, INTEGER, OPEN, PATH, STRING, TEXT, ToolSpec, object_schema, value_schema

__all__ = [
    "BOM",
    "WRITE",
    "check_writable",
    "current_stat",
    "encode_text",
    "execute_write",
    "open_existing",
    "refuse_outside",
    "refuse_path",
    "replace_gated",
]

BOM = b"\xef\xbb\xbf"


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def refuse_path(ctx: CallContext, path: str, verb: str) -> None:
    """Refuse what no write may touch before anything is resolved: outside, saved results, a folder name."""
    refuse_outside(ctx, path, verb)
    if path.endswith("/"):
        raise ToolError(Codes.ARGUMENT_INVALID, f'file_path must name a file; {in_message(path)} ends with "/"')


def refuse_outside(ctx: CallContext, path: str, verb: str) -> None:
    """Refuse a path outside the root, or a saved result (read-only), before anything is resolved."""
    raw, lexical = ctx.resolver.lexical(ctx.cwd, path)
    if ctx.resolver.in_spill(lexical):
        shown = lexical if ctx.resolver.rel_in_root(lexical) is None else display_path(lexical, ctx.cwd)
        raise ToolError(Codes.FS_READ_ONLY, f"cannot {verb} {in_message(shown)}: saved search results are read-only")
    if ctx.resolver.rel_in_root(lexical) is None:
        raise ToolError(Codes.FS_OUTSIDE_ROOT, f"cannot {verb} {in_message(raw)}: path is outside the workspace")


def current_stat(target) -> os.stat_result | None:
    """The target's lstat now, inside the gate (a symlink swapped in meanwhile: resolve again)."""
    for _ in range(RETRIES):
        entry = target.entry
        if entry.parent_not_dir:
            raise ToolError(
                Codes.FS_NOT_DIRECTORY,
                f"cannot {target.verb} {in_message(target.display)}: a parent is not a directory",
            )
        if entry.missing_parent:
            return None
        try:
            st = os.stat(entry.name, dir_fd=entry.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise target.error(exc) from None
        if not statmod.S_ISLNK(st.st_mode):
            return st
        target.refresh()
    raise target.error(OSError(0, "it kept changing while being opened; try again"))


def open_existing(target, st: os.stat_result, verb: str) -> tuple[int, os.stat_result]:
    if not statmod.S_ISREG(st.st_mode):  # never open a FIFO, socket or device for this
        raise ToolError(Codes.FS_NOT_REGULAR_FILE, f"cannot {verb} {in_message(target.display)}: not a regular file")
    try:
        fd = target.entry.open(os.O_RDONLY | _NONBLOCK)
    except Exception as exc:  # Raced or OSError: the name changed under the gate
        if isinstance(exc, OSError) and not isinstance(exc, FileNotFoundError):
            raise target.error(exc) from None
        raise _changed(verb, target.display) from None
    fst = os.fstat(fd)
    if not statmod.S_ISREG(fst.st_mode):
        os.close(fd)
        raise ToolError(Codes.FS_NOT_REGULAR_FILE, f"cannot {verb} {in_message(target.display)}: not a regular file")
    return fd, fst


def _changed(verb: str, display: str) -> ToolError:
    return ToolError(
        Codes.FS_NOT_OBSERVED,
        f"cannot {verb} {in_message(display)}: it changed since this session last read it; read it again",
    )


def check_writable(target, fst: os.stat_result, verb: str) -> None:
    if not can_write(target.entry.dir_fd, target.entry.name, fst):
        raise ToolError(Codes.FS_PERMISSION_DENIED, f"cannot {verb} {in_message(target.display)}: permission denied")


# Lone surrogates that are not surrogateescape's escaped bytes (U+DC80-U+DCFF).
_LONE_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def encode_text(text: str) -> bytes:
    try:
        # surrogateescape round-trips bytes that were not valid UTF-8 when the file was read
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        # A lone surrogate from the model's text becomes U+FFFD; the file's own undecodable
        # bytes elsewhere must still round-trip (a blanket "replace" turned them into "?").
        return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8", "surrogateescape")


def _is_crlf(sample: bytes) -> bool:
    lf = sample.count(b"\n")
    return lf > 0 and sample.count(b"\r\n") == lf


def replace_gated(ctx: CallContext, gate, target, data: bytes, old: os.stat_result, verb: str) -> None:
    """Replace by rename, or rewrite in place where a rename would change owner, group or links."""
    entry = target.entry
    try:
        if needs_in_place(entry.dir_fd, old):
            assert ctx.store is not None  # the write gate is held, so the state store is there
            backups = backups_folder(ctx.store.path)
            new = rewrite_in_place(entry.dir_fd, entry.name, data, old, backups, target.real)
        else:
            new = replace_file(entry.dir_fd, entry.name, data, old)
    except (Changed, FileNotFoundError):
        raise _changed(verb, target.display) from None
    except OSError as exc:
        restored = getattr(exc, "restored", None)
        if restored is not None:
            # The rewrite failed and the file holds again exactly what this session read: its
            # version moved (a new ctime), so record it, or the next edit would be refused as
            # "changed since it was read".
            failure = target.error(exc)
            try:
                gate.record_observation(ctx.session_key, observation_key(target.real), file_version(restored))
                failure.keep_recorded = True
            except Exception:
                pass  # the file is whole either way; a stale observation only asks for a read
            raise failure from None
        raise target.error(exc) from None
    _record(ctx, gate, target, new, verb)


def _record(ctx: CallContext, gate, target, new: os.stat_result, verb: str) -> None:
    try:
        gate.record_observation(ctx.session_key, observation_key(target.real), file_version(new))
    except Exception:
        raise ToolError(
            Codes.STATE_UNAVAILABLE,
            f"cannot {verb} {in_message(target.display)}: the file was written but the session state "
            "could not record it",
        ) from None


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
    _record(ctx, gate, target, new, "write")


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
