"""The client configurations in docs/mcp.md and the README: they parse, have the shape each client
reads, point at the endpoint, and the stdio one starts a server the SDK client can use."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "docs" / "mcp.md", REPO / "README.md"]


def blocks(path: Path, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", path.read_text(), flags=re.S)


def json_configs() -> list[dict]:
    return [json.loads(b) for path in DOCS for b in blocks(path, "json")]


def test_every_json_block_parses_and_names_the_endpoint_or_the_stdio_server():
    configs = json_configs()
    assert len(configs) >= 3
    text = json.dumps(configs)
    for url in re.findall(r'"url": "([^"]+)"', text):
        assert re.fullmatch(r"http://127\.0\.0\.1:8888/dsh/mcp(\?session=[\w-]+)?", url), url
    assert '"dsh-jupyter-mcp"' in text and '"--root"' in text


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
    tomllib = pytest.importorskip("tomllib")
    (toml,) = blocks(REPO / "docs" / "mcp.md", "toml")
    servers = tomllib.loads(toml)["mcp_servers"]
    assert servers["dsh-jupyter"] == {"command": "dsh-jupyter-mcp", "args": ["--root", "/path/to/project"]}
    assert servers["dsh-jupyter-http"]["bearer_token_env_var"] == "JUPYTER_TOKEN"


def test_claude_code_commands_use_the_http_transport_and_the_token_header():
    text = "\n".join(blocks(REPO / "docs" / "mcp.md", "sh"))
    assert 'claude mcp add --transport http dsh-jupyter "http://127.0.0.1:8888/dsh/mcp?session=claude"' in text
    assert '--header "Authorization: token $JUPYTER_TOKEN"' in text
    assert 'claude mcp add dsh-jupyter -- dsh-jupyter-mcp --root "$PWD"' in text


def test_the_documented_stdio_config_runs(tmp_path):
    (config,) = [c for c in json_configs() if "mcpServers" in c][:1]
    entry = config["mcpServers"]["dsh-jupyter"]
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    args = [str(root) if a == "/path/to/project" else a for a in entry["args"]]
    args += ["--state-path", str(tmp_path / "state.sqlite")]
    command = str(Path(sys.executable).with_name(entry["command"]))

    async def main():
        params = StdioServerParameters(command=command, args=args)
        with open(tmp_path / "err.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as client:
                    await client.initialize()
                    return await client.call_tool("list", {})

    result = anyio.run(main)
    assert result.content[0].text == (
        "<path>.</path>\n<type>directory</type>\n<content>\nsrc/\n\n(1 entry: 1 directory, 0 files)\n</content>")
