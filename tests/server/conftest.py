"""The server layer's tests run against pytest-jupyter's in-process server with the extension
(fixtures from ``tests/servers.py``), or a real ``jupyter`` subprocess (``servers.start_server``).

Every test gets its own state file and spill root under ``tmp_path`` (never the user's), and the
``DSH_*`` variables the extension exports are restored afterwards so tests cannot leak state into
each other. Per-test settings: ``@pytest.mark.dsh_settings(glob_max_results=5)`` (DshJupyter
traitlets) and ``@pytest.mark.server_config({...})`` (any other Jupyter config), or override the
``dsh_settings`` / ``server_config`` fixtures in a module.
"""

from __future__ import annotations

# pytest-jupyter's server plugin, scoped to this folder. The usual line,
#     pytest_plugins = ["pytest_jupyter.jupyter_server"]
# is refused by pytest in a conftest below the rootdir when the whole suite runs, and in the
# root conftest it would put pytest-jupyter's autouse event-loop fixture on every core test.
# Importing the plugin's fixtures and hooks here registers them for tests/server only.
from pytest_jupyter.jupyter_server import *  # noqa: F403
from servers import (  # noqa: F401 (fixtures and the marker hook, registered by being here)
    _isolated_dsh_env,
    api,
    dsh_settings,
    jp_root_dir,
    jp_server_config,
    pytest_configure,
    server_config,
    spill_root,
    state_path,
    tool,
)
