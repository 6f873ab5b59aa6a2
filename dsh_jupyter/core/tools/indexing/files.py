"""Which files the index holds and what it records of each: rg's own list, each file read once.

Why rg lists: the files a grep or glob searches are the ones ``rg --files`` lists with the same
discovery flags, hide globs and exclusions (``tools.search.flags``); asking rg the same question
keeps the index's list exactly rg's. A folder listed again after a change (``relist``) is asked
the same way, one level deep, from the workspace root, so rg's anchored exclusions still apply.

How a file is read: relative to the root's descriptor, never following a symlink at the last
step and never blocking on a FIFO; a file that is not a regular file, cannot be read or is over
``index_max_file_bytes`` is recorded without its text (always a candidate: rg decides it). The
text is decoded as rg reads it: a UTF-16 byte-order mark is honoured (rg transcodes such files),
anything else as UTF-8 with each bad byte one replacement character (ASCII is never lost, and the
candidate query asks for ASCII only); a NUL byte is noted (rg searches such a file differently
when it finds it walking) and indexed as a space.

What it must never do: leave out a file rg would list, or record a text other than the file's.
"""

from __future__ import annotations

import os
import stat as statmod
from collections.abc import Iterator

from ...index.store import BIG, TEXT, UNREAD, FileRow
from ..context import CallContext
from ..search.flags import VCS_EXCLUDES, VCS_IN_PATH, discovery_flags, exclusion_flags, hide_flags
from ..search.root import SearchRoot
from ..search.run import diagnostic, file_errors, run_search
from ..search.scans import drop_excluded

__all__ = ["BATCH_BYTES", "in_batches", "listed", "listing", "listing_flags", "read_file"]

BATCH_BYTES = 1 << 17  # of rg's list at a time: a few thousand paths
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class ListingFailed(Exception):
    """rg could not list (the message says why); the index is not built or not trusted."""


def listing_flags(ctx: CallContext, excluded: list[str]) -> list[str]:
    """rg's flags for the files a grep or glob over the whole workspace would search."""
    return ["--files", "--null", *discovery_flags(ctx), *VCS_EXCLUDES, *hide_flags(ctx), *exclusion_flags(excluded)]


def listed(
    ctx: CallContext, root: SearchRoot, excluded: list[str], targets: list[str], depth: int | None = None
) -> tuple[list[str], int]:
    """The files rg lists below ``targets`` (relative to the root, "." for all), without "./",
    and how many folders it could not read."""
    out, unreadable = listing(ctx, root, excluded, targets, depth)
    return [rel for batch in in_batches(out, excluded) for rel in batch], unreadable


def listing(
    ctx: CallContext, root: SearchRoot, excluded: list[str], targets: list[str], depth: int | None = None
) -> tuple[bytes, int]:
    """rg's list of the files below ``targets`` as it printed it (``in_batches`` reads it), and
    how many folders it could not read: a million paths kept as one bytes object, not a list."""
    argv = listing_flags(ctx, excluded)
    if depth is not None:
        argv.append(f"--max-depth={depth}")
    argv += ["--", *("./" + t if t != "." else "." for t in targets)]
    outcome = run_search(ctx, argv, "grep", root)
    if outcome.returncode == 2 and not outcome.stdout and not file_errors(outcome):
        raise ListingFailed(diagnostic(outcome))
    if outcome.overflow:
        raise ListingFailed("the list of files is over the raw output bound")
    return outcome.stdout, file_errors(outcome)


def in_batches(out: bytes, excluded: list[str], size: int = BATCH_BYTES) -> Iterator[list[str]]:
    """The paths of ``listing``'s output, a batch of about ``size`` bytes of it at a time."""
    at, end = 0, len(out)
    while at < end:
        stop = out.rfind(b"\0", at, at + size) if at + size < end else end - 1
        if stop < at:  # one path longer than a batch
            stop = out.find(b"\0", at + size)
            stop = end - 1 if stop < 0 else stop
        text = out[at : stop + 1].decode("utf-8", "surrogateescape")
        at = stop + 1
        rels = [p[2:] if p.startswith("./") else p for p in text.split("\0") if p]
        if excluded:
            rels = drop_excluded(rels, excluded)
        yield [p for p in rels if not VCS_IN_PATH.search(p)]


def read_file(root_fd: int, rel: str, max_bytes: int) -> tuple[FileRow, str | None]:
    """What the index records of one file, and its text when it is indexed."""
    try:
        fd = os.open(rel, _OPEN, dir_fd=root_fd)
    except OSError:
        return FileRow(rel, 0, 0, UNREAD, False), None
    try:
        st = os.fstat(fd)
        if not statmod.S_ISREG(st.st_mode):
            return FileRow(rel, st.st_size, st.st_mtime_ns, UNREAD, False), None
        if st.st_size > max_bytes:
            return FileRow(rel, st.st_size, st.st_mtime_ns, BIG, _holds_nul(fd)), None
        data = os.read(fd, max_bytes + 1)
        while len(data) <= max_bytes:  # a file still growing: read what is there now
            more = os.read(fd, max_bytes + 1 - len(data))
            if not more:
                break
            data += more
        if len(data) > max_bytes:
            return FileRow(rel, len(data), st.st_mtime_ns, BIG, _holds_nul(fd)), None
    except OSError:
        return FileRow(rel, 0, 0, UNREAD, False), None
    finally:
        os.close(fd)
    text = decode(data)
    nul = "\0" in text
    return FileRow(rel, len(data), st.st_mtime_ns, TEXT, nul), text.replace("\0", " ") if nul else text


def decode(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data[2:].decode("utf-16-le" if data[0] == 0xFF else "utf-16-be", "replace")
    return data.decode("utf-8", "replace")


def _holds_nul(fd: int) -> bool:
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return False
        if b"\0" in chunk:
            return True
        offset += len(chunk)
