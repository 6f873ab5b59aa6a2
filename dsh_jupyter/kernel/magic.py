"""The ``%dsh`` line magic and ``%%dsh`` cell magic: the workspace tools from a notebook cell.

Why it exists: a notebook user should reach the same tools, the same session and the same text
an agent sees, in one line. The magic splits the line as a shell would (``shlex``: quoted
arguments keep their spaces; a trailing ``# comment`` is dropped), routes the first word through
the subcommand table (``commands.py``), and returns the result object (``--text`` prints the
model's text, ``--json`` the value, instead).

The kernel's ``Workspace`` is built on first use from ``DSH_ROOT``/``DSH_STATE_PATH`` (exported by
the server extension, so a kernel the server started shares its state), the server's settings in
``DSH_SETTINGS`` and this class's config traits, which carry the core settings under their own
names (``%config DshMagics.list_max_entries = 50``) and win over the server's. The default session
is ``default``, the same as a REST call that names none.

What it must never do: show a traceback for a user mistake (``UsageError`` instead), import
ipywidgets before a widget is wanted, or log a call under another surface than ``magic``.
"""

from __future__ import annotations

import json
import shlex

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from traitlets import Unicode, observe

from ..core.settings import Settings, SettingsError, resolve_settings
from ..core.workspace import Workspace
from ..settings_traits import SettingTraits
from .commands import SUBCOMMANDS, overview, short_usage
from .results import KernelResult

__all__ = ["DshMagics", "run_line", "split_line", "strip_comment"]


@magics_class
class DshMagics(SettingTraits, Magics):
    """``%dsh``: a subcommand per registry tool, and session, spills, calls, tools and help (``commands.py``).

    The core settings are config traits from ``SettingTraits`` under their own names.
    """

    root = Unicode(None, allow_none=True, help="Workspace root (default: DSH_ROOT from the server, else the cwd).").tag(
        config=True
    )

    def __init__(self, shell=None, **kwargs) -> None:
        super().__init__(shell=shell, **kwargs)
        self._workspace: Workspace | None = None
        self._workspace_key: tuple | None = None
        self._session = "default"

    # -- the workspace ---------------------------------------------------------------------

    @property
    def workspace(self) -> Workspace:
        """The kernel's Workspace (surface ``magic``), built on first use and whenever its settings
        change (``%config`` even to the value a trait already had, or another ``DSH_SETTINGS``)."""
        try:
            settings = self.effective_settings()
            key = (self.root, sorted(settings.items()))
            if self._workspace is None or key != self._workspace_key:
                self._workspace = Workspace(self.root, session=self._session, surface="magic", **settings)
                self._workspace_key = key
        except SettingsError as exc:
            raise UsageError(f"dsh cannot start: {exc}") from None
        return self._workspace

    def effective_settings(self) -> dict:
        """The settings the kernel's workspace uses, each from the first place that has it.

        1. ``%config DshMagics.<name>`` (or ``c.DshMagics.<name>`` in ``ipython_config.py``):
           what the user set in this kernel;
        2. ``DSH_SETTINGS``: what the server that started this kernel runs with, so ``%dsh``
           pages exactly as the REST API does;
        3. the trait's default (the core default; an unset path stays unset).
        """
        configured = self.configured_names()
        values = {n: v for n, v in self.setting_values().items() if v is not None}
        given = {n: v for n, v in values.items() if n in configured}
        resolved = resolve_settings(given, fallback={n: v for n, v in values.items() if n not in configured})
        return {n: v for n, v in resolved.as_dict().items() if v is not None}

    def configured_names(self) -> set[str]:
        """The settings given in this kernel's config for this class (``%config DshMagics.x``)."""
        names: set[str] = set()
        for cls in type(self).__mro__:
            if cls.__name__ in self.config:
                names.update(k for k in self.config[cls.__name__] if k in Settings.names())
        return names

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


_BLANKS = " \t\r\n"


def strip_comment(line: str) -> str:
    """``line`` without its trailing ``# comment``, read the way a POSIX shell reads one.

    A ``#`` starts a comment only at the start of a word (at the start of the line or after
    whitespace) and outside quotes, so ``a#b``, ``'#x'`` and ``\\#x`` stay words, as in a shell.
    (``shlex`` with ``commenters`` would cut ``a#b`` to ``a``.) An unclosed quote is left for
    ``shlex`` to report.
    """
    quote = None
    word_start = True
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if quote == "'":
            if c == "'":
                quote = None
        elif quote == '"':
            if c == "\\":
                i += 1  # \" does not close the quotes
            elif c == '"':
                quote = None
        elif c == "\\":
            i += 1  # the next character is literal
            word_start = False
        elif c in "'\"":
            quote = c
            word_start = False
        elif c in _BLANKS:
            word_start = True
        elif c == "#" and word_start:
            return line[:i]
        else:
            word_start = False
        i += 1
    return line


def split_line(line: str) -> list[str]:
    """The words of a ``%dsh`` line, as a shell would split it (quotes, escapes, ``# comment``)."""
    return shlex.split(strip_comment(line))


def run_line(magics: DshMagics, line: str, cell: str | None):
    """Route one ``%dsh`` line (and ``%%dsh`` body) to its subcommand; see the module docstring."""
    try:
        tokens = split_line(line)
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
    line_form = sub.line_flag is not None and getattr(args, sub.line_flag)
    if line_form and cell is not None:
        raise UsageError(f"--{sub.line_flag} takes no cell body; use the line magic: {usage}")
    if sub.cell and cell is None and not line_form:
        hint = f" (or the line magic with --{sub.line_flag})" if sub.line_flag else ""
        raise UsageError(f"{name} takes the cell body as input; use the cell magic: %{usage}{hint}")
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
