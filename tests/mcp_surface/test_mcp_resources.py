"""Saved results (spills) as MCP resources: listed, read in pages, linked from a capped answer, refused where hidden.

Spoken to line by line over stdio (``Lines``: the exact messages), and through the SDK's client over
HTTP. The pages are compared with what ``read`` answers for the same file and window, and the
sizes with the files on disk.
"""

from __future__ import annotations

import anyio
import pytest
from mcp import MCPError

from dsh_jupyter.core.state.spills import session_folder
from dsh_jupyter.core.workspace import session_key

from .conftest import Lines, connect, text_of

MANY = {f"f{i:02}.txt": f"hello {i}\n" for i in range(12)}
FORM = "(dsh-jupyter://spill/NAME?offset=N&limit=M)"
TEMPLATE = {
    "uriTemplate": "dsh-jupyter://spill/{name}{?offset,limit}",
    "name": "saved-result-page",
    "title": "Saved result page",
    "description": "One page of a saved full result, in the line window read gives: offset is the first line "
    "(1-based, negative counts from the end), limit the most lines.",
    "mimeType": "text/plain",
}


def call(lines: Lines, request_id, name: str, arguments: dict) -> dict:
    return lines.ask(request_id, "tools/call", {"name": name, "arguments": arguments})["result"]


@pytest.fixture
def stdio(root, tree, state_file):
    tree(root, {**MANY, ".env": "SECRET=1\n"})
    servers: list[Lines] = []

    def start(*args: str, version: str = "2025-11-25") -> Lines:
        server = Lines(root, state_file, "--glob_max_results=5", *args)
        servers.append(server)
        server.initialize(version)
        return server

    try:
        yield start
    finally:
        for server in servers:
            if server.proc.poll() is None:
                server.proc.kill()
                server.proc.wait()


def spill_path(state_file, session: str, name: str):
    return (
        state_file.parent
        / "spills"
        / session_folder(session_key(str(state_file.parent.parent / "root"), session))
        / name
    )


def test_a_capped_glob_links_its_saved_result_and_the_list_names_it_with_its_size(stdio, state_file):
    server = stdio()
    result = call(server, 1, "glob", {"pattern": "*.txt"})
    text, link = result["content"]
    locator = result["structuredContent"]["spill"]
    name = locator.rsplit("/", 1)[1]
    assert f"Full sorted result stored at: {locator}." in text["text"]
    assert link == {
        "type": "resource_link",
        "uri": f"dsh-jupyter://spill/{name}",
        "name": name,
        "title": "glob *.txt",
        "mimeType": "text/plain",
    }
    listed = server.ask(2, "resources/list")["result"]["resources"]
    size = spill_path(state_file, "default", name).stat().st_size
    assert listed == [{**{k: v for k, v in link.items() if k != "type"}, "size": size}]
    assert server.ask(3, "resources/templates/list")["result"] == {"resourceTemplates": [TEMPLATE]}


def test_a_page_of_a_resource_is_what_read_answers_for_the_same_window(stdio):
    server = stdio()
    result = call(server, 1, "glob", {"pattern": "*.txt"})
    locator, uri = result["structuredContent"]["spill"], result["content"][1]["uri"]
    for request_id, (query, window) in enumerate(
        [("", {}), ("?offset=3&limit=4", {"offset": 3, "limit": 4}), ("?offset=-2", {"offset": -2})], start=2
    ):
        page = server.ask(request_id, "resources/read", {"uri": uri + query})["result"]
        read = call(server, f"r{request_id}", "read", {"file_path": locator, **window})
        assert page["contents"] == [{"uri": uri + query, "mimeType": "text/plain", "text": read["content"][0]["text"]}]
        want = read["structuredContent"]
        assert page["_meta"] == {"dsh-jupyter/page": {"offset": want["offset"], "nextOffset": want["nextOffset"]}}
    middle = server.ask(9, "resources/read", {"uri": uri + "?offset=3&limit=4"})["result"]["contents"][0]["text"]
    assert middle.endswith("(Showing lines 3-6 of 12. Use offset=7 to continue.)\n</content>")


def test_a_client_of_an_older_revision_gets_no_link(stdio):
    server = stdio(version="2025-03-26")
    result = call(server, 1, "glob", {"pattern": "*.txt"})
    assert [c["type"] for c in result["content"]] == ["text"]
    assert len(server.ask(2, "resources/list")["result"]["resources"]) == 1


def test_addresses_that_name_no_saved_result_are_refused_in_one_sentence(stdio, state_file):
    server = stdio()
    uri = call(server, 1, "glob", {"pattern": "*.txt"})["content"][1]["uri"]
    folder = spill_path(state_file, "default", "nope.txt")
    cases = [
        ("dsh-jupyter://spill/nope.txt", -32002, "FS_NOT_FOUND", f'cannot read "{folder}": not found'),
        (
            "file:///etc/passwd",
            -32002,
            "FS_NOT_FOUND",
            f'cannot read "file:///etc/passwd": not a saved result\'s address {FORM}',
        ),
        (
            "dsh-jupyter://spill/a/b",
            -32002,
            "FS_NOT_FOUND",
            f'cannot read "dsh-jupyter://spill/a/b": not a saved result\'s address {FORM}',
        ),
        (
            uri + "?offset=x",
            -32602,
            "ARGUMENT_INVALID",
            f'cannot read "{uri}?offset=x": offset must be a whole number {FORM}',
        ),
        (
            uri + "?page=2",
            -32602,
            "ARGUMENT_INVALID",
            f'cannot read "{uri}?page=2": unknown or repeated query parameter "page" {FORM}',
        ),
        (
            uri + "?limit=1&limit=2",
            -32602,
            "ARGUMENT_INVALID",
            f'cannot read "{uri}?limit=1&limit=2": unknown or repeated query parameter "limit" {FORM}',
        ),
        (uri + "?offset=0", -32602, "ARGUMENT_INVALID", "offset must not be 0: 1 is the first line, -1 the last"),
        (
            uri + "?offset=99",
            -32602,
            "ARGUMENT_INVALID",
            f'offset 99 is out of range for "{spill_path(state_file, "default", uri.rsplit("/", 1)[1])}" (12 lines)',
        ),
    ]
    for request_id, (address, rpc, code, message) in enumerate(cases, start=2):
        reply = server.ask(request_id, "resources/read", {"uri": address})
        assert reply["error"] == {"code": rpc, "message": message, "data": {"code": code}}, address
    assert server.ask(20, "resources/read", {})["error"] == {
        "code": -32602,
        "message": "Invalid params: uri must be a string",
    }


def test_a_saved_result_made_where_hidden_files_show_is_refused_where_they_do_not(stdio, state_file):
    shows = stdio("--allow_hidden=true")
    result = call(shows, 1, "glob", {"pattern": "*"})
    assert ".env" in result["content"][0]["text"] or result["structuredContent"]["totalPaths"] == 13
    uri, name = result["content"][1]["uri"], result["content"][1]["name"]
    hides = stdio("--allow_hidden=false")
    assert hides.ask(2, "resources/list")["result"]["resources"] == []  # withheld here: not listed
    reply = hides.ask(3, "resources/read", {"uri": uri})
    where = spill_path(state_file, "default", name)
    assert reply["error"] == {
        "code": -32003,
        "message": f'cannot read "{where}": it was made where hidden files are shown, and this surface hides them',
        "data": {"code": "FS_HIDDEN"},
    }
    other = stdio("--allow_hidden=true", "--session", "other")
    assert other.ask(4, "resources/list")["result"]["resources"] == []
    reply = other.ask(5, "resources/read", {"uri": uri})
    mine = spill_path(state_file, "other", name)
    assert reply["error"] == {
        "code": -32002,
        "message": f'cannot read "{mine}": not found',
        "data": {"code": "FS_NOT_FOUND"},
    }
    assert where.exists() and not mine.exists()  # nothing was copied or moved


@pytest.mark.slow
def test_the_sdk_client_lists_reads_and_follows_links_over_http(server):
    for name, text in MANY.items():
        (server.root / "res-many").mkdir(exist_ok=True)
        (server.root / "res-many" / name).write_text(text)

    async def main():
        async with connect(server, "resources-http") as client:
            capped = await client.call_tool("glob", {"pattern": "*.txt", "path": "res-many"})
            link = capped.content[1]
            listed = await client.list_resources()
            whole = await client.read_resource(link.uri)
            page = await client.read_resource(f"{link.uri}?offset=2&limit=2")
            read = await client.call_tool(
                "read", {"file_path": capped.structured_content["spill"], "offset": 2, "limit": 2}
            )
            try:
                await client.read_resource("dsh-jupyter://spill/nope.txt")
                refused = None
            except MCPError as exc:
                refused = exc
            templates = await client.list_resource_templates()
            return capped, link, listed, whole, page, read, refused, templates

    _, link, listed, whole, page, read, refused, templates = anyio.run(main)
    assert link.type == "resource_link" and link.title == "glob *.txt" and link.mime_type == "text/plain"
    assert [(r.uri, r.name, r.title) for r in listed.resources] == [(link.uri, link.name, "glob *.txt")]
    assert listed.resources[0].size > 0
    assert whole.contents[0].text.startswith("<path>")
    assert page.contents[0].text == text_of(read)
    assert page.meta == {"dsh-jupyter/page": {"offset": 2, "nextOffset": 4}}
    assert refused is not None and refused.code == -32002 and refused.message.endswith('nope.txt": not found')
    assert refused.data == {"code": "FS_NOT_FOUND"}
    assert templates.resource_templates[0].uri_template == "dsh-jupyter://spill/{name}{?offset,limit}"
