"""On the server the tools are never more permissive than Jupyter, and every call names its caller."""

from __future__ import annotations

import json

import pytest
from servers import JupyterProcess

from .test_server_auth import ReadOnlyAuthorizer

HIDDEN = "hidden files are not shown here; the server's ContentsManager.allow_hidden setting allows them"


@pytest.fixture
def jp_root_dir(jp_root_dir):
    (jp_root_dir / ".env").write_text("SECRET=1\n")
    (jp_root_dir / "__pycache__").mkdir()
    return jp_root_dir


async def test_hidden_files_follow_the_contents_manager_by_default(api, tool, jp_fetch):
    # Jupyter's own API refuses the dotfile too: the tools are not more permissive than it.
    response = await jp_fetch("api", "contents", ".env", raise_error=False)
    assert response.code == 404
    r = await tool("read", file_path=".env")
    assert r["isError"] and r["value"] == {
        "name": "FsError",
        "code": "FS_HIDDEN",
        "message": f'cannot read ".env": {HIDDEN}',
    }
    r = await tool("write", file_path=".bashrc", content="evil\n")
    assert r["value"]["code"] == "FS_HIDDEN"
    listing = await tool("list")
    # .env is hidden; __pycache__ matches Jupyter's default hide_globs
    assert listing["text"].endswith("; 2 hidden entries not shown)\n</content>")
    grep = await tool("grep", pattern="SECRET")
    assert grep["text"] == "No matches found"
    _, data = await api("GET", "status")
    assert data["allowHidden"] is False and "__pycache__" in data["hideGlobs"]


@pytest.mark.server_config({"ContentsManager": {"allow_hidden": True, "hide_globs": []}})
async def test_allow_hidden_on_the_contents_manager_allows_them(tool):
    r = await tool("read", file_path=".env")
    assert not r["isError"] and "SECRET=1" in r["text"]
    listing = await tool("list")
    assert "hidden" not in listing["text"].rpartition("\n\n")[2]


async def test_every_call_record_names_its_caller_and_can_be_filtered(api, tool):
    await tool("list", session="who")
    _, log = await api("GET", "sessions", "who", "calls")
    (call,) = log["calls"]
    assert call["surface"] == "rest" and call["user"]  # Jupyter's name for the token's user
    _, mine = await api("GET", "sessions", "who", "calls", params={"user": call["user"]})
    assert [c["callId"] for c in mine["calls"]] == [call["callId"]]
    _, none = await api("GET", "sessions", "who", "calls", params={"user": "somebody-else"})
    assert none["calls"] == [] and none["total"] == 0
    _, sessions = await api("GET", "sessions", params={"user": call["user"]})
    assert [s["id"] for s in sessions] == ["who"] and sessions[0]["user"] == call["user"]


@pytest.mark.server_config({"ServerApp": {"authorizer_class": ReadOnlyAuthorizer}})
@pytest.mark.dsh_settings(grep_max_matches=1, spill_max_bytes_read_only=10)
async def test_a_read_only_caller_has_a_small_spill_quota(tool, jp_root_dir):
    for i in range(3):
        (jp_root_dir / f"q{i}.txt").write_text("quota\n")
    r = await tool("grep", pattern="quota")
    assert r["value"]["spill"] is None
    assert r["text"].endswith("The full result could not be saved.)")


def test_a_broad_grep_never_finds_the_servers_own_token(tmp_path):
    """A home-like root holding the server's runtime, data and config folders, hidden files
    allowed: none of the server's own files is shown, whatever the search."""
    root = tmp_path  # the server's Jupyter folders (jupyter-runtime, -data, -config) lie in it
    (root / "notes.txt").write_text("the word token, harmless\n")
    token = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
    server = JupyterProcess.start(
        tmp_path, root, token=token, extra_args=["--ContentsManager.allow_hidden=True"], timeout=60
    )
    try:
        files = list((root / "jupyter-runtime").glob("jpserver-*.json"))
        assert files and token in files[0].read_text(), "the server did not write its runtime file there"
        status, data = server.request("POST", "dsh/api/tools/grep", {"args": {"pattern": token}})
        assert data["text"] == "No matches found"
        for pattern in ("token", "url"):
            status, data = server.request("POST", "dsh/api/tools/grep", {"args": {"pattern": pattern}})
            assert status == 200, data
            assert token not in json.dumps(data["value"]["matches"]) and token not in data["text"], data["text"]
            assert "jpserver" not in data["text"] and "jupyter-runtime" not in data["text"]
        status, data = server.request(
            "POST", "dsh/api/tools/read", {"args": {"file_path": str(files[0].relative_to(root))}}
        )
        assert data["value"]["code"] == "FS_PROTECTED"
        status, data = server.request("POST", "dsh/api/tools/glob", {"args": {"pattern": "*.json"}})
        assert data["text"] == "No files found"
        status, data = server.request("POST", "dsh/api/tools/list", {"args": {}})
        assert "jupyter-runtime" not in data["text"] and "hidden entr" in data["text"]
    finally:
        server.stop()
