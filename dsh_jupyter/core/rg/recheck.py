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

What it must never do: follow a symlink, keep a result it could not confirm, read more of a
file than the highest line it must confirm, or hold more than ``HELD`` folders open (a tree
deeper than the descriptor limit is looked up like any other, not refused).
"""

from __future__ import annotations

import errno
import os
import stat as statmod

__all__ = ["HELD", "Rechecker", "read_lines", "take_paths"]

# Folders held open at once (mtimes.c's HELD_MAX says the same): deeper than any ordinary tree
# (a checkout's deepest path has about 20), and a few lookups at once (two dating walks, a grep)
# stay far inside the common limit of 1,024 descriptors.
HELD = 64
_ABSENT, _UNOPENED = -1, -2  # no such folder beneath the root; one that could not be opened
# what a failed lookup means when the path is simply not there (no symlink is followed: ELOOP)
_NOT_THERE = frozenset((errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.ENAMETOOLONG))
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
    """Looks paths up beneath an open search root, caching the folders it opened (close it).

    At most ``HELD`` folders are held open at once, the ones opened last; a folder is reached from
    its deepest held ancestor one name at a time (the root when none is held), so a tree deeper
    than the descriptor limit is looked up like any other, with no recursion. A path below a
    folder that could not be opened for a reason other than its absence (no permission, no
    descriptor left even after letting the other held folders go) is counted in ``undated``.
    """

    def __init__(self, root_fd: int) -> None:
        self.root_fd = root_fd
        # rel -> its descriptor, or _ABSENT / _UNOPENED, in the order opened (a lookup that finds
        # one does not move it: one dict lookup, the whole cost of the common case)
        self._dirs: dict[str, int] = {}
        self.undated = 0  # paths that could not be looked at (a folder on the way, or the path itself)

    def close(self) -> None:
        for fd in self._dirs.values():
            if fd >= 0:
                os.close(fd)
        self._dirs = {}

    def __enter__(self) -> Rechecker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _folder(self, rel: str) -> int:
        """The descriptor of the folder ``rel`` beneath the root (``""`` is the root), or
        ``_ABSENT`` (no such folder beneath it, no symlink followed) or ``_UNOPENED``."""
        if not rel:
            return self.root_fd
        dirs = self._dirs
        fd = dirs.get(rel)
        if fd is not None:
            return fd
        # the names below the deepest ancestor known (rel's own rpartition chain: "/x" is x
        # below the root, any other empty name names no folder)
        cuts = []
        cut = len(rel)
        fd = self.root_fd
        while cut > 0:
            cuts.append(cut)
            cut = rel.rfind("/", 0, cut)
            if cut <= 0:
                break
            known = dirs.get(rel[:cut])
            if known is not None:
                fd = known
                break
        start = max(cut, 0)
        for stop in reversed(cuts):
            name = rel[start + 1 if start or rel[0] == "/" else 0 : stop]
            start = stop
            if fd < 0:
                break  # below a folder that is absent or could not be opened: the same answer
            self._room(fd)
            fd = self._open(fd, name)
            dirs[rel[:stop]] = fd
        return fd

    def _open(self, parent: int, name: str, flags: int = _DIR) -> int:
        """``name`` opened beneath ``parent`` with ``flags``: a descriptor, or ``_ABSENT`` or
        ``_UNOPENED``. Out of descriptors, it lets the held folders go and tries once more."""
        if name in ("", ".", ".."):
            return _ABSENT
        for attempt in (1, 2):
            try:
                return os.open(name, flags, dir_fd=parent)
            except OSError as exc:
                if exc.errno in _NOT_THERE:
                    return _ABSENT
                if attempt == 2 or exc.errno not in (errno.EMFILE, errno.ENFILE):
                    return _UNOPENED
            self._let_go(parent)
        return _UNOPENED  # not reached

    def _room(self, parent: int) -> None:
        """Let the folders opened first go until one more may be held (never ``parent``, the
        folder about to be opened from)."""
        dirs = self._dirs
        while len(dirs) >= HELD:
            old = next(iter(dirs))
            if dirs[old] == parent:
                old = next(rel for rel, fd in dirs.items() if fd != parent)
            gone = dirs.pop(old)
            if gone >= 0:
                os.close(gone)

    def _let_go(self, keep: int) -> None:
        """Close every held folder but ``keep``."""
        for rel, fd in list(self._dirs.items()):
            if fd >= 0 and fd != keep:
                os.close(fd)
                del self._dirs[rel]

    def _split(self, rel: str) -> tuple[int, str]:
        """The folder of ``rel`` (a descriptor, ``_ABSENT`` or ``_UNOPENED``) and its last name."""
        parent, _, name = rel.rpartition("/")
        return self._folder(parent), name

    def regular_stat(self, rel: str) -> os.stat_result | None:
        """The stat of the regular file ``rel`` beneath the root, no symlink on the way; None where
        there is none, or it could not be looked at (counted in ``undated``)."""
        fd, name = self._split(rel)
        if fd < 0 or name in ("", ".", ".."):
            if fd == _UNOPENED:
                self.undated += 1
            return None
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError as exc:
            if exc.errno not in _NOT_THERE:
                self.undated += 1
            return None
        return st if st.st_mode & _KIND == _REGULAR else None

    def is_file(self, rel: str) -> bool:
        """Whether ``rel`` names a regular file beneath the root, no symlink on the way."""
        return self.regular_stat(rel) is not None

    def mtimes(self, rels: list[str]) -> list[int | None]:
        """The modification time (ns) of each regular file ``rels`` names beneath the root, no
        symlink on the way; None for one that is not (gone, swapped, not a regular file) or could
        not be looked at (counted in ``undated``).

        The one loop glob dates its paths with (``tools/glob/dating``, ``tools/glob/split``): tens of thousands
        of paths, so a run of paths in one folder looks its descriptor up once.
        """
        # The loop is the whole cost of dating (about 2 µs a path, most of it the stat), so it
        # does nothing per path it could do per folder: rg lists a folder's files in runs.
        folder, stat = self._folder, os.stat
        out: list[int | None] = []
        append = out.append
        last, fd = None, _ABSENT
        for rel in rels:
            parent, _, leaf = rel.rpartition("/")
            if parent != last:
                last, fd = parent, folder(parent)
            if fd < 0 or not leaf:
                if fd == _UNOPENED:
                    self.undated += 1
                append(None)
                continue
            try:
                st = stat(leaf, dir_fd=fd, follow_symlinks=False)
            except OSError as exc:
                if exc.errno not in _NOT_THERE:
                    self.undated += 1
                append(None)
                continue
            append(st.st_mtime_ns if st.st_mode & _KIND == _REGULAR else None)
        return out

    def open_regular(self, rel: str) -> int | None:
        """A read descriptor of the regular file ``rel`` beneath the root (no symlink on the way),
        or None; one that could not be opened for a reason other than its absence is counted in
        ``undated``."""
        fd, name = self._split(rel)
        if fd == _UNOPENED:
            self.undated += 1
            return None
        if fd < 0:
            return None
        f = self._open(fd, name, _FILE)
        if f == _UNOPENED:
            self.undated += 1
        if f < 0:
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
    """The second dater of glob (``tools/glob/helper.py``): read NUL-ended paths (relative to the
    root, with or without rg's "./") from stdin until it closes, date each beneath ``root_fd``
    with ``Rechecker.mtimes``, then write every time as a signed 64-bit integer (native order),
    one byte per path, 1 where the time is real (a regular file beneath the root) and 0 where it
    is not, and last how many paths could not be dated (``Rechecker.undated``), one more integer."""
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
        undated = array("q", [check.undated])
    out = memoryview(times.tobytes() + bytes(real) + undated.tobytes())
    while out:
        out = out[os.write(1, out) :]


if __name__ == "__main__":
    # Run by path with ``python -I -S``: it imports nothing beyond the standard library above.
    import sys

    _date_stdin(int(sys.argv[1]))
    os._exit(0)  # the answer is written: the interpreter's teardown would only delay its reader
