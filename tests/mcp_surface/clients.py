"""The MCP clients people run, installed from npm into ``tests/mcp_surface/node`` and driven from tests.

``node/package.json`` pins them: the official TypeScript SDK (the base of Claude
Code, Cursor, VS Code, the Inspector and mcp-remote) with ``node/drive.mjs`` to drive it,
``mcp-remote``, the Inspector CLI in its last Node 20 release (0.15) and a 2.x one (2.12, run on
Node 22 from the ``node-linux-*`` package), Claude Code and OpenCode. ``installed()`` runs
``npm install --ignore-scripts --no-package-lock`` there once (a lock file made on one platform
fails ``npm ci`` on another: it lists only that platform's optional binary packages) (the
binaries ship in the packages; no install script is needed); nothing is installed globally.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

NODE_DIR = Path(__file__).resolve().parent / "node"
MODULES = NODE_DIR / "node_modules"
_ARCH = {"x86_64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine(), platform.machine())


@dataclass(frozen=True)
class Clients:
    node: str  # the machine's Node (20 here)
    node22: Path
    drive: Path  # drive.mjs: the TypeScript SDK's Client
    mcp_remote: Path
    inspector_015: Path
    inspector_2: Path
    claude: Path
    opencode: Path
    bin_dir: Path  # a folder with `claude`, `opencode` and `dsh-jupyter-mcp`, for documented commands


def installed(tmp_root: Path) -> Clients:
    """The clients, installed on first use (under a file lock, so parallel runs wait)."""
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        raise RuntimeError("the MCP client tests need node and npm on PATH (./dev test expects them)")
    stamp = MODULES / ".installed"
    lock_file = NODE_DIR / ".install.lock"
    with open(lock_file, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        wanted = (NODE_DIR / "package.json").read_bytes()
        if not stamp.exists() or stamp.read_bytes() != wanted:
            proc = subprocess.run(
                [
                    npm,
                    "install",
                    "--ignore-scripts",
                    "--no-package-lock",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                ],
                cwd=NODE_DIR,
                capture_output=True,
                text=True,
                timeout=900,
            )
            if proc.returncode != 0:
                raise RuntimeError(f"npm install in {NODE_DIR} failed:\n{proc.stderr[-3000:]}")
            stamp.write_bytes(wanted)
    bin_dir = tmp_root / "client-bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    found = Clients(
        node=node,
        node22=MODULES / f"node-linux-{_ARCH}" / "bin" / "node",
        drive=NODE_DIR / "drive.mjs",
        mcp_remote=MODULES / "mcp-remote" / "dist" / "proxy.js",
        inspector_015=MODULES / "@modelcontextprotocol" / "inspector" / "cli" / "build" / "cli.js",
        inspector_2=MODULES / "inspector-node22" / "clients" / "launcher" / "build" / "index.js",
        claude=MODULES / "@anthropic-ai" / f"claude-code-linux-{_ARCH}" / "claude",
        opencode=MODULES / f"opencode-linux-{_ARCH}" / "bin" / "opencode",
        bin_dir=bin_dir,
    )
    for name, target in [
        ("claude", found.claude),
        ("opencode", found.opencode),
        ("dsh-jupyter-mcp", Path(sys.executable).with_name("dsh-jupyter-mcp")),
    ]:
        link = bin_dir / name
        if not link.exists():
            link.symlink_to(target)
    missing = [
        str(p)
        for p in (
            found.node22,
            found.drive,
            found.mcp_remote,
            found.inspector_015,
            found.inspector_2,
            found.claude,
            found.opencode,
        )
        if not p.exists()
    ]
    if missing:
        raise RuntimeError(f"installed MCP clients are missing files: {missing}")
    return found


def drive(clients: Clients, spec: dict, tmp: Path, timeout: float = 180) -> dict:
    """Run ``drive.mjs`` (the TypeScript SDK's ``Client``) on ``spec``; its JSON report."""
    spec_file = tmp / f"drive-{os.getpid()}-{len(list(tmp.glob('drive-*')))}.json"
    spec_file.write_text(json.dumps(spec))
    proc = subprocess.run(
        [clients.node, str(clients.drive), str(spec_file)], capture_output=True, text=True, timeout=timeout, cwd=tmp
    )
    if proc.returncode != 0 or not proc.stdout:
        raise AssertionError(f"drive.mjs failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    report = json.loads(proc.stdout)
    assert "connectError" not in report, report["connectError"]
    return report


def client_env(home: Path, clients: Clients, **extra: str) -> dict:
    """A throwaway HOME (configs land there, not in the user's) with the clients first on PATH."""
    home.mkdir(parents=True, exist_ok=True)
    keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TERM", "TMPDIR")}
    return {
        **keep,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "PATH": f"{clients.bin_dir}:{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        **extra,
    }
