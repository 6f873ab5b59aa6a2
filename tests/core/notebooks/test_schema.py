"""The quick validity check never says yes where nbformat says no (``notebooks/schema.py``).

A differential test: rich notebooks of every nbformat 4 minor version, and thousands of seeded
mutations of them (keys dropped, added or renamed, values of the wrong type, enum values swapped),
each judged by the quick check and by nbformat's own validator. A "valid" from the quick check must
always be nbformat's "valid"; the mutations must produce plenty of both verdicts, or the test would
prove nothing. ``notebook_problem`` must answer exactly as nbformat alone does.
"""

from __future__ import annotations

import copy
import os
import random
import warnings

import pytest
from conftest import slow_imports_after
from nbformat import v4, validator

from dsh_jupyter.core.notebooks import format as nbformat_module
from dsh_jupyter.core.notebooks.schema import quickly_valid, schema_document

SEED = int(os.environ.get("DSH_SCHEMA_SEED", "20261205"))
ENUMS = [
    "stream", "error", "display_data", "execute_result", "code", "markdown", "raw", "stdout", "stderr",
    "application/json", "text/plain", "image/png", "text/html", "application/vnd.custom+json", "", "a b",
]  # fmt: skip
VALUES = [None, True, 0, 1, -1, 2.5, "", "x", [], ["x"], [1], {}, {"a": 1}, {"text/plain": "x"}]


def rich(minor: int) -> dict:
    png = "iVBORw0KGgo="
    cells = [
        v4.new_markdown_cell("# Title\n\n![a](attachment:a.png)", id="md", attachments={"a.png": {"image/png": png}}),
        v4.new_code_cell(
            "print(1)",
            id="code-1",
            execution_count=3,
            metadata={"collapsed": False, "scrolled": "auto", "tags": ["t1"], "jupyter": {"source_hidden": True}},
            outputs=[
                v4.new_output("stream", name="stdout", text="1\n"),
                v4.new_output("execute_result", data={"text/plain": ["a", "b"], "application/json": {"k": [1]}}, execution_count=3),
                v4.new_output("display_data", data={"image/png": png, "text/plain": "<img>"}, metadata={"image/png": {"width": 4}}),
                v4.new_output("error", ename="ValueError", evalue="bad", traceback=["line 1", "line 2"]),
            ],
        ),
        v4.new_raw_cell("raw text", id="raw_1", metadata={"format": "text/x-python"}),
        v4.new_code_cell("x", id="empty"),
    ]
    nb = v4.new_notebook(
        cells=cells,
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}, "language_info": {"name": "python"}},
    )
    nb = copy.deepcopy(dict(nb))
    nb["nbformat_minor"] = minor
    for cell in nb["cells"]:
        cell = dict(cell)
    if minor < 5:
        for cell in nb["cells"]:
            cell.pop("id", None)
    if minor < 1:
        for cell in nb["cells"]:
            cell.pop("attachments", None)
    return _plain(nb)


def _plain(value):
    """nbformat's NotebookNode (a dict subclass) as plain dicts and lists, as json.loads gives them."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _nodes(value, path=()):
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _nodes(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _nodes(v, (*path, i))


def _at(root, path):
    for step in path:
        root = root[step]
    return root


def mutate(nb: dict, rnd: random.Random) -> dict:
    nb = copy.deepcopy(nb)
    for _ in range(rnd.choice((1, 1, 2))):
        containers = [(p, v) for p, v in _nodes(nb) if isinstance(v, (dict, list)) and v]
        path, node = rnd.choice(containers)
        key = rnd.choice(list(node.keys()) if isinstance(node, dict) else range(len(node)))
        op = rnd.randrange(5)
        if op == 0:
            del node[key]
        elif op == 1 and isinstance(node, dict):
            node[rnd.choice(["zz_unknown", "text/plain", "application/json", "image/png", "name", "id"])] = rnd.choice(VALUES)
        elif op == 2 and isinstance(node, dict):
            node[rnd.choice(ENUMS) or "k"] = node.pop(key)
        elif op == 3:
            node[key] = rnd.choice(ENUMS)
        else:
            node[key] = copy.deepcopy(rnd.choice(VALUES))
        del path
    return nb


def nbformat_says_valid(nb: dict) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            validator.validate(copy.deepcopy(nb))
        except Exception:
            return False
    return True


@pytest.mark.parametrize("minor", [0, 1, 2, 3, 4, 5])
def test_a_rich_notebook_of_each_minor_version_is_quickly_valid(minor):
    nb = rich(minor)
    assert nbformat_says_valid(nb)
    assert quickly_valid(nb, minor)


def test_a_notebook_from_a_newer_nbformat_is_left_to_nbformat_which_finds_it_valid():
    nb = rich(7)
    assert not quickly_valid(nb, 7)  # no schema file of 4.7: nbformat relaxes its latest one
    assert nbformat_says_valid(nb)
    assert nbformat_module.notebook_problem(copy.deepcopy(nb)) is None


@pytest.mark.parametrize("minor", [0, 1, 2, 3, 4, 5, 6, 7, -1])
def test_the_schema_read_from_the_package_is_the_one_nbformat_picks(minor):
    if minor < 0 or minor > v4.nbformat_minor:
        assert schema_document(minor) is None
    else:
        assert schema_document(minor) == validator.get_validator(4, minor)._schema


def test_reading_a_valid_notebook_imports_neither_nbformat_nor_jsonschema():
    code = (
        "import json\n"
        "from dsh_jupyter.core.notebooks.format import parse_notebook\n"
        "nb = {'cells': [{'cell_type': 'code', 'execution_count': None, 'id': 'c1', 'metadata': {},\n"
        "                 'outputs': [], 'source': 'x'}], 'metadata': {}, 'nbformat': 4, 'nbformat_minor': 5}\n"
        "assert parse_notebook(json.dumps(nb).encode()).cells[0].source == 'x'\n"
    )
    assert slow_imports_after(code) == []


def test_the_quick_check_never_says_valid_where_nbformat_says_invalid():
    rnd = random.Random(SEED)
    verdicts = {"both valid": 0, "both invalid": 0, "only nbformat valid": 0}
    for minor in (0, 3, 4, 5):
        base = rich(minor)
        for _ in range(700):
            nb = mutate(base, rnd)
            quick, full = quickly_valid(nb, minor), nbformat_says_valid(nb)
            assert not (quick and not full), f"seed {SEED}: quick check said valid, nbformat did not: {nb}"
            verdicts["both valid" if quick else "both invalid" if not full else "only nbformat valid"] += 1
    assert verdicts["both valid"] > 200 and verdicts["both invalid"] > 1000, verdicts


def test_notebook_problem_answers_as_nbformat_alone_does(monkeypatch):
    rnd = random.Random(SEED + 1)
    samples = [mutate(rich(minor), rnd) for minor in (4, 5) for _ in range(300)]
    quick = [nbformat_module.notebook_problem(copy.deepcopy(nb)) for nb in samples]
    monkeypatch.setattr(nbformat_module, "quickly_valid", lambda data, minor: False)
    alone = [nbformat_module.notebook_problem(copy.deepcopy(nb)) for nb in samples]
    assert quick == alone
    assert sum(p is None for p in alone) > 50 and sum(p is not None for p in alone) > 200
