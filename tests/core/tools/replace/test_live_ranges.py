"""The ranges ``replace`` hands a live document: found again in what it holds now (a notebook's
cells by id), and the ranges that undo them. The server's half runs in
``tests/server/test_replace_live.py``; this is the arithmetic between."""

from __future__ import annotations

from dsh_jupyter.core.tools.replace.live import _after, _mapped


def notebook(*cells: tuple[str, str]) -> dict:
    return {"cells": [{"id": cell_id, "cell_type": "code", "source": source} for cell_id, source in cells]}


def test_a_text_range_moves_with_the_typing_above_it_and_is_undone_exactly():
    base = "a = old\nb = old\n"
    now = "# typed\n" + base
    mapped = _mapped(base, now, [(None, 12, 15, "old", "new")])
    assert mapped == [(None, 20, 23, "old", "new")]
    after, undo = _after(now, mapped)
    assert after == "# typed\na = old\nb = new\n"
    assert undo == [(None, 20, 23, "new", "old")]
    assert _after(after, undo)[0] == now


def test_several_ranges_of_one_text_undo_at_their_shifted_places():
    now = "x old y old z\n"
    ranges = [(None, 2, 5, "old", "longer"), (None, 8, 11, "old", "n")]
    after, undo = _after(now, ranges)
    assert after == "x longer y n z\n"
    assert undo == [(None, 2, 8, "longer", "old"), (None, 11, 12, "n", "old")]
    assert _after(after, undo)[0] == now


def test_a_notebook_range_follows_its_cell_by_id_when_a_cell_was_inserted_above():
    base = notebook(("a", "x = old"), ("b", "print(old)"))
    now = notebook(("new", "typed = 1"), ("a", "x = old"), ("b", "# typed\nprint(old)"))
    mapped = _mapped(base, now, [(1, 4, 7, "old", "new"), (2, 6, 9, "old", "new")])
    assert mapped == [(2, 4, 7, "old", "new"), (3, 14, 17, "old", "new")]
    after, _undo = _after(now, mapped)
    assert [c["source"] for c in after["cells"]] == ["typed = 1", "x = new", "# typed\nprint(new)"]
    assert [c["id"] for c in after["cells"]] == ["new", "a", "b"]


def test_a_deleted_cell_or_a_changed_occurrence_maps_to_nothing():
    base = notebook(("a", "x = old"), ("b", "print(old)"))
    assert _mapped(base, notebook(("b", "print(old)")), [(1, 4, 7, "old", "new")]) is None
    assert _mapped(base, notebook(("a", "x = olds"), ("b", "print(old)")), [(1, 4, 7, "old", "new")]) is None
    assert _mapped("a = old\n", "a = oXld\n", [(None, 4, 7, "old", "new")]) is None
