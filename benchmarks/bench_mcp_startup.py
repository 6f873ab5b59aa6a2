"""Time to first answer of an MCP server: process start -> ``initialize`` -> first ``tools/call``.

    python benchmarks/bench_mcp_startup.py [--runs 7]

Clients start stdio servers when they launch, and some give up on a slow handshake. Measured,
in turns, from one run:

- ``dsh-jupyter-mcp --root DIR``: spawn, ``initialize``, ``notifications/initialized``, then
  ``tools/call list`` answered (target: at most 0.5 s);
- the reference filesystem MCP server (``@modelcontextprotocol/server-filesystem`` on Node, from
  npm, installed into ``benchmarks/node`` on first use) driven the same way with its
  ``list_directory``;
- the HTTP endpoint: a ``jupyter server`` with the extension started and answering
  ``/api/status``, then ``initialize`` and the first ``tools/call list`` on ``/dsh/mcp``
  (target: at most 0.3 s), and, for the record, the server's own start-up until ready.

The client is a few lines of Python on pipes (or one HTTP connection), the same for both stdio
servers, so the figures hold the servers' own cost.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bigtrees import build_tree  # benchmarks/bigtrees.py

HERE = Path(__file__).resolve().parent
NODE_DIR = HERE / "node"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def reference_server() -> list[str] | None:
    """The reference filesystem server's command (npm install on first use), or None without npm."""
    entry = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    if not entry.exists():
        if shutil.which("npm") is None:
            return None
        subprocess.run(
            ["npm", "install", "--ignore-scripts", "--no-package-lock", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=NODE_DIR,
            check=True,
        )
    return [shutil.which("node") or "node", str(entry)]


def first_answer(argv: list[str], call: dict) -> float:
    """Seconds from spawning ``argv`` to the answer of ``call`` after the handshake."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        proc.stdin.write((json.dumps(INIT) + "\n").encode())
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        proc.stdin.write((json.dumps(INITIALIZED) + "\n" + json.dumps(call) + "\n").encode())
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        elapsed = time.perf_counter() - t0
        assert reply["id"] == 2 and not reply["result"].get("isError"), reply
        return elapsed
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_first_answer(root: Path, tmp: Path) -> tuple[float, float]:
    """(server start until ready, then initialize + first tools/call) in seconds, for one server."""
    port, token = free_port(), "bench-token"
    env = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
        "JUPYTER_CONFIG_DIR": str(tmp / "config"),
        "JUPYTER_DATA_DIR": str(tmp / "data"),
        "JUPYTER_PLATFORM_DIRS": "1",
    }
    argv = [
        sys.executable,
        "-m",
        "jupyter",
        "server",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--DshJupyter.state_path={tmp / 'state.sqlite'}",
    ]
    base = f"http://127.0.0.1:{port}/"
    headers = {
        "Authorization": f"token {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        while True:
            try:
                with urllib.request.urlopen(urllib.request.Request(base + "api/status", headers=headers), timeout=5):
                    break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError("jupyter server exited") from None
                time.sleep(0.02)
        ready = time.perf_counter() - t0
        t1 = time.perf_counter()

        def post(message: dict, extra: dict) -> tuple[dict, str]:
            req = urllib.request.Request(
                base + "dsh/mcp?session=bench",
                data=json.dumps(message).encode(),
                headers={**headers, **extra},
                method="POST",
            )
            with urllib.request.urlopen(req, timeout=30) as resp:
                body = resp.read().decode()
                sid = resp.headers.get("mcp-session-id", "")
            data = body.split("data: ", 1)[1] if body.startswith(("event:", "data:")) else body
            return (json.loads(data) if data.strip() else {}), sid

        _, sid = post(INIT, {})
        more = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"} if sid else {}
        post(INITIALIZED, more)
        reply, _ = post(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list", "arguments": {}}}, more
        )
        assert reply["result"]["isError"] is False
        return ready, time.perf_counter() - t1
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dsh-bench-mcp-") as tmp_name:
        tmp = Path(tmp_name)
        root = build_tree(tmp / "root", {"src": {}, **{f"file{i:02}.txt": "hello\n" for i in range(20)}})
        dsh = [
            str(Path(sys.executable).with_name("dsh-jupyter-mcp")),
            "--root",
            str(root),
            "--state-path",
            str(tmp / "stdio.sqlite"),
        ]
        dsh_call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list", "arguments": {}}}
        ref = reference_server()
        ref_call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "list_directory", "arguments": {"path": str(root)}},
        }
        first_answer(dsh, dsh_call)  # warm the OS file cache for both, untimed
        if ref is not None:
            first_answer([*ref, str(root)], ref_call)
        ours, theirs = [], []
        for _ in range(args.runs):
            if ref is not None:
                theirs.append(first_answer([*ref, str(root)], ref_call))
            ours.append(first_answer(dsh, dsh_call))
        http_ready, http_first = [], []
        for i in range(max(3, args.runs // 2)):
            ready, first = http_first_answer(root, tmp / f"http{i}")
            http_ready.append(ready)
            http_first.append(first)
    med = statistics.median
    print(f"stdio: process start -> initialize -> first tools/call, median of {args.runs} (in turns)")
    print(f"  dsh-jupyter-mcp (list)                         {med(ours) * 1000:7.0f} ms   target <= 500 ms")
    if theirs:
        print(
            f"  @modelcontextprotocol/server-filesystem         {med(theirs) * 1000:7.0f} ms   "
            f"(list_directory; ratio {med(ours) / med(theirs):.2f}x)"
        )
    else:
        print("  @modelcontextprotocol/server-filesystem         (not measured: no npm here)")
    print(f"http: a jupyter server with the extension, median of {len(http_first)}")
    print(f"  ready (/api/status answers)                    {med(http_ready) * 1000:7.0f} ms")
    print(f"  then initialize -> first tools/call list       {med(http_first) * 1000:7.0f} ms   target <= 300 ms")


if __name__ == "__main__":
    main()
