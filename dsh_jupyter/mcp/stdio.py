"""The stdio MCP server: ``python -m dsh_jupyter.mcp --root DIR`` (console script ``dsh-jupyter-mcp``).

Why it exists: local agents (Claude Code, Codex, OpenCode, Cursor) start MCP servers as child
processes and talk over stdin/stdout. This one serves the same tools as the Jupyter server's
``/dsh/mcp`` endpoint, confined to ``--root``, in one dsh session (``--session``, default
``default``), with the same state file a notebook on that root uses by default
(``default_state_path()``), so an agent here and a person in ``%dsh`` share observations, spills
and the call log.

The protocol is spoken by ``jsonrpc`` (not the SDK, whose import alone takes longer than a
client should wait for the first answer; see there).

What it must never do: write anything but JSON-RPC to stdout (logs go to stderr), depend on
inherited ``DSH_*`` variables being there (MCP stdio clients pass the child only a few), start
with a setting the core refuses (it exits with status 2 and a message naming the setting), run
a tool on the event loop, or outlive stdin.
"""

from __future__ import annotations

import argparse
import logging
import sys

from ..core.errors import ToolError
from ..core.registry import TOOLS
from ..core.settings import SETTING_DOCS, Settings, SettingsError
from ..core.workspace import Workspace, default_state_path

__all__ = ["main", "parse_args"]

PROG = "dsh-jupyter-mcp"
log = logging.getLogger("dsh_jupyter.mcp")

_DEFAULTS = Settings()
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def convert(name: str, raw: str) -> object:
    """A setting's command-line text as the type its default has (int, bool or a path)."""
    default = getattr(_DEFAULTS, name)
    if isinstance(default, bool):
        lowered = raw.strip().lower()
        if lowered in _TRUE or lowered in _FALSE:
            return lowered in _TRUE
        raise SettingsError(f"setting {name} must be true or false, got {raw!r}")
    if isinstance(default, int):
        try:
            return int(raw, 10)
        except ValueError:
            raise SettingsError(f"setting {name} must be an integer, got {raw!r}") from None
    return raw


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        usage=f"{PROG} --root DIR [--session NAME] [--state-path P] [--SETTING=VALUE ...]",
        description=f"Serve the dsh-jupyter workspace tools ({', '.join(t.name for t in TOOLS)}) over MCP on "
        "stdin/stdout, confined to --root.",
        epilog="Any core setting can be given as --NAME=VALUE (e.g. --glob_max_results=50); "
        "logs go to stderr; the server exits when stdin closes.",
        allow_abbrev=False,
    )
    parser.add_argument("--root", required=True, metavar="DIR", help="The workspace root (confinement root and cwd).")
    parser.add_argument(
        "--session",
        default="default",
        metavar="NAME",
        help="The dsh session to use (default: default, as the notebook magic and REST).",
    )
    settings = parser.add_argument_group("settings", "The core settings, under the names the server and the magic use.")
    for name in Settings.names():
        options = [f"--{name}"]
        if "_" in name:
            options.insert(0 if name == "state_path" else 1, f"--{name.replace('_', '-')}")
        help_text = SETTING_DOCS.get(name, "")
        if name == "state_path":
            help_text += f" Default here: {default_state_path()}."
        settings.add_argument(*options, dest=name, default=None, metavar="VALUE", help=help_text.replace("%", "%%"))
    return parser


def parse_args(argv: list[str] | None = None) -> tuple[argparse.Namespace, dict]:
    """The parsed arguments and the settings given (validated); exits 2 on a bad one."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        first = unknown[0]
        if first.startswith("--"):
            name = first[2:].partition("=")[0].replace("-", "_")
            parser.error(f"unknown setting {name!r}; known settings: {', '.join(Settings.names())}")
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        given = {
            name: convert(name, getattr(args, name)) for name in Settings.names() if getattr(args, name) is not None
        }
        Settings.from_mapping(given)
    except SettingsError as exc:
        parser.error(str(exc))
    return args, given


def serve(workspace: Workspace, session: str) -> None:
    """Serve MCP on stdin/stdout until stdin closes.

    The protocol messages go to the real stdout; ``sys.stdout`` itself is pointed at stderr, so a
    stray ``print`` anywhere can never corrupt the stream the client parses.
    """
    from .jsonrpc import StdioSession

    out = sys.stdout.buffer
    sys.stdout = sys.stderr
    StdioSession(workspace, session, out).serve(sys.stdin.buffer)


def main(argv: list[str] | None = None) -> int:
    args, settings = parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format=f"{PROG}: %(levelname)s %(message)s")
    log.setLevel(logging.INFO)
    settings.setdefault("state_path", default_state_path())
    try:
        workspace = Workspace(args.root, session=args.session, surface="mcp", **settings)
    except SettingsError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except ToolError as exc:  # a --session that can never work: say so now, not at every call
        print(f"{PROG}: error: --session: {exc.message}", file=sys.stderr)
        return 2
    log.info(
        "root %s; session %s; state %s; tools %s",
        workspace.root,
        workspace.session,
        workspace.state_path,
        ", ".join(workspace.registry),
    )
    try:
        serve(workspace, workspace.session)
    except KeyboardInterrupt:
        return 130
    return 0
