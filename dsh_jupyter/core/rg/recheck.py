"""Re-check what an unfenced ripgrep reported, so nothing from outside the root is passed on.

Why it exists: without Landlock, rg's own walk can be raced. rg lists a folder, a neighbour
swaps one of its subfolders for a symlink to outside, rg opens the subfolder by name and reads
outside files, reporting them under the inside name. Descriptors cannot stop that; checking the
answer can. In ``descriptors-only`` mode every path rg reported is looked up again beneath the
search root's descriptor (``O_NOFOLLOW`` at each step, no symlink followed), and for grep every
reported line is compared with that line of the file found there. A path that is not a regular
file beneath the root, or a line the file there does not hold, is dropped: whatever rg read
outside is never shown. Under Landlock this is not needed (rg cannot open anything outside) and
is skipped.

What it must never do: follow a symlink, keep a result it could not confirm, or read more of a
file than the highest line it must confirm.
"""

from __future__ import annotations

import errno
import os
import stat as statmod

__all__ = ["Rechecker", "read_lines", "take_paths"]

_DIR = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_KIND, _REGULAR = 0o170000, statmod.S_IFREG  # the file-type bits of st_mode (S_IFMT's mask)
_FILE = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def read_lines(fd: int, wanted: set[int], keep: int | None = None) -> dict[int, bytes]:
    """The raw lines ``wanted`` (1-based, with their terminators) of the file open as ``fd``, read
    from its start (``pread``: the descriptor's offset is left alone) up to the highest one.

    With ``keep``, a line longer than ``keep`` bytes is held as its first ``keep`` bytes and no
    terminator, and no more of it is kept in memory while its end is looked for: a minified
    bundle's 10 MB line costs ``keep`` bytes, not 10 MB copied again with every chunk read.
    """
    last = max(wanted) if wanted else 0
    out: dict[int, bytes] = {}
    number, carry, pos, cut = 0, b"", 0, False  # cut: carry is the start of a longer line
    while number < last:
        chunk = os.pread(fd, 1 << 20, pos)
        pos += len(chunk)
        if not chunk:
            if carry:
                number += 1
                if number in wanted:
                    out[number] = carry[:keep] if keep is not None else carry
            break
        pieces = (carry + chunk).split(b"\n")
        carry = pieces.pop()
        for k, piece in enumerate(pieces):
            number += 1
            if number in wanted:
                long = keep is not None and (len(piece) > keep or (k == 0 and cut))
                out[number] = piece[:keep] if long else piece + b"\n"
            if number >= last:
                break
        if pieces:
            cut = False
        if keep is not None and len(carry) > keep:
            carry, cut = carry[:keep], True
    return out


class Rechecker:
    """Looks paths up beneath an open search root, caching the folders it opened (close it)."""

    def __init__(self, root_fd: int) -> None:
        self.root_fd = root_fd
        self._dirs: dict[str, int | None] = {"": root_fd}

    def close(self) -> None:
        for rel, fd in self._dirs.items():
            if rel and fd is not None:
                os.close(fd)
        self._dirs = {"": self.root_fd}

    def __enter__(self) -> Rechecker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def folder(self, rel: str) -> int | None:
        if rel in self._dirs:
            return self._dirs[rel]
        parent, _, name = rel.rpartition("/")
        pfd = self.folder(parent)
        fd = None
        if pfd is not None and name not in ("", ".", ".."):
            try:
                fd = os.open(name, _DIR, dir_fd=pfd)
            except OSError as exc:
                if exc.errno not in (
                    errno.ENOENT,
                    errno.ENOTDIR,
                    errno.ELOOP,
                    errno.EACCES,
                    errno.EPERM,
                    errno.ENAMETOOLONG,
                ):
                    raise
        self._dirs[rel] = fd
        return fd

    def _split(self, rel: str) -> tuple[int | None, str]:
        parent, _, name = rel.rpartition("/")
        return self.folder(parent), name

    def regular_stat(self, rel: str) -> os.stat_result | None:
        """The stat of the regular file ``rel`` beneath the root, no symlink on the way; None if none."""
        fd, name = self._split(rel)
        if fd is None or name in ("", ".", ".."):
            return None
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            return None
        return st if statmod.S_ISREG(st.st_mode) else None

    def is_file(self, rel: str) -> bool:
        """Whether ``rel`` names a regular file beneath the root, no symlink on the way."""
        return self.regular_stat(rel) is not None

    def mtimes(self, rels: list[str]) -> list[int | None]:
        """The modification time (ns) of each regular file ``rels`` names beneath the root, no
        symlink on the way; None for one that is not (gone, swapped, not a regular file).

        The one loop glob dates its paths with (``globtimes``, ``globsplit``): tens of thousands
        of paths, so a run of paths in one folder looks its descriptor up once.
        """
        # The loop is the whole cost of dating (about 2 µs a path, most of it the stat), so it
        # does nothing per path it could do per folder: rg lists a folder's files in runs.
        folder, stat = self.folder, os.stat
        out: list[int | None] = []
        append = out.append
        last, fd = None, None
        for rel in rels:
            parent, _, leaf = rel.rpartition("/")
            if parent != last:
                last, fd = parent, folder(parent)
            if fd is None or not leaf:
                append(None)
                continue
            try:
                st = stat(leaf, dir_fd=fd, follow_symlinks=False)
            except OSError:
                append(None)
                continue
            append(st.st_mtime_ns if st.st_mode & _KIND == _REGULAR else None)
        return out

    def open_regular(self, rel: str) -> int | None:
        """A read descriptor of the regular file ``rel`` beneath the root (no symlink on the way), or None."""
        fd, name = self._split(rel)
        if fd is None or name in ("", ".", ".."):
            return None
        try:
            f = os.open(name, _FILE, dir_fd=fd)
        except OSError:
            return None
        if not statmod.S_ISREG(os.fstat(f).st_mode):
            os.close(f)
            return None
        return f

    def lines(self, rel: str, wanted: set[int], keep: int | None = None) -> dict[int, bytes] | None:
        """The raw lines ``wanted`` (1-based, with their terminators) of the file ``rel``, or None;
        ``keep`` as ``read_lines``."""
        f = self.open_regular(rel)
        if f is None:
            return None
        try:
            return read_lines(f, wanted, keep)
        finally:
            os.close(f)

    def confirm_matches(self, rows: list, path_of) -> list[int]:
        """The indices of the grep matches whose line the file beneath the root really holds.

        ``rows`` are rg matches with ``path`` (relative to the search root, no ``./``), ``line``
        and ``text`` (the line as rg reported it, decoded as rg's parser decodes it).
        """
        by_file: dict[str, set[int]] = {}
        for row in rows:
            by_file.setdefault(path_of(row), set()).add(row.line)
        found = {path: self.lines(path, wanted) for path, wanted in by_file.items()}
        kept = []
        for i, row in enumerate(rows):
            held = found.get(path_of(row))
            line = held.get(row.line) if held is not None else None
            if line is not None and line.decode("utf-8", "replace") == row.text:
                kept.append(i)
        return kept


def take_paths(carry: bytes, data: bytes) -> tuple[list[str], bytes]:
    """The whole NUL-ended paths of ``carry + data`` (rg's ``--files --null`` output, its "./"
    dropped, undecodable bytes as surrogate escapes) and what follows the last NUL, to carry."""
    data = carry + data if carry else data
    cut = data.rfind(b"\0")
    if cut < 0:
        return [], data
    # rg names every path "./…": one replace over the piece drops the "./" of all of them
    text = ("\0" + data[:cut].decode("utf-8", "surrogateescape")).replace("\0./", "\0")
    return text[1:].split("\0"), data[cut + 1 :]


def _date_stdin(root_fd: int) -> None:
    """The second dater of glob (``tools/globhelper.py``): read NUL-ended paths (relative to the
    root, with or without rg's "./") from stdin until it closes, date each beneath ``root_fd``
    with ``Rechecker.mtimes``, then write every time as a signed 64-bit integer (native order)
    followed by one byte per path, 1 where the time is real (a regular file beneath the root)
    and 0 where it is not."""
    from array import array

    times, real = array("q"), bytearray()
    carry = b""
    with Rechecker(root_fd) as check:
        while True:
            data = os.read(0, 1 << 20)
            if not data:
                break
            names, carry = take_paths(carry, data)
            for mtime in check.mtimes(names):
                times.append(0 if mtime is None else mtime)
                real.append(mtime is not None)
    out = memoryview(times.tobytes() + bytes(real))
    while out:
        out = out[os.write(1, out) :]


if __name__ == "__main__":
    # Run by path with ``python -I -S``: it imports nothing beyond the standard library above.
    import sys

    _date_stdin(int(sys.argv[1]))
    os._exit(0)  # the answer is written: the interpreter's teardown would only delay its reader
