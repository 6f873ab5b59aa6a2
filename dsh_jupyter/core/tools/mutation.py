"""Executors for ``write`` and ``edit``: gated, atomic, keeping mode and line endings.

Both run entirely inside the state store's write gate: stat, check this session's observation,
write a temporary file, rename it over the target, record the new version. Line endings are kept:
a CRLF file stays CRLF when the model sends ``\\n`` (models almost always do).
"""

from __future__ import annotations

import os
import re
import stat as statmod

from ..context import CallContext
from ..errors import Codes, ToolError
from ..fsio import atomic_write, file_version
from ..paths import is_within
from ..policy import check_observed, gated, observation_key
from ..textread import BINARY_SNIFF_BYTES
from ..render.quoting import in_message

__all__ = ["execute_write", "execute_edit"]


def _target(ctx: CallContext, path: str, verb: str):
    target = ctx.resolver.resolve(ctx.cwd, path, verb=verb, allow_spill=True)
    if path.endswith("/"):
        raise ToolError(Codes.ARGUMENT_INVALID, f'file_path must name a file; {in_message(path)} ends with "/"')
    spill_root = ctx.resolver.spill_root
    if target.in_spill or (spill_root and is_within(target.real, spill_root)):
        raise ToolError(Codes.FS_READ_ONLY, f'cannot {verb} {in_message(target.display)}: saved search results are read-only')
    return target


def _stat(real: str, verb: str, display: str) -> os.stat_result | None:
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ToolError(Codes.FS_ERROR, f'cannot {verb} {in_message(display)}: {exc.strerror or exc}') from None
    if not statmod.S_ISREG(st.st_mode):
        raise ToolError(Codes.FS_NOT_REGULAR_FILE, f'cannot {verb} {in_message(display)}: not a regular file')
    return st


# Lone surrogates that are not surrogateescape's escaped bytes (U+DC80-U+DCFF).
_LONE_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def _encode(text: str) -> bytes:
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


def _write_file(ctx: CallContext, gate, real: str, data: bytes, old: os.stat_result | None, verb: str, display: str):
    try:
        if old is None:
            os.makedirs(os.path.dirname(real), exist_ok=True)
        atomic_write(real, data, old.st_mode if old else None, (old.st_uid, old.st_gid) if old else None)
        new = os.stat(real)
    except OSError as exc:
        raise ToolError(Codes.FS_ERROR, f'cannot {verb} {in_message(display)}: {exc.strerror or exc}') from None
    try:
        gate.record_observation(ctx.session, observation_key(real), file_version(new))
    except Exception:
        raise ToolError(
            Codes.STATE_UNAVAILABLE,
            f'cannot {verb} {in_message(display)}: the file was written but the session state could not record it',
        ) from None


def execute_write(ctx: CallContext, args: dict) -> dict:
    content: str = args["content"]
    target = _target(ctx, args["file_path"], "write")
    with gated(ctx.store, "write", target.display) as gate:
        old = _stat(target.real, "write", target.display)
        data = _encode(content)
        if old is not None:
            check_observed(gate, ctx.session, target.real, old, "write", target.display)
            data = _keep_style(target.real, old, data)
        _write_file(ctx, gate, target.real, data, old, "write", target.display)
    return {"path": target.display, "operation": "create" if old is None else "update", "bytes": len(data)}


def _keep_style(real: str, old: os.stat_result, data: bytes) -> bytes:
    """Keep the replaced file's CRLF endings and its final newline (see the module docstring)."""
    try:
        with open(real, "rb") as f:
            sample = f.read(65536)
            last = b""
            if old.st_size:
                f.seek(old.st_size - 1)
                last = f.read(1)
    except OSError:
        return data
    crlf = _is_crlf(sample)
    if crlf and b"\n" in data and b"\r" not in data:
        data = data.replace(b"\n", b"\r\n")
    if last == b"\n" and data and not data.endswith(b"\n"):
        data += b"\r\n" if crlf else b"\n"
    return data


def execute_edit(ctx: CallContext, args: dict) -> dict:
    old_string: str = args["old_string"]
    new_string: str = args["new_string"]
    replace_all = bool(args.get("replace_all", False))
    if old_string == new_string:
        raise ToolError(Codes.ARGUMENT_INVALID, "old_string and new_string must differ")
    target = _target(ctx, args["file_path"], "edit")
    shown = target.display
    with gated(ctx.store, "edit", shown) as gate:
        old = _stat(target.real, "edit", shown)
        if old is None:
            raise ToolError(Codes.FS_NOT_FOUND, f'cannot edit {in_message(shown)}: not found')
        try:
            with open(target.real, "rb") as f:
                raw = f.read()
        except OSError as exc:
            raise ToolError(Codes.FS_ERROR, f'cannot edit {in_message(shown)}: {exc.strerror or exc}') from None
        # Before the gate check: "read it first" would send the model to a read that must fail.
        if b"\0" in raw[:BINARY_SNIFF_BYTES]:
            raise ToolError(Codes.FS_NOT_TEXT, f'cannot edit {in_message(shown)}: binary file')
        # The gate speaks of writing for both tools: an edit is a write of the whole file.
        check_observed(gate, ctx.session, target.real, old, "write", shown)
        text = raw.decode("utf-8", "surrogateescape")
        crlf = _is_crlf(raw)
        if crlf:
            text = text.replace("\r\n", "\n")
            old_string = old_string.replace("\r\n", "\n")
            new_string = new_string.replace("\r\n", "\n")
        found = text.count(old_string)
        if found == 0:
            raise ToolError(Codes.EDIT_NOT_FOUND, f'old_string not found in {in_message(shown)}')
        if found > 1 and not replace_all:
            raise ToolError(
                Codes.EDIT_AMBIGUOUS,
                f'old_string appears {found} times in {in_message(shown)}; add context or set replace_all',
            )
        # str.replace is literal: no $&, \\1 or \\g<0> expansion can happen.
        result = text.replace(old_string, new_string) if replace_all else text.replace(old_string, new_string, 1)
        if crlf:
            result = result.replace("\n", "\r\n")
        _write_file(ctx, gate, target.real, _encode(result), old, "edit", shown)
    return {"path": shown, "replaceAll": replace_all, "replacements": found if replace_all else 1}
