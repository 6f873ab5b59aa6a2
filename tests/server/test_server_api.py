"""The /dsh/api endpoints against a real in-process Jupyter server (pytest-jupyter)."""

from __future__ import annotations

import json
import os

import pytest
from openapi_spec_validator import validate

from dsh_jupyter import Workspace
from dsh_jupyter.core.registry import TOOLS as REGISTRY
from dsh_jupyter.core.settings import Settings, SettingsError
from dsh_jupyter.server.app import DEFAULT_MAX_BODY_BYTES, DshJupyter

TOOLS = [t.name for t in REGISTRY]  # every tool, in the registry's order


def python_ws(root, state_path, spill_root, session="s1", **settings) -> Workspace:
    return Workspace(root, session=session, state_path=state_path, spill_root=str(spill_root), **settings)


def assert_clean_error(data: dict, root) -> None:
    """An HTTP error body: {code, message, reason}, no traceback, never the root."""
    assert set(data) == {"code", "message", "reason"}, data
    assert str(root) not in str(data)
    assert "Traceback" not in str(data)


async def test_tools_lists_every_tool_with_schema(api):
    status, data = await api("GET", "tools")
    assert status == 200
    assert [t["name"] for t in data] == TOOLS
    for t in data:
        assert set(t) == {"name", "description", "inputSchema", "guidance"}
        assert t["inputSchema"]["type"] == "object"


@pytest.mark.parametrize(
    "name,args",
    [
        ("list", {}),
        ("list", {"path": "données"}),
        ("glob", {"pattern": "*.py"}),
        ("grep", {"pattern": "hello"}),
        ("grep", {"pattern": "hello", "path": "src", "include": "*.py"}),
        ("read", {"file_path": "docs/guide with space.md"}),
        ("read", {"file_path": "notes.txt", "offset": 2, "limit": 1}),
        ("read", {"file_path": "notes.txt", "offset": -2}),
        ("list_dir", {"path": ".", "recursive": True}),
        ("read", {"file_path": "missing.txt"}),
        ("read", {"file_path": "outside_link/passwd"}),
    ],
)
async def test_rest_text_is_the_python_text(tool, jp_root_dir, state_path, spill_root, name, args):
    data = await tool(name, session="s1", **args)
    assert set(data) == {"tool", "session", "callId", "isError", "text", "value"}
    assert (data["tool"], data["session"]) == (name, "s1")
    expected = python_ws(jp_root_dir, state_path, spill_root).run(name, **args)
    assert data["text"] == expected.text
    assert data["isError"] == expected.is_error
    assert data["value"] == expected.value or name == "list"  # list values carry mtimes


async def test_tool_failure_is_http_200(tool, jp_root_dir):
    data = await tool("read", file_path="../escape.txt")
    assert data["isError"] is True
    assert data["value"]["code"] == "FS_OUTSIDE_ROOT"
    assert data["text"] == f"Error: {data['value']['message']}"
    assert str(jp_root_dir) not in data["text"]
    data = await tool("list", offset=0)
    assert (data["isError"], data["value"]["code"]) == (True, "ARGUMENT_INVALID")


async def test_default_session_is_default(api):
    status, data = await api("POST", "tools", "list", body={"args": {}})
    assert (status, data["session"]) == (200, "default")
    status, data = await api("POST", "tools", "list")  # no body at all: args default to {}
    assert (status, data["isError"]) == (200, False)


async def test_unknown_tool_is_404(api, jp_root_dir):
    status, data = await api("POST", "tools", "nope", body={"args": {}})
    assert status == 404
    assert data["code"] == "TOOL_UNKNOWN"
    assert_clean_error(data, jp_root_dir)


@pytest.mark.parametrize(
    "body,code",
    [
        (b"{not json", "BODY_INVALID"),
        (b"\xff\xfe", "BODY_INVALID"),
        (b"[1, 2]", "BODY_INVALID"),
        (b'"text"', "BODY_INVALID"),
        (b'{"args": [1]}', "BODY_INVALID"),
        (b'{"args": "path"}', "BODY_INVALID"),
        (b'{"session": 5, "args": {}}', "BODY_INVALID"),
        (b'{"args": {}, "extra": 1}', "BODY_INVALID"),
    ],
)
async def test_malformed_body_is_400(api, jp_root_dir, body, code):
    status, data = await api("POST", "tools", "list", body=body)
    assert status == 400, data
    assert data["code"] == code
    assert_clean_error(data, jp_root_dir)


async def test_body_over_the_limit_is_413(api, jp_root_dir):
    content = "x" * (DEFAULT_MAX_BODY_BYTES + 1)
    status, data = await api("POST", "tools", "write", body={"args": {"file_path": "big.txt", "content": content}})
    assert status == 413
    assert data["code"] == "BODY_TOO_LARGE"
    assert not (jp_root_dir / "big.txt").exists()
    status, _ = await api("POST", "sessions", body=b"{" + b" " * DEFAULT_MAX_BODY_BYTES + b"}")
    assert status == 413


@pytest.mark.dsh_settings(max_body_bytes=100)
async def test_body_limit_is_configurable(api):
    status, _ = await api("POST", "tools", "read", body={"args": {"file_path": "notes.txt"}})
    assert status == 200
    status, _ = await api("POST", "tools", "write", body={"args": {"file_path": "n.txt", "content": "y" * 200}})
    assert status == 413


async def test_python_read_then_rest_edit_shares_the_session(tool, jp_root_dir, state_path, spill_root):
    ws = python_ws(jp_root_dir, state_path, spill_root, session="s1")
    assert not ws.run("read", file_path="notes.txt").is_error
    other = await tool("edit", session="s2", file_path="notes.txt", old_string="first", new_string="1st")
    assert other["isError"] is True
    assert other["value"]["code"] == "FS_NOT_OBSERVED"
    assert other["text"] == 'Error: cannot write "notes.txt": read it first in this session'
    done = await tool("edit", session="s1", file_path="notes.txt", old_string="first", new_string="1st")
    assert done["isError"] is False, done["text"]
    assert done["text"].split("\n")[0] == "The file notes.txt has been updated successfully."
    assert (jp_root_dir / "notes.txt").read_text() == "1st line\nsecond line\n"
    # and back: the REST edit recorded the new version, so Python may edit again in s1
    assert not ws.run("edit", file_path="notes.txt", old_string="1st", new_string="one").is_error


async def test_rest_write_creates_and_reads_back(tool, jp_root_dir):
    data = await tool("write", session="w", file_path="new/dir/file.txt", content="a\nb\n")
    assert data["text"] == "<path>new/dir/file.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>"
    assert (jp_root_dir / "new/dir/file.txt").read_text() == "a\nb\n"


async def test_sessions_lifecycle(api, jp_root_dir):
    status, created = await api("POST", "sessions", body={"id": "alpha", "cwd": "src"})
    assert status == 201
    assert created == {**created, "id": "alpha", "cwd": "src", "observations": 0, "calls": 0}
    status, again = await api("POST", "sessions", body={"id": "alpha"})
    assert (status, again["cwd"]) == (200, "src")
    status, listed = await api("GET", "sessions")
    assert status == 200 and "alpha" in [s["id"] for s in listed]
    # a session's cwd is where its relative paths start
    status, data = await api("POST", "tools", "list", body={"session": "alpha", "args": {}})
    assert data["text"].splitlines()[0] == "<path>.</path>" and "app.py" in data["text"]
    status, info = await api("GET", "sessions", "alpha")
    assert (status, info["calls"]) == (200, 1)
    status, body = await api("DELETE", "sessions", "alpha")
    assert (status, body) == (204, None)
    status, data = await api("GET", "sessions", "alpha")
    assert (status, data["code"]) == (404, "SESSION_NOT_FOUND")
    status, data = await api("DELETE", "sessions", "alpha")
    assert status == 404


async def test_a_session_says_when_its_newest_call_started(api, tool):
    status, made = await api("POST", "sessions", body={"id": "quiet"})
    assert (status, made["lastCall"]) == (201, None)
    await tool("list", session="busy")
    await tool("read", session="busy", file_path="notes.txt")
    status, log = await api("GET", "sessions", "busy", "calls")
    newest = log["calls"][-1]["started"]
    assert newest >= log["calls"][0]["started"]
    status, listed = await api("GET", "sessions")
    by_id = {s["id"]: s for s in listed}
    assert (by_id["quiet"]["lastCall"], by_id["busy"]["lastCall"]) == (None, newest)
    status, info = await api("GET", "sessions", "busy")
    assert (status, info["lastCall"]) == (200, newest)


async def test_session_create_generates_an_id_and_refuses_bad_input(api, jp_root_dir):
    status, data = await api("POST", "sessions", body={})
    assert status == 201 and data["id"] and data["cwd"] == "."
    for body, want in [
        ({"cwd": "notes.txt"}, 404),
        ({"cwd": "nowhere"}, 404),
        ({"cwd": "../.."}, 400),
        ({"id": 7}, 400),
        ({"name": "x"}, 400),
        ([1], 400),
        ({"id": "x" * 201}, 400),
    ]:
        status, data = await api("POST", "sessions", body=body)
        assert status == want, (body, data)
        assert_clean_error(data, jp_root_dir)


async def test_call_log_lists_rest_calls_newest_last(api, tool):
    await tool("list", session="log")
    await tool("read", session="log", file_path="notes.txt")
    await tool("read", session="log", file_path="nope")
    status, log = await api("GET", "sessions", "log", "calls")
    assert status == 200
    assert (log["session"], log["offset"], log["total"]) == ("log", 0, 3)
    assert [c["tool"] for c in log["calls"]] == ["list", "read", "read"]
    assert {c["surface"] for c in log["calls"]} == {"rest"}
    assert log["calls"][1]["args"] == {"file_path": "notes.txt"}
    assert log["calls"][2]["isError"] is True
    status, page = await api("GET", "sessions", "log", "calls", params={"offset": 1, "limit": 1})
    assert [c["tool"] for c in page["calls"]] == ["read"] and page["offset"] == 1
    for params in ({"offset": "x"}, {"offset": -1}, {"limit": 0}, {"limit": 100000}):
        status, data = await api("GET", "sessions", "log", "calls", params=params)
        assert (status, data["code"]) == (400, "ARGUMENT_INVALID"), params
    status, _ = await api("GET", "sessions", "ghost", "calls")
    assert status == 404


@pytest.mark.dsh_settings(glob_max_results=3)
async def test_spill_list_and_page(api, tool, jp_root_dir, state_path, spill_root, tree):
    tree(jp_root_dir, {f"many/f{i:02d}.txt": f"hit {i}\n" for i in range(12)})
    result = await tool("glob", session="sp", pattern="*.txt", path="many")
    locator = result["value"]["spill"]
    assert locator and locator.startswith(str(spill_root))
    assert f"Full sorted result stored at: {locator}." in result["text"]
    status, spills = await api("GET", "sessions", "sp", "spills")
    assert status == 200
    assert [(s["locator"], s["tool"]) for s in spills] == [(locator, "glob")]
    assert spills[0]["size"] > 0
    status, page = await api("GET", "spill", params={"session": "sp", "locator": locator, "offset": 3, "limit": 4})
    assert status == 200 and page["isError"] is False and page["tool"] == "read"
    expected = python_ws(jp_root_dir, state_path, spill_root, session="sp").spill_page(locator, "sp", 3, 4)
    assert page["text"] == expected.text
    assert page["text"].endswith("(Showing lines 3-6 of 12. Use offset=7 to continue.)\n</content>")
    # another session cannot page it; a missing locator is 400
    status, other = await api("GET", "spill", params={"session": "intruder", "locator": locator})
    assert (status, other["isError"], other["value"]["code"]) == (200, True, "FS_NOT_FOUND")
    status, data = await api("GET", "spill", params={"session": "sp"})
    assert (status, data["code"]) == (400, "ARGUMENT_INVALID")
    # deleting the session deletes its spill files
    assert os.path.exists(locator)
    status, _ = await api("DELETE", "sessions", "sp")
    assert status == 204 and not os.path.exists(locator)


async def test_spills_of_unknown_session_is_404(api):
    status, data = await api("GET", "sessions", "ghost", "spills")
    assert (status, data["code"]) == (404, "SESSION_NOT_FOUND")


async def test_openapi_document_validates_and_covers_every_route(api):
    status, doc = await api("GET", "openapi.json")
    assert status == 200
    validate(doc)
    paths = doc["paths"]
    for p in [
        "/tools",
        "/tools/{name}",
        "/sessions",
        "/sessions/{session}",
        "/sessions/{session}/calls",
        "/sessions/{session}/spills",
        "/spill",
        "/openapi.json",
        "/tabs/{client}",
        "/tabs/{client}/requests",
        "/tabs/{client}/answers",
        "/documents",
    ]:
        assert p in paths
    status, tools = await api("GET", "tools")
    for t in tools:
        body = paths[f"/tools/{t['name']}"]["post"]["requestBody"]["content"]["application/json"]["schema"]
        expected = {k: v for k, v in t["inputSchema"].items() if not (k == "required" and not v)}
        assert body["properties"]["args"] == expected
        assert {"200", "400", "403", "404", "413"} <= set(paths[f"/tools/{t['name']}"]["post"]["responses"])
    assert doc["servers"][0]["url"].endswith("/dsh/api")


async def test_extension_exports_the_state_to_kernels(jp_serverapp, jp_root_dir, state_path, spill_root):
    assert os.environ["DSH_STATE_PATH"] == str(state_path)
    assert os.environ["DSH_ROOT"] == str(jp_root_dir)
    assert os.environ["DSH_SPILL_ROOT"] == os.path.realpath(spill_root)
    # what a kernel does: Workspace() with no arguments attaches to the same root and state
    ws = Workspace()
    assert (ws.root, ws.state_path) == (str(jp_root_dir), str(state_path))


@pytest.fixture
def jp_server_config_defaults(jp_server_config):
    del jp_server_config["DshJupyter"]["state_path"]
    del jp_server_config["DshJupyter"]["spill_root"]
    return jp_server_config


async def test_default_locations_are_in_jupyter_dirs(
    jp_configurable_serverapp, jp_server_config_defaults, jp_data_dir, jp_runtime_dir
):
    app = jp_configurable_serverapp(config=jp_server_config_defaults)
    ext = app.extension_manager.extension_points["dsh_jupyter"].app
    assert ext.workspace.state_path == os.path.join(str(jp_data_dir), "dsh_jupyter", "state.sqlite")
    assert ext.workspace.resolver.spill_root == os.path.realpath(os.path.join(str(jp_runtime_dir), "dsh-spills"))


def test_every_setting_is_a_traitlet_with_its_docs():
    from dsh_jupyter.core.settings import SETTING_DOCS

    traits = DshJupyter.class_traits(config=True)
    for name in Settings.names():
        assert name in traits, name
        assert traits[name].help.startswith(SETTING_DOCS[name])
        default = Settings().as_dict()[name]
        if isinstance(default, list):  # list settings: a List trait with the same (empty) default
            assert list(traits[name].make_dynamic_default() or []) == list(default)
        elif default is not None:
            assert traits[name].default_value == default


@pytest.mark.parametrize(
    "setting,value",
    [
        ("glob_max_results", 0),
        ("read_limit", -5),
        ("max_body_bytes", 0),
        ("tool_threads", 0),
        ("rg_path", "/nonexistent/rg"),
    ],
)
async def test_invalid_setting_stops_the_extension_with_its_name(
    jp_configurable_serverapp, jp_server_config, setting, value
):
    jp_server_config["DshJupyter"][setting] = value
    jp_server_config["ServerApp"]["reraise_server_extension_failures"] = True
    with pytest.raises(SettingsError, match=setting):
        jp_configurable_serverapp(config=jp_server_config)


@pytest.mark.dsh_settings(glob_max_results=0)
async def test_invalid_setting_leaves_no_routes(api):
    status, _ = await api("GET", "tools")
    assert status == 404


async def test_unsupported_method_is_405_with_allow(jp_fetch):
    response = await jp_fetch("dsh", "api", "tools", method="PUT", body=b"{}", raise_error=False)
    assert response.code == 405
    assert response.headers["Allow"] == "GET"


async def test_a_root_made_again_under_the_running_server_is_served_as_the_new_folder(tool, jp_fetch, jp_root_dir):
    """``rm -rf`` and ``mkdir`` of the root while the server runs: the tools answer about the new
    folder, as Jupyter's own contents API does, and a root that is gone says so."""
    import shutil

    assert "notes.txt" in (await tool("list"))["text"]
    shutil.rmtree(jp_root_dir)
    gone = await tool("list")
    assert gone["isError"] and gone["value"]["code"] == "FS_ROOT_UNAVAILABLE"
    assert str(jp_root_dir) not in gone["text"]
    jp_root_dir.mkdir()
    (jp_root_dir / "b.txt").write_text("b\n")
    assert (await tool("list"))["text"].endswith("<content>\nb.txt\n\n(1 entry: 0 directories, 1 file)\n</content>")
    assert (await tool("read", file_path="b.txt"))["text"].startswith("<path>b.txt</path>")
    assert (await tool("glob", pattern="*"))["text"] == "b.txt"
    contents = json.loads((await jp_fetch("api", "contents")).body)  # Jupyter's own view agrees
    assert [c["name"] for c in contents["content"]] == ["b.txt"]
