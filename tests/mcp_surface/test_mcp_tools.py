"""``dsh_jupyter.mcp.tools``: the tool list, annotations, output schemas and call results, without a server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import nbformat
import pytest
from imagefiles import gif, png  # tests/imagefiles.py

from dsh_jupyter.core.registry import TOOLS
from dsh_jupyter.core.tools.spec import NO_NUL, NOT_BLANK
from dsh_jupyter.mcp.tools import ERROR_META, call_result, instructions, tool_annotations, tool_definitions

from .conftest import TREE

READ_ONLY = {"list", "glob", "find", "grep", "read", "list_dir"}
TITLES = {
    "list": "List folder",
    "glob": "Find files",
    "find": "Find files by name fragment",
    "grep": "Search file contents",
    "read": "Read file",
    "write": "Write file",
    "edit": "Edit file",
    "edit_cells": "Edit notebook cells",
    "replace": "Replace across files",
    "move": "Move file or folder",
    "list_dir": "List folder (JSON)",
}

# Every keyword of JSON Schema draft 2020-12's vocabularies that draft 7 also has: a schema that
# uses only these compiles under ajv's strict mode and under jsonschema for either draft.
STANDARD_KEYWORDS = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "description",
    "title",
    "default",
    "examples",
}


def strict_check(schema: dict, where: str = "#") -> None:
    """Fail on any keyword that is not standard JSON Schema (as ajv's ``strict: true`` does)."""
    assert isinstance(schema, dict), where
    unknown = set(schema) - STANDARD_KEYWORDS
    assert not unknown, f"{where}: non-standard keywords {sorted(unknown)}"
    assert not isinstance(schema.get("type"), list), f"{where}: a union type list (strict ajv refuses it)"
    for name, sub in schema.get("properties", {}).items():
        strict_check(sub, f"{where}/properties/{name}")
    for key in ("items", "not"):
        if isinstance(schema.get(key), dict):
            strict_check(schema[key], f"{where}/{key}")
    for key in ("anyOf", "oneOf", "allOf"):
        for i, sub in enumerate(schema.get(key, [])):
            strict_check(sub, f"{where}/{key}/{i}")
    for name in schema.get("required", []):  # ajv's strictRequired
        assert name in schema.get("properties", {}), f"{where}: required {name} is not a property"
    for validator in (jsonschema.Draft202012Validator, jsonschema.Draft7Validator):
        validator.check_schema(schema)


def validate(value: dict, schema: dict) -> None:
    for validator in (jsonschema.Draft202012Validator, jsonschema.Draft7Validator):
        validator(schema, format_checker=validator.FORMAT_CHECKER).validate(value)


@pytest.fixture
def mws(make_ws, root, tree):
    tree(root, {**TREE, "many": {f"f{i:02}.txt": f"hello {i}\n" for i in range(12)}})
    return make_ws(glob_max_results=5, grep_max_matches=5)


def test_tool_definitions_are_the_registry_with_the_rest_fields(mws):
    tools = tool_definitions(mws.registry)
    assert [t["name"] for t in tools] == [t.name for t in TOOLS]
    for tool, definition in zip(tools, mws.tools()):
        assert tool["name"] == definition["name"]
        assert tool["title"] == TITLES[tool["name"]]
        assert tool["description"] == definition["description"]
        assert tool["inputSchema"] == definition["inputSchema"]
        assert tool["outputSchema"] == mws.registry[tool["name"]].output_schema
        assert tool["outputSchema"]["type"] == "object"  # MCP requires an object at the root


def test_annotations_say_which_tools_change_files(mws):
    got = {t["name"]: t["annotations"] for t in tool_definitions(mws.registry)}
    for name in READ_ONLY:
        assert got[name] == {
            "title": TITLES[name],
            "readOnlyHint": True,
            "idempotentHint": True,
            "openWorldHint": False,
        }, name
    assert got["write"] == {
        "title": "Write file",
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert got["edit"] == {
        "title": "Edit file",
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    # edit_cells deletes cells and clears outputs: destructive; the same insert twice makes two cells
    assert got["edit_cells"] == {
        "title": "Edit notebook cells",
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    # replace changes many files at once: destructive; the same replace again may change them again
    assert got["replace"] == {
        "title": "Replace across files",
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    # move removes the old name and, with overwrite, replaces a file: destructive; the same move twice
    # finds its source gone: not idempotent
    assert got["move"] == {
        "title": "Move file or folder",
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    assert tool_annotations(mws.registry["write"])["destructiveHint"] is True


def test_every_schema_is_standard_json_schema(mws):
    for tool in tool_definitions(mws.registry):
        strict_check(tool["inputSchema"], f"{tool['name']} input")
        strict_check(tool["outputSchema"], f"{tool['name']} output")


def test_path_arguments_refuse_blank_and_nul_in_the_schema_itself(mws):
    """A client that validates input with the schema refuses what the core refuses."""
    for tool in tool_definitions(mws.registry):
        for name, prop in tool["inputSchema"]["properties"].items():
            if prop.get("pattern") is None:
                continue
            schema = {"type": "object", "properties": {name: prop}}
            for bad in ["a\0b", "\0"] + (["  ", "\t\n"] if prop["pattern"] == NOT_BLANK else []):
                with pytest.raises(jsonschema.ValidationError):
                    validate({name: bad}, schema)
            validate({name: " src/a b.py "}, schema)
    assert {
        p.get("pattern") for t in tool_definitions(mws.registry) for p in t["inputSchema"]["properties"].values()
    } == {NOT_BLANK, NO_NUL, None}


def test_instructions_carry_every_tools_guidance(mws):
    text = instructions(mws.registry)
    assert text == "\n\n".join(f"{d['name']}: {d['guidance']}" for d in mws.tools())


def test_a_success_carries_its_value_as_structured_content(mws):
    result = mws.run("list", path="src")
    assert call_result(result) == {
        "content": [{"type": "text", "text": result.text}],
        "structuredContent": result.value,
        "isError": False,
    }


def test_an_error_carries_no_structured_content_and_its_code_in_meta(mws):
    """Clients on the TypeScript SDK validate structuredContent also on isError results."""
    result = mws.run("read", file_path="missing.txt")
    assert call_result(result) == {
        "content": [{"type": "text", "text": 'Error: cannot read "missing.txt": not found'}],
        "isError": True,
        "_meta": {
            ERROR_META: {"name": "FsError", "code": "FS_NOT_FOUND", "message": 'cannot read "missing.txt": not found'}
        },
    }
    assert ERROR_META == "dsh-jupyter/error"


def _notebook(cells: int = 3) -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"x = {i}\nprint(x)") for i in range(cells)]
    nb.cells[0].outputs = [
        nbformat.v4.new_output("stream", text="0\n"),
        nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0K", "text/plain": "<img>"}),
        nbformat.v4.new_output("error", ename="E", evalue="v", traceback=["t1", "t2"]),
    ]
    nb.cells.append(nbformat.v4.new_markdown_cell("# title", attachments={"a.png": {"image/png": "iVBORw0K"}}))
    return nbformat.writes(nb)


def _figures() -> str:
    """Image outputs: one attached, one not a valid image, one over a bound of one image."""
    import base64

    nb = nbformat.v4.new_notebook()
    b64 = base64.b64encode(png(2, 2)).decode()
    outputs = [
        nbformat.v4.new_output("display_data", data={"image/png": b64}),
        nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0K"}),
        nbformat.v4.new_output("display_data", data={"image/gif": base64.b64encode(gif(1, 1)).decode()}),
    ]
    nb.cells = [nbformat.v4.new_code_cell("plot()", outputs=outputs)]
    return nbformat.writes(nb)


def test_an_image_read_answers_the_text_then_an_image_block(mws):
    (Path(mws.root) / "chart.png").write_bytes(png(3, 2))
    result = call_result(mws.run("read", file_path="chart.png"))
    import base64

    assert result == {
        "content": [
            {
                "type": "text",
                "text": "<path>chart.png</path>\n<type>image</type>\n<content>\n(PNG image, 3x2 pixels, 88 bytes)\n</content>",
            },
            {"type": "image", "data": base64.b64encode(png(3, 2)).decode(), "mimeType": "image/png"},
        ],
        "structuredContent": {
            "path": "chart.png",
            "type": "image",
            "format": "PNG",
            "mimeType": "image/png",
            "width": 3,
            "height": 2,
            "bytes": 88,
            "nextOffset": None,
            "footer": "(PNG image, 3x2 pixels, 88 bytes)",
        },
        "isError": False,
    }


def test_an_image_error_carries_no_image(mws):
    (Path(mws.root) / "fake.png").write_text("text")
    result = call_result(mws.run("read", file_path="fake.png"))
    assert result["content"] == [
        {
            "type": "text",
            "text": 'Error: cannot read "fake.png": its name says PNG image, '
            "but its content is not a PNG, JPEG, GIF or WebP image",
        }
    ]
    assert result["_meta"][ERROR_META]["code"] == "IMAGE_INVALID" and "structuredContent" not in result


def test_notebook_output_images_follow_the_text_in_its_order(mws):
    mws.run("write", file_path="figs.ipynb", content=_figures())
    result = call_result(mws.run("read", file_path="figs.ipynb"))
    text = result["content"][0]["text"]
    assert "[image/png: 82 bytes, attached as image 1]\n" in text
    assert "[image/png: 6 bytes, not attached: not a valid PNG, JPEG, GIF or WebP image]\n" in text
    assert "[image/gif: 35 bytes, attached as image 2]\n" in text
    assert [(c["type"], c.get("mimeType")) for c in result["content"]] == [
        ("text", None),
        ("image", "image/png"),
        ("image", "image/gif"),
    ]


def _successes(ws) -> list:
    """A success of every tool in every shape its value takes (paged, capped, sampled, spilled,
    recursive, notebooks as cells and as text...)."""
    big = "x" * 3000 + "\n"
    ws.run("write", file_path="wide.txt", content=big * 3)
    ws.run("write", file_path="nb/book.ipynb", content=_notebook())
    (Path(ws.root) / "nb" / "broken.ipynb").write_text("{not json")  # write refuses it: made by hand
    (Path(ws.root) / "pics").mkdir()
    (Path(ws.root) / "pics" / "chart.png").write_bytes(png(3, 2))  # write takes text: images by hand
    (Path(ws.root) / "pics" / "dot.gif").write_bytes(gif(1, 1))
    ws.run("write", file_path="nb/figs.ipynb", content=_figures())
    old = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("a"), nbformat.v4.new_code_cell("b")])
    old.nbformat_minor = 4  # no cell ids: cells are named by index
    for cell in old.cells:
        del cell["id"]
    (Path(ws.root) / "nb" / "old.ipynb").write_text(nbformat.writes(old))
    calls = [
        ("list", {}),
        ("list", {"path": "many", "offset": 4}),
        ("list", {"path": "empty"}),
        ("glob", {"pattern": "*.py"}),
        ("glob", {"pattern": "*.txt"}),
        ("glob", {"pattern": "*.none"}),
        ("find", {"query": "hlo"}),
        ("find", {"query": "zzqq"}),
        ("grep", {"pattern": "hello"}),
        ("grep", {"pattern": "hello", "include": "*.py"}),
        ("grep", {"pattern": "nothing-matches-this"}),
        ("grep", {"pattern": "x", "path": "wide.txt"}),
        ("grep", {"pattern": "print", "path": "nb"}),
        ("grep", {"pattern": "print|t1|E: v", "path": "nb", "notebook_scope": "all"}),
        ("read", {"file_path": "notes.txt"}),
        ("read", {"file_path": "notes.txt", "offset": 2, "limit": 1}),
        ("read", {"file_path": "wide.txt"}),
        ("read", {"file_path": "nb/book.ipynb"}),
        ("read", {"file_path": "nb/book.ipynb", "offset": 2, "limit": 1}),
        ("read", {"file_path": "nb/broken.ipynb"}),
        ("read", {"file_path": "pics/chart.png"}),
        ("read", {"file_path": "pics/dot.gif"}),
        ("read", {"file_path": "nb/figs.ipynb"}),
        ("edit", {"file_path": "nb/book.ipynb", "old_string": "x = 1", "new_string": "x = 10"}),
        (
            "edit_cells",
            {
                "file_path": "nb/book.ipynb",
                "operations": [{"op": "insert", "cell_type": "markdown", "source": "# Notes", "at": "start"}],
                "dry_run": True,
            },
        ),
        (
            "edit_cells",
            {
                "file_path": "nb/book.ipynb",
                "operations": [
                    {"op": "insert", "cell_type": "markdown", "source": "# Notes", "at": "start"},
                    {"op": "clear_outputs"},
                ],
            },
        ),
        ("read", {"file_path": "nb/old.ipynb"}),
        (
            "edit_cells",
            {
                "file_path": "nb/old.ipynb",
                "operations": [
                    {"op": "insert", "cell_type": "raw", "source": "r", "after": 1},
                    {"op": "move", "cell_id": 1, "at": "end"},
                ],
            },
        ),
        ("write", {"file_path": "nb/book.ipynb", "content": _notebook(1)}),
        ("write", {"file_path": "new/created.txt", "content": "a\nb\n"}),
        ("edit", {"file_path": "new/created.txt", "old_string": "a", "new_string": "c"}),
        ("edit", {"file_path": "new/created.txt", "old_string": "\n", "new_string": "\r\n", "replace_all": True}),
        ("write", {"file_path": "new/created.txt", "content": ""}),
        ("replace", {"pattern": "hello", "replacement": "hi", "path": "many"}),
        (
            "replace",
            {"pattern": "hello", "replacement": "hi", "path": "many", "occurrences": "all", "expected_count": 12},
        ),
        ("replace", {"pattern": "nothing-matches-this", "replacement": "x"}),
        ("read", {"file_path": "new/created.txt"}),
        ("move", {"source": "new/created.txt", "destination": "moved/created.txt"}),
        ("move", {"source": "moved", "destination": "moved2"}),
        ("move", {"source": "moved2/created.txt", "destination": "wide.txt", "overwrite": True}),
        ("list_dir", {"path": "."}),
        ("list_dir", {"path": "src", "recursive": True}),
    ]
    results = [ws.call(tool, args) for tool, args in calls]
    spill = next(r.value["spill"] for r in results if r.tool == "glob" and r.value["spill"])
    results.append(ws.call("read", {"file_path": spill}))
    assert not [r.text for r in results if r.is_error]
    assert any(r.value.get("type") == "notebook" for r in results if r.tool == "read")
    assert any("output" in m for r in results if r.tool == "grep" for m in r.value["matches"])
    assert any("note" in r.value for r in results if r.tool == "read")
    assert sum(len(r.images) for r in results) == 4  # two image files, two notebook outputs
    return results


def test_every_successful_value_satisfies_its_output_schema(mws):
    """The SDK clients validate each successful result against outputSchema and raise on a mismatch."""
    results = _successes(mws)
    assert {r.tool for r in results} == set(mws.registry)
    for result in results:
        validate(result.value, mws.registry[result.tool].output_schema)


def test_capped_list_dir_satisfies_its_output_schema(make_ws, root, tree):
    tree(root, {f"d{i}": {"a.txt": ""} for i in range(5)})
    ws = make_ws(list_dir_max_entries=3)
    result = ws.run("list_dir", path=".", recursive=True)
    assert result.value["truncated"] is True
    validate(result.value, ws.registry["list_dir"].output_schema)


def test_a_failure_value_does_not_satisfy_a_success_schema(mws):
    """So an error value must never be sent as structuredContent (the TypeScript SDK would raise)."""
    for tool in ("list", "read", "glob", "grep", "edit", "move"):
        with pytest.raises(jsonschema.ValidationError):
            validate(mws.run("read", file_path="missing.txt").value, mws.registry[tool].output_schema)


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
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_streamed_window_without_a_total_satisfies_its_output_schema(make_ws, root, tree):
    tree(root, {"long.txt": "".join(f"line {i}\n" for i in range(5000))})
    result = make_ws(read_stream_min_size=1024).run("read", file_path="long.txt", limit=3)
    assert result.value["totalLines"] is None, result.text
    validate(result.value, make_ws().registry["read"].output_schema)


@pytest.mark.parametrize(
    "modules, banned",
    [
        # the stdio server answers its first call in well under a second: no SDK, no data libraries
        (
            "dsh_jupyter.mcp.stdio, dsh_jupyter.mcp.jsonrpc",
            ("mcp", "mcp_types", "pydantic", "pandas", "numpy", "ipywidgets", "jupyter_server", "tornado", "nbformat"),
        ),
        # the server extension: nothing a tool call does not need
        ("dsh_jupyter.server.app", ("pandas", "numpy", "ipywidgets", "IPython")),
    ],
    ids=["stdio", "server-extension"],
)
def test_start_up_imports_only_what_a_call_needs(modules, banned):
    code = f"import sys, {modules}\nprint(sorted({{m.split('.')[0] for m in sys.modules}} & set({banned!r})))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def used_keywords(schema, found: set) -> set:
    """Every JSON Schema keyword ``schema`` uses, at any depth."""
    if isinstance(schema, dict):
        found.update(schema)
        for name, sub in schema.items():
            if name == "properties":
                for prop in sub.values():
                    used_keywords(prop, found)
            elif name in ("items", "not"):
                used_keywords(sub, found)
            elif name in ("anyOf", "oneOf", "allOf"):
                for each in sub:
                    used_keywords(each, found)
    return found


def test_mcp_md_lists_exactly_the_keywords_the_schemas_use(mws):
    used: set = set()
    for tool in tool_definitions(mws.registry):
        used_keywords(tool["inputSchema"], used)
        used_keywords(tool["outputSchema"], used)
    page = (Path(__file__).resolve().parents[2] / "docs" / "mcp.md").read_text(encoding="utf-8")
    listed = page.split("only keywords that draft 2020-12 and draft 7 share", 1)[1].split(")", 1)[0]
    assert set(re.findall(r"`(\w+)`", listed)) == used
    assert used <= STANDARD_KEYWORDS
