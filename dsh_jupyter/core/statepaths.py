"""Where the shared state file lives by default: one place for the server, kernels and plain Python.

Why it exists: a notebook run by nbconvert, papermill or ``jupyter console`` on the same machine
must share the read-before-write gate and the call log with the Jupyter server, so every process
must arrive at the same file without being told: ``<jupyter data dir>/dsh_jupyter/state.sqlite``,
unless ``DSH_STATE_PATH`` says otherwise.

The Jupyter data folder is computed here the way ``jupyter_core.paths.jupyter_data_dir`` does
(``JUPYTER_DATA_DIR``, else the platform's user data folder) because the core must not import
Jupyter; a test checks the two agree.
"""

from __future__ import annotations

import os
import sys

__all__ = ["jupyter_data_dir", "default_state_path"]


def _home() -> str:
    return os.path.realpath(os.path.expanduser("~"))


def _platform_dirs() -> bool:
    return os.environ.get("JUPYTER_PLATFORM_DIRS", "").lower() not in ("", "0", "false", "no", "off", "n", "f")


def jupyter_data_dir() -> str:
    """The user's Jupyter data folder, as ``jupyter_core.paths.jupyter_data_dir()`` finds it."""
    env = os.environ.get("JUPYTER_DATA_DIR")
    if env:
        return env
    if _platform_dirs():
        try:
            import platformdirs

            return platformdirs.user_data_dir("jupyter", appauthor=False)
        except ImportError:
            pass
    if sys.platform == "darwin":
        return os.path.join(_home(), "Library", "Jupyter")
    if os.name == "nt":
        appdata = os.environ.get("APPDATA")
        if appdata:
            return os.path.realpath(os.path.join(appdata, "jupyter"))
        return os.path.join(os.environ.get("JUPYTER_CONFIG_DIR") or os.path.join(_home(), ".jupyter"), "data")
    xdg = os.environ.get("XDG_DATA_HOME") or os.path.join(_home(), ".local", "share")
    return os.path.join(xdg, "jupyter")


def default_state_path() -> str:
    """``DSH_STATE_PATH`` when set, else ``<jupyter data dir>/dsh_jupyter/state.sqlite``."""
    return os.environ.get("DSH_STATE_PATH") or os.path.join(jupyter_data_dir(), "dsh_jupyter", "state.sqlite")
