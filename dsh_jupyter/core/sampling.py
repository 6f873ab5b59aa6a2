"""Choose which paths fill a capped glob page so the page spans the workspace.

Why this exists: glob results are sorted by modification time, and a capped page used to be the
plain head of that order. In one workspace with 22 top-level entries, the first 100 of 10,030
matches all sat in a single freshly unpacked subfolder with old timestamps, and the agent
described that one subfolder as the whole project. When a result is over the cap, the page is
instead filled round-robin across top-level entries, so every entry that fits gets a slot
before any entry gets a second.

What it must never do: touch the filesystem, reorder items inside a group, invent or duplicate
an index, or claim a page is the plain head (``flat``) when it is not. It only sees group keys
(the caller computes them) and returns indices into the caller's list. Building the groups is
linear in the number of keys; the round-robin itself visits at most ``k`` groups in total.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Sample", "sample_across_groups"]


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


def _group(keys: Sequence[str]) -> list[list[int]]:
    """Input indices per group, groups in order of first appearance (one linear pass)."""
    by_key: dict[str, list[int]] = {}
    for index, key in enumerate(keys):
        members = by_key.get(key)
        if members is None:
            by_key[key] = [index]
        else:
            members.append(index)
    return list(by_key.values())


def _is_head(indices: list[int]) -> bool:
    return all(position == index for position, index in enumerate(indices))


def sample_across_groups(keys: Sequence[str], k: int) -> Sample:
    """Pick at most ``k`` items, round-robin across the groups named by ``keys``.

    ``keys[i]`` is the group key of input item ``i``. Groups are visited in order of first
    appearance; each round gives every group that still has items its next item in original
    order, until ``k`` slots are filled. A group that runs out drops out and its turns go to the
    rest. When ``len(keys) <= k`` every index is returned in order.
    """
    if k < 0:
        raise ValueError(f"k must be non-negative, got {k}")
    groups = _group(keys)
    n = len(keys)
    if n <= k:
        return Sample(indices=list(range(n)), groups_shown=len(groups), groups_total=len(groups), flat=True)

    # taken[g] items from the front of group g are chosen. Because each round takes a group's
    # *next* item, the chosen items of a group are always a prefix of it.
    taken = [0] * len(groups)
    active = list(range(len(groups)))
    slots = k
    while slots and active:
        still_active: list[int] = []
        for g in active:
            if not slots:
                break
            taken[g] += 1
            slots -= 1
            if taken[g] < len(groups[g]):
                still_active.append(g)
        active = still_active  # when slots ran out part-way, the while condition ends the loop

    indices: list[int] = []
    shown = 0
    for g, count in enumerate(taken):
        if count:
            shown += 1
            indices.extend(groups[g][:count])
    return Sample(indices=indices, groups_shown=shown, groups_total=len(groups), flat=_is_head(indices))
