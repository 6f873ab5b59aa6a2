"""The ``%dsh`` line magic and ``%%dsh`` cell magic: the workspace tools from a notebook cell.

Why it exists: a notebook user should reach the same tools, the same session and the same text
an agent sees, in one line. The magic splits the line with ``shlex`` (quoted arguments keep
their spaces), routes the first word through the subcommand table (``commands.py``), and returns
the result object (``--text`` prints the model's text, ``--json`` the value, instead).

The kernel's ``Workspace`` is built on first use from ``DSH_ROOT``/``DSH_STATE_PATH`` (exported by
the server extension, so a kernel the server started shares its state) and this class's config
traits, which carry the core settings under their own names (``%config DshMagics.list_max_entries
= 50``). The default session is ``default``, the same as a REST call that names none.

What it must never do: show a traceback for a user mistake (``UsageError`` instead), import
ipywidgets before a widget is wanted, or log a call under another surface than ``magic``.
"""

from __future__ import annotations

import json
import shlex

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from traitlets import Bool, Int, Unicode, observe

from ..core.settings import SETTING_DOCS, Settings, SettingsError
from ..core.workspace import Workspace
from .commands import SUBCOMMANDS, overview, short_usage
from .results import KernelResult

__all__ = ["DshMagics", "run_line"]

_DEFAULTS = Settings()


def _int(name: str) -> Int:
    return Int(getattr(_DEFAULTS, name), help=SETTING_DOCS[name]).tag(config=True)


def _path(name: str) -> Unicode:
    return Unicode(None, allow_none=True, help=SETTING_DOCS[name]).tag(config=True)


@magics_class
class DshMagics(Magics):
    """``%dsh``: list, glob, grep, read, write, edit, list_dir, session, spills, calls, tools."""

    root = Unicode(
        None, allow_none=True, help="Workspace root (default: DSH_ROOT from the server, else the cwd)."
    ).tag(config=True)
    list_max_entries = _int("list_max_entries")
    glob_max_results = _int("glob_max_results")
    grep_max_matches = _int("grep_max_matches")
    grep_max_line_bytes = _int("grep_max_line_bytes")
    raw_output_max_bytes = _int("raw_output_max_bytes")
    search_timeout_ms = _int("search_timeout_ms")
    read_limit = _int("read_limit")
    read_max_line_length = _int("read_max_line_length")
    read_max_bytes = _int("read_max_bytes")
    read_stream_min_size = _int("read_stream_min_size")
    list_dir_max_entries = _int("list_dir_max_entries")
    glob_sample_over_cap = Bool(_DEFAULTS.glob_sample_over_cap, help=SETTING_DOCS["glob_sample_over_cap"]).tag(
        config=True
    )
    state_path = _path("state_path")
    spill_root = _path("spill_root")
    rg_path = _path("rg_path")

    def __init__(self, shell=None, **kwargs) -> None:
        super().__init__(shell=shell, **kwargs)
        self._workspace: Workspace | None = None
        self._session = "default"

    # -- the workspace ---------------------------------------------------------------------

    @property
    def workspace(self) -> Workspace:
        """The kernel's Workspace (surface ``magic``), built on first use."""
        if self._workspace is None:
            settings = {n: getattr(self, n) for n in Settings.names() if getattr(self, n) is not None}
            try:
                self._workspace = Workspace(self.root, session=self._session, surface="magic", **settings)
            except SettingsError as exc:
                raise UsageError(f"dsh cannot start: {exc}") from None
        return self._workspace

    @observe("root", *Settings.names())
    def _settings_changed(self, change) -> None:
        self._workspace = None  # rebuilt with the new settings on the next call; the session stays

    def use_session(self, name: str) -> None:
        self.workspace.use_session(name)
        self._session = name

    def call(self, tool: str, args: dict) -> KernelResult:
        ws = self.workspace
        return KernelResult.wrap(ws.call(tool, args, surface="magic"), ws, args)

    # -- the magic -------------------------------------------------------------------------

    @line_cell_magic
    def dsh(self, line: str, cell: str | None = None):
        return run_line(self, line, cell)


def _help_requested(tokens: list[str]) -> bool:
    for token in tokens:
        if token == "--":
            return False
        if token in ("-h", "--help"):
            return True
    return False


def run_line(magics: DshMagics, line: str, cell: str | None):
    """Route one ``%dsh`` line (and ``%%dsh`` body) to its subcommand; see the module docstring."""
    try:
        tokens = shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"cannot split the arguments ({exc}). {short_usage()}") from None
    if not tokens:
        raise UsageError(short_usage())
    name, rest = tokens[0], tokens[1:]
    sub = SUBCOMMANDS.get(name)
    if sub is None:
        raise UsageError(f'unknown subcommand "{name}". {short_usage()}')
    parser = sub.parser()
    if _help_requested(rest):
        print(parser.format_help().rstrip())
        return None
    args = parser.parse_args(rest)
    usage = parser.one_line_usage().removeprefix("usage: ")
    if sub.cell and cell is None:
        raise UsageError(f"{name} takes the cell body as input; use the cell magic: %{usage}")
    if not sub.cell and cell is not None and cell.strip():
        raise UsageError(f"{name} takes no cell body; use the line magic: {usage}")
    result = sub.run(magics, args, cell)
    if sub.outputs and args.text:
        print(result.text)
        return None
    if sub.outputs and args.json:
        print(json.dumps(result.value, indent=2, ensure_ascii=False))
        return None
    return result


DshMagics.dsh.__doc__ = overview()
