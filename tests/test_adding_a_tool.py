"""A new tool is its module, its renderer and one line in the registry (docs/architecture.md, "Adding a tool").

The ``size`` tool below is the worked example of that section, as written there. Put in a real
workspace's registry, it runs, pages (as a tool that answers whole), shows as a frame-less result,
is offered over MCP with hints from its spec, gets an OpenAPI value schema and a ``%dsh size``
subcommand from its input schema, with nothing else declared anywhere.
"""

from __future__ import annotations

import os

import jsonschema

from dsh_jupyter.core.render.common import count
from dsh_jupyter.core.text.quoting import quote_name
from dsh_jupyter.core.tools.context import CallContext
from dsh_jupyter.core.tools.spec import INTEGER, PATH, STRING, ToolSpec, object_schema, value_schema
from dsh_jupyter.kernel.commands import tool_subcommand
from dsh_jupyter.kernel.toolargs import tool_arguments
from dsh_jupyter.mcp.tools import tool_definitions
from dsh_jupyter.server.openapi import build_document


# -- the worked example: core/render/size.py -----------------------------------------------------
def render_size(value: dict) -> str:
    return f"{quote_name(value['path'])}: {count(value['bytes'], 'byte')}"


# -- the worked example: core/tools/size.py ------------------------------------------------------
def execute_size(ctx: CallContext, args: dict) -> dict:
    with ctx.resolve(args["file_path"], "size") as target:
        if not target.exists:
            raise target.not_found()
        fd = target.open(os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
    return {"path": target.display, "bytes": size}


SIZE = ToolSpec(
    name="size",
    title="File size",
    description="The size of one file in bytes, without reading it.",
    input_schema=object_schema(
        {"file_path": {**PATH, "description": "File to measure, relative to the working directory."}},
        ("file_path",),
    ),
    output_schema=value_schema({"path": STRING, "bytes": INTEGER}),
    guidance="Use size before reading a file that may be big.",
    execute=execute_size,
    render=render_size,
)


def test_the_new_tool_runs_through_the_one_core(ws, root):
    ws.registry["size"] = SIZE  # the one line in core/registry.py: TOOLS = (..., SIZE)
    (root / "my notes.txt").write_text("12345")
    r = ws.run("size", file_path="my notes.txt")
    assert r.text == "my notes.txt: 5 bytes"
    assert r.value == {"path": "my notes.txt", "bytes": 5, "nextOffset": None, "footer": ""}
    jsonschema.validate(r.value, SIZE.output_schema)
    assert r.footer() == "" and r.header() == "" and r.rows() == [] and list(r.to_frame().columns) == []
    missing = ws.run("size", file_path="nowhere.txt")
    assert missing.is_error and missing.text == 'Error: cannot size "nowhere.txt": not found'
    outside = ws.run("size", file_path="../outside")
    assert outside.is_error and outside.value["code"].startswith("FS_")


def test_mcp_and_openapi_describe_it_from_its_spec():
    (tool,) = tool_definitions({"size": SIZE})
    assert tool["annotations"] == {
        "title": "File size",
        "readOnlyHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert tool["outputSchema"]["required"] == ["path", "bytes", "nextOffset", "footer"]
    doc = build_document({"size": SIZE})
    assert set(doc["components"]["schemas"]["Value_size"]["properties"]) >= {"path", "bytes", "nextOffset", "footer"}


def test_the_magic_offers_it_from_its_input_schema():
    sub = tool_subcommand(SIZE)
    assert sub.summary == "The size of one file in bytes, without reading it."
    assert sub.usage() == "usage: %dsh size [--text | --json] FILE_PATH"
    assert tool_arguments(SIZE, sub.parser().parse_args(["my notes.txt"])) == {"file_path": "my notes.txt"}


def test_every_kind_of_property_becomes_an_option():
    spec = ToolSpec(
        name="probe",
        title="Probe",
        description="Probe things. More words.",
        input_schema=object_schema(
            {
                "pattern": {"type": "string"},
                "count": {"type": "integer", "description": "How many (100%)."},
                "ratio": {"type": "number"},
                "deep": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "skip": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
                "steps": {"type": "array", "items": {"type": "object"}},  # one word of JSON
            },
            ("pattern",),
        ),
        output_schema=value_schema({}),
        guidance="",
        execute=lambda ctx, args: {},
        render=lambda value: "",
    )
    sub = tool_subcommand(spec)
    assert sub.summary == "Probe things."
    assert sub.usage() == (
        "usage: %dsh probe [--count N] [--ratio X] [--deep] [--mode MODE] [--skip SKIP] [--steps JSON] "
        "[--text | --json] PATTERN"
    )
    assert "How many (100%)." in sub.parser().format_help()
    line = ["x", "--count", "3", "--ratio", "0.5", "--deep", "--mode", "b", "--skip", "p", "--skip", "q"]
    line += ["--steps", '[{"a": 1}, {"b": [2]}]']
    assert tool_arguments(spec, sub.parser().parse_args(line)) == {
        "pattern": "x",
        "count": 3,
        "ratio": 0.5,
        "deep": True,
        "mode": "b",
        "skip": ["p", "q"],
        "steps": [{"a": 1}, {"b": [2]}],
    }
    assert tool_arguments(spec, sub.parser().parse_args(["x"])) == {"pattern": "x"}
