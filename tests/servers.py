"""Every Jupyter server the tests start, and the fixtures and helpers around one, in one module.

The server tests, the kernel tests that run a server's kernels (tests/kernel/shared), the MCP,
browser, notebook and Binder tests, and ``benchmarks/bench_widget_browser.py`` take their servers
from here. (The hub test runs JupyterHub, which starts its users' servers itself; it takes only
``free_port`` from here.)

**A real subprocess.** ``JupyterProcess.start(tmp, root, ...)`` runs ``jupyter server`` (or
``lab``, ``notebook``) with any Python (this venv's, or the fresh Binder venv's) on 127.0.0.1, on a
free port, with ``--allow-root``, a token, the dsh state and spills under ``tmp``, and Jupyter's
per-user folders moved there too (``isolated_env``), so a test never reads or writes the user's
own. The extension is not named on the command line: the server finds it through the config file
the package installs. ``start_server(tmp, tree)`` does the same over a fresh copy of a tree
(``TREE`` unless told otherwise) built in ``tmp/root``. ``server.request(method, "dsh/api/...",
body, token=...)`` and ``server.tool(name, session, **args)`` talk to it; ``server.stop()`` stops
it and its kernels by its process group, never by name. (A notebook run in a kernel such a server
started: ``notebook_runs.execute_in_server_kernel``.)

**pytest-jupyter's in-process server** (``jp_serverapp``, ``jp_fetch``) with the extension:
``jp_root_dir`` (``TREE`` and a symlink to /etc), ``state_path`` and ``spill_root`` (under the
test's ``tmp_path``), ``dsh_settings`` and ``server_config`` (from the markers
``@pytest.mark.dsh_settings(glob_max_results=5)``, DshJupyter traitlets, and
``@pytest.mark.server_config({...})``, any other Jupyter config; or override the fixtures in a
module), ``jp_server_config`` made of them, and ``api`` / ``tool`` to call the REST API. The
extension exports ``DSH_*`` variables into the process that runs it, so ``_isolated_dsh_env``
(autouse) starts every test without them and puts the caller's values back afterwards. A
conftest that wants this server imports pytest-jupyter's plugin and these fixtures by name
(with ``pytest_configure``, which registers the two markers): pytest refuses ``pytest_plugins``
in a conftest below the rootdir, and in the root conftest the plugin's autouse event-loop fixture
would reach every core test.

**Callers the server tells apart**: ``TWO_USERS`` (a ``server_config``) makes the in-process
server name ``alice`` and ``bob`` by tokens of their own (``alice-token``, ``bob-token``: named
across requests, as a hub user or a login cookie is) and lets only alice write; its own token
stays Jupyter's token-only caller, named anew on each request, who may not write either.

**Searches that never finish**, for the tests of what a hung search must not block:
``hanging_rg_settings()`` makes a module's ``dsh_settings`` point ``rg_path`` at a stand-in
that sleeps for a duration unique to the test (the ``marker`` fixture, in ``tests/conftest.py``), so
``processes_with(marker)`` finds exactly its processes in /proc; ``wait_for`` polls a condition without blocking the loop.
"""

from __future__ import annotations

import asyncio
import http.client
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

import pytest
from jupyter_server.auth.authorizer import Authorizer
from jupyter_server.auth.identity import IdentityProvider, User
from traitlets.config import Config
from trees import TREE, Link, build_tree  # tests/trees.py

# What the extension exports into its own process (and a kernel's clients read): kept out of
# every server subprocess's environment, and restored around every in-process server test.
DSH_ENV = ("DSH_STATE_PATH", "DSH_ROOT", "DSH_SPILL_ROOT", "DSH_SETTINGS", "DSH_SERVER_URL", "DSH_SERVER_TOKEN")

# Colour codes in the output of ``jupyter ...`` commands.
ANSI = re.compile(r"\x1b\[[0-9;]*m")


# -- a real `jupyter` subprocess ------------------------------------------------------------------


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

_OWN_TOKEN = object()


class JupyterProcess:
    def __init__(self, proc: subprocess.Popen, url: str, token: str, root: Path, tmp: Path, env: dict) -> None:
        self.proc, self.url, self.token, self.root, self.tmp, self.env = proc, url, token, root, tmp, env
        self.log = tmp / "jupyter.log"
        self.runtime_dir = Path(env["JUPYTER_RUNTIME_DIR"])
        self.state_path = tmp / "dsh-state.sqlite"

    @classmethod
    def start(
        cls,
        tmp: Path,
        root: Path,
        *,
        app: str = "server",
        python: str = sys.executable,
        token: str = "dsh-test-token",
        extra_args: list[str] = (),
        env: dict | None = None,
        timeout: float = 120,
    ) -> JupyterProcess:
        tmp.mkdir(parents=True, exist_ok=True)
        env = isolated_env(tmp, env)
        port = free_port()
        argv = [
            python,
            "-m",
            "jupyter",
            app,
            "--no-browser",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            f"--DshJupyter.state_path={tmp / 'dsh-state.sqlite'}",
            f"--DshJupyter.spill_root={tmp / 'dsh-spills'}",
            *extra_args,
        ]
        with open(tmp / "jupyter.log", "wb") as log:
            proc = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp, start_new_session=True
            )
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
            except (OSError, http.client.HTTPException):  # not listening yet, or another process's port
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"jupyter did not answer within {timeout} s:\n{self.log_tail()}")

    def request(
        self, method: str, path: str, body=None, timeout: float = 30, *, token: str | None = _OWN_TOKEN
    ) -> tuple[int, object]:
        """``(status, JSON or text)`` of ``method url/path``, with this server's token unless
        ``token`` names another (``None``: no Authorization header)."""
        token = self.token if token is _OWN_TOKEN else token
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"token {token}"
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


def start_server(tmp: Path, tree: dict = TREE, **options) -> JupyterProcess:
    """``JupyterProcess.start(tmp, root, **options)`` over a fresh copy of ``tree`` in ``tmp/root``
    (its real path)."""
    root = Path(os.path.realpath(build_tree(tmp / "root", tree)))
    return JupyterProcess.start(tmp, root, **options)


# -- pytest-jupyter's in-process server --------------------------------------------------------


@pytest.fixture(autouse=True)
def _isolated_dsh_env():
    """Start every test without DSH_* and put the caller's values back afterwards."""
    saved = {k: os.environ.pop(k, None) for k in DSH_ENV}
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def pytest_configure(config):
    config.addinivalue_line("markers", "dsh_settings(**kw): DshJupyter traitlets for this test's server")
    config.addinivalue_line("markers", "server_config(dict): extra Jupyter config for this test's server")


@pytest.fixture
def jp_root_dir(tmp_path):
    """The confinement root: a real tree with unicode, spaces, an empty folder and a symlink."""
    root = tmp_path / "root_dir"
    build_tree(root, {**TREE, "outside_link": Link("/etc")})
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


# -- callers the server tells apart ---------------------------------------------------------------

USER_TOKENS = {"alice-token": "alice", "bob-token": "bob"}


class TwoUsers(IdentityProvider):
    """alice and bob by tokens of their own (``USER_TOKENS``); the server's token as Jupyter has it."""

    async def get_user(self, handler):
        match = self.auth_header_pat.match(handler.request.headers.get("Authorization", ""))
        if match and match.group(2) in USER_TOKENS:
            name = USER_TOKENS[match.group(2)]
            return User(username=name, name=name)
        return await super().get_user(handler)


class OnlyAliceWrites(Authorizer):
    """Everyone reads; only alice may write contents."""

    def is_authorized(self, handler, user, action, resource):
        return not (resource == "contents" and action == "write" and getattr(user, "username", "") != "alice")


# alice and bob carry no login cookie and are not token-authenticated as Jupyter counts it, so
# their POSTs would meet the browser's XSRF check; these tests are not about XSRF.
TWO_USERS = {
    "ServerApp": {"identity_provider_class": TwoUsers, "authorizer_class": OnlyAliceWrites, "disable_check_xsrf": True}
}
ALICE = {"Authorization": "token alice-token"}
BOB = {"Authorization": "token bob-token"}


# -- searches that never finish ------------------------------------------------------------------


def hanging_rg_settings(*, listing_hangs: bool = True):
    """A ``dsh_settings`` fixture for a module: the server's ``rg_path`` is a stand-in that never
    finishes (``exec sleep <marker>``), plus whatever the test's ``dsh_settings`` marker says.

    A grep over a folder also lists its notebooks (``rg --files``, alongside the search). With
    ``listing_hangs=False`` that listing answers at once with none, so each hung search is one
    process, as the search pool counts them; otherwise it hangs too.
    """

    @pytest.fixture
    def dsh_settings(request, tmp_path, marker) -> dict:
        script = tmp_path / "bin" / "rg-hangs"
        script.parent.mkdir()
        listing = "" if listing_hangs else 'case " $* " in *" --files "*) exit 1;; esac\n'
        script.write_text(f"#!/bin/sh\n{listing}exec sleep {marker}\n")
        script.chmod(0o755)
        found = request.node.get_closest_marker("dsh_settings")
        # no workspace index: its background listing would be one more stand-in process to count
        return {"rg_path": str(script), "index_min_files": 0, **(found.kwargs if found else {})}

    return dsh_settings


def processes_with(marker: str) -> list[int]:
    """The live (not zombie) processes whose command line holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read()
            with open(f"/proc/{entry}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


async def wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return predicate()
