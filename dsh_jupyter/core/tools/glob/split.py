"""``glob`` on two cores: two sorted rg walks over two parts of the tree, merged by modification time.

(Where the compiled dater is built, glob takes dated walks over the same two parts instead
(``dating``): this merge is what an install without it uses; the cut serves both.)

Why it exists: glob answers oldest first, and ``rg --sort=modified`` walks the tree on one thread
(sorting forces it) and stats every file by path, several times slower than rg's unsorted,
parallel walk. A walk of our own plus a stat per file is no faster (each Python stat is a system
call of its own). Instead the tree is cut in two and each part gets its own
``rg --sort=modified``, both running at once; each answers a list sorted by time, and the two are
merged. A merge only needs the times where the two lists cross, so it gallops: it stats the files
it probes (beneath the root, no symlink followed) and copies the runs between them. Files made
or changed together (a checkout, an unpacked archive, one folder's edits) come in long runs, so
few stats are needed. Where times alternate between the parts (a workspace edited over months,
any folder holding old and new files) galloping stops paying: the merge then dates every path
left in one pass and merges the two runs by one stable sort.

How the tree is cut: every other folder among the search root's entries (by name) goes to part
B, the rest (files and the other folders) to part A. A root with a single folder and a few files
is cut one level further down. Both walks start at the root (``.``, never a path argument, which
rg would follow if it were swapped for a symlink) and leave the other part out with one anchored
glob of alternatives: ``--glob=!/{b1,b3}`` for A, ``--glob=!/{a1,f.txt,b2}`` for B. B's answer is
kept only below B's folders (an entry made meanwhile is A's).

When it stands aside (the caller runs the one sorted walk): fewer than two folders to share, more
than ``MAX_ENTRIES`` entries at a level (a flat folder gains nothing), or a name that cannot be
written into a glob exactly (not UTF-8).
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass

from ...rg.recheck import Rechecker

__all__ = [
    "DATE_ALL_AFTER",
    "MAX_ENTRIES",
    "Background",
    "Split",
    "Stamper",
    "escape_glob",
    "merge_by_mtime",
    "plan_split",
]

MAX_ENTRIES = 2000  # entries read at one level to plan the cut; more: no cut
MAX_DEPTH = 3  # how far a single folder is followed down
_GLOB_SPECIAL = set("*?[]{}!,\\")


def escape_glob(name: str) -> str:
    """``name`` as a glob that matches it literally (rg's globs take backslash escapes)."""
    return "".join("\\" + c if c in _GLOB_SPECIAL else c for c in name)


@dataclass(frozen=True)
class Split:
    """The two parts: extra rg arguments for each, and the folders (relative, ``a/b``) of part B."""

    a_flags: list[str]
    b_flags: list[str]
    b_dirs: list[str]

    @property
    def b_heads(self) -> tuple[str, ...]:
        """What every path in part B starts with: each of its folders and "/"."""
        return tuple(d + "/" for d in self.b_dirs)

    def only_b(self, rels: list[str]) -> list[str]:
        """The paths of ``rels`` that lie in part B's folders."""
        heads = self.b_heads
        return [rel for rel in rels if rel.startswith(heads)]


def _entries(dir_fd: int) -> list[tuple[str, bool]] | None:
    """``(name, is a real folder)`` of each entry, sorted, or None when there are too many."""
    out: list[tuple[str, bool]] = []
    with os.scandir(dir_fd) as it:
        for entry in it:
            if len(out) >= MAX_ENTRIES:
                return None
            try:
                out.append((entry.name, entry.is_dir(follow_symlinks=False)))
            except OSError:
                out.append((entry.name, False))
    out.sort()
    return out


def _alternatives(level: str, names: list[str]) -> str:
    # one glob for many names: anchored at the search root, braces when there are several
    inner = ",".join(escape_glob(n) for n in names)
    return f"--glob=!/{level}{inner if len(names) == 1 else '{' + inner + '}'}"


def plan_split(root_fd: int, skip: Callable[[str], bool]) -> Split | None:
    """The cut of the tree below ``root_fd``, or None when one walk is the better plan.

    ``skip(rel)`` says a folder must not go to part B (a hidden or VCS folder, a protected one,
    or one that holds a protected folder): it stays in A, where rg treats it as ever.
    """
    level = ""  # the folder being cut, relative to the root, ending in "/" (or "")
    b_flags: list[str] = []  # B leaves out every sibling of the folders it goes down through
    fd = root_fd
    opened: list[int] = []
    try:
        for _ in range(MAX_DEPTH):
            entries = _entries(fd)
            if not entries:
                return None
            names = [name for name, _ in entries]
            if any(_not_utf8(n) for n in names):
                return None
            folders = [name for name, is_dir in entries if is_dir and not skip(level + name)]
            if len(folders) == 1 and len(entries) <= 8:
                # one folder and a few files: cut inside the folder (the files stay in part A)
                others = [n for n in names if n != folders[0]]
                if others:
                    b_flags.append(_alternatives(level, others))
                fd = os.open(folders[0], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                opened.append(fd)
                level += folders[0] + "/"
                continue
            if len(folders) < 2:
                return None
            b = folders[1::2]
            chosen = set(b)
            rest = [n for n in names if n not in chosen]
            if rest:
                b_flags.append(_alternatives(level, rest))
            return Split(a_flags=[_alternatives(level, b)], b_flags=b_flags, b_dirs=[level + n for n in b])
        return None
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EACCES, errno.EPERM):
            return None
        raise
    finally:
        for f in opened:
            os.close(f)


def _not_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


# The merge gallops while it pays: when it has dated more than DATE_ALL_AFTER paths and copied
# fewer than RUN_PER_PROBE paths per date on average (times that alternate between the parts, as
# in a workspace edited over months), dating every path left in one pass and one C-level merge of
# the two sorted runs costs less than probing on.
DATE_ALL_AFTER = 1024
RUN_PER_PROBE = 8


def merge_by_mtime(a: list[str], b: list[str], stamp: Callable[[str], int]) -> list[str]:
    """``a`` and ``b`` (each sorted by ``stamp``, oldest first) as one sorted list; on equal
    stamps ``a`` 's come first. ``stamp`` is called at most once per path: only where probed
    while runs are long, for every path left once they are short."""
    if not a or not b:
        return list(a or b)
    seen: dict[str, int] = {}

    def st(path: str) -> int:
        value = seen.get(path)
        if value is None:
            value = seen[path] = stamp(path)
        return value

    st.seen = seen  # type: ignore[attr-defined]
    out: list[str] = []
    i = j = 0
    na, nb = len(a), len(b)
    while i < na and j < nb:
        if len(seen) > DATE_ALL_AFTER and len(out) < RUN_PER_PROBE * len(seen):
            return out + _merge_dated(a[i:], b[j:], st, stamp)
        if st(a[i]) <= st(b[j]):
            k = _gallop(a, i, na, st(b[j]), st, strict=False)
            out += a[i:k]
            i = k
        else:
            k = _gallop(b, j, nb, st(a[i]), st, strict=True)
            out += b[j:k]
            j = k
    out += a[i:]
    out += b[j:]
    return out


def _merge_dated(a: list[str], b: list[str], st: Callable[[str], int], stamp) -> list[str]:
    """``a`` and ``b`` merged by dating every path: a stable sort of the two sorted runs one after
    the other is one linear merge in C (timsort finds the runs), ``a`` first on equal times.
    ``stamp.many`` (a ``Stamper``) dates the paths not dated yet in one tight pass."""
    both = a + b
    many = getattr(stamp, "many", None)
    if many is None:
        keys = [st(path) for path in both]
    else:
        seen = st.seen  # type: ignore[attr-defined]
        missing = [path for path in both if path not in seen]
        seen.update(zip(missing, many(missing)))
        keys = [seen[path] for path in both]
    return [both[k] for k in sorted(range(len(both)), key=keys.__getitem__)]


def _gallop(seq: list[str], lo: int, hi: int, x: int, st: Callable[[str], int], strict: bool) -> int:
    """The first index from ``lo`` whose stamp comes after ``x`` (``> x``, or ``>= x`` when
    ``strict``); ``seq[lo]`` is known to come before. Probes 1, 2, 4, ... ahead, then bisects."""

    def before(k: int) -> bool:
        v = st(seq[k])
        return v < x if strict else v <= x

    last_before, step = lo, 1
    while True:
        probe = lo + step
        if probe >= hi:
            bound = hi
            break
        if not before(probe):
            bound = probe
            break
        last_before, step = probe, step * 2
    low, high = last_before + 1, bound
    while low < high:
        mid = (low + high) // 2
        if before(mid):
            low = mid + 1
        else:
            high = mid
    return low


class Stamper:
    """The mtime (ns) of a path below ``root_fd``, looked up beneath it with no symlink followed;
    -1 for one that is gone (rg sorts a file it cannot stat first, too). ``many`` dates a list
    in one pass. Close it to release the folders it opened."""

    def __init__(self, root_fd: int) -> None:
        self.check = Rechecker(root_fd)

    def __call__(self, rel: str) -> int:
        st = self.check.regular_stat(rel)
        return -1 if st is None else st.st_mtime_ns

    def many(self, rels: list[str]) -> list[int]:
        return [-1 if mtime is None else mtime for mtime in self.check.mtimes(rels)]

    def close(self) -> None:
        self.check.close()


class Background:
    """A call run on a thread; ``result()`` waits and returns or raises what it did."""

    def __init__(self, fn: Callable[[], object]) -> None:
        self._value: object = None
        self._error: BaseException | None = None

        def run() -> None:
            try:
                self._value = fn()
            except BaseException as exc:  # handed to the caller by result()
                self._error = exc

        self._thread = threading.Thread(target=run, name="dsh-glob-part", daemon=True)
        self._thread.start()

    def wait(self) -> None:
        self._thread.join()

    def result(self):
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value
