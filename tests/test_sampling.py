"""The over-cap glob sampler: round-robin across top-level entries, grouped output, linear time."""

from __future__ import annotations


import pytest

from dsh_jupyter.core.sampling import Sample, sample_across_groups


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
