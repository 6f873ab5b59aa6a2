"""The filesystem seam: directory listing, file versions and atomic replacement.

Tools reach the disk only through here and ``textread``. The functions take *real* paths that
``paths.Resolver`` has already confined; they never decide what is allowed.
"""

from __future__ import annotations

import os
import secrets
import stat as statmod
from dataclasses import dataclass

__all__ = ["Listing", "scan_directory", "entry_details", "file_version", "atomic_write", "kind_of"]


def file_version(st: os.stat_result) -> str:
    """A version that changes whenever the content changes, without reading the file.

    Size and mtime alone miss a same-size rewrite whose mtime was set back (``touch -d``);
    ctime cannot be set from user space and moves on every write, and the inode moves on every
    atomic replace, so together they catch it.
    """
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def kind_of(mode: int) -> str:
    if statmod.S_ISDIR(mode):
        return "directory"
    if statmod.S_ISREG(mode):
        return "file"
    return "other"


@dataclass(frozen=True, slots=True)
class Listing:
    """A directory's children by kind, each list sorted by code point."""

    directories: list[str]
    files: list[str]
    other: list[str]

    def __len__(self) -> int:
        return len(self.directories) + len(self.files) + len(self.other)

    def page(self, start: int, count: int) -> list[tuple[str, str]]:
        """``(name, type)`` for entries ``start`` .. ``start + count - 1`` (0-based) of the one order."""
        out: list[tuple[str, str]] = []
        for kind, names in (("directory", self.directories), ("file", self.files), ("other", self.other)):
            if count <= 0:
                break
            if start >= len(names):
                start -= len(names)
                continue
            chunk = names[start : start + count]
            out.extend((name, kind) for name in chunk)
            count -= len(chunk)
            start = 0
        return out


def scan_directory(real: str) -> Listing:
    """Direct children of ``real``: directories, then files, then other, each by code point.

    Symlinks are "other" and never followed: the type comes from the entry itself (``d_type``,
    no per-entry stat). Three lists of plain strings sorted separately keep this close to a bare
    ``scandir`` + sort, which matters for directories of 100,000 entries.
    """
    directories: list[str] = []
    files: list[str] = []
    other: list[str] = []
    with os.scandir(real) as it:
        for e in it:
            # With follow_symlinks=False a symlink is neither a directory nor a file.
            if e.is_dir(follow_symlinks=False):
                directories.append(e.name)
            elif e.is_file(follow_symlinks=False):
                files.append(e.name)
            else:
                other.append(e.name)
    directories.sort()
    files.sort()
    other.sort()
    return Listing(directories, files, other)


def entry_details(real_dir: str, name: str) -> dict:
    """Size, mtime and link target of one entry, for widgets (never for model text)."""
    full = os.path.join(real_dir, name)
    try:
        st = os.lstat(full)
    except OSError:
        return {}
    out = {"size": st.st_size, "mtime": st.st_mtime}
    if statmod.S_ISLNK(st.st_mode):
        try:
            out["target"] = os.readlink(full)
        except OSError:
            pass
    return out


def atomic_write(real: str, data: bytes, mode: int | None, owner: tuple[int, int] | None = None) -> None:
    """Replace ``real`` with ``data`` so a crash or full disk leaves the old content whole.

    A temporary file in the same directory (same filesystem, so the rename is atomic) is
    written, flushed and fsynced, given the old mode, then renamed over the target; the
    directory is fsynced so the rename itself survives a crash. On any failure the temporary
    file is removed and the target is untouched.
    """
    directory, base = os.path.split(real)
    # The name is cut so a target near NAME_MAX (255 bytes) still gets a temporary file.
    tmp = os.path.join(directory, f".{base[:32]}.{secrets.token_hex(6)}.dsh-tmp")
    # 0o666 through O_CREAT lets the process umask decide a new file's mode, as any editor does.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if owner is not None:
                # Keep the replaced file's owner and group where allowed (a server running as
                # root must not take users' files over); before fchmod, which chown would undo.
                try:
                    os.fchown(fd, *owner)
                except OSError:
                    pass
            if mode is not None:
                os.fchmod(fd, statmod.S_IMODE(mode))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
