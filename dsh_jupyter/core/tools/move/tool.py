"""``move``: rename a file or folder inside the root, never over a name this session has not read.

Both ends are resolved through descriptors beneath the root (``ctx.resolve``), with the last
component not followed: the name given is what moves (a symlink moves as a link), and a symlink
at either end that leads outside the root is refused as outside. The move itself is one
``renameat2`` between the two folder descriptors, inside the state store's write gate:
``RENAME_NOREPLACE`` onto a free name, so a file that appeared meanwhile is never replaced, or,
with ``overwrite``, ``RENAME_EXCHANGE`` onto a file this session read at its current version,
undone if that file was replaced first (``fs.rename``). Missing parent folders of the
destination are created, as ``write`` creates them, and removed again when the move fails.

The session's observations follow what moved: a moved file that this session read at its
current version may be edited at its new path without a new read, and a moved folder takes the
observations of the files below it along; the old paths are no longer observed.

What it must never do: replace a folder, replace a file this session has not read, move the root,
move anything to or from where a protected folder is or would be (``fs.effects`` decides, for the
source's name that goes away and the destination's that is made), or name anything outside the root.
"""

from __future__ import annotations

import os
import stat as statmod

from ...errors import Codes, ToolError
from ...fs.effects import REMOVE, Change
from ...fs.files import can_write, file_version
from ...fs.rename import Changed, Unsupported, move_over, move_to_free_name
from ...fs.resolver import Target, is_within
from ...render.writing import render_move
from ...state.gate import check_observed, observation_key
from ...text.quoting import in_message
from ..context import CallContext
from ..opened.documents import SHARED, TAB, moving, presence, unsaved
from ..spec import BOOLEAN, OPEN, PATH, STRING, ToolSpec, object_schema, value_schema
from ..writing import check_writable, refuse_outside

__all__ = ["MOVE", "execute_move"]

_SOURCE, _DESTINATION, _OVERWRITE = "move", "move to", "overwrite"


def _kind(st: os.stat_result) -> str:
    if statmod.S_ISDIR(st.st_mode):
        return "directory"
    return "file" if statmod.S_ISREG(st.st_mode) else "other"


def _lstat(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _same_place(a: Target, b: Target) -> bool:
    """Whether two targets name one entry: the same folder (by inode) and the same name."""
    fa, fb = os.fstat(a.entry.dir_fd), os.fstat(b.entry.dir_fd)
    return (fa.st_dev, fa.st_ino, a.entry.name) == (fb.st_dev, fb.st_ino, b.entry.name)


def _exists(dst: Target, st: os.stat_result, overwrite: bool, source_is_dir: bool) -> ToolError:
    """Why the destination's present entry is not replaced."""
    shown = in_message(dst.display)
    kind = _kind(st)
    if kind == "directory":
        reason = "a directory of that name exists, and move never replaces a directory"
    elif kind == "other":
        reason = "something that is not a regular file has that name, and move replaces regular files only"
    elif source_is_dir:
        reason = "a file of that name exists, and a directory never replaces a file"
    elif not overwrite:
        reason = "a file of that name exists; to replace it, read it in this session and set overwrite"
    else:  # the neighbour's entry appeared meanwhile (overwrite was given for a free name)
        reason = "a file of that name appeared meanwhile; read it in this session to replace it"
    return ToolError(Codes.FS_EXISTS, f"cannot {_DESTINATION} {shown}: {reason}")


def _changed_while_moving(src: Target) -> ToolError:
    return ToolError(
        Codes.FS_ERROR, f"cannot {_SOURCE} {in_message(src.display)}: it changed while being moved; try again"
    )


def _check_source(ctx: CallContext, src: Target, raw: str) -> None:
    if src.entry.name == ".":
        raise ToolError(Codes.ARGUMENT_INVALID, f"cannot {_SOURCE} {in_message(src.display)}: it is the workspace root")
    if not src.exists:
        raise src.not_found()
    st = src.entry.st
    assert st is not None
    if statmod.S_ISLNK(st.st_mode):
        # The link itself moves, but one that leads outside (or loops, or into a hidden or protected
        # place) is refused as every tool refuses it: resolving it through says which.
        ctx.resolve(raw, _SOURCE).close()
    if raw.endswith("/") and not statmod.S_ISDIR(st.st_mode):
        raise ToolError(Codes.FS_NOT_DIRECTORY, f"cannot {_SOURCE} {in_message(raw)}: not a directory")


def _check_folder(src: Target, dst: Target) -> None:
    """A folder never moves into itself."""
    if dst.real != src.real and is_within(dst.real, src.real):
        raise ToolError(
            Codes.ARGUMENT_INVALID,
            f"cannot {_SOURCE} {in_message(src.display)} to {in_message(dst.display)}: a directory cannot move "
            "into itself",
        )


def _removal(src: Target) -> Change:
    return Change(REMOVE, src.entry.where(), _SOURCE, src.display)


def _changes(src: Target, dst: Target) -> list[Change]:
    """What the move does: the source's name goes away, the destination's is made or replaced."""
    return [_removal(src), dst.change()]


def _resolve_destination(ctx: CallContext, raw: str, src: Target) -> tuple[Target, bool]:
    """The destination target, its missing parent folders made (``True`` when any were)."""
    dst = ctx.resolve(raw, _DESTINATION, follow_last=False)
    try:
        st = dst.entry.st
        if st is not None and statmod.S_ISLNK(st.st_mode):
            ctx.resolve(raw, _DESTINATION).close()  # a link that leads outside is refused as outside
        ctx.resolver.refuse([_removal(src)])  # before any folder is made (the gate asks again)
        if src.is_dir:
            _check_folder(src, dst)  # before any folder is made, perhaps inside the source
        elif raw.endswith("/"):
            raise ToolError(
                Codes.ARGUMENT_INVALID,
                f"destination must name the new path itself, not a folder to move into; {in_message(raw)} "
                'ends with "/"',
            )
        if dst.entry.parent_not_dir:
            raise ToolError(
                Codes.FS_NOT_DIRECTORY, f"cannot {_DESTINATION} {in_message(dst.display)}: a parent is not a directory"
            )
        if not dst.entry.missing_parent:
            return dst, False
    except BaseException:
        dst.close()
        raise
    dst.close()
    dst = ctx.resolve(raw, _DESTINATION, follow_last=False, make_parents=True)
    return dst, bool(dst.entry.created)


def execute_move(ctx: CallContext, args: dict) -> dict:
    source: str = args["source"]
    destination: str = args["destination"]
    overwrite = bool(args.get("overwrite", False))
    refuse_outside(ctx, source, _SOURCE)
    refuse_outside(ctx, destination, _DESTINATION)
    with ctx.resolve(source, _SOURCE, follow_last=False) as src:
        _check_source(ctx, src, source)
        pres = presence(ctx, src)  # a person has it open in JupyterLab (tools.opened)
        if pres is not None and not pres.shared and pres.unsaved:
            raise unsaved(_SOURCE, src.display)  # its tab would save the unsaved copy at the old path
        dst, made = _resolve_destination(ctx, destination, src)
        with dst:
            try:
                # the open document's saves are held while it moves, and told where it went after
                with (
                    ctx.changing(_SOURCE, src.display, lambda: _changes(src, dst)) as gate,
                    moving(ctx, src.real, dst.real),
                ):
                    value = _move(ctx, gate, src, dst, overwrite)
            except BaseException:
                dst.entry.remove_created()
                raise
    value["createdParents"] = made
    if pres is not None:
        value["open"] = SHARED if pres.shared else TAB
    return value


def _move(ctx: CallContext, gate, src: Target, dst: Target, overwrite: bool) -> dict:
    """Check both ends again inside the gate, move, then carry the session's observations along."""
    src_st = _lstat(src.entry.dir_fd, src.entry.name)
    if src_st is None:
        raise src.not_found()
    checked = src.entry.st
    if checked is None or (src_st.st_dev, src_st.st_ino) != (checked.st_dev, checked.st_ino):
        # Another entry took the name since it was checked (a symlink to outside swapped in, say).
        raise _changed_while_moving(src)
    if dst.entry.parent_not_dir or dst.entry.missing_parent:
        # A file took the place of a folder on the way since the first look (the walk names
        # that file, not the destination): never move onto it.
        raise ToolError(
            Codes.FS_NOT_DIRECTORY, f"cannot {_DESTINATION} {in_message(dst.display)}: a parent is not a directory"
        )
    is_dir = statmod.S_ISDIR(src_st.st_mode)
    if is_dir:
        _check_folder(src, dst)
    if _same_place(src, dst):
        raise ToolError(
            Codes.ARGUMENT_INVALID,
            f"cannot {_SOURCE} {in_message(src.display)}: the source and the destination are the same",
        )
    for target, verb in ((src, _SOURCE), (dst, _DESTINATION)):
        if not can_write(target.entry.dir_fd, None, os.fstat(target.entry.dir_fd)):
            raise ToolError(
                Codes.FS_PERMISSION_DENIED, f"cannot {verb} {in_message(target.display)}: permission denied"
            )
    dst_st = _lstat(dst.entry.dir_fd, dst.entry.name)
    replaced = dst_st is not None
    try:
        if dst_st is None:
            move_to_free_name(src.entry.dir_fd, src.entry.name, dst.entry.dir_fd, dst.entry.name, is_dir=is_dir)
        else:
            if not overwrite or is_dir or not statmod.S_ISREG(dst_st.st_mode):
                raise _exists(dst, dst_st, overwrite, is_dir)
            check_writable(dst, dst_st, _OVERWRITE)
            check_observed(gate, ctx.session_key, dst.real, dst_st, _OVERWRITE, dst.display)
            move_over(src.entry.dir_fd, src.entry.name, dst.entry.dir_fd, dst.entry.name, dst_st)
    except FileExistsError:
        now = _lstat(dst.entry.dir_fd, dst.entry.name)
        if now is None:
            raise _changed_while_moving(src) from None
        raise _exists(dst, now, overwrite, is_dir) from None
    except Changed:
        if replaced:
            raise ToolError(
                Codes.FS_NOT_OBSERVED,
                f"cannot {_OVERWRITE} {in_message(dst.display)}: it changed since this session last read it; "
                "read it again",
            ) from None
        raise _changed_while_moving(src) from None
    except Unsupported:
        raise ToolError(
            Codes.FS_ERROR,
            f"cannot {_SOURCE} {in_message(src.display)}: this filesystem cannot move a directory without the risk "
            "of replacing another (no renameat2 RENAME_NOREPLACE); nothing was moved",
        ) from None
    except OSError as exc:
        raise src.error(exc) from None
    moved = _lstat(dst.entry.dir_fd, dst.entry.name)
    if moved is None or (moved.st_dev, moved.st_ino) != (src_st.st_dev, src_st.st_ino):
        _put_back(src, dst, moved)
        raise _changed_while_moving(src)
    _follow_observations(ctx, gate, src, dst, src_st, moved)
    return {"source": src.display, "destination": dst.display, "type": _kind(src_st), "replaced": replaced}


def _put_back(src: Target, dst: Target, moved: os.stat_result | None) -> None:
    """Something else than what was checked was moved (the name was swapped meanwhile): put it back."""
    if moved is None:
        return
    try:
        move_to_free_name(
            dst.entry.dir_fd, dst.entry.name, src.entry.dir_fd, src.entry.name, is_dir=statmod.S_ISDIR(moved.st_mode)
        )
    except (OSError, Changed, Unsupported):
        pass  # the old name was taken again meanwhile: what moved stays at the destination


def _follow_observations(ctx: CallContext, gate, src: Target, dst: Target, before: os.stat_result, after) -> None:
    old, new = observation_key(src.real), observation_key(dst.real)
    try:
        seen = gate.observed_version(ctx.session_key, old)
        gate.move_observations(ctx.session_key, old, new)
        if seen is not None and seen == file_version(before) and not statmod.S_ISDIR(before.st_mode):
            # The rename moved the file's ctime, so its version: what this session read is still
            # its content, so the new version is the one observed.
            gate.record_observation(ctx.session_key, new, file_version(after))
    except Exception:
        error = ToolError(
            Codes.STATE_UNAVAILABLE,
            f"cannot record the move of {in_message(src.display)} to {in_message(dst.display)}: it was moved, but "
            "the session state could not record it; read it again before changing it",
        )
        error.keep_recorded = True  # type: ignore[attr-defined]
        raise error from None


MOVE_OUTPUT = value_schema(
    {
        "source": STRING,
        "destination": STRING,
        "type": {"enum": ["file", "directory", "other"]},
        "replaced": BOOLEAN,
        "createdParents": BOOLEAN,
        "open": OPEN,
    },
    ("source", "destination", "type", "replaced", "createdParents"),
)

MOVE = ToolSpec(
    name="move",
    title="Move file or folder",
    description=(
        "Move or rename a file or folder inside the workspace; missing parent directories of the "
        "destination are created. An existing destination is never replaced, except a file that "
        "this session has read at its current version when overwrite is true; a directory is never "
        "replaced. This session's read of a moved file carries over to its new path."
    ),
    input_schema=object_schema(
        {
            "source": {**PATH, "description": "File or folder to move, relative to the working directory."},
            "destination": {
                **PATH,
                "description": "Its new path (the full new name, not a folder to move it into).",
            },
            "overwrite": {
                "type": "boolean",
                "description": "Replace an existing destination file this session has read (default false).",
            },
        },
        ("source", "destination"),
    ),
    output_schema=MOVE_OUTPUT,
    guidance=(
        "Use move to rename or relocate a file or folder instead of writing a copy and leaving the "
        "old one. destination is the complete new path. A file you read before the move may be "
        "edited at its new path without reading it again. To replace an existing file, read it "
        "first and set overwrite."
    ),
    execute=execute_move,
    render=render_move,
    writes=True,
    destructive=True,  # removes the old name; with overwrite, replaces the destination file
    idempotent=False,  # the same move again finds its source gone
)
