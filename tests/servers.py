"""Real Jupyter processes for the notebook, Binder and browser tests.

``JupyterProcess.start(...)`` runs ``jupyter server`` or ``jupyter lab`` as a subprocess of any
Python (this venv's, or the fresh Binder venv's) on 127.0.0.1 with a token, a root folder and the
dsh state and spills under a temporary folder, and with Jupyter's per-user folders moved there too,
so a test never reads or writes the user's own.

``execute_in_server_kernel(server, nb)`` runs a notebook top to bottom in a kernel that the server
started (``POST /api/sessions``, as JupyterLab does when it opens a notebook). It talks to that
kernel through the connection file the server wrote in its runtime dir. The kernel therefore
inherits ``DSH_ROOT``/``DSH_STATE_PATH`` from the server exactly as a notebook's kernel does. nbclient
cannot drive a kernel it did not start, so the cells are sent here one by one with
``jupyter_client``, and the outputs are stored in the notebook as nbclient would store them.

``execute_with_nbclient(nb, cwd)`` is the plain headless run (nbclient, a kernel of this Python).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat

# The small workspace the server and MCP tests serve (build_tree's format).
TREE = {
    "src": {
        "app.py": "def main():\n    return 'hello world'\n",
        "util/helpers.py": "def helper():\n    return 'hello helper'\n",
    },
    "docs/guide with space.md": "# Guide\nhello again\n",
    "données/été.txt": "café hello\n",
    "notes.txt": "first line\nsecond line\n",
    "empty": {},
}


DSH_ENV = ("DSH_STATE_PATH", "DSH_ROOT", "DSH_SPILL_ROOT", "DSH_SERVER_URL", "DSH_SERVER_TOKEN")


class NotebookFailed(AssertionError):
    """A cell raised: the message names the cell and carries its traceback."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def isolated_env(tmp: Path, base: dict | None = None) -> dict:
    """``base`` (default: this process's environment) minus DSH_*, with Jupyter's folders under ``tmp``."""
    env = {k: v for k, v in (base if base is not None else os.environ).items() if k not in DSH_ENV}
    for name in ("config", "data", "runtime"):
        folder = tmp / f"jupyter-{name}"
        folder.mkdir(parents=True, exist_ok=True)
        env[f"JUPYTER_{name.upper()}_DIR"] = str(folder)
    env["IPYTHONDIR"] = str(tmp / "ipython")
    env["JUPYTERLAB_SETTINGS_DIR"] = str(tmp / "lab-settings")
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(tmp / "lab-workspaces")
    env["JUPYTER_PLATFORM_DIRS"] = "1"  # no deprecation warning noise in the logs
    return env


# jupyter_server_ydoc 3.0 (jupyter-collaboration) logs this when a server stops before its websocket
# server's first clean-up ran: its own task, not ours, and harmless. Tests that want a clean stop
# look at the log without it.
_YDOC_STOP_NOISE = re.compile(
    r"Task exception was never retrieved\nfuture: <Task finished name='[^']*' "
    r"coro=<JupyterWebsocketServer\.clean\(\).*?RuntimeError: WebsocketServer not running\n",
    re.S,
)


class JupyterProcess:
    def __init__(self, proc: subprocess.Popen, url: str, token: str, root: Path, tmp: Path, env: dict) -> None:
        self.proc, self.url, self.token, self.root, self.tmp, self.env = proc, url, token, root, tmp, env
        self.log = tmp / "jupyter.log"
        self.runtime_dir = Path(env["JUPYTER_RUNTIME_DIR"])
        self.state_path = tmp / "dsh-state.sqlite"

    @classmethod
    def start(cls, tmp: Path, root: Path, *, app: str = "server", python: str = sys.executable,
              token: str = "dsh-test-token", extra_args: list[str] = (), env: dict | None = None,
              timeout: float = 120) -> "JupyterProcess":
        tmp.mkdir(parents=True, exist_ok=True)
        env = isolated_env(tmp, env)
        port = free_port()
        argv = [
            python, "-m", "jupyter", app, "--no-browser", "--allow-root",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
            f"--DshJupyter.state_path={tmp / 'dsh-state.sqlite'}", f"--DshJupyter.spill_root={tmp / 'dsh-spills'}",
            *extra_args,
        ]
        log = open(tmp / "jupyter.log", "wb")
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp,
                                start_new_session=True)
        log.close()
        server = cls(proc, f"http://127.0.0.1:{port}/", token, Path(root), tmp, env)
        server.wait_until_up(timeout)
        return server

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def log_of_our_own(self) -> str:
        """The log without jupyter_server_ydoc's known stop-time noise (see ``_YDOC_STOP_NOISE``)."""
        return _YDOC_STOP_NOISE.sub("", self.log.read_text(errors="replace"))

    def wait_until_up(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter exited early ({self.proc.returncode}):\n{self.log_tail()}")
            try:
                status, _ = self.request("GET", "api/status")
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"jupyter did not answer within {timeout} s:\n{self.log_tail()}")

    def request(self, method: str, path: str, body=None, timeout: float = 30) -> tuple[int, object]:
        headers = {"Authorization": f"token {self.token}", "Content-Type": "application/json"}
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                raw = resp.read()
                return resp.status, (json.loads(raw) if raw else None)
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                return exc.code, json.loads(raw) if raw else None
            except ValueError:
                return exc.code, raw.decode("utf-8", "replace")

    def tool(self, name: str, session: str = "default", **args) -> dict:
        status, data = self.request("POST", f"dsh/api/tools/{name}", {"session": session, "args": args})
        assert status == 200, (status, data)
        return data

    def stop(self) -> None:
        """Stop the server and its kernels: SIGTERM to its process group, then SIGKILL."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 15)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait(timeout=10)


# -- running notebooks -------------------------------------------------------------------------


def _output_hook(cell):
    def hook(msg) -> None:
        kind = msg["msg_type"]
        if kind in ("stream", "display_data", "execute_result", "error"):
            cell.outputs.append(nbformat.v4.output_from_msg(msg))
        elif kind == "clear_output":
            cell.outputs.clear()

    return hook


def _fail(nb_name: str, index: int, cell, error: dict | None) -> NotebookFailed:
    trace = "\n".join(error.get("traceback", [])) if error else "(no traceback)"
    trace = re.sub(r"\x1b\[[0-9;]*m", "", trace)
    return NotebookFailed(f"{nb_name}: cell {index} failed:\n{cell.source}\n---\n{trace}")


def execute_in_server_kernel(server: JupyterProcess, nb_path: Path, timeout: float = 180,
                             kernel_name: str = "python3") -> nbformat.NotebookNode:
    """Run ``nb_path`` in a kernel started by ``server``; returns the notebook with its outputs."""
    from jupyter_client import BlockingKernelClient

    nb = nbformat.read(nb_path, as_version=4)
    status, session = server.request("POST", "api/sessions", {
        "path": nb_path.name, "name": nb_path.name, "type": "notebook", "kernel": {"name": kernel_name},
    }, timeout=120)
    assert status == 201, (status, session, server.log_tail())
    kernel_id = session["kernel"]["id"]
    connection_file = server.runtime_dir / f"kernel-{kernel_id}.json"
    deadline = time.monotonic() + 30
    while not connection_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    client = BlockingKernelClient(connection_file=str(connection_file))
    client.load_connection_file()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=120)
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            cell.outputs = []
            errors = []

            def hook(msg, cell=cell):
                _output_hook(cell)(msg)
                if msg["msg_type"] == "error":
                    errors.append(msg["content"])

            reply = client.execute_interactive(cell.source, output_hook=hook, timeout=timeout,
                                               store_history=True, allow_stdin=False)
            cell.execution_count = reply["content"].get("execution_count")
            if reply["content"]["status"] != "ok":
                raise _fail(nb_path.name, index, cell, errors[0] if errors else reply["content"])
    finally:
        client.stop_channels()
        server.request("DELETE", f"api/sessions/{session['id']}")
    return nb


def execute_with_nbclient(nb_path: Path, cwd: Path, timeout: float = 180,
                          kernel_name: str = "python3") -> nbformat.NotebookNode:
    """Run ``nb_path`` headless with nbclient in a kernel of this Python, with ``cwd`` as its folder."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(nb_path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name=kernel_name, resources={"metadata": {"path": str(cwd)}})
    try:
        client.execute()
    except CellExecutionError as exc:
        raise NotebookFailed(f"{nb_path.name}: {exc}") from None
    return nb


def stream_text(nb: nbformat.NotebookNode) -> str:
    """Every stream output and text/plain result of ``nb``, in order: what a reader sees printed."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                parts.append(out.get("text", ""))
            elif "data" in out and "text/plain" in out["data"]:
                parts.append(out["data"]["text/plain"])
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    """``python servers.py NOTEBOOK CWD``: run with nbclient in this Python; print what it printed.

    The Binder test runs this with the fresh venv's Python, so the notebook runs in that venv.
    """
    nb_path, cwd = Path(argv[0]), Path(argv[1])
    try:
        nb = execute_with_nbclient(nb_path, cwd)
    except NotebookFailed as exc:
        print(exc, file=sys.stderr)
        return 1
    print(stream_text(nb))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
