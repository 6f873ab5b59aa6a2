"""Shared fixtures: a workspace factory over a real temporary tree, a tree builder, a hang guard.

Every workspace a test makes keeps its state file under the test's ``tmp_path``: a test must never
touch the user's default state file.

The tree builder (``build_tree``, ``Link``) is the one the benchmarks use too, in
``tests/trees.py``, beside the small workspace ``TREE`` the server, MCP and kernel tests serve;
any test module imports ``from trees import ...`` (and ``from conftest import build_tree, Link``
still works).
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from pathlib import Path

import pytest
from trees import Link, build_tree  # tests/trees.py

from dsh_jupyter import Workspace
from dsh_jupyter.core.caches.stamps import COARSE_MARGIN_NS, MARGIN_NS


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The confinement root: ``tmp_path/root`` (its real path)."""
    r = tmp_path / "root"
    r.mkdir()
    return Path(os.path.realpath(r))


@pytest.fixture
def state_file(tmp_path: Path) -> Path:
    return tmp_path / "state" / "state.sqlite"


@pytest.fixture
def make_ws(root: Path, state_file: Path):
    """``make_ws(root=None, session="s1", state_path=None, **settings)`` -> Workspace."""

    def factory(root_dir=None, session: str = "s1", state_path=None, **settings) -> Workspace:
        return Workspace(
            root_dir if root_dir is not None else root,
            session=session,
            state_path=state_path if state_path is not None else state_file,
            **settings,
        )

    return factory


@pytest.fixture
def ws(make_ws) -> Workspace:
    return make_ws()


@pytest.fixture
def tree():
    """``tree(base, spec)``: the tree builder as a fixture."""
    return build_tree


@pytest.fixture
def link():
    return Link


@pytest.fixture
def marker() -> str:
    """A ``sleep`` duration no other process uses, so the test finds its stand-in rg in /proc
    (the hung searches of ``servers.hanging_rg_settings``)."""
    return f"60.{uuid.uuid4().int % 10**9:09d}"


def run_guarded(fn, timeout: float = 5.0):
    """Run ``fn()`` in a daemon thread; fail the test (instead of hanging) if it does not return."""
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # pragma: no cover - reported below
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        pytest.fail(f"call did not return within {timeout} s (it hangs)")
    if "error" in box:
        raise box["error"]
    return box["value"]


@pytest.fixture
def guarded():
    return run_guarded


def assert_error(result, code: str, message: str | None = None) -> None:
    """An error result with ``code`` (and exactly ``message``, when given)."""
    assert result.is_error, result.text
    assert result.value["code"] == code, result.value
    assert set(result.value) == {"name", "code", "message"}
    assert result.text == f"Error: {result.value['message']}"
    if message is not None:
        assert result.value["message"] == message, result.value["message"]


@pytest.fixture
def expect_error():
    return assert_error


def jupyter_folders_in(root: Path, monkeypatch) -> Path:
    """Jupyter's runtime, data and config folders (and IPython's) placed inside ``root`` and
    pointed to by their environment variables, as in a workspace that is someone's home; the
    runtime folder is returned for the files a test puts there."""
    runtime = root / ".local" / "share" / "jupyter" / "runtime"
    runtime.mkdir(parents=True)
    (root / ".jupyter").mkdir()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(runtime.parent))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(root / ".jupyter"))
    monkeypatch.setenv("IPYTHONDIR", str(root / ".ipython"))
    return runtime


def settle(path) -> None:
    """Wait until ``path``'s ctime is old enough for its stamp to prove a kept scan current."""
    st = os.stat(path)
    margin = MARGIN_NS if st.st_ctime_ns % 1_000_000_000 else COARSE_MARGIN_NS
    while time.time_ns() <= st.st_ctime_ns + margin + 1_000_000:
        time.sleep(0.01)
