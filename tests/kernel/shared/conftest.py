"""A real Jupyter server with the extension, and kernels it starts (pytest-jupyter).

The plugin's fixtures are imported here rather than named in ``pytest_plugins`` (pytest refuses
that below the rootdir), which also keeps its autouse fixtures off the rest of the kernel tests.
The ``DSH_*`` variables the extension exports into this process are restored after each test.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from traitlets.config import Config

from pytest_jupyter.jupyter_server import *  # noqa: E402,F401,F403

from dsh_env import DSH_ENV, _isolated_dsh_env  # noqa: E402,F401 (autouse fixture)


@pytest.fixture
def jp_root_dir(tmp_path, tree):
    root = tmp_path / "server root"
    tree(root, {"notes.txt": "first line\nsecond line\n", "other.txt": "alpha\nbeta\n", "src/app.py": "x = 1\n"})
    return Path(os.path.realpath(root))


@pytest.fixture
def server_state(tmp_path) -> Path:
    return tmp_path / "server-state" / "state.sqlite"


@pytest.fixture
def jp_server_config(server_state, tmp_path):
    return Config(
        {
            "ServerApp": {"jpserver_extensions": {"dsh_jupyter": True, "jupyter_server_terminals": False}},
            "DshJupyter": {"state_path": str(server_state), "spill_root": str(tmp_path / "server-spills")},
        }
    )
