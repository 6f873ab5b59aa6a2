"""Three-way merges of an agent's write with a person's live document (``server/merging.py``)."""

from __future__ import annotations

import copy
import json

import nbformat
import pytest
from nbformat import v4

from dsh_jupyter.core.documents import MergeConflict
from dsh_jupyter.server.merging import merge_notebooks, merge_texts

BASE = "".join(f"line {i}\n" for i in range(1, 9))


def test_changes_on_different_lines_are_both_kept():
    mine = BASE.replace("line 2", "LINE 2")
    theirs = BASE.replace("line 7", "line 7 (typed)") + "# end\n"
    assert merge_texts(BASE, mine, theirs) == (
        BASE.replace("line 2", "LINE 2").replace("line 7", "line 7 (typed)") + "# end\n",
        True,
    )


def test_one_side_unchanged_takes_the_other_whole():
    assert merge_texts(BASE, BASE, "x\n") == ("x\n", True)
    assert merge_texts(BASE, "y\n", BASE) == ("y\n", False)  # the person changed nothing since
    assert merge_texts(BASE, "same\n", "same\n") == ("same\n", False)


@pytest.mark.parametrize(
    "theirs,where",
    [
        (BASE.replace("line 3", "line 3!"), "lines 3-4"),
        (BASE.replace("line 3\nline 4\n", "three\nfour\nfour and a half\n"), "lines 3-5"),
        (BASE.replace("line 3\n", ""), "line 3"),
    ],
)
def test_changes_to_the_same_lines_name_them_and_merge_nothing(theirs, where):
    mine = BASE.replace("line 3", "LINE 3").replace("line 4", "LINE 4")
    with pytest.raises(MergeConflict) as caught:
        merge_texts(BASE, mine, theirs)
    assert caught.value.where == where


def _nb(*sources, ids=("a", "b", "c")):
    return json.loads(nbformat.writes(v4.new_notebook(cells=[v4.new_code_cell(s, id=i) for s, i in zip(sources, ids)])))


def test_notebook_cells_changed_apart_are_both_kept_and_execution_counts_stay():
    base = _nb("x = 1", "y = 2")
    base["cells"][1]["execution_count"] = 7
    mine = copy.deepcopy(base)
    mine["cells"][0]["source"] = "x = 10"
    theirs = copy.deepcopy(base)
    theirs["cells"][1]["source"] = "y = 2\nprint(y)"
    merged, kept = merge_notebooks(base, mine, theirs)
    assert kept is True
    assert [c["source"] for c in merged["cells"]] == ["x = 10", "y = 2\nprint(y)"]
    assert merged["cells"][1]["execution_count"] == 7


def test_a_cell_both_changed_is_named_by_number_and_id():
    base = _nb("x = 1", "y = 2")
    mine, theirs = copy.deepcopy(base), copy.deepcopy(base)
    mine["cells"][1]["source"] = "y = 3"
    theirs["cells"][1]["source"] = "y = 4"
    with pytest.raises(MergeConflict) as caught:
        merge_notebooks(base, mine, theirs)
    assert caught.value.where == 'cell 2 (id "b")'


def test_sources_as_lists_of_lines_merge_like_joined_ones():
    base = _nb("x = 1\nz = 0", "y = 2")
    mine = copy.deepcopy(base)
    mine["cells"][0]["source"] = ["x = 1\n", "z = 1"]  # as a file holds them
    theirs = copy.deepcopy(base)
    theirs["cells"][1]["source"] = "y = 20"
    merged, _kept = merge_notebooks(base, mine, theirs)
    assert [c["source"] for c in merged["cells"]] == ["x = 1\nz = 1", "y = 20"]


def test_a_notebook_the_person_did_not_change_is_the_agents_whatever_its_form():
    """The shared document adds the kernel's language_info and empty kernelspec defaults on its own:
    not a change of the person's."""
    base = _nb("x = 1")
    theirs = copy.deepcopy(base)
    theirs["metadata"]["language_info"] = {"name": "python"}
    mine = _nb("x = 2")
    merged, kept = merge_notebooks(base, mine, theirs)
    assert kept is False and [c["source"] for c in merged["cells"]] == ["x = 2"]
