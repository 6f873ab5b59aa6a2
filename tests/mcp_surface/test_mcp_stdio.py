"""The stdio server (``python -m dsh_jupyter.mcp``) driven by the SDK's own ``stdio_client``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from dsh_jupyter import Workspace
from dsh_jupyter.core.workspace import default_state_path

from .conftest import TREE, descendants, rg_processes, text_of, value_of

PROG = [sys.executable, "-m", "dsh_jupyter.mcp"]


@pytest.fixture
def mroot(root, tree):
    tree(root, {**TREE, "many": {f"f{i:02}.txt": f"hello {i}\n" for i in range(12)}})
    return root


@asynccontextmanager
async def stdio(args: list[str], errlog_path: Path, env: dict | None = None):
    params = StdioServerParameters(command=PROG[0], args=[*PROG[1:], *args], env=env)
    with open(errlog_path, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            yield client


def test_tools_and_texts_equal_the_python_api(mroot, state_file, tmp_path):
    """Same tools as the registry; each call's text is what the Python API returns for the same args."""
    args = ["--root", str(mroot), "--state-path", str(state_file), "--glob_max_results=5", "--grep-max-matches=5"]
    ws = Workspace(mroot, session="py", state_path=state_file, glob_max_results=5, grep_max_matches=5)
    steps = [
        ("list", {}),
        ("list", {"path": "many", "offset": 3}),
        ("list", {"offset": 0}),
        ("glob", {"pattern": "*.py"}),
        ("glob", {"pattern": "!*.py"}),
        ("grep", {"pattern": "hello", "path": "src"}),
        ("grep", {"pattern": "("}),
        ("read", {"file_path": "notes.txt", "offset": 2}),
        ("read", {"file_path": "gone.txt"}),
        ("read", {"file_path": 7}),
        ("read", {}),
        ("read", {"file_path": "notes.txt", "bogus": 1}),
        ("list_dir", {"path": "src", "recursive": True}),
        ("list_dir", {"path": "nope"}),
        ("nope", {}),
    ]

    async def main():
        async with stdio(args, tmp_path / "err.log") as client:
            init = client.initialize_result
            assert init.server_info.name == "dsh-jupyter"
            listed = (await client.list_tools()).tools
            assert [(t.name, t.description, t.input_schema) for t in listed] == [
                (d["name"], d["description"], d["inputSchema"]) for d in ws.tools()
            ]
            got = []
            for tool, call_args in steps:
                got.append(await client.call_tool(tool, call_args))
            return got

    results = anyio.run(main)
    for (tool, call_args), result in zip(steps, results):
        expected = ws.call(tool, call_args)
        assert (text_of(result), result.is_error) == (expected.text, expected.is_error), (tool, call_args)
        assert value_of(result) == expected.value
    assert text_of(results[2]) == "Error: offset must be at least 1"
    assert text_of(results[9]) == "Error: file_path must be a string"
    assert text_of(results[10]) == "Error: file_path is required"
    assert all(not text_of(r).startswith("Input validation error") for r in results)
    log = Workspace(mroot, state_path=state_file).calls("default", limit=100)["calls"]
    assert [(c["tool"], c["surface"]) for c in log] == [(t, "mcp") for t, _ in steps]


def test_writes_share_the_gate_and_spills_with_a_notebook_on_the_same_state(mroot, state_file, tmp_path):
    person = Workspace(mroot, state_path=state_file)  # a notebook's %dsh: session "default"
    person.run("read", file_path="notes.txt")
    args = ["--root", str(mroot), "--state-path", str(state_file), "--glob_max_results=5"]

    async def main():
        async with stdio(args, tmp_path / "err.log") as client:
            out = {}
            out["edit"] = await client.call_tool(
                "edit", {"file_path": "notes.txt", "old_string": "first", "new_string": "1st"}
            )
            out["unread"] = await client.call_tool("write", {"file_path": "src/app.py", "content": "x"})
            out["create"] = await client.call_tool("write", {"file_path": "made/by/agent.txt", "content": "a\n"})
            out["glob"] = await client.call_tool("glob", {"pattern": "*.txt"})
            out["spill"] = await client.call_tool(
                "read", {"file_path": out["glob"].structured_content["spill"], "limit": 2}
            )
            return out

    out = anyio.run(main)
    assert text_of(out["edit"]).split("\n")[0] == "The file notes.txt has been updated successfully."
    assert text_of(out["unread"]) == 'Error: cannot write "src/app.py": read it first in this session'
    assert text_of(out["create"]) == (
        "<path>made/by/agent.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>"
    )
    spill_text = text_of(out["spill"])
    assert spill_text.startswith(f"<path>{out['glob'].structured_content['spill']}</path>\n")
    assert "\n1: " in spill_text and "\n2: " in spill_text
    # and the other way round: the agent's own edit counts as observed for the person
    assert (mroot / "notes.txt").read_text() == "1st line\nsecond line\n"
    assert person.run("edit", file_path="notes.txt", old_string="1st", new_string="first").is_error is False
    assert person.spill_list()[0]["locator"] == out["glob"].structured_content["spill"]


def test_default_state_file_is_the_cores_default(mroot, tmp_path, monkeypatch):
    """No --state-path: the file the core would use in that environment (a notebook on the same root)."""
    env = {"HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("DSH_STATE_PATH", raising=False)
    expected = Path(default_state_path())
    assert str(expected).startswith(str(tmp_path))

    async def main():
        async with stdio(["--root", str(mroot)], tmp_path / "err.log", env=env) as client:
            await client.call_tool("read", {"file_path": "notes.txt"})

    anyio.run(main)
    assert expected.exists()
    log = Workspace(mroot, state_path=expected).calls("default")["calls"]
    assert [(c["tool"], c["surface"]) for c in log] == [("read", "mcp")]
    assert f"state {expected};" in (tmp_path / "err.log").read_text()


def test_session_option(mroot, state_file, tmp_path):
    async def main():
        args = ["--root", str(mroot), "--state-path", str(state_file), "--session", "agent-7"]
        async with stdio(args, tmp_path / "err.log") as client:
            await client.call_tool("list", {})

    anyio.run(main)
    ws = Workspace(mroot, state_path=state_file)
    assert [c["tool"] for c in ws.calls("agent-7")["calls"]] == ["list"]
    assert ws.session_info("default") is None


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--glob_max_results=0"], "setting glob_max_results must be at least 1, got 0"),
        (["--glob-max-results=many"], "setting glob_max_results must be an integer, got 'many'"),
        (["--glob_sample_over_cap=maybe"], "setting glob_sample_over_cap must be true or false, got 'maybe'"),
        (["--globmax=3"], "unknown setting 'globmax'; known settings: list_max_entries, glob_max_results"),
        (["--root=/no/such/dir"], "root '/no/such/dir' is not a directory"),
        (["--session", "x" * 201], "--session: session must be a non-empty string of at most 200 characters"),
        (["--session", "a\nb"], "--session: session must not contain control characters"),
    ],
    ids=["range", "type", "bool", "unknown", "root", "session-long", "session-control"],
)
def test_invalid_settings_exit_with_a_clear_message(mroot, state_file, argv, message):
    proc = subprocess.run(
        [*PROG, "--root", str(mroot), "--state-path", str(state_file), *argv],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert f"dsh-jupyter-mcp: error: {message}" in proc.stderr


def test_stdout_is_only_json_rpc_and_it_exits_when_stdin_closes(mroot, state_file):
    proc = subprocess.Popen(
        [*PROG, "--root", str(mroot), "--state-path", str(state_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
        proc.stdin.write((json.dumps(init) + "\n").encode())
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        assert reply["id"] == 1 and reply["result"]["protocolVersion"] == "2025-06-18"
        proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        proc.stdin.write(
            b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", '
            b'"params": {"name": "list", "arguments": {"path": "src"}}}\n'
        )
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        assert reply["result"]["content"][0]["text"].startswith("<path>src</path>")
        proc.stdin.close()
        assert proc.wait(timeout=15) == 0
        assert proc.stdout.read() == b""  # nothing but the two replies ever reached stdout
        assert b"dsh-jupyter-mcp: INFO root " in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_console_script_is_installed():
    script = Path(sys.executable).with_name("dsh-jupyter-mcp")
    assert script.exists(), "pip install -e . installs the dsh-jupyter-mcp console script"
    proc = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout.startswith("usage: dsh-jupyter-mcp --root DIR [--session NAME] [--state-path P]")


@pytest.mark.slow
def test_a_cancelled_call_kills_rg(mroot, state_file, tmp_path):
    """The client gives up on a slow grep (notifications/cancelled): rg dies, the server keeps serving."""
    slow = mroot / "slow.txt"
    with open(slow, "wb") as f:
        f.write(b"text, so grep does not skip it as binary\n" * 400)
        f.truncate(50 * 2**30)  # then sparse: reading it is slow, it takes no disk

    async def main():
        async with stdio(["--root", str(mroot), "--state-path", str(state_file)], tmp_path / "err.log") as client:
            server_pid = _child_pid()
            with anyio.move_on_after(20):
                async with anyio.create_task_group() as tg:
                    scope = anyio.CancelScope()

                    async def slow_call():
                        with scope:
                            await client.call_tool("grep", {"pattern": "needle", "path": "slow.txt"})

                    tg.start_soon(slow_call)
                    assert await _eventually(lambda: rg_processes(server_pid)), "rg never started"
                    scope.cancel()
            assert await _eventually(lambda: not rg_processes(server_pid)), rg_processes(server_pid)
            after = await client.call_tool("list", {"path": "src"})
            assert after.is_error is False

    try:
        anyio.run(main)
    finally:
        slow.unlink()
    calls = Workspace(mroot, state_path=state_file).calls("default")["calls"]
    assert next((c["tool"], c["text"]) for c in calls) == ("grep", "Error: grep was cancelled before it finished")


def _child_pid() -> int:
    """The stdio server: this process's child running dsh_jupyter.mcp."""
    for pid, _ in descendants(os.getpid()):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"dsh_jupyter.mcp" in cmdline:
            return pid
    raise AssertionError("no stdio server child found")


async def _eventually(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await anyio.sleep(0.1)
    return bool(predicate())


def test_a_root_made_again_is_served_as_the_new_folder(root, state_file, tmp_path):
    """``rm -rf`` and ``mkdir`` of the root under a running stdio server: the next calls answer about
    the new folder, without a restart; while it is gone they say so."""
    import shutil

    (root / "a.txt").write_text("a\n")
    args = ["--root", str(root), "--state-path", str(state_file)]

    async def main():
        async with stdio(args, tmp_path / "err.log") as client:
            before = text_of(await client.call_tool("list", {}))
            shutil.rmtree(root)
            gone = await client.call_tool("read", {"file_path": "a.txt"})
            root.mkdir()
            (root / "b.txt").write_text("b\n")
            after = [
                text_of(await client.call_tool(t, a))
                for t, a in [("list", {}), ("read", {"file_path": "b.txt"}), ("glob", {"pattern": "*"})]
            ]
            return before, gone, after

    before, gone, after = anyio.run(main)
    assert before.endswith("a.txt\n\n(1 entry: 0 directories, 1 file)\n</content>")
    assert gone.is_error and value_of(gone)["code"] == "FS_ROOT_UNAVAILABLE"
    assert after[0].endswith("<content>\nb.txt\n\n(1 entry: 0 directories, 1 file)\n</content>")
    assert after[1].startswith("<path>b.txt</path>")
    assert after[2] == "b.txt"
    assert "serving the new folder" in (tmp_path / "err.log").read_text()
