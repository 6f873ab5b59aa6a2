"""Running a notebook top to bottom headless, in a kernel of this Python or of a server.

``execute_in_server_kernel(server, nb)`` runs a notebook in a kernel that the server (a
``servers.JupyterProcess``) started (``POST /api/sessions``, as JupyterLab does when it opens a
notebook). It talks to that kernel through the connection file the server wrote in its runtime
dir. The kernel therefore inherits ``DSH_ROOT``/``DSH_STATE_PATH`` from the server exactly as a
notebook's kernel does. nbclient cannot drive a kernel it did not start, so the cells are sent here
one by one with ``jupyter_client``, and the outputs are stored in the notebook as nbclient would
store them.

``execute_with_nbclient(nb, cwd)`` is the plain headless run (nbclient, a kernel of this Python).

The Binder test also runs this file as a script with the fresh Binder venv's Python, which has
neither pytest nor the tests' other modules: it imports only nbformat and Jupyter's clients.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat

if TYPE_CHECKING:
    from servers import JupyterProcess


class NotebookFailed(AssertionError):
    """A cell raised: the message names the cell and carries its traceback."""


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


def execute_in_server_kernel(
    server: JupyterProcess, nb_path: Path, timeout: float = 180, kernel_name: str = "python3"
) -> nbformat.NotebookNode:
    """Run ``nb_path`` in a kernel started by ``server``; returns the notebook with its outputs."""
    from jupyter_client import BlockingKernelClient

    nb = nbformat.read(nb_path, as_version=4)
    status, session = server.request(
        "POST",
        "api/sessions",
        {
            "path": nb_path.name,
            "name": nb_path.name,
            "type": "notebook",
            "kernel": {"name": kernel_name},
        },
        timeout=120,
    )
    assert status == 201, (status, session, server.log_tail())
    kernel_id = session["kernel"]["id"]
    connection_file = server.runtime_dir / f"kernel-{kernel_id}.json"
    deadline = time.monotonic() + 30
    while not connection_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    client = BlockingKernelClient(connection_file=str(connection_file))
    client.load_connection_file()
    # a heartbeat may take over the default second on a busy machine (the suite's own load):
    # without this, wait_for_ready calls a starting kernel dead
    client.hb_channel.time_to_dead = 10.0
    client.start_channels()
    try:
        client.wait_for_ready(timeout=120)
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            cell.outputs = []
            errors = []

            def hook(msg, cell=cell, errors=errors):
                _output_hook(cell)(msg)
                if msg["msg_type"] == "error":
                    errors.append(msg["content"])

            reply = client.execute_interactive(
                cell.source, output_hook=hook, timeout=timeout, store_history=True, allow_stdin=False
            )
            cell.execution_count = reply["content"].get("execution_count")
            if reply["content"]["status"] != "ok":
                raise _fail(nb_path.name, index, cell, errors[0] if errors else reply["content"])
    finally:
        client.stop_channels()
        server.request("DELETE", f"api/sessions/{session['id']}")
    return nb


def execute_with_nbclient(
    nb_path: Path, cwd: Path, timeout: float = 180, kernel_name: str = "python3"
) -> nbformat.NotebookNode:
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
    """``python notebook_runs.py NOTEBOOK CWD``: run with nbclient in this Python; print what it printed.

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
