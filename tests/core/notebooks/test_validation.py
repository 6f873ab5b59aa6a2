"""``notebook_problem`` checks the notebook dict itself, with no copy: it must leave it as it was.

nbformat's validator adds missing cell ids and renumbers duplicate ones in place (nbformat 4.5
and later); ``notebook_problem`` refuses both first, so for every dict, valid or not, what it
was handed is unchanged after the check, and the answer is the one the check of a copy gives.
"""

from __future__ import annotations

import copy

import pytest
from nbformat import v4

from dsh_jupyter.core.notebooks.format import notebook_problem


def cell(i: int, **extra) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": f"x = {i}", **extra}


def notebook(minor: int, cells) -> dict:
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": minor}


CASES = {
    "valid 4.5": (notebook(5, [cell(1, id="a"), cell(2, id="b")]), None),
    "valid 4.4": (notebook(4, [cell(1), cell(2)]), None),
    "missing id": (notebook(5, [cell(1, id="a"), cell(2)]), "cell 2 has no id (nbformat 4.5 and later require one)"),
    "same ids": (notebook(5, [cell(1, id="a"), cell(2, id="a")]), 'cells 1 and 2 have the same id "a"'),
    "a cell not an object": (notebook(5, [cell(1, id="a"), "x"]), "cell 2 has no id (nbformat 4.5 and later require one)"),
    "cells an object": (
        notebook(5, {"idx": cell(1, id="a")}),
        "TypeError: string indices must be integers, not 'str'",
    ),
    "no cells": ({"metadata": {}, "nbformat": 4, "nbformat_minor": 5}, "KeyError: 'cells'"),
    "a future minor": (notebook(9, [cell(1, id="a", future=True)]), None),
    "an unknown cell key": (notebook(4, [cell(1, extra=1)]), "Additional properties are not allowed ('extra' was unexpected) (in cell 1)"),
    "bad metadata": (
        {**notebook(4, [cell(1)]), "metadata": {"kernelspec": 3}},
        "3 is not of type 'object' (at ['metadata']['kernelspec'])",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_check_leaves_the_dict_as_it_was(name):
    data, problem = CASES[name]
    before = copy.deepcopy(data)
    assert notebook_problem(data) == problem
    assert data == before
    assert notebook_problem(copy.deepcopy(before)) == problem


def test_a_notebook_nbformat_makes_is_valid_and_unchanged():
    nb = v4.new_notebook(cells=[v4.new_code_cell("x = 1"), v4.new_markdown_cell("# t")])
    data = copy.deepcopy(dict(nb))
    before = copy.deepcopy(data)
    assert notebook_problem(data) is None
    assert data == before
