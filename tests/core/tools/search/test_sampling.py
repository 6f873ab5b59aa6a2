"""The over-cap glob sampler: round-robin across top-level entries, grouped output, linear time."""

from __future__ import annotations

import random

import pytest

from dsh_jupyter.core.tools.search.sampling import (
    PathSample,
    Sample,
    round_robin_counts,
    sample_across_groups,
    sample_sorted_paths,
)


def test_under_or_at_cap_returns_everything_in_order():
    keys = ["b", "a", "b", "c"]
    everything = Sample(indices=[0, 1, 2, 3], groups_shown=3, groups_total=3, flat=True)
    assert sample_across_groups(keys, 4) == everything
    assert sample_across_groups(keys, 10) == everything


def test_empty_input():
    assert sample_across_groups([], 100) == Sample(indices=[], groups_shown=0, groups_total=0, flat=True)


def test_round_robin_then_grouped_output():
    # a a a a b c c b ; k=5 -> round 1: a0 b4 c5 ; round 2: a1 b7 -> a has 2, b 2, c 1
    keys = ["a", "a", "a", "a", "b", "c", "c", "b"]
    sample = sample_across_groups(keys, 5)
    assert sample == Sample(indices=[0, 1, 4, 7, 5], groups_shown=3, groups_total=3, flat=False)


def test_groups_in_first_appearance_order_not_key_order():
    keys = ["z", "z", "z", "a", "m"]
    assert sample_across_groups(keys, 3).indices == [0, 3, 4]


def test_seed_shape_one_old_subfolder_first_shows_every_entry():
    # One freshly unpacked folder with 355 old-timestamped paths sorts first; 23 more entries follow.
    keys = ["unpacked"] * 355
    for g in range(23):
        keys += [f"entry{g:02d}"] * (g % 5 + 1)
    sample = sample_across_groups(keys, 100)
    assert len(sample.indices) == 100
    assert sample.groups_total == 24
    assert sample.groups_shown == 24
    assert not sample.flat
    shown_keys = {keys[i] for i in sample.indices}
    assert shown_keys == set(keys)
    # the 23 small entries hold 66 paths and are all shown whole; the big folder gets the other 34
    assert sum(g % 5 + 1 for g in range(23)) == 66
    assert sample.indices[:34] == list(range(34))
    assert sample.indices[34:] == list(range(355, 355 + 66))


def test_more_groups_than_slots():
    keys = [f"g{i}" for i in range(150) for _ in range(2)]  # 150 groups of 2, grouped contiguously
    sample = sample_across_groups(keys, 100)
    assert sample.groups_total == 150
    assert sample.groups_shown == 100
    # the first 100 groups (in appearance order) each get their first item
    assert sample.indices == [2 * g for g in range(100)]
    assert not sample.flat


def test_exhausted_groups_hand_their_turns_on():
    keys = ["a"] + ["b"] * 2 + ["c"] * 10
    sample = sample_across_groups(keys, 8)
    # a runs out after round 1, b after round 2; c takes every remaining slot
    assert sample == Sample(indices=[0, 1, 2, 3, 4, 5, 6, 7], groups_shown=3, groups_total=3, flat=True)
    keys = ["c"] * 10 + ["a"] + ["b"] * 2
    sample = sample_across_groups(keys, 8)
    assert sample == Sample(indices=[0, 1, 2, 3, 4, 10, 11, 12], groups_shown=3, groups_total=3, flat=False)


def test_interleaved_groups_keep_original_relative_order():
    keys = ["a", "b", "a", "b", "a", "b", "a"]
    sample = sample_across_groups(keys, 4)
    assert sample == Sample(indices=[0, 2, 1, 3], groups_shown=2, groups_total=2, flat=False)


def test_flat_when_every_group_has_one_path():
    keys = [f"top{i}" for i in range(250)]
    sample = sample_across_groups(keys, 100)
    assert sample == Sample(indices=list(range(100)), groups_shown=100, groups_total=250, flat=True)


def test_flat_when_only_one_group():
    sample = sample_across_groups(["only"] * 500, 100)
    assert sample == Sample(indices=list(range(100)), groups_shown=1, groups_total=1, flat=True)


def test_zero_slots_and_negative_k():
    empty_page = Sample(indices=[], groups_shown=0, groups_total=2, flat=True)
    assert sample_across_groups(["a", "b"], 0) == empty_page
    with pytest.raises(ValueError):
        sample_across_groups(["a"], -1)


def test_indices_are_distinct_and_valid():
    keys = [f"g{(i * 7919) % 37}" for i in range(5000)]
    sample = sample_across_groups(keys, 100)
    assert len(sample.indices) == len(set(sample.indices)) == 100
    assert all(0 <= i < len(keys) for i in sample.indices)
    assert sample.groups_shown == 37


@pytest.mark.parametrize(
    "keys",
    [
        [f"g{i % 10_000}" for i in range(100_000)],  # 10,000 interleaved groups
        [f"g{i // 10}" for i in range(100_000)],  # 10,000 contiguous groups
        [f"g{i}" for i in range(100_000)],  # every path its own entry
        ["big"] * 99_000 + [f"s{i}" for i in range(1000)],  # one huge group, many tiny ones
    ],
)
def test_large_inputs_fill_the_page(keys):
    sample = sample_across_groups(keys, 100)
    assert len(sample.indices) == 100
    assert len(set(sample.indices)) == 100


# ------------------------------------------------------------------ the shared round-robin rule


def test_round_robin_counts():
    assert round_robin_counts([1000, 15, 15], 50) == [20, 15, 15]
    assert round_robin_counts([3, 1, 2], 4) == [2, 1, 1]  # round 1: 1,1,1; round 2: the first group
    assert round_robin_counts([3, 1, 2], 100) == [3, 1, 2]
    assert round_robin_counts([0, 5, 0, 5], 3) == [0, 2, 0, 1]  # empty groups never take a slot
    assert round_robin_counts([], 10) == []
    assert round_robin_counts([4, 4], 0) == [0, 0]
    with pytest.raises(ValueError):
        round_robin_counts([1], -1)


# ----------------------------------------------------------------------- two levels (grep)


def matches(files: dict[str, int]) -> list[str]:
    """One item per match, sorted by path: ``{"a/x": 2}`` -> ``["a/x", "a/x"]``."""
    return [path for path in sorted(files) for _ in range(files[path])]


def taken(sample: PathSample, items: list[str]) -> dict[str, int]:
    return {items[first]: count for first, count in sample.spans}


def reference(items: list[str], k: int, prefix: str = "") -> list[int]:
    """The rule as written, simulated one slot at a time: the indices on the page, in order."""
    entries: dict[str, dict[str, list[int]]] = {}
    for i, path in enumerate(items):
        rest = path[len(prefix) :] if prefix and path.startswith(prefix) else path
        entries.setdefault(rest.partition("/")[0], {}).setdefault(path, []).append(i)
    queues = {e: [list(v) for v in files.values()] for e, files in entries.items()}
    turn = dict.fromkeys(entries, 0)
    chosen: list[int] = []
    while len(chosen) < k and any(any(q) for q in queues.values()):
        for e in entries:
            if len(chosen) == k:
                break
            files = [q for q in queues[e] if q]
            if not files:
                continue
            # the entry's next file in round-robin order that still has a match
            order = queues[e]
            while not order[turn[e] % len(order)]:
                turn[e] += 1
            chosen.append(order[turn[e] % len(order)].pop(0))
            turn[e] += 1
    return sorted(chosen)


def issue_shape() -> list[str]:
    """aaa/ first in path order with 10 files of 100 matches, then nine entries of 5 files of 3."""
    files = {f"aaa/f{i}.txt": 100 for i in range(10)}
    files.update({f"{e * 3}/f{i}.txt": 3 for e in "bcdefghij" for i in range(5)})
    return matches(files)


def test_two_levels_spreads_the_page_over_every_entry_and_file():
    items = issue_shape()
    sample = sample_sorted_paths(items, 250)
    got = taken(sample, items)
    # the nine small entries are taken whole (135); aaa's 115 slots go round-robin to its 10 files
    assert [got[f"aaa/f{i}.txt"] for i in range(10)] == [12] * 5 + [11] * 5
    assert all(got[f"{e * 3}/f{i}.txt"] == 3 for e in "bcdefghij" for i in range(5))
    assert sum(count for _, count in sample.spans) == 250
    assert (sample.files_shown, sample.entries_shown, sample.flat) == (55, 10, False)
    # spans are in path order and each starts at its file's first match
    assert [first for first, _ in sample.spans] == sorted(items.index(p) for p in got)


def test_two_levels_every_file_first_match_before_any_second():
    items = matches({"a/x": 5, "a/y": 1, "a/z": 5})
    assert taken(sample_sorted_paths(items, 4), items) == {"a/x": 2, "a/y": 1, "a/z": 1}


def test_two_levels_more_files_than_slots():
    items = matches({f"a/f{i:03d}": 40 for i in range(300)} | {f"b/f{i:03d}": 40 for i in range(110)})
    sample = sample_sorted_paths(items, 250)
    got = taken(sample, items)
    # a and b get 125 slots each: b's 110 files one each plus 15 second matches, a's first 125 files
    assert got == {f"a/f{i:03d}": 1 for i in range(125)} | {f"b/f{i:03d}": 2 if i < 15 else 1 for i in range(110)}
    assert sample.files_shown == 235


def test_two_levels_more_entries_than_slots():
    items = matches({f"e{i}/x": 3 for i in range(10)})
    sample = sample_sorted_paths(items, 4)
    assert taken(sample, items) == {"e0/x": 1, "e1/x": 1, "e2/x": 1, "e3/x": 1}
    assert sample.entries_shown == 4 and not sample.flat


def test_two_levels_files_in_the_root_are_entries_of_their_own():
    items = matches({"a.txt": 4, "a/b.txt": 4, "a-b/c.txt": 4, "a0": 4})
    # path order: a-b/c.txt, a.txt, a/b.txt, a0 -- four entries, one slot each
    assert taken(sample_sorted_paths(items, 4), items) == {"a-b/c.txt": 1, "a.txt": 1, "a/b.txt": 1, "a0": 1}


def test_two_levels_below_a_prefix():
    items = matches({"src/x/a.py": 4, "src/y/a.py": 4, "src/y/b.py": 4})
    sample = sample_sorted_paths(items, 4, prefix="src/")
    assert taken(sample, items) == {"src/x/a.py": 2, "src/y/a.py": 1, "src/y/b.py": 1}
    # without the prefix everything is one entry, src
    assert taken(sample_sorted_paths(items, 4), items) == {"src/x/a.py": 2, "src/y/a.py": 1, "src/y/b.py": 1}
    assert sample_sorted_paths(items, 4).entries_shown == 1


def test_two_levels_within_the_cap_takes_everything():
    items = matches({"a/x": 2, "b": 3})
    assert sample_sorted_paths(items, 5) == PathSample([(0, 2), (2, 3)], 2, 2, True)
    assert sample_sorted_paths([], 5) == PathSample([], 0, 0, True)
    assert sample_sorted_paths(items, 0) == PathSample([], 0, 0, True)


def test_two_levels_one_file_or_the_head_is_flat():
    assert sample_sorted_paths(["only"] * 500, 250) == PathSample([(0, 250)], 1, 1, True)
    # every file its own entry with one match: the round-robin is the head
    assert sample_sorted_paths(["a", "b", "c", "d"], 3).flat
    # one match per file is not enough: entries take turns before a's second file
    items = ["a/1", "a/2", "b", "c"]
    sample = sample_sorted_paths(items, 3)
    assert taken(sample, items) == {"a/1": 1, "b": 1, "c": 1} and not sample.flat
    # a page that happens to equal the head (the first entry runs out exactly) is flat too
    assert sample_sorted_paths(["a", "b/x", "b/x", "b/x"], 2).flat


def test_two_levels_with_a_key_and_bad_k():
    rows = [("a/x", 1, "t"), ("a/x", 2, "t"), ("b/y", 1, "t")]
    assert sample_sorted_paths(rows, 2, key=lambda r: r[0]).spans == [(0, 1), (2, 1)]
    with pytest.raises(ValueError):
        sample_sorted_paths(["a"], -1)


@pytest.mark.parametrize("seed", range(40))
def test_two_levels_agrees_with_the_rule_simulated_slot_by_slot(seed):
    rng = random.Random(seed)
    names = ["a", "a-b", "a.txt", "b", "é", "z/", "0"]
    files = {}
    for _ in range(rng.randint(1, 30)):
        depth = rng.randint(1, 3)
        path = "/".join(rng.choice(names).rstrip("/") + str(rng.randint(0, 3)) for _ in range(depth))
        files[path] = rng.randint(1, 12)
    # a name cannot be both a file and a directory
    files = {p: n for p, n in files.items() if not any(q.startswith(p + "/") for q in files)}
    items = matches(files)
    k = rng.randint(0, len(items) + 3)
    sample = sample_sorted_paths(items, k)
    page = [i for first, count in sample.spans for i in range(first, first + count)]
    assert page == reference(items, k)
    assert sample.flat == (page == list(range(len(page))))


def test_two_levels_costs_about_k_bisections():
    items = [f"top{i % 40:02d}/mid{i // 40 % 50:02d}/f{i:06d}.txt" for i in range(0, 300_000, 3)]
    items.sort()
    calls = 0

    def key(item):
        nonlocal calls
        calls += 1
        return item

    sample = sample_sorted_paths(items, 250, key=key)
    assert sum(count for _, count in sample.spans) == 250 and sample.entries_shown == 40
    assert calls < 250 * 40  # about 290 bisections of ~17 steps each, not one call per item
