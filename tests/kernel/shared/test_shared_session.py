"""One session across processes: a kernel STARTED BY a real server, and that server's REST API.

The kernel is started through the server's own kernel manager, so it inherits ``DSH_STATE_PATH``
and ``DSH_ROOT`` from the server process exactly as a notebook's kernel would; nothing is passed
to it by hand. A read on one surface then allows an edit on the other in the ``default`` session
(the magic's default and a REST call's default), and the call log holds both.
"""

from __future__ import annotations

import contextlib
import json

from dsh_jupyter import Workspace


@contextlib.asynccontextmanager
async def server_kernel(serverapp):
    km = serverapp.kernel_manager
    kid = await km.start_kernel()
    client = km.get_kernel(kid).client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=90)
        yield client
    finally:
        client.stop_channels()
        await km.shutdown_kernel(kid, now=True)


async def run(client, code: str) -> dict:
    """Execute ``code``; collect stdout, stderr, rich outputs and the reply status."""
    got = {"stdout": "", "stderr": "", "data": [], "error": None}

    def hook(msg):
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            got[content["name"]] += content["text"]
        elif kind in ("execute_result", "display_data"):
            got["data"].append(content["data"])
        elif kind == "error":
            got["error"] = (content["ename"], content["evalue"], content["traceback"])

    reply = await client.execute_interactive(code, output_hook=hook, timeout=90)
    got["status"] = reply["content"]["status"]
    return got


async def rest_tool(jp_fetch, name: str, args: dict, session: str | None = None) -> dict:
    body = {"args": args} if session is None else {"session": session, "args": args}
    response = await jp_fetch("dsh", "api", "tools", name, method="POST", body=json.dumps(body))
    assert response.code == 200
    return json.loads(response.body)


async def test_kernel_read_then_rest_edit(jp_serverapp, jp_fetch, jp_root_dir, state_path):
    python = Workspace(jp_root_dir, session="comparison", state_path=state_path)
    async with server_kernel(jp_serverapp) as kernel:
        assert (await run(kernel, "%load_ext dsh_jupyter"))["status"] == "ok"
        got = await run(kernel, "import os; print(os.environ['DSH_STATE_PATH']); print(os.environ['DSH_ROOT'])")
        assert got["stdout"].splitlines() == [str(state_path), str(jp_root_dir)]

        got = await run(kernel, "%dsh read notes.txt --text")
        assert got["status"] == "ok" and got["stderr"] == ""
        assert got["stdout"] == python.run("read", file_path="notes.txt").text + "\n"

        # an agent over REST edits in the same (default) session: the kernel's read allows it
        data = await rest_tool(
            jp_fetch, "edit", {"file_path": "notes.txt", "old_string": "second", "new_string": "2nd"}
        )
        assert data["session"] == "default" and not data["isError"], data["text"]
        assert (jp_root_dir / "notes.txt").read_text() == "first line\n2nd line\n"
        # another session has not read it: refused
        data = await rest_tool(
            jp_fetch,
            "edit",
            {"file_path": "notes.txt", "old_string": "first", "new_string": "1st"},
            session="elsewhere",
        )
        assert data["isError"] and data["value"]["code"] == "FS_NOT_OBSERVED"

        # in the kernel the returned object is offered as a widget, with the text and a table
        got = await run(kernel, "%dsh list")
        bundle = got["data"][-1]
        assert {"application/vnd.jupyter.widget-view+json", "text/plain", "text/html"} <= set(bundle)
        assert bundle["text/plain"] == python.run("list").text
        # a usage mistake is one line, no traceback
        got = await run(kernel, "%dsh grep")
        assert got["status"] == "error" and got["stderr"].startswith("UsageError: ")
        assert "Traceback" not in got["stdout"] + got["stderr"]

    calls = python.calls("default")["calls"]
    assert [(c["tool"], c["surface"]) for c in calls] == [("read", "magic"), ("edit", "rest"), ("list", "magic")]


async def test_rest_read_then_kernel_edit(jp_serverapp, jp_fetch, jp_root_dir, state_path):
    data = await rest_tool(jp_fetch, "read", {"file_path": "other.txt"})
    assert data["session"] == "default" and data["text"].startswith("<path>other.txt</path>")
    async with server_kernel(jp_serverapp) as kernel:
        await run(kernel, "%load_ext dsh_jupyter")
        got = await run(kernel, "%%dsh edit other.txt --text\nbeta\n=======\nBETA\n")
        assert got["status"] == "ok", got
        assert got["stdout"].startswith("The file other.txt has been updated successfully.\n--- other.txt\n")
        assert (jp_root_dir / "other.txt").read_text() == "alpha\nBETA\n"
        # the kernel's edit recorded the new version: the agent may edit again without a read
        data = await rest_tool(
            jp_fetch, "edit", {"file_path": "other.txt", "old_string": "alpha", "new_string": "ALPHA"}
        )
        assert not data["isError"], data["text"]
        # a session switched to in the kernel is a session the server sees
        await run(kernel, "%dsh session agent-7")
        await run(kernel, "%dsh list src")
    response = await jp_fetch("dsh", "api", "sessions", "agent-7", "calls", method="GET")
    calls = json.loads(response.body)["calls"]
    assert [(c["tool"], c["surface"]) for c in calls] == [("list", "magic")]
    surfaces = [c["surface"] for c in Workspace(jp_root_dir, state_path=state_path).calls("default")["calls"]]
    assert surfaces == ["rest", "magic", "rest"]
