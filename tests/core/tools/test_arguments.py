"""Argument validation (core/tools/arguments.py): blank paths are refused on every tool, exact messages."""

from __future__ import annotations

import pytest
from conftest import assert_error

from dsh_jupyter.core.errors import ToolError
from dsh_jupyter.core.tools.arguments import validate_args
from dsh_jupyter.core.tools.spec import NO_NUL, NOT_BLANK

# every tool's path-like argument, with the other arguments it needs
PATH_ARGS = [
    ("list", "path", {}),
    ("glob", "path", {"pattern": "*"}),
    ("find", "path", {"query": "x"}),
    ("grep", "path", {"pattern": "x"}),
    ("read", "file_path", {}),
    ("replace", "path", {"pattern": "x", "replacement": "y"}),
    ("write", "file_path", {"content": "x"}),
    ("edit", "file_path", {"old_string": "a", "new_string": "b"}),
    ("edit_cells", "file_path", {"operations": [{"op": "clear_outputs"}]}),
    ("move", "source", {"destination": "moved.txt"}),
    ("move", "destination", {"source": "a.txt"}),
    ("list_dir", "path", {}),
]
BLANKS = ["", " ", "   ", "\t", "\n", " \u3000 "]


@pytest.mark.parametrize("tool,name,others", PATH_ARGS)
@pytest.mark.parametrize("blank", BLANKS)
def test_a_blank_path_is_an_argument_error_on_every_tool(ws, root, tool, name, others, blank):
    before = sorted(p.name for p in root.iterdir())
    r = ws.run(tool, **{name: blank, **others})
    assert_error(r, "ARGUMENT_INVALID", f"{name} must be a non-empty string")
    assert sorted(p.name for p in root.iterdir()) == before  # nothing was created


def test_every_path_argument_carries_the_not_blank_pattern(ws):
    flagged = {
        (t["name"], prop)
        for t in ws.tools()
        for prop, spec in t["inputSchema"]["properties"].items()
        if spec.get("pattern") == NOT_BLANK
    }
    assert flagged == {(tool, name) for tool, name, _ in PATH_ARGS}


def test_a_pattern_of_spaces_is_still_a_pattern(ws, root, tree):
    tree(root, {"a.txt": "one  two\n", "b.txt": "none\n"})
    r = ws.run("grep", pattern="  ")
    assert r.text == "Found 1 match\n\na.txt\nLine 1: one  two"
    assert not ws.run("glob", pattern=" ").is_error


def test_validate_args_not_blank_pattern():
    schema = {"type": "object", "properties": {"p": {"type": "string", "pattern": NOT_BLANK}, "q": {"type": "string"}}}
    assert validate_args(schema, {"p": " a ", "q": "  "}) == {"p": " a ", "q": "  "}
    with pytest.raises(ToolError, match=r"^p must be a non-empty string$"):
        validate_args(schema, {"p": " \t "})


def test_validate_args_nul_pattern_and_free_text():
    """A string whose pattern refuses NUL says so; a string without a pattern (file text) may hold NUL."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "pattern": NO_NUL},
            "path": {"type": "string", "pattern": NOT_BLANK},
            "text": {"type": "string"},
        },
    }
    assert validate_args(schema, {"text": "a\0b", "name": "  "}) == {"text": "a\0b", "name": "  "}
    for name, value in [("name", "x\0"), ("path", "\0"), ("path", " \0 "), ("path", "a\0b")]:
        with pytest.raises(ToolError, match=f"^{name} must not contain a NUL character$"):
            validate_args(schema, {name: value})


def test_validate_args_enum_and_maximum():
    schema = {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["a", "b"]},
            "n": {"type": "integer", "minimum": 0, "maximum": 9},
        },
    }
    with pytest.raises(ToolError, match=r"^mode must be one of a, b$"):
        validate_args(schema, {"mode": "c"})
    with pytest.raises(ToolError, match=r"^n must be at most 9$"):
        validate_args(schema, {"n": 10})
    assert validate_args(schema, {"mode": "b", "n": 9}) == {"mode": "b", "n": 9}
