"""Fixtures for the server layer: a real pytest-jupyter server with the extension over a real tree.

Every test gets its own state file and spill root under ``tmp_path`` (never the user's), and the
``DSH_*`` variables the extension exports are restored afterwards so tests cannot leak state into
each other. Per-test settings: ``@pytest.mark.dsh_settings(glob_max_results=5)`` (DshJupyter
traitlets) and ``@pytest.mark.server_config({...})`` (any other Jupyter config), or override the
``dsh_settings`` / ``server_config`` fixtures in a module.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from traitlets.config import Config

# pytest-jupyter's server plugin, scoped to this folder. The usual line,
#     pytest_plugins = ["pytest_jupyter.jupyter_server"]
# is refused by pytest in a conftest below the rootdir when the whole suite runs, and in the
# root conftest it would put pytest-jupyter's autouse event-loop fixture on every core test.
# Importing the plugin's fixtures and hooks here registers them for tests/server only.
from pytest_jupyter.jupyter_server import *  # noqa: E402,F401,F403

from dsh_env import DSH_ENV, _isolated_dsh_env  # noqa: E402,F401 (autouse fixture)
from servers import TREE, JupyterProcess, isolated_env  # noqa: E402,F401 (TREE: for the tests)



def pytest_configure(config):
    config.addinivalue_line("markers", "dsh_settings(**kw): DshJupyter traitlets for this test's server")
    config.addinivalue_line("markers", "server_config(dict): extra Jupyter config for this test's server")


@pytest.fixture
def jp_root_dir(tmp_path, tree, link):
    """The confinement root: a real tree with unicode, spaces, an empty folder and a symlink."""
    root = tmp_path / "root_dir"
    tree(root, {**TREE, "outside_link": link("/etc")})
    return Path(os.path.realpath(root))


@pytest.fixture
def state_path(tmp_path) -> Path:
    return tmp_path / "state" / "state.sqlite"


@pytest.fixture
def spill_root(tmp_path) -> Path:
    return tmp_path / "spills"


@pytest.fixture
def dsh_settings(request) -> dict:
    marker = request.node.get_closest_marker("dsh_settings")
    return dict(marker.kwargs) if marker else {}


@pytest.fixture
def server_config(request) -> dict:
    marker = request.node.get_closest_marker("server_config")
    return dict(marker.args[0]) if marker else {}


@pytest.fixture
def jp_server_config(state_path, spill_root, dsh_settings, server_config):
    config = {
        # terminals off: pytest-jupyter would add them, and they are no part of this surface
        "ServerApp": {"jpserver_extensions": {"dsh_jupyter": True, "jupyter_server_terminals": False}},
        "DshJupyter": {"state_path": str(state_path), "spill_root": str(spill_root), **dsh_settings},
    }
    for section, values in server_config.items():
        config.setdefault(section, {}).update(values)
    return Config(config)


@pytest.fixture
def api(jp_fetch):
    """``await api(method, *path, body=obj|bytes|None, params=None, headers=None)`` -> (status, json|None)."""

    async def call(method: str, *parts: str, body=None, params=None, headers=None):
        kwargs = {"method": method, "raise_error": False, "headers": headers, "params": params}
        if body is not None:
            kwargs["body"] = body if isinstance(body, (bytes, str)) else json.dumps(body)
        elif method in ("POST", "PUT"):
            kwargs["body"] = b""
        response = await jp_fetch("dsh", "api", *parts, **kwargs)
        raw = response.body
        if not raw:
            return response.code, None
        if response.headers.get("Content-Type", "").startswith("application/json"):
            return response.code, json.loads(raw)
        return response.code, raw.decode("utf-8", "replace")  # e.g. Jupyter's own HTML 404 page

    return call


@pytest.fixture
def tool(api):
    """``await tool(name, session=None, **args)`` -> the JSON result (asserts HTTP 200)."""

    async def call(name: str, session: str | None = None, **args):
        body = {"args": args} if session is None else {"session": session, "args": args}
        status, data = await api("POST", "tools", name, body=body)
        assert status == 200, data
        return data

    return call


# -- a real `jupyter server` subprocess ----------------------------------------------------------


def subprocess_env(tmp: Path) -> dict:
    """The test environment minus DSH_*, with Jupyter's per-user dirs moved under ``tmp``."""
    return isolated_env(tmp)


class RealServer:
    """A real ``jupyter`` subprocess (``servers.JupyterProcess``) seen as these tests use it:
    ``url`` without the trailing slash, ``request(method, "/path", body, token=...)``."""

    def __init__(self, process: JupyterProcess) -> None:
        self.process = process
        self.proc, self.token, self.root, self.log = process.proc, process.token, process.root, process.log
        self.url = process.url.rstrip("/")

    def request(self, method: str, path: str, body=None, token: str | None = "default") -> tuple[int, object]:
        token = self.token if token == "default" else token
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"token {token}"
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                raw = resp.read()
                return resp.status, (json.loads(raw) if raw else None)
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            return exc.code, (json.loads(raw) if raw else None)


def start_real_server(tmp: Path, root: Path, token: str, extra_args: list[str] = (), app: str = "server") -> RealServer:
    """Start ``jupyter <app>`` (server, lab or notebook) with the extension auto-enabled by its
    installed config file, through the one launcher every test suite shares."""
    return RealServer(JupyterProcess.start(tmp, root, app=app, token=token, extra_args=list(extra_args), timeout=60))


def stop_real_server(server: RealServer) -> None:
    """Stop the server and its kernels, by its process group (never by name)."""
    server.process.stop()


ANSI = re.compile(r"\x1b\[[0-9;]*m")
