"""Hidden files as Jupyter hides them, and Jupyter's own folders never shown, on real trees.

The plain Python API keeps the seed's default (hidden files shown); these tests set
``allow_hidden=False`` as a Jupyter server does by default (its ContentsManager), and point
Jupyter's folders (``JUPYTER_RUNTIME_DIR`` …) inside the workspace, as they are under a home
directory root on JupyterHub.
"""

from __future__ import annotations

import json
import os

import pytest
from conftest import assert_error, jupyter_folders_in

HIDDEN = "hidden files are not shown here; the server's ContentsManager.allow_hidden setting allows them"
PROTECTED = "Jupyter's own folders (runtime, data, config) and this tool's state are never shown"
TOKEN = "f00dfeedc0ffee0123456789abcdef"


@pytest.fixture
def home(root, monkeypatch):
    """A home-like root: dotfiles, a dot folder, and Jupyter's runtime/data/config folders in it."""
    (root / ".env").write_text("SECRET=1\n")
    (root / ".config").mkdir()
    (root / ".config" / "app.ini").write_text("x=1\n")
    (root / "notes.txt").write_text("hello\n")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\0pyc")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("token = 'not a secret'\n")
    runtime = jupyter_folders_in(root, monkeypatch)
    (runtime / "jpserver-4242.json").write_text(json.dumps({"token": TOKEN, "url": "http://127.0.0.1:8888/"}))
    (runtime / "kernel-abc.json").write_text(json.dumps({"key": TOKEN, "transport": "tcp"}))
    (root / ".jupyter" / "jupyter_server_config.py").write_text(f"c.IdentityProvider.token = '{TOKEN}'\n")
    (root / ".ipython" / "profile_default" / "startup").mkdir(parents=True)
    return root


def test_hidden_paths_are_refused_by_name_and_left_out_of_listings(make_ws, home):
    ws = make_ws(allow_hidden=False, hide_globs=["__pycache__", "*.pyc"])
    for tool, args, verb, shown in [
        ("read", {"file_path": ".env"}, "read", ".env"),
        ("read", {"file_path": ".config/app.ini"}, "read", ".config/app.ini"),
        ("write", {"file_path": ".env", "content": "x"}, "write", ".env"),
        ("write", {"file_path": ".newdir/f.txt", "content": "x"}, "write", ".newdir/f.txt"),
        ("edit", {"file_path": ".env", "old_string": "1", "new_string": "2"}, "edit", ".env"),
        ("list", {"path": ".config"}, "list", ".config"),
        ("grep", {"pattern": "x", "path": ".config"}, "grep", ".config"),
        ("glob", {"pattern": "*", "path": ".config"}, "glob", ".config"),
    ]:
        assert_error(ws.run(tool, **args), "FS_HIDDEN", f'cannot {verb} "{shown}": {HIDDEN}')
    assert not (home / ".newdir").exists()  # refused before anything was created
    assert (home / ".env").read_text() == "SECRET=1\n"
    r = ws.run("list")
    # .env .config .local .jupyter .ipython (hidden) and __pycache__ (a hide glob) are counted, not listed
    assert r.text == (
        "<path>.</path>\n<type>directory</type>\n<content>\nsrc/\nnotes.txt\n\n"
        "(2 entries: 1 directory, 1 file; 6 hidden entries not shown)\n</content>"
    )
    assert r.value["hiddenEntries"] == 6
    assert ws.run("glob", pattern="*").text == "notes.txt\nsrc/app.py"  # oldest first
    assert (
        ws.run("grep", pattern="SECRET|x=1|token").text == "Found 1 match\n\nsrc/app.py\nLine 1: token = 'not a secret'"
    )
    assert json.loads(ws.run("list_dir", path=".", recursive=True).text) == {
        "entries": ["notes.txt", "src", "src/app.py"],
        "totalEntries": 3,
        "hiddenEntries": 6,
    }


def test_a_symlink_does_not_make_a_hidden_place_visible(make_ws, home):
    os.symlink(".config", home / "visible")
    os.symlink(".env", home / "env-link")
    ws = make_ws(allow_hidden=False)
    assert_error(ws.run("read", file_path="visible/app.ini"), "FS_HIDDEN", f'cannot read "visible/app.ini": {HIDDEN}')
    assert_error(ws.run("read", file_path="env-link"), "FS_HIDDEN", f'cannot read "env-link": {HIDDEN}')
    assert_error(ws.run("list", path="visible"), "FS_HIDDEN", f'cannot list "visible": {HIDDEN}')


def test_with_hidden_files_allowed_they_are_shown_but_jupyters_folders_never(make_ws, home):
    ws = make_ws(allow_hidden=True)
    assert not ws.run("read", file_path=".env").is_error
    # .jupyter and .ipython are protected (left out, counted); .local is shown, its jupyter folder is not
    assert "(6 entries: 4 directories, 2 files; 2 hidden entries not shown)" in ws.run("list").text
    runtime = ".local/share/jupyter/runtime"
    for tool, args, verb, shown in [
        ("read", {"file_path": f"{runtime}/jpserver-4242.json"}, "read", f"{runtime}/jpserver-4242.json"),
        ("list", {"path": runtime}, "list", runtime),
        ("read", {"file_path": ".jupyter/jupyter_server_config.py"}, "read", ".jupyter/jupyter_server_config.py"),
        (
            "write",
            {"file_path": ".ipython/profile_default/startup/00-evil.py", "content": "import os\n"},
            "write",
            ".ipython/profile_default/startup/00-evil.py",
        ),
        ("grep", {"pattern": "token", "path": ".jupyter"}, "grep", ".jupyter"),
    ]:
        assert_error(ws.run(tool, **args), "FS_PROTECTED", f'cannot {verb} "{shown}": {PROTECTED}')
    assert not (home / ".ipython" / "profile_default" / "startup" / "00-evil.py").exists()
    # a broad search finds none of the live tokens or kernel keys
    for pattern in (TOKEN, "token", "key"):
        r = ws.run("grep", pattern=pattern)
        assert TOKEN not in r.text and "jpserver" not in r.text and "kernel-abc" not in r.text, r.text
    assert not any("runtime" in p or p.startswith(".jupyter") for p in ws.run("glob", pattern="*").value["paths"])
    # and a symlink into a protected folder does not lead there
    os.symlink(".local/share/jupyter/runtime", home / "rt")
    assert_error(
        ws.run("read", file_path="rt/jpserver-4242.json"),
        "FS_PROTECTED",
        f'cannot read "rt/jpserver-4242.json": {PROTECTED}',
    )


def test_the_state_folder_and_spill_root_inside_the_root_are_protected(make_ws, root, expect_error):
    (root / "work.txt").write_text("hit\nhit\n")
    ws = make_ws(state_path=root / "state" / "s.sqlite", spill_root=str(root / "spills"), grep_max_matches=1)
    r = ws.run("grep", pattern="hit")
    loc = r.value["spill"]
    assert loc and loc.startswith("spills/session-")  # shown relative: no absolute path of the root
    assert ws.run("list").text.endswith("(1 entry: 0 directories, 1 file; 2 hidden entries not shown)\n</content>")
    expect_error(
        ws.run("read", file_path="state/s.sqlite"), "FS_PROTECTED", f'cannot read "state/s.sqlite": {PROTECTED}'
    )
    assert not ws.run("read", file_path=loc).is_error  # a saved result, through its own session
    assert ws.run("glob", pattern="*").text == "work.txt"


def _stdio_call(root, state, env: dict, tool: str, args: dict) -> dict:
    """One tools/call through the stdio MCP server started with ``env`` (the surface a local agent uses)."""
    import subprocess
    import sys

    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": args}},
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "dsh_jupyter.mcp", "--root", str(root), "--state-path", str(state)],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2], proc.stderr
    return replies[1]["result"]


def test_jupyters_folders_come_from_jupyter_core_on_every_surface(tmp_path, monkeypatch):
    """With JUPYTER_PLATFORM_DIRS=1 the config folder is ~/.config/jupyter, and an environment's
    etc/jupyter is on the config path: neither may be read or written, by the Python API or the
    stdio server, though hidden files are shown there."""
    home = tmp_path / "home"
    config = home / ".config" / "jupyter"
    (config / "jupyter_server_config.d").mkdir(parents=True)
    (config / "jupyter_server_config.json").write_text('{"IdentityProvider": {"token": "' + TOKEN + '"}}')
    venv_etc = home / "proj" / ".venv" / "etc" / "jupyter"
    venv_etc.mkdir(parents=True)
    (home / "proj" / "notes.txt").write_text("hello\n")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("JUPYTER_", "XDG_", "DSH_")) and k not in ("IPYTHONDIR",)
    }
    env.update(HOME=str(home), JUPYTER_PLATFORM_DIRS="1", JUPYTER_CONFIG_PATH=str(venv_etc))
    for key in [k for k in os.environ if k.startswith(("JUPYTER_", "XDG_", "DSH_")) or k == "IPYTHONDIR"]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    from dsh_jupyter import Workspace

    ws = Workspace(home, state_path=tmp_path / "state" / "s.sqlite")  # hidden files shown, as stdio
    attempts = [
        ("write", {"file_path": ".config/jupyter/jupyter_server_config.d/evil.json", "content": "{}"}),
        ("read", {"file_path": ".config/jupyter/jupyter_server_config.json"}),
        ("write", {"file_path": "proj/.venv/etc/jupyter/jupyter_server_config.py", "content": "c = 1\n"}),
        ("list", {"path": ".config/jupyter"}),
    ]
    for tool, args in attempts:
        assert ws.run(tool, **args).value["code"] == "FS_PROTECTED", (tool, args)
        result = _stdio_call(home, tmp_path / "state" / "stdio.sqlite", env, tool, args)
        assert result["isError"] and result["_meta"]["dsh-jupyter/error"]["code"] == "FS_PROTECTED", (tool, result)
    assert ws.run("grep", pattern=TOKEN).text == "No matches found"
    assert not (config / "jupyter_server_config.d" / "evil.json").exists()
    assert not (venv_etc / "jupyter_server_config.py").exists()
    assert ws.run("read", file_path="proj/notes.txt").text.startswith("<path>proj/notes.txt</path>")


def test_a_hard_link_to_a_protected_file_is_protected_wherever_it_is(make_ws, root, tmp_path, monkeypatch):
    """A token file in the runtime folder, linked into the workspace under another name: not read,
    searched, edited or replaced through that name."""
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    token_file = runtime / "jpserver-77.json"
    token_file.write_text(json.dumps({"token": TOKEN}) + "\n")
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    (root / "sub").mkdir()
    os.link(token_file, root / "sub" / "innocent.json")
    (root / "plain.json").write_text('{"token": "not it"}\n')
    ws = make_ws()
    message = f'cannot read "sub/innocent.json": {PROTECTED}'
    assert_error(ws.run("read", file_path="sub/innocent.json"), "FS_PROTECTED", message)
    assert ws.run("grep", pattern="token").text == 'Found 1 match\n\nplain.json\nLine 1: {"token": "not it"}'
    assert ws.run("grep", pattern=TOKEN).text == "No matches found"
    assert_error(ws.run("grep", pattern="token", path="sub/innocent.json"), "FS_PROTECTED")
    assert (
        ws.run("edit", file_path="sub/innocent.json", old_string="token", new_string="x").value["code"]
        == "FS_PROTECTED"
    )
    assert ws.run("write", file_path="sub/innocent.json", content="{}").value["code"] == "FS_PROTECTED"
    assert token_file.read_text() == json.dumps({"token": TOKEN}) + "\n"
    # the same file with one name only is an ordinary file again
    (root / "sub" / "innocent.json").unlink()
    (root / "sub" / "innocent.json").write_text("mine\n")
    assert not ws.run("read", file_path="sub/innocent.json").is_error


def test_linked_workspace_files_beside_the_state_file_are_ordinary(tmp_path, monkeypatch):
    """``--root ~/proj --state-path ~/dsh.sqlite``: the state file's folder holds the workspace, so
    its files are not protected for lying there; files with two names at the top of the workspace
    are read and searched like any other."""
    home = tmp_path / "home"
    proj = home / "proj"
    proj.mkdir(parents=True)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    (proj / "data.csv").write_text("a,b\n1,2\n")
    os.link(proj / "data.csv", proj / "data-copy.csv")
    from dsh_jupyter import Workspace

    ws = Workspace(proj, state_path=home / "dsh.sqlite")
    try:
        ws.run("list")  # the state file exists now
        assert ws.run("read", file_path="data-copy.csv").text.endswith("(End of file - total 2 lines)\n</content>")
        assert ws.run("grep", pattern="1,2").text == (
            "Found 2 matches\n\ndata-copy.csv\nLine 2: 1,2\n\ndata.csv\nLine 2: 1,2"
        )
        # the state file itself is still protected under any name
        os.link(home / "dsh.sqlite", proj / "innocent.db")
        assert_error(ws.run("read", file_path="innocent.db"), "FS_PROTECTED", f'cannot read "innocent.db": {PROTECTED}')
        assert_error(ws.run("write", file_path="innocent.db", content="x"), "FS_PROTECTED")
    finally:
        ws.close()


def test_a_state_file_inside_the_workspace_is_protected_by_name_and_identity(root, tmp_path, monkeypatch):
    """The state file (and its journals) put at the top of the workspace: the folder holds the root,
    so it is not protected as a folder, but the files are, by name and under any other name."""
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    from dsh_jupyter import Workspace

    (root / "notes.txt").write_text("state of things\n")
    ws = Workspace(root, state_path=root / "dsh.sqlite", state_journal="wal")
    try:
        ws.run("read", file_path="notes.txt")  # the state file and its write-ahead log exist now
        assert (root / "dsh.sqlite").exists()
        listing = ws.run("list").text
        assert "dsh.sqlite" not in listing and "notes.txt" in listing
        assert ws.run("glob", pattern="*").value["paths"] == ["notes.txt"]
        assert ws.run("grep", pattern="state").value["files"] == 1
        for name in ("dsh.sqlite", "dsh.sqlite-wal"):
            assert_error(ws.run("read", file_path=name), "FS_PROTECTED", f'cannot read "{name}": {PROTECTED}')
        os.link(root / "dsh.sqlite", root / "copy.bin")
        assert_error(ws.run("read", file_path="copy.bin"), "FS_PROTECTED", f'cannot read "copy.bin": {PROTECTED}')
        assert ws.run("move", source="dsh.sqlite", destination="x.sqlite").value["code"] == "FS_PROTECTED"
        assert (root / "dsh.sqlite").exists()
    finally:
        ws.close()


def test_a_hard_link_to_a_saved_result_is_protected(make_ws, root, tmp_path):
    """A spill file (the complete result of a search, made under another session's rules) linked
    into the workspace: not readable there."""
    for i in range(150):
        (root / f"f{i:03}.txt").write_text("x\n")
    ws = make_ws(spill_root=str(tmp_path / "spills"))
    r = ws.run("glob", pattern="*.txt")
    spill = r.value["spill"]
    assert spill
    spill_file = next((tmp_path / "spills").rglob("*-glob-results.txt"))
    os.link(spill_file, root / "results.txt")
    assert_error(ws.run("read", file_path="results.txt"), "FS_PROTECTED", f'cannot read "results.txt": {PROTECTED}')
