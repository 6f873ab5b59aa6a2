"""A real Jupyter server with the extension, and kernels it starts (pytest-jupyter).

The plugin's fixtures are imported here rather than named in ``pytest_plugins`` (pytest refuses
that below the rootdir), which also keeps its autouse fixtures off the rest of the kernel tests.
The server's configuration, its state file and spill root, and the restoring of the ``DSH_*``
variables the extension exports into this process are those of every in-process server test
(``tests/servers.py``); only the root is this folder's own.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pytest_jupyter.jupyter_server import *  # noqa: F403
from servers import (  # noqa: F401 (fixtures, registered by being here)
    _isolated_dsh_env,
    dsh_settings,
    jp_server_config,
    server_config,
    spill_root,
    state_path,
)


@pytest.fixture
def jp_root_dir(tmp_path, tree):
    root = tmp_path / "server root"
    tree(root, {"notes.txt": "first line\nsecond line\n", "other.txt": "alpha\nbeta\n", "src/app.py": "x = 1\n"})
    return Path(os.path.realpath(root))
