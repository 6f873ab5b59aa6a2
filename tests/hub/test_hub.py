"""A real JupyterHub: two local users, the proxy, LocalProcessSpawner, the tools behind the hub.

What runs: ``jupyterhub`` (this environment) with ``configurable-http-proxy`` from npm, on
127.0.0.1 only; two Linux users made by the test (removed after), each with a home folder that is
their server's root; their single-user servers run as them (LocalProcessSpawner) from a virtual
environment the test builds with the system Python, since this one may live where they cannot
read. The hub's config is ``docs/jupyterhub_config.py``, the same file docs/jupyterhub.md points to.

Checked through ``/user/<name>/dsh/api``: the tools work for the owner and write files the owner
owns; another user's token gets 403 on every dsh route; a reader granted access without
``custom:dsh:write`` can read and not write (``dsh_jupyter.hub.WriteScopeAuthorizer``); hidden
files follow Jupyter and the server's runtime folder (live tokens) is never shown; call records
name the hub user; ``%dsh`` in a kernel of the user's server shares the session with REST.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
from servers import free_port

pytestmark = [pytest.mark.slow, pytest.mark.hub]

REPO = Path(__file__).resolve().parents[2]
USERS = ("dshhub-alice", "dshhub-bob")
SERVICE_TOKEN = uuid.uuid4().hex
HIDDEN = "hidden files are not shown here; the server's ContentsManager.allow_hidden setting allows them"


def _proxy() -> str:
    found = os.environ.get("DSH_CHP") or str(
        Path(sys.prefix) / "hub-proxy" / "node_modules" / ".bin" / "configurable-http-proxy"
    )
    if os.path.exists(found):
        return found
    found = shutil.which("configurable-http-proxy")
    if not found:
        pytest.fail(
            "the hub test needs configurable-http-proxy from npm (./dev test installs it into "
            ".venv/hub-proxy; or point DSH_CHP at one)"
        )
    return found


def _system_python() -> str:
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.path.exists(candidate) and os.access(candidate, os.X_OK):
            return candidate
    pytest.fail("the hub test needs a system Python that other users can run (/usr/bin/python3)")


def _request(method: str, url: str, token: str | None, body=None, timeout: float = 30):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"token {token}"
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
            return resp.status, (json.loads(raw) if raw and "json" in resp.headers.get("Content-Type", "") else raw)
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        try:
            return exc.code, json.loads(raw)
        except ValueError:
            return exc.code, raw


class Hub:
    def __init__(self, base: Path, url: str, api: str, proc: subprocess.Popen) -> None:
        self.base, self.url, self.api, self.proc = base, url, api, proc
        self.tokens: dict[str, str] = {}

    def hub(self, method: str, path: str, body=None):
        return _request(method, f"{self.api}{path}", SERVICE_TOKEN, body)

    def dsh(self, user: str, method: str, path: str, token: str, body=None):
        return _request(method, f"{self.url}/user/{user}/dsh/api/{path}", token, body)

    def tool(self, user: str, token: str, name: str, session: str = "default", **args):
        return self.dsh(user, "POST", f"tools/{name}", token, {"session": session, "args": args})

    def token_for(self, user: str, scopes: list[str] | None = None) -> str:
        body = {"note": "dsh hub test", "expires_in": 3600}
        if scopes is not None:
            body["scopes"] = scopes
        status, data = self.hub("POST", f"/users/{user}/tokens", body)
        assert status == 201, data
        return data["token"]


def _build_user_env(base: Path) -> Path:
    """A virtual environment every user can run, with this checkout installed from a wheel."""
    venv = base / "venv"
    subprocess.run([_system_python(), "-m", "venv", str(venv)], check=True)
    wheels = base / "wheels"
    env = {**os.environ, "SKIP_JUPYTER_BUILDER": "1"}  # the JupyterLab extension is already built
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(REPO)],
        check=True,
        env=env,
        capture_output=True,
    )
    (wheel,) = wheels.glob("dsh_jupyter-*.whl")
    import jupyterhub

    wanted = [str(wheel), f"jupyterhub=={jupyterhub.__version__}", "ipykernel"]
    if importlib.util.find_spec("uv") is not None:  # ./dev installs it: the same install, a minute faster
        # copies, not links into root's cache: the users' venv gets its own files and modes
        install = [sys.executable, "-m", "uv", "pip", "install", "-q", "--link-mode=copy", "--compile-bytecode"]
        install += ["--python", str(venv / "bin" / "python")]
    else:
        install = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*install, *wanted], check=True, capture_output=True)
    for path in (base, *base.rglob("*")):
        try:
            os.chmod(path, os.stat(path).st_mode | 0o055 | (0o011 if path.is_dir() else 0))
        except OSError:
            pass
    return venv


@pytest.fixture(scope="module")
def hub():
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.fail("the hub test runs as root on Linux (it creates two users); CI does")
    base = Path(tempfile.mkdtemp(prefix="dsh-hub-", dir="/tmp"))
    os.chmod(base, 0o755)
    made: list[str] = []
    proc = None
    try:
        venv = _build_user_env(base)
        (base / "home").mkdir()
        os.chmod(base / "home", 0o755)
        for user in USERS:
            subprocess.run(["userdel", "-r", user], capture_output=True)  # a leftover of an interrupted run
            subprocess.run(["useradd", "-m", "-d", str(base / "home" / user), "-s", "/bin/sh", user], check=True)
            made.append(user)
            home = base / "home" / user
            (home / "notes.txt").write_text("hello from the hub\n")
            (home / ".env").write_text("SECRET=hub\n")
            pw = pwd.getpwnam(user)
            for p in (home / "notes.txt", home / ".env"):
                os.chown(p, pw.pw_uid, pw.pw_gid)
        port, hub_port, api_port = free_port(), free_port(), free_port()
        env = {
            **os.environ,
            "DSH_HUB_PROXY": _proxy(),
            "DSH_HUB_SINGLEUSER": str(venv / "bin" / "jupyterhub-singleuser"),
            "DSH_HUB_PORTS": f"{port},{hub_port},{api_port}",
            "DSH_HUB_SERVICE_TOKEN": SERVICE_TOKEN,
            "DSH_HUB_USERS": ",".join(USERS),
            "DSH_HUB_READERS": json.dumps({USERS[1]: USERS[0]}),  # bob may read alice's server
        }
        with open(base / "hub.log", "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "jupyterhub", "-f", str(REPO / "docs" / "jupyterhub_config.py")],
                cwd=base,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        h = Hub(base, f"http://127.0.0.1:{port}", f"http://127.0.0.1:{port}/hub/api", proc)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"jupyterhub exited:\n{(base / 'hub.log').read_text(errors='replace')[-4000:]}")
            try:
                status, _ = h.hub("GET", "/")
                if status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        for user in USERS:
            status, data = h.hub("POST", f"/users/{user}/server")
            assert status in (201, 202), data
        for user in USERS:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                status, data = h.hub("GET", f"/users/{user}")
                if data.get("servers", {}).get("", {}).get("ready"):
                    break
                time.sleep(1)
            else:
                pytest.fail(
                    f"{user}'s server never became ready:\n{(base / 'hub.log').read_text(errors='replace')[-4000:]}"
                )
        for user in USERS:
            # each user's own token, for their own server only (bob's role to read alice's server
            # is used by a token of its own, below)
            h.tokens[user] = h.token_for(user, [f"access:servers!user={user}", f"custom:dsh:write!user={user}"])
        yield h
    finally:
        if proc is not None and proc.poll() is None:
            for user in USERS:
                try:
                    Hub(base, "", f"http://127.0.0.1:{port}/hub/api", proc).hub("DELETE", f"/users/{user}/server")
                except Exception:
                    pass
            os.killpg(proc.pid, 15)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait(5)
        for user in made:
            subprocess.run(["pkill", "-KILL", "-u", user], capture_output=True)  # only what runs as the test's users
            subprocess.run(["userdel", "-r", user], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


ALICE, BOB = USERS


def test_the_owner_uses_the_tools_and_files_stay_theirs(hub):
    token = hub.tokens[ALICE]
    status, data = hub.tool(ALICE, token, "read", file_path="notes.txt")
    assert status == 200 and data["text"].endswith("1: hello from the hub\n\n(End of file - total 1 line)\n</content>")
    status, data = hub.tool(ALICE, token, "write", file_path="made-by-alice.txt", content="mine\n")
    assert status == 200 and data["text"].endswith("Created file\n</content>"), data
    made = hub.base / "home" / ALICE / "made-by-alice.txt"
    assert made.stat().st_uid == pwd.getpwnam(ALICE).pw_uid
    status, data = hub.tool(ALICE, token, "edit", file_path="notes.txt", old_string="hello", new_string="hi")
    assert data["text"].split("\n")[0] == "The file notes.txt has been updated successfully.", data
    assert (hub.base / "home" / ALICE / "notes.txt").stat().st_uid == pwd.getpwnam(ALICE).pw_uid
    status, log = hub.dsh(ALICE, "GET", "sessions/default/calls", token)
    assert {c["user"] for c in log["calls"]} == {ALICE}  # the hub user, named in every record


ROUTES = [
    ("GET", "tools"),
    ("POST", "tools/list"),
    ("POST", "tools/read"),
    ("POST", "tools/write"),
    ("POST", "tools/edit"),
    ("POST", "tools/glob"),
    ("POST", "tools/grep"),
    ("POST", "tools/list_dir"),
    ("GET", "sessions"),
    ("POST", "sessions"),
    ("GET", "sessions/default"),
    ("PATCH", "sessions/default"),
    ("DELETE", "sessions/default"),
    ("GET", "sessions/default/calls"),
    ("GET", "sessions/default/spills"),
    ("GET", "spill?locator=x"),
    ("GET", "openapi.json"),
    ("GET", "status"),
]


def test_another_users_token_is_refused_everywhere(hub):
    token = hub.tokens[BOB]
    for method, path in ROUTES:
        body = {"args": {"path": "."}} if method in ("POST", "PATCH") else None
        status, _ = hub.dsh(ALICE, method, path, token, body)
        assert status == 403, (method, path, status)
    status, _ = _request(
        "POST", f"{hub.url}/user/{ALICE}/dsh/mcp", token, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    )
    assert status == 403


def test_a_reader_without_the_write_scope_reads_but_never_writes(hub):
    reader = hub.token_for(BOB, [f"access:servers!server={ALICE}/"])
    status, data = hub.tool(ALICE, reader, "read", file_path="notes.txt")
    assert status == 200 and not data["isError"], data
    for name, args in (
        ("write", {"file_path": "by-bob.txt", "content": "x"}),
        ("edit", {"file_path": "notes.txt", "old_string": "hi", "new_string": "pwned"}),
    ):
        status, data = hub.tool(ALICE, reader, name, **args)
        assert status == 403, (name, data)
    assert not (hub.base / "home" / ALICE / "by-bob.txt").exists()
    status, _ = hub.dsh(ALICE, "POST", "sessions", reader, {"id": "bobs"})
    assert status == 403  # a read-only caller cannot create sessions
    # Jupyter's own contents API is read-only for this reader too (same authorizer)
    status, _ = _request(
        "PUT",
        f"{hub.url}/user/{ALICE}/api/contents/by-bob.txt",
        reader,
        {"type": "file", "format": "text", "content": "x"},
    )
    assert status == 403


def test_hidden_files_and_the_runtime_folder_are_not_shown(hub):
    token = hub.tokens[ALICE]
    status, data = hub.tool(ALICE, token, "read", file_path=".env")
    assert data["value"] == {"name": "FsError", "code": "FS_HIDDEN", "message": f'cannot read ".env": {HIDDEN}'}
    home = hub.base / "home" / ALICE
    runtime = list(home.glob(".local/share/jupyter/runtime/jpserver-*.json"))
    assert runtime, "the single-user server wrote no runtime file into the home"
    for pattern in ("token", "SECRET", hub.tokens[ALICE][:12]):
        status, data = hub.tool(ALICE, token, "grep", pattern=pattern)
        assert status == 200
        assert "jpserver" not in data["text"] and "SECRET=hub" not in data["text"], data["text"]
    status, data = hub.tool(ALICE, token, "read", file_path=str(runtime[0].relative_to(home)))
    assert data["value"]["code"] in ("FS_PROTECTED", "FS_HIDDEN")


def test_percent_dsh_in_a_kernel_of_the_users_server_shares_the_session(hub):
    import asyncio

    token = hub.tokens[ALICE]
    status, kernel = _request("POST", f"{hub.url}/user/{ALICE}/api/kernels", token, {"name": "python3"})
    assert status == 201, kernel
    try:
        out = asyncio.run(
            _execute(
                f"{hub.url}/user/{ALICE}/api/kernels/{kernel['id']}/channels",
                token,
                "%load_ext dsh_jupyter\n%dsh read notes.txt --text",
            )
        )
        assert out.endswith("1: hi from the hub\n\n(End of file - total 1 line)\n</content>\n"), out
        # the magic's read lets an agent over REST edit the file in the same session
        status, data = hub.tool(ALICE, token, "edit", file_path="notes.txt", old_string="hi", new_string="hey")
        assert data["text"].split("\n")[0] == "The file notes.txt has been updated successfully.", data
        status, log = hub.dsh(ALICE, "GET", "sessions/default/calls", token)
        magic = [c for c in log["calls"] if c["surface"] == "magic"]
        assert magic and magic[-1]["user"] == ALICE  # the kernel runs as the Linux user alice
    finally:
        _request("DELETE", f"{hub.url}/user/{ALICE}/api/kernels/{kernel['id']}", token)


async def _execute(url: str, token: str, code: str, timeout: float = 60) -> str:
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    ws_url = url.replace("http://", "ws://")
    conn = await websocket_connect(HTTPRequest(ws_url, headers={"Authorization": f"token {token}"}))
    msg_id = uuid.uuid4().hex
    conn.write_message(
        json.dumps(
            {
                "header": {
                    "msg_id": msg_id,
                    "msg_type": "execute_request",
                    "username": "test",
                    "session": uuid.uuid4().hex,
                    "date": "",
                    "version": "5.3",
                },
                "parent_header": {},
                "metadata": {},
                "channel": "shell",
                "buffers": [],
                "content": {
                    "code": code,
                    "silent": False,
                    "store_history": False,
                    "user_expressions": {},
                    "allow_stdin": False,
                    "stop_on_error": True,
                },
            }
        )
    )
    out: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            raw = await conn.read_message()
            if raw is None:
                break
            msg = json.loads(raw)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                out.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                out.append("\n".join(msg["content"]["traceback"]))
            elif msg["msg_type"] == "execute_reply":
                break
    finally:
        conn.close()
    return "".join(out)
