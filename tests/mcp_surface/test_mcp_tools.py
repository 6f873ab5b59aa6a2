"""``dsh_jupyter.mcp.tools``: the tool list, annotations, output schemas and call results, without a server."""

from __future__ import annotations

import os
import subprocess
import sys

import jsonschema
import pytest

from dsh_jupyter.mcp.tools import OUTPUT_SCHEMAS, annotations, call_result, instructions, tool_list

from .conftest import TREE

READ_ONLY = {"list", "glob", "grep", "read", "list_dir"}


@pytest.fixture
def mws(make_ws, root, tree):
    tree(root, {**TREE, "many": {f"f{i:02}.txt": f"hello {i}\n" for i in range(12)}})
    return make_ws(glob_max_results=5, grep_max_matches=5)


def test_tool_list_is_the_registry_with_the_rest_fields(mws):
    tools = tool_list(mws.registry)
    assert [t.name for t in tools] == ["list", "glob", "grep", "read", "write", "edit", "list_dir"]
    for tool, definition in zip(tools, mws.tools()):
        assert tool.name == definition["name"]
        assert tool.description == definition["description"]
        assert tool.input_schema == definition["inputSchema"]
        assert tool.output_schema == OUTPUT_SCHEMAS[tool.name]


def test_annotations_say_which_tools_change_files(mws):
    got = {t.name: t.annotations.model_dump(by_alias=True, exclude_none=True) for t in tool_list(mws.registry)}
    for name in READ_ONLY:
        assert got[name] == {"readOnlyHint": True, "openWorldHint": False}, name
    assert got["write"] == {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}
    assert got["edit"] == {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}
    assert annotations(mws.registry["write"]).destructive_hint is True


def test_instructions_carry_every_tools_guidance(mws):
    text = instructions(mws.registry)
    assert text == "\n\n".join(f"{d['name']}: {d['guidance']}" for d in mws.tools())


def test_call_result_is_the_model_text_and_the_value(mws):
    for result in (mws.run("list", path="src"), mws.run("read", file_path="missing.txt")):
        mcp_result = call_result(result)
        assert [(c.type, c.text) for c in mcp_result.content] == [("text", result.text)]
        assert mcp_result.structured_content == result.value
        assert mcp_result.is_error is result.is_error
    assert call_result(mws.run("read", file_path="missing.txt")).is_error is True


def _successes(ws) -> list:
    """A success of every tool in every shape its value takes (paged, capped, sampled, spilled, recursive...)."""
    big = "x" * 3000 + "\n"
    ws.run("write", file_path="wide.txt", content=big * 3)
    calls = [
        ("list", {}), ("list", {"path": "many", "offset": 4}), ("list", {"path": "empty"}),
        ("glob", {"pattern": "*.py"}), ("glob", {"pattern": "*.txt"}), ("glob", {"pattern": "*.none"}),
        ("grep", {"pattern": "hello"}), ("grep", {"pattern": "hello", "include": "*.py"}),
        ("grep", {"pattern": "nothing-matches-this"}), ("grep", {"pattern": "x", "path": "wide.txt"}),
        ("read", {"file_path": "notes.txt"}), ("read", {"file_path": "notes.txt", "offset": 2, "limit": 1}),
        ("read", {"file_path": "wide.txt"}),
        ("write", {"file_path": "new/created.txt", "content": "a\nb\n"}),
        ("edit", {"file_path": "new/created.txt", "old_string": "a", "new_string": "c"}),
        ("edit", {"file_path": "new/created.txt", "old_string": "\n", "new_string": "\r\n", "replace_all": True}),
        ("write", {"file_path": "new/created.txt", "content": ""}),
        ("read", {"file_path": "new/created.txt"}),
        ("list_dir", {"path": "."}), ("list_dir", {"path": "src", "recursive": True}),
    ]
    results = [ws.call(tool, args) for tool, args in calls]
    spill = next(r.value["spill"] for r in results if r.tool == "glob" and r.value["spill"])
    results.append(ws.call("read", {"file_path": spill}))
    assert not [r.text for r in results if r.is_error]
    return results


def test_every_successful_value_satisfies_its_output_schema(mws):
    """The SDK client validates each successful result against outputSchema and raises on a mismatch."""
    results = _successes(mws)
    assert {r.tool for r in results} == set(OUTPUT_SCHEMAS)
    for result in results:
        jsonschema.validate(result.value, OUTPUT_SCHEMAS[result.tool])


def test_capped_list_dir_satisfies_its_output_schema(make_ws, root, tree):
    tree(root, {f"d{i}": {"a.txt": ""} for i in range(5)})
    result = make_ws(list_dir_max_entries=3).run("list_dir", path=".", recursive=True)
    assert result.value["truncated"] is True
    jsonschema.validate(result.value, OUTPUT_SCHEMAS["list_dir"])


def test_the_mcp_package_imports_neither_jupyter_nor_tornado():
    code = (
        "import sys, dsh_jupyter.mcp.server, dsh_jupyter.mcp.stdio\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('jupyter_server', 'tornado', 'ipywidgets'))\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_core_and_the_package_import_no_mcp():
    code = "import sys, dsh_jupyter, dsh_jupyter.core.workspace\nprint(sorted(m for m in sys.modules if m.split('.')[0] == 'mcp'))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_streamed_window_without_a_total_satisfies_its_output_schema(make_ws, root, tree):
    tree(root, {"long.txt": "".join(f"line {i}\n" for i in range(5000))})
    result = make_ws(read_stream_min_size=1024).run("read", file_path="long.txt", limit=3)
    assert result.value["totalLines"] is None, result.text
    jsonschema.validate(result.value, OUTPUT_SCHEMAS["read"])
