"""The demo notebooks in notebooks/ run top to bottom headless, and are committed without outputs.

01 and 02 run with nbclient in a kernel of this Python, as ``jupyter nbconvert --execute`` would
run them. 03 needs what a person gets from ``./dev demo``: a real ``jupyter server`` with the
extension, and a kernel that this server started (so it inherits ``DSH_ROOT``/``DSH_STATE_PATH``).
The test starts one and runs the notebook through it; the notebook finds the server's URL and token
itself, through ``list_running_servers()``. Every notebook checks its own story with asserts, so a
run that passes means the story it tells is still true.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from notebook_runs import execute_in_server_kernel, execute_with_nbclient, stream_text
from servers import JupyterProcess

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
EXPECTED = ["01-seed-failure.ipynb", "02-explore-a-source-tree.ipynb", "03-agent-and-person.ipynb"]


def test_the_demo_notebooks_are_there():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == EXPECTED


@pytest.mark.parametrize("name", EXPECTED)
def test_committed_without_outputs(name):
    """Outputs stay out of the repository: clear them before committing (Edit → Clear Outputs)."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{name}: cell {i} has outputs"
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert len(json.dumps(nb)) < 40_000, "keep the demo notebooks short"


@pytest.mark.parametrize("name", EXPECTED)
def test_every_step_is_explained(name):
    """Each notebook alternates prose and code: every code cell follows a markdown cell at some point."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    kinds = [c.cell_type for c in nb.cells]
    assert kinds[0] == "markdown"
    assert kinds.count("markdown") * 2 >= kinds.count("code"), kinds


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """A kernel started here sees a state file under tmp_path, never the user's, and no server."""
    for var in ("DSH_ROOT", "DSH_SPILL_ROOT", "DSH_SERVER_URL", "DSH_SERVER_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DSH_STATE_PATH", str(tmp_path / "state.sqlite"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    work = tmp_path / "cwd"
    work.mkdir()
    return work


@pytest.mark.slow
def test_01_seed_failure(isolated):
    nb = execute_with_nbclient(NOTEBOOKS / "01-seed-failure.ipynb", isolated)
    out = stream_text(nb)
    assert "top-level names visible on this page: 1 -> ['vendor-unpacked']" in out
    assert "sampled across 23 of the 23 top-level entries" in out
    assert "(24 entries: 21 directories, 3 files)" in out
    assert "all checks passed" in out
    assert list(isolated.iterdir()) == []  # the workspace went to a temp folder, and was removed


@pytest.mark.slow
def test_02_explore_a_source_tree(isolated):
    nb = execute_with_nbclient(NOTEBOOKS / "02-explore-a-source-tree.ipynb", isolated)
    out = stream_text(nb)
    assert "entries 9-16 of" in out  # paged inside core/
    assert "lines 201-400 of" in out  # the spill viewer paged
    widget_views = [
        o
        for c in nb.cells
        for o in c.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    assert len(widget_views) >= 4  # list, glob, grep, calls: shown as widgets in a kernel


@pytest.mark.slow
def test_03_agent_and_person_through_a_server_kernel(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    server = JupyterProcess.start(tmp_path / "jupyter", root)
    try:
        nb = execute_in_server_kernel(server, NOTEBOOKS / "03-agent-and-person.ipynb")
    finally:
        server.stop()
    out = stream_text(nb)
    assert "(found by parent process)" in out  # list_running_servers() matched this kernel's server
    assert "read it first in this session" in out
    assert "changed since this session last read it" in out
    assert list(root.iterdir()) == []  # the scratch folder was removed at the end
