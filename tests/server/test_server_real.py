"""Against a REAL ``jupyter server`` subprocess: auto-enable, token auth, and a schemathesis run.

The extension is not enabled on the command line: the server must find it through the
``jupyter_server_config.d/dsh_jupyter.json`` file the package installs.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from servers import ANSI, isolated_env, start_server

from dsh_jupyter.core.registry import TOOLS

pytestmark = pytest.mark.slow

TOKEN = "real-server-token"


@pytest.fixture(scope="module")
def real_server(tmp_path_factory):
    # a page's long poll is held tabs_poll_s when nothing waits: 2 s here, within schemathesis's
    # 10 s request timeout, when it polls a page id it reported itself
    server = start_server(
        tmp_path_factory.mktemp("real"),
        token=TOKEN,
        timeout=60,
        extra_args=["--DshJupyter.search_timeout_ms=3000", "--DshJupyter.tabs_poll_s=2"],
    )
    try:
        yield server
    finally:
        server.stop()


def test_tools_with_token_and_refused_without(real_server):
    status, tools = real_server.request("GET", "dsh/api/tools")
    assert status == 200
    assert [t["name"] for t in tools] == [t.name for t in TOOLS]  # every tool, in the registry's order
    for token in (None, "wrong"):
        status, data = real_server.request("GET", "dsh/api/tools", token=token)
        assert status == 403, data
        assert TOKEN not in str(data)
    status, result = real_server.request("POST", "dsh/api/tools/list", {"args": {"path": "src"}})
    assert status == 200
    assert result["text"] == (
        "<path>src</path>\n<type>directory</type>\n<content>\nutil/\napp.py\n\n"
        "(2 entries: 1 directory, 1 file)\n</content>"
    )
    status, _ = real_server.request("POST", "dsh/api/tools/list", {"args": {}}, token=None)
    assert status == 403


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_works_under_jupyter_lab_and_notebook(app, tmp_path):
    """The same extension, auto-enabled, under the two front-end applications."""
    server = start_server(tmp_path, token=TOKEN, app=app, timeout=60)
    try:
        status, result = server.request("POST", "dsh/api/tools/list", {"args": {"path": "src"}})
        assert status == 200, result
        assert result["text"].endswith("(2 entries: 1 directory, 1 file)\n</content>")
        status, _ = server.request("GET", "dsh/api/tools", token=None)
        assert status == 403
    finally:
        server.stop()


def test_extension_list_shows_it_enabled_and_ok(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "jupyter", "server", "extension", "list"],
        capture_output=True,
        text=True,
        timeout=60,
        env=isolated_env(tmp_path),
    )
    out = ANSI.sub("", proc.stdout + proc.stderr)
    assert proc.returncode == 0, out
    assert any(line.split()[:2] == ["dsh_jupyter", "enabled"] for line in out.splitlines()), out
    assert any(line.split()[:1] == ["dsh_jupyter"] and line.rstrip().endswith("OK") for line in out.splitlines()), out


def _schemathesis() -> list[str] | None:
    st = Path(sys.executable).parent / "st"
    if st.exists():
        return [str(st)]
    found = shutil.which("st")
    return [found] if found else None


def test_schemathesis_finds_no_server_error(real_server, tmp_path):
    """Fuzz every documented operation; bounded (a fixed seed, few examples, a 90 s ceiling).

    Checks: everything schemathesis has, except the two that contradict the product contract on
    purpose -- a tool argument that violates its schema is a tool *result* (HTTP 200, isError,
    ARGUMENT_INVALID) so a model can read it, and a valid-looking session cwd that names no
    directory is refused (404).
    """
    st = _schemathesis()
    if st is None:
        pytest.skip("schemathesis is not installed")
    argv = [
        *st,
        "run",
        f"{real_server.url}dsh/api/openapi.json",
        "-H",
        f"Authorization: token {TOKEN}",
        "--checks",
        "all",
        "--exclude-checks",
        "negative_data_rejection,positive_data_acceptance",
        "--max-examples",
        "8",
        "--seed",
        "7",
        "--no-shrink",
        "--request-timeout",
        "10",
        "--report-dir",
        str(tmp_path / "report"),
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=90, cwd=tmp_path, env=isolated_env(tmp_path))
    out = ANSI.sub("", proc.stdout + proc.stderr)
    assert proc.returncode == 0, out[-6000:]
    assert "No issues found" in out, out[-3000:]
