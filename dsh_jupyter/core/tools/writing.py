"""What ``write``, ``edit`` and ``move`` share: the refusals before a path is resolved, the checks
inside the write gate, and the gated, atomic replace that ``write`` and ``edit`` end in.

Both ``write`` and ``edit`` run their check-and-write inside the state store's write gate: look at
the file through its folder's descriptor, check this session's observation of exactly that
version, write a temporary file beside it and move it into place (``fs.files.replace_file``), then
record the new version (``edit`` computes its new content before it takes the gate, and inside
it only looks again and compares versions before ``replace_gated``). A replaced file that someone
else replaced first is put back; a file whose owner, group or links a rename would change is
rewritten in place (``fs.rewrite``). Text is encoded so that bytes that were not valid UTF-8
when the file was read round-trip.

What it must never do: open a FIFO, socket or device, replace a file other than the version this
session's observation names, or name a path outside the root or a saved result as writable.
"""

from __future__ import annotations

import os
import re
import stat as statmod

from ..errors import Codes, ToolError
from ..fs.files import Changed, can_write, file_version, pread_upto, replace_file
from ..fs.resolver import RETRIES, display_path
from ..fs.rewrite import needs_in_place, rewrite_in_place
from ..fs.textwindow import BINARY_SNIFF_BYTES
from ..fs.visibility import backups_folder
from ..state.gate import changed_since_read, check_observed, observation_key
from ..text.quoting import in_message
from .context import CallContext

__all__ = [
    "BOM",
    "check_writable",
    "current_stat",
    "encode_text",
    "load_for_edit",
    "open_existing",
    "record_written",
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


def load_for_edit(ctx: CallContext, target) -> tuple[bytes, os.stat_result]:
    """The bytes of the file ``edit`` or ``edit_cells`` is to change, and its status, once every
    check that can refuse the edit has passed. They come first, before the file is loaded: a
    session that never read a huge file must not make this process hold it."""
    shown = target.display
    st = current_stat(target)
    if st is None:
        raise ToolError(Codes.FS_NOT_FOUND, f"cannot edit {in_message(shown)}: not found")
    fd, fst = open_existing(target, st, "edit")
    try:
        try:
            head = os.pread(fd, BINARY_SNIFF_BYTES, 0)
        except OSError as exc:
            raise target.error(exc) from None
        # Before the observation check: "read it first" would send the model to a read that must fail.
        if b"\0" in head:
            raise ToolError(Codes.FS_NOT_TEXT, f"cannot edit {in_message(shown)}: binary file")
        check_writable(target, fst, "edit")
        # A first check, read-only; inside the gate it is made again on the version then current.
        check_observed(ctx.store, ctx.session_key, target.real, fst, "write", shown)
        limit = ctx.settings.edit_max_bytes
        if fst.st_size > limit:
            raise ToolError(
                Codes.FS_TOO_LARGE,
                f"cannot edit {in_message(shown)}: it is {fst.st_size} bytes, more than the {limit} "
                "an edit loads (setting edit_max_bytes)",
            )
        try:
            raw = pread_upto(fd, fst.st_size)
        except OSError as exc:
            raise target.error(exc) from None
    finally:
        os.close(fd)
    if len(raw) != fst.st_size:  # cut short while it was read: the gate would refuse its version
        raise changed_since_read("write", shown)
    return raw, fst


def encode_text(text: str) -> bytes:
    try:
        # surrogateescape round-trips bytes that were not valid UTF-8 when the file was read
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        # A lone surrogate from the model's text becomes U+FFFD; the file's own undecodable
        # bytes elsewhere must still round-trip (a blanket "replace" turned them into "?").
        return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8", "surrogateescape")


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
    record_written(ctx, gate, target, new, verb)


def record_written(ctx: CallContext, gate, target, new: os.stat_result, verb: str) -> None:
    try:
        gate.record_observation(ctx.session_key, observation_key(target.real), file_version(new))
    except Exception:
        raise ToolError(
            Codes.STATE_UNAVAILABLE,
            f"cannot {verb} {in_message(target.display)}: the file was written but the session state "
            "could not record it",
        ) from None
