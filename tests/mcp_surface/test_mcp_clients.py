"""The clients people run, against both transports: every result arrives as a result, never as an exception.

The TypeScript SDK's ``Client.callTool`` (Claude Code, Cursor, VS Code, the Inspector, mcp-remote)
checks ``structuredContent`` against the tool's ``outputSchema`` whenever it is present — also on
``isError`` results — and raises on a mismatch; fastmcp's client does the same for successes. So
each success shape (list page, capped glob and grep, a text file, a notebook, write, edit, move) and
each error an agent must read to recover (FS_NOT_FOUND, FS_HIDDEN, FS_NOT_OBSERVED, FS_EXISTS,
ARGUMENT_INVALID, SEARCH_INVALID_PATTERN, FS_OUTSIDE_ROOT, TOOL_UNKNOWN) is called through them over HTTP (a real
``jupyter server``) and stdio (``dsh-jupyter-mcp``), and compared with the Python API's text.

Images too: ``read`` of a PNG and a JPEG, and of a notebook whose outputs hold images under the
page's bounds (``IMAGE_CAPS``: two images, 300 bytes), answer the text block and then one image
block per image the Python API's result carries, with the same bytes; both SDKs validate the
blocks (base64 data, MIME type) and the value against the output schema. IMAGE_INVALID and
IMAGE_UNSUPPORTED are errors like the others.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import anyio
import nbformat
import pytest
from conftest import build_tree  # tests/conftest.py
from imagefiles import gif, jpeg, png  # tests/imagefiles.py

from dsh_jupyter import Workspace

from .clients import drive, installed
from .conftest import CAPS, mcp_url, start_mcp_server

pytestmark = pytest.mark.slow


def _notebook() -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1\nprint('hello cell')"), nbformat.v4.new_markdown_cell("# Notes")]
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", text="hello cell\n")]
    return nbformat.writes(nb)


def _figures() -> str:
    """A notebook of image outputs: 116-byte PNG, 852-byte PNG, 35-byte GIF, 209-byte JPEG."""
    import base64

    def out(mime: str, data: bytes):
        return nbformat.v4.new_output("display_data", data={mime: base64.b64encode(data).decode()})

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("a()", outputs=[out("image/png", png(5, 3))]),
        nbformat.v4.new_code_cell("b()", outputs=[out("image/png", png(16, 16)), out("image/gif", gif(2, 2))]),
        nbformat.v4.new_code_cell("c()", outputs=[out("image/jpeg", jpeg(3, 3))]),
    ]
    return nbformat.writes(nb)


# the page's image bounds the image scenario runs under: one image passes the bytes, one the count
IMAGE_CAPS = ["--DshJupyter.notebook_page_max_images=2", "--DshJupyter.notebook_page_max_image_bytes=300"]

TREE = {
    "src": {
        "app.py": "def main():\n    return 'hello world'\n",
        "util/helpers.py": "def helper():\n    return 'hello'\n",
    },
    "notes.txt": "first line\nsecond line\n",
    "many": {f"f{i:02}.txt": f"hello {i}\n" for i in range(12)},
    ".env": "SECRET=1\n",
    "book.ipynb": _notebook(),
    "chart.png": png(5, 3),
    "photo.jpg": jpeg(40, 30),
    "figs.ipynb": _figures(),
    "fake.png": "not an image\n",
    "old.bmp": b"BM" + bytes(4) + bytes(4) + bytes(40),
}

# (tool, arguments, the error code it must answer, or None for a success)
SCENARIO = [
    ("list", {}, None),
    ("list", {"path": "many", "offset": 3}, None),
    ("list", {"path": "many", "details": True}, None),
    ("glob", {"pattern": "*.txt"}, None),  # over the cap of 5: sampled, spilled
    ("grep", {"pattern": "hello"}, None),  # over the cap of 5
    ("grep", {"pattern": "HELLO", "ignore_case": True, "output_mode": "files_with_matches"}, None),  # spilled
    ("grep", {"pattern": "hello", "output_mode": "count", "offset": 6, "exclude": ["src/**"]}, None),
    ("grep", {"pattern": "hello", "path": "many", "context": 1, "offset": 2}, None),
    ("grep", {"pattern": "hello", "output_mode": "lines"}, "ARGUMENT_INVALID"),
    ("read", {"file_path": "notes.txt"}, None),
    ("read", {"file_path": "book.ipynb"}, None),  # the cell view
    ("read", {"file_path": "notes.txt", "offset": -1}, None),  # the last line
    ("read", {"file_path": "book.ipynb", "offset": -1}, None),  # the last cell
    ("read", {"file_path": "notes.txt", "offset": 0}, "ARGUMENT_INVALID"),
    ("read", {"file_path": "chart.png"}, None),  # text, then an image block
    ("read", {"file_path": "photo.jpg"}, None),
    ("read", {"file_path": "figs.ipynb"}, None),  # the cell view with two of four output images attached
    ("read", {"file_path": "fake.png"}, "IMAGE_INVALID"),
    ("read", {"file_path": "old.bmp"}, "IMAGE_UNSUPPORTED"),
    ("find", {"query": "hlp"}, None),  # src/util/helpers.py
    ("find", {"query": "   "}, "ARGUMENT_INVALID"),
    # several files at once: text, an image (its block after the text), a notebook, one missing
    ("read", {"file_paths": ["notes.txt", "chart.png", "book.ipynb", "missing.txt"]}, None),
    ("replace", {"pattern": "second", "replacement": "2nd"}, None),  # a preview: nothing changes
    (
        "replace",
        {"pattern": "second", "replacement": "2nd", "occurrences": "all", "expected_count": 9},
        "REPLACE_COUNT_CHANGED",
    ),
    ("write", {"file_path": "made/new.txt", "content": "made\n"}, None),
    ("edit", {"file_path": "notes.txt", "old_string": "1st", "new_string": "one", "dry_run": True}, "EDIT_NOT_FOUND"),
    ("edit", {"file_path": "notes.txt", "old_string": "first", "new_string": "1st", "dry_run": True}, None),
    ("edit", {"file_path": "notes.txt", "old_string": "first", "new_string": "1st"}, None),
    (
        "edit",
        {
            "file_path": "notes.txt",
            "edits": [{"old_string": "1st", "new_string": "First"}, {"old_string": "First", "new_string": "1st"}],
        },
        None,
    ),
    (
        "edit",
        {
            "file_path": "notes.txt",
            "edits": [{"old_string": "1st", "new_string": "x"}, {"old_string": "nope", "new_string": "y"}],
        },
        "EDIT_NOT_FOUND",
    ),
    ("edit", {"file_path": "notes.txt", "edits": [{"old_string": "1st"}]}, "ARGUMENT_INVALID"),
    ("edit", {"file_path": "book.ipynb", "old_string": "x = 1", "new_string": "x = 2"}, None),
    ("move", {"source": "made/new.txt", "destination": "made/renamed.txt"}, None),
    ("move", {"source": "made", "destination": "kept/made"}, None),
    ("move", {"source": "notes.txt", "destination": "src/app.py"}, "FS_EXISTS"),
    ("move", {"source": "notes.txt", "destination": "src/app.py", "overwrite": True}, "FS_NOT_OBSERVED"),
    ("read", {"file_path": "missing.txt"}, "FS_NOT_FOUND"),
    ("read", {"file_path": ".env"}, "FS_HIDDEN"),
    ("edit", {"file_path": "src/app.py", "old_string": "main", "new_string": "run"}, "FS_NOT_OBSERVED"),
    ("read", {"file_path": 7}, "ARGUMENT_INVALID"),
    ("list", {"offset": 0}, "ARGUMENT_INVALID"),
    ("read", {"file_path": "   "}, "ARGUMENT_INVALID"),
    ("grep", {"pattern": "("}, "SEARCH_INVALID_PATTERN"),
    ("read", {"file_path": "../outside.txt"}, "FS_OUTSIDE_ROOT"),
    ("nope", {}, "TOOL_UNKNOWN"),
]
SPILL = re.compile(r"stored at: (/\S+?)\. Use read")


TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")  # list details: each server made its own tree


# a replace preview's occurrence ids are the session's own (they hash it): the clients' sessions differ
OCCURRENCE_ID = re.compile(r"\[[0-9a-f]{12}\]")


def _normal(text: str) -> str:
    return OCCURRENCE_ID.sub("[ID]", TIME.sub("TIME", SPILL.sub("stored at: LOC. Use read", text)))


@pytest.fixture(scope="module")
def clients(tmp_path_factory):
    return installed(tmp_path_factory.mktemp("mcp-clients"))


@pytest.fixture(scope="module")
def expected(tmp_path_factory):
    """The Python API's answers to the scenario, on the same tree with the same settings."""
    tmp = tmp_path_factory.mktemp("expected")
    ws = Workspace(
        build_tree(tmp / "root", TREE),
        state_path=tmp / "state.sqlite",
        allow_hidden=False,
        glob_max_results=5,
        grep_max_matches=5,
        notebook_page_max_images=2,
        notebook_page_max_image_bytes=300,
    )
    return [ws.call(tool, args) for tool, args, _ in SCENARIO]


@pytest.fixture
def http_server(tmp_path_factory):
    """A server of its own for each scenario: the scenario writes and edits."""
    tmp = tmp_path_factory.mktemp("clients-server")
    srv = start_mcp_server(tmp, tree=TREE, extra_args=IMAGE_CAPS)
    try:
        yield srv
    finally:
        srv.stop()


def stdio_spec(tmp: Path) -> dict:
    root = build_tree(tmp / "root", TREE)
    return {
        "transport": "stdio",
        "command": str(Path(sys.executable).with_name("dsh-jupyter-mcp")),
        "args": [
            "--root",
            str(root),
            "--state-path",
            str(tmp / "state.sqlite"),
            "--allow_hidden=false",
            *[a.replace("--DshJupyter.", "--") for a in [*CAPS, *IMAGE_CAPS]],
        ],
    }


def _check_report(report: dict, expected: list) -> None:
    assert len(report["calls"]) == len(SCENARIO)
    for (tool, args, code), got, want in zip(SCENARIO, report["calls"], expected):
        assert got["ok"], f"{tool} {args}: the client raised {got.get('error')}"
        result = got["result"]
        assert result.get("isError", False) is (code is not None), (tool, args, result)
        links = _links(want)
        assert [c["type"] for c in result["content"]] == ["text", *links] + ["image"] * len(want.images), (tool, args)
        assert _normal(result["content"][0]["text"]) == _normal(want.text), (tool, args)
        if links:  # a capped answer links its saved result, named as its text names it
            assert result["content"][1]["name"] == result["structuredContent"]["spill"].rsplit("/", 1)[1]
        images = result["content"][1 + len(links) :]
        assert [(c["mimeType"], c["data"]) for c in images] == _images(want), (tool, args)
        if code is None:  # the client already checked it against the tool's outputSchema
            assert isinstance(result["structuredContent"], dict) and "_meta" not in result
        else:
            assert "structuredContent" not in result
            assert result["_meta"]["dsh-jupyter/error"]["code"] == code
    assert set(report["strict"].values()) == {"ok"}, report["strict"]


def _links(result) -> list[str]:
    """The content types a capped answer adds after its text: a link to its saved result."""
    return ["resource_link"] if not result.is_error and result.value.get("spill") else []


def _images(result) -> list:
    return [(image.mime, image.base64()) for image in result.images]


def test_the_image_scenario_carries_images(expected):
    """What the clients are compared with: the image reads carry 1, 1 and 2 images."""
    counts = {
        args["file_path"]: len(want.images)
        for (tool, args, _), want in zip(SCENARIO, expected)
        if tool == "read" and isinstance(args.get("file_path"), str)
    }
    assert (counts["chart.png"], counts["photo.jpg"], counts["figs.ipynb"], counts["notes.txt"]) == (1, 1, 2, 0)
    figs = next(w for (t, a, _), w in zip(SCENARIO, expected) if a.get("file_path") == "figs.ipynb")
    assert "[image/png: 116 bytes, attached as image 1]" in figs.text
    assert "[image/png: 852 bytes, not attached: this page attaches at most 300 bytes of images]" in figs.text
    assert "[image/gif: 35 bytes, attached as image 2]" in figs.text
    assert "[image/jpeg: 209 bytes, not attached: this page attaches at most 2 images]" in figs.text


@pytest.fixture
def spec_args():
    return [{"name": tool, "arguments": args} for tool, args, _ in SCENARIO]


def test_typescript_sdk_over_http_gets_every_result_as_a_result(clients, http_server, expected, spec_args, tmp_path):
    spec = {
        "transport": "http",
        "url": mcp_url(http_server, "ts-http"),
        "headers": {"Authorization": f"token {http_server.token}"},
        "calls": spec_args,
    }
    _check_report(drive(clients, spec, tmp_path), expected)


def test_typescript_sdk_over_stdio_gets_every_result_as_a_result(clients, expected, spec_args, tmp_path):
    report = drive(clients, {**stdio_spec(tmp_path), "calls": spec_args}, tmp_path)
    _check_report(report, expected)
    titles = {t["name"]: (t["title"], t["annotations"]["idempotentHint"]) for t in report["tools"]}
    assert titles["read"] == ("Read file", True) and titles["edit"] == ("Edit file", False)
    assert titles["move"] == ("Move file or folder", False)
    assert report["strict"]["move input"] == report["strict"]["move output"] == "ok"


def _fastmcp_scenario(transport) -> list:
    from fastmcp import Client

    async def main():
        out = []
        async with Client(transport) as client:
            await client.list_tools()
            for tool, args, _ in SCENARIO:
                try:
                    out.append(await client.call_tool(tool, args, raise_on_error=False))
                except Exception as exc:  # what must never happen: a result turned into an exception
                    out.append(exc)
        return out

    return anyio.run(main)


def _check_fastmcp(results: list, expected: list) -> None:
    for (tool, args, code), got, want in zip(SCENARIO, results, expected, strict=True):
        assert not isinstance(got, Exception), f"{tool} {args}: fastmcp raised {got!r}"
        assert got.is_error is (code is not None), (tool, args)
        assert _normal(got.content[0].text) == _normal(want.text), (tool, args)
        images = [(c.model_dump(by_alias=True)["mimeType"], c.data) for c in got.content[1:] if c.type == "image"]
        links = [c.type for c in got.content[1:] if c.type == "resource_link"]
        assert links == _links(want), (tool, args)
        assert len(got.content) == 1 + len(links) + len(images) and images == _images(want), (tool, args)
        if code is not None:
            assert got.structured_content is None and got.meta["dsh-jupyter/error"]["code"] == code


def test_fastmcp_over_http(http_server, expected):
    from fastmcp.client.transports import StreamableHttpTransport

    transport = StreamableHttpTransport(
        mcp_url(http_server, "fastmcp-http"), headers={"Authorization": f"token {http_server.token}"}
    )
    _check_fastmcp(_fastmcp_scenario(transport), expected)


def test_fastmcp_over_stdio(expected, tmp_path):
    from fastmcp.client.transports import StdioTransport

    spec = stdio_spec(tmp_path)
    _check_fastmcp(_fastmcp_scenario(StdioTransport(spec["command"], spec["args"])), expected)


def test_mcp_remote_bridges_the_http_endpoint_for_stdio_only_clients(clients, server, tmp_path):
    """``npx mcp-remote URL --header "Authorization: token …"``, as docs/mcp.md shows it."""
    spec = {
        "transport": "stdio",
        "command": clients.node,
        "args": [
            str(clients.mcp_remote),
            mcp_url(server, "remote"),
            "--header",
            f"Authorization: token {server.token}",
        ],
        "env": {"HOME": str(tmp_path / "home"), "MCP_REMOTE_CONFIG_DIR": str(tmp_path / "mcp-auth")},
        "calls": [
            {"name": "read", "arguments": {"file_path": "missing.txt"}},
            {"name": "list", "arguments": {"path": "src"}},
        ],
    }
    report = drive(clients, spec, tmp_path)
    first, second = report["calls"]
    assert first["ok"] and first["result"]["isError"] is True
    assert first["result"]["content"][0]["text"] == 'Error: cannot read "missing.txt": not found'
    assert second["ok"] and second["result"]["content"][0]["text"].startswith("<path>src</path>")


# a search asked again and again while the workspace index is counted, built and then answers:
# values without ``source``, with ``source: "rg"`` and its ``index_note``, and with ``source: "index"``
INDEX_SCENARIO = [
    {"name": tool, "arguments": args}
    for _ in range(15)
    for tool, args in (("grep", {"pattern": "hello"}), ("glob", {"pattern": "*.txt"}), ("find", {"query": "hlp"}))
]


def _check_index_report(report: dict) -> None:
    assert len(report["calls"]) == len(INDEX_SCENARIO)
    sources = []
    for call in report["calls"]:
        assert call["ok"], f"the client raised {call.get('error')}"  # the SDK checked the outputSchema
        value = call["result"]["structuredContent"]
        sources.append(value.get("source"))
        assert ("index_note" in value) is (value.get("source") == "rg"), value
    assert "index" in sources, sources
    assert set(report["strict"].values()) == {"ok"}, report["strict"]


def test_typescript_sdk_reads_values_that_say_which_way_a_search_went(clients, tmp_path):
    """With ``index_min_files=1`` the workspace index is in play on a small tree, so the values
    carry ``source`` (and ``index_note`` while rg answers); the TypeScript SDK checks each against
    the output schema, over stdio and over HTTP."""
    spec = stdio_spec(tmp_path / "stdio")
    spec["args"].append("--index_min_files=1")
    _check_index_report(drive(clients, {**spec, "calls": INDEX_SCENARIO}, tmp_path / "stdio"))
    srv = start_mcp_server(tmp_path / "http", tree=TREE, extra_args=["--DshJupyter.index_min_files=1"])
    try:
        spec = {
            "transport": "http",
            "url": mcp_url(srv, "ts-index"),
            "headers": {"Authorization": f"token {srv.token}"},
            "calls": INDEX_SCENARIO,
        }
        _check_index_report(drive(clients, spec, tmp_path / "http"))
    finally:
        srv.stop()
