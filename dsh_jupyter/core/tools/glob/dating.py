"""``glob``'s order on a tree whose times do not follow its folders: rg's walk, each path dated as it comes.

Why it exists: glob answers oldest first. ``rg --sort=modified`` walks on one thread and stats
every file by its path; ``split`` runs two such walks at once over two halves of the tree and
merges them, which is fast while files made together lie together (a checkout, an unpacked
archive: the merge needs few dates). In a workspace edited over months, where any folder holds
old and new files, the two halves' times alternate and the merge must date nearly every file
after both walks: about twice the one sorted walk. Here instead rg walks unsorted on one thread
(``-j1``) and this thread dates each path while rg is still walking (rg writes into an in-memory
file that ``rg.runner`` hands on every few milliseconds). Each block of whole paths is dated in
one call by the compiled dater (``fs/mtimes``: the system calls alone, about 1.5 µs a path, with
the interpreter let go), so the dating keeps pace with rg's walk; glob then runs one such walk
per part of ``split``'s cut at once, each with its own ``Dating``, and ``finish_together``
sorts the two. Where that library is missing, one walk is dated in Python (2-4 µs a path):
dating, not the walk, is then what the caller waits for, so once a walk has listed
``START_AFTER`` paths half of each piece goes to a helper process (``helper``) that dates it
the same way. The answer is sorted by (time, path) at the end, with one numpy sort; equal times
are ordered by path, so a page is the same from one call to the next.

Without the compiled dater, ``times_follow_folders`` chooses between this and the merge before
any walk, from a few dozen files: the middle half of each sampled folder's times, and whether
those spans keep apart.

Each date is taken through the folder's descriptor, opened beneath the search root one name at a
time with no symlink followed (``rg.recheck.Rechecker``), and only a regular file is kept: a
folder swapped for a symlink after rg listed it, or a file that left, is not reported. That is
the recheck an unfenced rg needs; under Landlock it costs nothing beyond the date itself. A path
that could not be looked at (a folder on the way that may not be entered, no descriptor left)
is not kept either, and ``Dating.undated`` counts it, so glob says how many it left out.

What it must never do: follow a symlink, keep a path it could not date beneath the root, or let
the order depend on rg's timing.
"""

from __future__ import annotations

import errno
import os
from operator import itemgetter

from ...fs import mtimes as compiled
from ...rg.recheck import Rechecker, take_paths
from . import helper as helper_process
from .helper import START_AFTER, Helper

__all__ = ["Dating", "finish_together", "in_order", "times_follow_folders"]

SPLIT_AT = 64  # a piece of fewer paths is dated here whole
HELPER_SHARE = 0.5  # of each piece, once the helper runs
PIECE = 512  # paths handed to the helper at a time: what is not handed over by the end comes back

_SAMPLED = 8  # folders sampled
_FILES_PER_FOLDER = 24
_DEPTH = 4
_APART = 0.8  # share of sampled folder pairs whose middle spans must not meet


class Dating:
    """Collects rg's ``--files --null`` output as it arrives: each path with its mtime (ns).

    Its ``feed`` is ``run_search``'s ``consume``; ``finish()`` returns the paths (without ``./``)
    sorted by time then path. Use it in a ``with`` block: it closes the folders it opened.
    """

    def __init__(self, root_fd: int, helper: bool = True, native: bool = True) -> None:
        self.root_fd = root_fd
        self.check = Rechecker(root_fd)
        self.carry = b""
        self.paths: list[str] = []
        # The compiled dater (``fs/mtimes``) dates each block of rg's output in one call; without
        # it, this thread dates in Python with a helper process beside it.
        self.native = native and compiled.available()
        self.blocks: list = []  # with the compiled dater: numpy arrays of the times of ``paths``
        self.times: list[int] = []  # without it: 0 at the places the helper dates
        self.held: list[tuple[int, int]] = []  # (start, count) in ``paths`` of what the helper dates
        self.helper: Helper | None = None
        self._may_help = helper
        self.fed = 0  # bytes of rg output fed
        self._undated = 0  # paths the compiled dater or the helper could not look at

    def __enter__(self) -> Dating:
        return self

    def __exit__(self, *exc) -> None:
        if self.helper is not None:
            self.helper.stop()
            self.helper = None
        self.check.close()

    def feed(self, data: bytes) -> None:
        self.fed += len(data)
        if self.native:
            self._feed_whole(data)
            return
        names, self.carry = take_paths(self.carry, data)
        if not names:
            return
        if (
            self._may_help
            and self.helper is None
            and len(self.paths) + len(names) >= START_AFTER
            and helper_process.usable()
        ):
            self._may_help = False
            self.helper = Helper(self.root_fd)
        if self.helper is not None and len(names) >= SPLIT_AT:
            # the first half to the helper in pieces of at most PIECE paths (the writer thread
            # hands them over; at the end the ones not yet handed over are taken back), the rest
            # dated here
            half = int(len(names) * HELPER_SHARE)
            for at in range(0, half, PIECE):
                part = names[at : min(at + PIECE, half)]
                self.held.append((len(self.paths), len(part)))
                self.paths += part
                self.helper.send(("\0".join(part) + "\0").encode("utf-8", "surrogateescape"), len(part))
            self.times += [0] * half
            names = names[half:]
        self._date(names)

    def _feed_whole(self, data: bytes) -> None:
        """The whole paths of ``carry + data``, dated by the compiled dater in one call."""
        data = self.carry + data if self.carry else data
        cut = data.rfind(b"\0")
        if cut < 0:
            self.carry = data
            return
        block, self.carry = data[: cut + 1], data[cut + 1 :]
        times = compiled.mtimes(self.root_fd, block)
        names = take_paths(b"", block)[0]
        if times is None:  # not loaded after all: Python dates them
            self._date(names)
            return
        kept = times > compiled.UNDATED
        if not kept.all():  # gone since rg listed it, not a regular file beneath the root, or undated
            import numpy as np

            self._undated += int(np.count_nonzero(times == compiled.UNDATED))
            names = [names[i] for i in np.flatnonzero(kept).tolist()]
            times = times[kept]
        self.paths += names
        self.blocks.append(times)

    def _date(self, names: list[str]) -> None:
        times = self.check.mtimes(names)
        if None in times:  # gone since rg listed it, or not a regular file beneath the root
            kept = [i for i, mtime in enumerate(times) if mtime is not None]
            names, times = [names[i] for i in kept], [times[i] for i in kept]
        self.paths += names
        if self.native:
            import numpy as np

            self.blocks.append(np.array(times, dtype=np.int64))
        else:
            self.times += times  # type: ignore[arg-type]  # no None is left in it

    @property
    def undated(self) -> int:
        """How many of the paths fed could not be dated (a folder on the way that may not be
        entered, no descriptor left): left out, and counted for the answer to say so."""
        return self._undated + self.check.undated

    def finish(self) -> list[str]:
        """Every dated path, oldest first, equal times by path."""
        return in_order(*self.collected())

    def collected(self):
        """``(paths, times)``: every dated path in the order rg listed it, and a numpy array of
        their times (ns); the helper's answer is waited for."""
        import numpy as np  # a core dependency (through pandas); imported where it is needed

        if self.carry:
            self._date([self.carry.decode("utf-8", "surrogateescape").removeprefix("./")])
            self.carry = b""
        paths = self.paths
        if self.native:
            times = np.concatenate(self.blocks) if self.blocks else np.zeros(0, dtype=np.int64)
        else:
            times = np.array(self.times, dtype=np.int64)
        if self.held:
            paths, times = self._take_helpers_times(paths, times)
        return paths, times

    def _take_helpers_times(self, paths: list[str], times):
        """``paths`` and ``times`` with the helper's times in their places, less the paths it
        could not date (dated here instead if the helper did not answer them all)."""
        import numpy as np

        helper, self.helper = self.helper, None
        real = np.ones(len(paths), dtype=bool)

        def date_here(pieces) -> None:
            for start, count in pieces:
                for i, mtime in enumerate(self.check.mtimes(paths[start : start + count])):
                    if mtime is None:
                        real[start + i] = False
                    else:
                        times[start + i] = mtime

        # The pieces the helper has not been handed yet (the last ones) are dated here while it
        # finishes the others: neither side waits long for the other, however the cores were shared.
        handed = len(self.held) - (helper.take_back() if helper is not None else len(self.held))
        date_here(self.held[handed:])
        answer = helper.answer() if helper is not None else None
        if answer is None:
            date_here(self.held[:handed])
        else:
            k = 0
            for start, count in self.held[:handed]:
                times[start : start + count] = answer[0][k : k + count]
                real[start : start + count] = answer[1][k : k + count]
                k += count
            self._undated += answer[2]
        self.held = []
        if real.all():
            return paths, times
        kept = np.flatnonzero(real)
        return [paths[i] for i in kept.tolist()], times[kept]


def finish_together(first: Dating, second: Dating, second_heads: tuple[str, ...]) -> list[str]:
    """The paths of two walks over two parts of the tree (``split``'s cut), oldest first,
    equal times by path; of ``second``'s, only those under its folders (``second_heads``, each
    ending in "/"): a folder made after the cut was planned was walked by the first part too."""
    import numpy as np

    paths, times = first.collected()
    more, more_times = second.collected()
    keep = np.fromiter((p.startswith(second_heads) for p in more), dtype=bool, count=len(more))
    if not keep.all():
        more, more_times = [more[i] for i in np.flatnonzero(keep).tolist()], more_times[keep]
    return in_order(paths + more, np.concatenate((times, more_times)))


def in_order(paths: list[str], times) -> list[str]:
    """``paths`` sorted by ``times`` (a numpy array), equal times by path."""
    import numpy as np

    if not paths:
        return []
    # One sort of the times in C (a Python sort with a key costs about 4x as much on 60,000
    # paths); runs of equal times are then put in path order, so the sort need not be stable.
    order = np.argsort(times)
    ranked = times[order]
    same = np.flatnonzero(ranked[1:] == ranked[:-1])
    ordered = order.tolist()
    if len(same):
        ordered = _ties_by_path(ordered, same, paths)
    if len(ordered) == 1:
        return [paths[ordered[0]]]
    return list(itemgetter(*ordered)(paths))  # the paths in that order, gathered in C


def _ties_by_path(order: list[int], same, paths: list[str]) -> list[int]:
    """``order`` (indices sorted by time) with each run of equal times sorted by path; ``same``
    (a numpy array) holds each position k whose time equals the time at k + 1.

    The runs are found by numpy; a run of two, the commonest on a real checkout (thousands of
    files unpacked in the same tick), is ordered by one comparison instead of a sort."""
    import numpy as np

    out = list(order)
    cuts = np.flatnonzero(np.diff(same) != 1)
    starts = same[np.concatenate(([0], cuts + 1))].tolist()
    stops = (same[np.concatenate((cuts, [len(same) - 1]))] + 2).tolist()
    for start, stop in zip(starts, stops):
        if stop - start == 2:
            first, second = out[start], out[start + 1]
            if paths[second] < paths[first]:
                out[start], out[start + 1] = second, first
        else:
            out[start:stop] = sorted(out[start:stop], key=paths.__getitem__)
    return out


def times_follow_folders(root_fd: int, folders: list[str]) -> bool:
    """Whether files made together lie together below ``root_fd``, judged from a sample: up to
    ``_SAMPLED`` of ``folders`` (relative names), evenly spaced, the first ``_FILES_PER_FOLDER``
    files in each (or in its first subfolder holding files). True when the middle halves of the
    sampled folders' times keep apart for most pairs: a merge of sorted walks then needs few
    dates. A few files edited later do not move a folder's middle half."""
    step = max(1, len(folders) // _SAMPLED)
    spans = []
    for rel in folders[::step][:_SAMPLED]:
        times = _sample(root_fd, rel)
        if len(times) >= 4:
            times.sort()
            spans.append((times[len(times) // 4], times[(3 * len(times)) // 4]))
    if len(spans) < 2:
        return True
    pairs = apart = 0
    for i, (lo, hi) in enumerate(spans):
        for lo2, hi2 in spans[i + 1 :]:
            pairs += 1
            apart += hi < lo2 or hi2 < lo
    return apart >= _APART * pairs


def _sample(root_fd: int, rel: str) -> list[int]:
    """The times of the first files found in ``rel`` or, while it holds none, its first folder."""
    opened: list[int] = []
    try:
        fd = root_fd
        for name in rel.split("/"):
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            opened.append(fd)
        for _ in range(_DEPTH):
            times, first_folder = [], None
            with os.scandir(fd) as it:
                for entry in it:
                    if entry.is_file(follow_symlinks=False):
                        times.append(entry.stat(follow_symlinks=False).st_mtime_ns)
                        if len(times) >= _FILES_PER_FOLDER:
                            break
                    elif first_folder is None and entry.is_dir(follow_symlinks=False):
                        first_folder = entry.name
            if times or first_folder is None:
                return times
            fd = os.open(first_folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            opened.append(fd)
        return []
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EACCES, errno.EPERM):
            return []
        raise
    finally:
        for f in opened:
            os.close(f)
