"""The client configurations in docs/mcp.md and the README, run as written with the clients they are for.

Claude Code (``claude mcp add``/``add-json`` + ``claude mcp list``) and OpenCode (``opencode mcp
list``) run with a throwaway HOME and must report the servers connected; the Inspector CLI runs
in its Node 20 release and a 2.x one on Node 22 (with the page's ``mcpServers`` file for
``--config``); the mcp-remote entry is started as Claude
Desktop would start it. The only changes made to a snippet: the port of the test server for
8888, a temporary folder for /path/to/project, the test token for YOUR_JUPYTER_TOKEN, and
``npx PACKAGE`` resolved to the copy pinned in ``node/package.json``. Clients that do not install
here (Cursor, Claude Desktop, Codex, Jupyter AI) are checked for the shape they read.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from .clients import client_env, drive, installed
from .conftest import mcp_url

REPO = Path(__file__).resolve().parents[2]
MCP_DOC = REPO / "docs" / "mcp.md"
DOCS = [MCP_DOC, REPO / "README.md"]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def blocks(path: Path, lang: str, heading: str | None = None) -> list[str]:
    text = path.read_text()
    if heading is not None:
        start = text.index(f"\n{heading}\n")
        ends = [i for i in (text.find("\n## ", start + 1), text.find("\n### ", start + 1)) if i >= 0]
        text = text[start : min(ends, default=len(text))]
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def json_configs() -> list[dict]:
    return [json.loads(b) for path in DOCS for b in blocks(path, "json")]


def mcp_servers_entries() -> list[tuple[str, dict]]:
    return [(name, entry) for config in json_configs() for name, entry in config.get("mcpServers", {}).items()]


def as_run_here(text: str, server, project: Path) -> str:
    port = server.url.split(":")[2].rstrip("/")
    return (
        text.replace("127.0.0.1:8888", f"127.0.0.1:{port}")
        .replace("/path/to/project", str(project))
        .replace("YOUR_JUPYTER_TOKEN", server.token)
    )


@pytest.fixture(scope="module")
def clients(tmp_path_factory):
    return installed(tmp_path_factory.mktemp("mcp-clients"))


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    (folder / "README.md").write_text("# A project\n")
    return folder


# -- shape ---------------------------------------------------------------------------------------


def test_every_json_block_parses_and_names_the_endpoint_or_the_stdio_server():
    configs = json_configs()
    assert len(configs) >= 4
    text = json.dumps(configs)
    for url in re.findall(r'"(http://[^"]+)"', text):
        assert re.fullmatch(r"http://127\.0\.0\.1:8888/dsh/mcp(\?session=[\w-]+)?", url), url
    assert '"dsh-jupyter-mcp"' in text and '"--root"' in text


def test_every_mcp_servers_http_entry_says_type_http():
    """Claude Code refuses a "url" without "type"; the Inspector's --config wants a command otherwise."""
    urls = [(name, entry) for name, entry in mcp_servers_entries() if "url" in entry]
    assert urls
    for name, entry in urls:
        assert entry["type"] == "http", name


def test_the_claude_code_blocks_use_distinct_names():
    for path in DOCS:
        names = [m for block in blocks(path, "sh") for m in re.findall(r"claude mcp add (?:--\S+ \S+ )*(\S+)", block)]
        assert names and len(names) == len(set(names)), (path.name, names)


def test_jupyter_ai_config_has_the_agent_client_protocol_shape():
    (config,) = [c for c in json_configs() if "mcp_servers" in c]
    servers = config["mcp_servers"]
    assert isinstance(servers, list)
    for server in servers:
        if server.get("type") == "http":
            assert set(server) <= {"type", "name", "url", "headers"}
            assert all(set(h) == {"name", "value"} for h in server["headers"])
            assert {"name": "Authorization", "value": "token YOUR_JUPYTER_TOKEN"} in server["headers"]
        else:
            assert set(server) <= {"name", "command", "args", "env"} and {"name", "command", "args"} <= set(server)
            assert isinstance(server["args"], list) and isinstance(server.get("env", []), list)


def test_codex_toml_parses():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: pytest brings the backport
        import tomli as tomllib

    (toml,) = blocks(MCP_DOC, "toml")
    servers = tomllib.loads(toml)["mcp_servers"]
    assert servers["dsh-jupyter"] == {"command": "dsh-jupyter-mcp", "args": ["--root", "/path/to/project"]}
    assert servers["dsh-jupyter-http"]["bearer_token_env_var"] == "JUPYTER_TOKEN"


# -- run with the client -------------------------------------------------------------------------


def _claude_lines(path: Path) -> list[str]:
    """The ``claude mcp ...`` commands of a page's sh blocks (continuation lines joined)."""
    out = []
    for block in blocks(path, "sh"):
        for command in block.replace("\\\n", " ").splitlines():
            command = command.split("  #")[0].strip()
            if command.startswith("claude mcp"):
                out.append(command)
    return out


def _run(command: str, env: dict, cwd: Path, timeout: float = 120) -> str:
    proc = subprocess.run(["bash", "-c", command], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{command}\n{proc.stdout}\n{proc.stderr}"
    return ANSI.sub("", proc.stdout + proc.stderr)


@pytest.mark.slow
@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.name)
def test_the_claude_code_commands_run_and_connect(clients, server, project, tmp_path, page):
    env = client_env(tmp_path / "home", clients, JUPYTER_TOKEN=server.token)
    commands = [as_run_here(c, server, project) for c in _claude_lines(page)]
    assert any("--transport http" in c for c in commands) and any("dsh-jupyter-mcp" in c for c in commands)
    for command in commands:
        if not command.startswith("claude mcp list"):
            _run(command, env, project)
    listing = _run("claude mcp list", env, project)
    names = [re.search(r"claude mcp add (?:--\S+ \S+ )*(\S+)", c).group(1) for c in commands if " add " in c]
    for name in names:
        assert re.search(rf"^{re.escape(name)}: .* - ✔ Connected$", listing, flags=re.M), listing


@pytest.mark.slow
def test_the_mcp_servers_entries_connect_through_claude_add_json(clients, server, project, tmp_path):
    env = client_env(tmp_path / "home", clients)
    added = []
    for name, entry in mcp_servers_entries():
        if entry.get("command") == "npx":
            continue  # the mcp-remote bridge for Claude Desktop: run by the next test
        entry_json = as_run_here(json.dumps(entry), server, project)
        _run(f"claude mcp add-json {name}-{len(added)} {_quote(entry_json)}", env, project)
        added.append(f"{name}-{len(added)}")
    listing = _run("claude mcp list", env, project)
    assert len(added) >= 2  # docs/mcp.md's entries for the HTTP endpoint and the stdio server
    for name in added:
        assert re.search(rf"^{re.escape(name)}: .* - ✔ Connected$", listing, flags=re.M), listing


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


@pytest.mark.slow
def test_the_mcp_remote_entry_runs_as_claude_desktop_starts_it(clients, server, project, tmp_path):
    ((_, entry),) = [(n, e) for n, e in mcp_servers_entries() if e.get("command") == "npx"]
    entry = json.loads(as_run_here(json.dumps(entry), server, project))
    args = entry["args"]
    assert args[:2] == ["-y", "mcp-remote"]
    spec = {
        "transport": "stdio",
        "command": clients.node,
        "args": [str(clients.mcp_remote), *args[2:]],
        "env": {**entry["env"], "HOME": str(tmp_path / "home"), "MCP_REMOTE_CONFIG_DIR": str(tmp_path / "auth")},
        "calls": [{"name": "list", "arguments": {"path": "src"}}],
    }
    (call,) = drive(clients, spec, tmp_path)["calls"]
    assert call["ok"] and call["result"]["content"][0]["text"].startswith("<path>src</path>")


@pytest.mark.slow
def test_the_opencode_config_connects(clients, server, project, tmp_path):
    (block,) = [b for b in blocks(MCP_DOC, "json") if "opencode.ai" in b]
    (project / "opencode.json").write_text(as_run_here(block, server, project))
    env = client_env(tmp_path / "home", clients, JUPYTER_TOKEN=server.token)
    listing = _run("opencode mcp list", env, project)
    for name in json.loads(block)["mcp"]:
        assert re.search(rf"✓ {re.escape(name)}\s+connected", listing), listing


@pytest.mark.slow
def test_the_inspector_commands_run_in_both_releases(clients, server, project, tmp_path):
    (block,) = blocks(MCP_DOC, "sh", "### MCP Inspector (command line)")
    npx = (
        f'npx() {{ case "$1" in\n'
        f'  @modelcontextprotocol/inspector@0.15) shift; "{clients.node}" "{clients.inspector_015}" "$@";;\n'
        f'  @modelcontextprotocol/inspector) shift; "{clients.node22}" "{clients.inspector_2}" "$@";;\n'
        f'  *) echo "unexpected npx $1" >&2; return 9;;\n'
        f"esac; }}\nset -e\n"
    )
    (config,) = [b for b in blocks(MCP_DOC, "json") if '"mcpServers"' in b and "mcp-remote" not in b]
    (project / "mcp.json").write_text(as_run_here(config, server, project))  # "the mcpServers file above"
    env = client_env(tmp_path / "home", clients, JUPYTER_TOKEN=server.token, MCP_INSPECTOR_SECRET_STORE="memory")
    out = _run(npx + as_run_here(block, server, project), env, project, timeout=300)
    documents, decoder, at = [], json.JSONDecoder(), 0
    while (at := out.find("{", at)) >= 0:  # stdout's documents, then stderr's lines (2.x names its secret store)
        doc, at = decoder.raw_decode(out, at)
        documents.append(doc)
    tools, resources, listed, read = documents
    assert [t["name"] for t in tools["tools"]][:3] == ["list", "glob", "find"]
    assert resources == {"resources": []}  # the config's session has no saved results yet
    assert listed["content"][0]["text"].startswith("<path>.</path>")
    assert read["content"][0]["text"] == (
        "<path>README.md</path>\n<type>file</type>\n<content>\n1: # A project\n\n"
        "(End of file - total 1 line)\n</content>"
    )


def test_the_documented_stdio_entry_runs(project, tmp_path):
    (entry,) = [e for name, e in mcp_servers_entries() if e.get("command") == "dsh-jupyter-mcp"][:1]
    args = [str(project) if a == "/path/to/project" else a for a in entry["args"]]
    args += ["--state-path", str(tmp_path / "state.sqlite")]
    command = str(Path(sys.executable).with_name(entry["command"]))

    async def main():
        params = StdioServerParameters(command=command, args=args)
        with open(tmp_path / "err.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                return await client.call_tool("list", {})

    result = anyio.run(main)
    assert result.content[0].text == (
        "<path>.</path>\n<type>directory</type>\n<content>\nsrc/\nREADME.md\n\n"
        "(2 entries: 1 directory, 1 file)\n</content>"
    )


# -- a refused connection, as docs/mcp.md says each client shows it --------------------------------


def _lists(clients, url: str, header: str | None, tmp_path: Path) -> tuple[str, str]:
    """``claude mcp list`` and ``opencode mcp list`` for one HTTP entry (``header`` None: no token)."""
    project = tmp_path / "project"
    project.mkdir(parents=True)
    env = client_env(tmp_path / "home", clients)
    add = f"claude mcp add --transport http dsh-jupyter {_quote(url)}"
    _run(add + (f" --header {_quote(header)}" if header else ""), env, project)
    entry: dict = {"type": "remote", "url": url, "enabled": True}
    if header:
        entry["headers"] = {"Authorization": header.split(": ", 1)[1]}
    (project / "opencode.json").write_text(json.dumps({"mcp": {"dsh-jupyter": entry}}))
    return _run("claude mcp list", env, project), _run("opencode mcp list", env, project)


CLAUDE_REFUSED = (
    "dsh-jupyter: {url} (HTTP) - ✘ Failed to connect — Server rejected the configured Authorization header "
    "(HTTP 403). Check that the token is valid for this MCP endpoint — OAuth fallback is disabled when "
    'headers.Authorization is set. Error detail: {{"jsonrpc":"2.0","id":0,"error":{{"code":-32001,'
    '"message":"missing or invalid Jupyter token: send the server\'s token in the header '
    '\\"Authorization: token <TOKEN>\\"","data":{{"code":"TOKEN_REQUIRED"}}}}}}'
)


@pytest.mark.slow
def test_a_wrong_token_is_told_apart_from_a_dead_server_and_starts_no_oauth(clients, server, tmp_path):
    url = mcp_url(server, "refused")
    seen = len(server.log_of_our_own())  # other tests' clients (mcp-remote) may have probed before
    claude, opencode = _lists(clients, url, "Authorization: token wrong", tmp_path / "wrong")
    assert CLAUDE_REFUSED.format(url=url) in claude.splitlines(), claude
    assert "✗ dsh-jupyter failed" in opencode and "SSE error: Non-200 status code (403)" in opencode, opencode
    claude, opencode = _lists(clients, url, None, tmp_path / "none")
    assert f"dsh-jupyter: {url} (HTTP) - ! Needs authentication" in claude.splitlines(), claude
    assert "SSE error: Non-200 status code (403)" in opencode, opencode
    assert "/.well-known/" not in server.log_of_our_own()[seen:]  # no OAuth discovery was started
    dead = "http://127.0.0.1:9/dsh/mcp"  # the discard port: nothing listens there
    claude, opencode = _lists(clients, dead, "Authorization: token wrong", tmp_path / "dead")
    assert f"dsh-jupyter: {dead} (HTTP) - ✘ Failed to connect — ECONNREFUSED: Unable to connect." in claude, claude
    assert "SSE error: Unable to connect. Is the computer able to access the url?" in opencode, opencode
