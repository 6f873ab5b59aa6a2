"""Choose which items fill a capped glob or grep page so the page spans the workspace.

Why this exists: glob results are sorted by modification time and grep results by path, and a
plain head of that order misleads. In one workspace with 22 top-level entries,
the first 100 of 10,030 glob matches all sat in a single freshly unpacked subfolder with old
timestamps, and the agent described that one subfolder as the whole project; a grep page of the
first 250 matches in path order showed three files of the first folder and nothing of the 55
files that matched. When a result is over the cap, the page is instead filled round-robin: every
group that fits gets a slot before any group gets a second.

- ``round_robin_counts`` is the one rule: given group sizes and ``k`` slots, how many items each
  group contributes.
- ``sample_across_groups`` (glob) applies it to items named by group keys.
- ``sample_sorted_paths`` (grep) applies it twice to a path-sorted result: across top-level
  entries, then, within an entry, across its files.

What it must never do: touch the filesystem, reorder items inside a group, invent or duplicate
an index, or claim a page is the plain head (``flat``) when it is not. It only sees group keys
and sizes (the caller computes them) or a sorted sequence, and returns indices, counts or spans.
The glob sampler is linear in its input; the grep sampler bisects its sorted input about ``k``
times; the round-robin itself visits at most ``k`` groups in total.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["PathSample", "Sample", "round_robin_counts", "sample_across_groups", "sample_sorted_paths"]


def round_robin_counts(sizes: Sequence[int], k: int) -> list[int]:
    """How many items each group gives to a page of ``k`` slots filled round-robin.

    Groups are visited in order; each round gives every group that still has items one more
    slot, until the slots run out. A group that runs out drops out and its turns go to the rest.
    Because each round takes a group's *next* item, a group's chosen items are always a prefix.
    """
    if k < 0:
        raise ValueError(f"k must be non-negative, got {k}")
    taken = [0] * len(sizes)
    active = [g for g, size in enumerate(sizes) if size > 0]
    slots = k
    while slots and active:
        still_active: list[int] = []
        for g in active:
            if not slots:
                break
            taken[g] += 1
            slots -= 1
            if taken[g] < sizes[g]:
                still_active.append(g)
        active = still_active  # when slots ran out part-way, the while condition ends the loop
    return taken


# ------------------------------------------------------------------------- one level (glob)


@dataclass(frozen=True)
class Sample:
    """Which input items fill the page, and how widely they cover the groups.

    ``indices`` are in output order: grouped by group (groups in order of first appearance in the
    input), each group's chosen items in their original relative order. ``flat`` is True exactly
    when the output equals the plain head, ``indices == list(range(len(indices)))``.
    """

    indices: list[int]
    groups_shown: int
    groups_total: int
    flat: bool


def _is_head(indices: list[int]) -> bool:
    return all(position == index for position, index in enumerate(indices))


def sample_across_groups(keys: Sequence[str], k: int) -> Sample:
    """Pick at most ``k`` items, round-robin across the groups named by ``keys``.

    ``keys[i]`` is the group key of input item ``i``. Groups are visited in order of first
    appearance; each round gives every group that still has items its next item in original
    order, until ``k`` slots are filled. When ``len(keys) <= k`` every index is returned in order.
    """
    if k < 0:
        raise ValueError(f"k must be non-negative, got {k}")
    n = len(keys)
    if n <= k:
        groups_total = len(dict.fromkeys(keys))
        return Sample(indices=list(range(n)), groups_shown=groups_total, groups_total=groups_total, flat=True)
    # Group sizes by one C-level count (a dict keeps the order of first appearance), each
    # group's first member by one dict built from the back (the last write, from the back, is the first),
    # and a chosen group's further members by C-level ``index`` scans from the one before.
    sizes = Counter(keys)
    taken = round_robin_counts(list(sizes.values()), k)
    seq = keys if isinstance(keys, list) else list(keys)
    first = dict(zip(reversed(seq), range(n - 1, -1, -1)))
    indices: list[int] = []
    shown = 0
    for key, count in zip(sizes, taken):
        if count:
            shown += 1
            at = first[key]
            indices.append(at)
            for _ in range(count - 1):
                at = seq.index(key, at + 1)
                indices.append(at)
    return Sample(indices=indices, groups_shown=shown, groups_total=len(sizes), flat=_is_head(indices))


# ------------------------------------------------------------------------ two levels (grep)


@dataclass(frozen=True)
class PathSample:
    """Which runs of a path-sorted result fill the page.

    ``spans`` are ``(start, count)`` pairs into the sorted items, in order: each is the first
    ``count`` items of one file, so the page (the spans joined) keeps the input order — grouped by
    file, files in path order. ``flat`` is True exactly when the page is the plain head, the
    first ``k`` items.
    """

    spans: list[tuple[int, int]]
    files_shown: int
    entries_shown: int
    flat: bool


def _identity(item):
    return item


def sample_sorted_paths(items: Sequence, k: int, *, prefix: str = "", key=None) -> PathSample:
    """Fill ``k`` slots round-robin across top-level entries, and within an entry across its files.

    ``items`` are sorted by ``key(item)``, a path (for grep: one item per match, so the items of
    one file are adjacent and in line order). The top-level entry of a path is its first segment
    after ``prefix`` (the search root as printed). Every entry gets a slot before any gets a
    second; an entry's slots go round-robin to its files in path order, so each of its files
    shows its first item before any shows a second.

    Entries and files are found by bisection, not by a walk over every item: all paths below
    ``E/`` sort between ``E/`` and ``E0`` (``0`` follows ``/``). Only the first ``k`` entries,
    and within an entry only its first ``slots`` files, can get a slot, so the cost is about
    ``k`` bisections however many items there are.
    """
    if k < 0:
        raise ValueError(f"k must be non-negative, got {k}")
    get = key or _identity
    n = len(items)
    cut = len(prefix)
    entries: list[tuple[int, int]] = []
    pos = 0
    while pos < n and len(entries) < k:  # with more entries than slots, the first k get one each
        path = get(items[pos])
        below = cut if cut and path.startswith(prefix) else 0
        slash = path.find("/", below)
        if slash < 0:  # a file directly in the search root: its own entry
            end = bisect_right(items, path, pos, n, key=get)
        else:  # a directory: every path that starts with it and a slash
            end = bisect_left(items, path[:slash] + "0", pos, n, key=get)
        end = max(end, pos + 1)
        entries.append((pos, end))
        pos = end

    spans: list[tuple[int, int]] = []
    outer = round_robin_counts([end - start for start, end in entries], k)
    for (start, end), slots in zip(entries, outer):
        if not slots:
            continue
        files: list[tuple[int, int]] = []
        at = start
        while at < end and len(files) < slots:  # later files of this entry cannot get a slot
            stop = bisect_right(items, get(items[at]), at, end, key=get)
            files.append((at, stop - at))
            at = stop
        for (first, _), count in zip(files, round_robin_counts([size for _, size in files], slots)):
            if count:
                spans.append((first, count))

    flat = True
    expected = 0
    for first, count in spans:
        if first != expected:
            flat = False
            break
        expected += count
    return PathSample(
        spans=spans,
        files_shown=len(spans),
        entries_shown=sum(1 for slots in outer if slots),
        flat=flat,
    )
