"""The ``%dsh`` subcommands: one table holding each name, its arguments and what it runs.

Why it exists: the router (``magic.py``), the help text and the usage lines all read this one
table, so a subcommand is added in one place and its usage is generated from its own parser.
Each runner turns parsed arguments into exactly one core call and returns a result object.

A tool's subcommand is built from the tool's input schema (``toolargs.py``). Only what the schema
cannot say is declared here, in ``TOOL_COMMANDS``: which properties are positional and in what
order, short flags, metavars, the properties filled from elsewhere (a cell body) and options of
the magic's own. A tool with no entry there still gets a subcommand: its required properties
positional, the rest options.

What it must never do: build a tool argument the user did not give (the call log shows what was
asked, and ``--text`` must equal ``Workspace.run`` with the same arguments), or let a user mistake
escape as a traceback: argument problems raise ``UsageError`` with a one-line usage.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from IPython.core.error import UsageError
from IPython.core.magic_arguments import MagicArgumentParser

from ..core.errors import ToolError
from ..core.registry import TOOLS
from ..core.state.store import StateError
from ..core.tools.spec import ToolSpec
from .results import calls_info, error_info, session_info, spills_info, status_info, tools_info
from .toolargs import ToolCommand, given, schema_arguments, tool_arguments

__all__ = [
    "EDIT_BLOCK_END",
    "EDIT_SEPARATOR",
    "SUBCOMMANDS",
    "TOOL_COMMANDS",
    "Subcommand",
    "overview",
    "parse_edit_body",
    "tool_subcommand",
]

EDIT_SEPARATOR = "======="
# The line between two edits of one %%dsh edit cell. Not git's >>>>>>>: IPython strips a leading
# ">>>" from every line of a cell as a pasted doctest prompt, so that line would never arrive.
EDIT_BLOCK_END = "~~~~~~~"
CALLS_DEFAULT_LIMIT = 50


class _OneLineFormatter(argparse.RawDescriptionHelpFormatter):
    """Usage on one line however long (a usage error is one line in a notebook)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=10_000, max_help_position=32)


class SubParser(MagicArgumentParser):
    """argparse for one subcommand: errors raise ``UsageError`` carrying the one-line usage."""

    def __init__(self, prog: str, description: str) -> None:
        super().__init__(prog=prog, description=description, formatter_class=_OneLineFormatter)

    def one_line_usage(self) -> str:
        return " ".join(self.format_usage().split())

    def error(self, message: str):
        raise UsageError(f"{message}. {self.one_line_usage()}")


@dataclass(frozen=True)
class Subcommand:
    name: str
    summary: str
    arguments: tuple  # ((flags...), {argparse kwargs}) pairs
    run: Callable  # (magics, namespace, cell) -> result object
    cell: bool = False  # True: the cell body is an input (``%%dsh write``), required
    outputs: bool = True  # accepts --text / --json
    line_flag: str | None = None  # a flag that makes the line form complete, with no body (write --empty)

    def usage(self) -> str:
        return self.parser().one_line_usage()

    def parser(self) -> SubParser:
        parser = SubParser(f"%dsh {self.name}", self.summary)
        for flags, kwargs in self.arguments:
            parser.add_argument(*flags, **kwargs)
        if self.outputs:
            group = parser.add_mutually_exclusive_group()
            group.add_argument("--text", action="store_true", help="print exactly the model-visible text")
            group.add_argument("--json", action="store_true", help="print the value as JSON")
        return parser


# -- runners -----------------------------------------------------------------------------------


def _grep(m, a, cell):
    if a.files and a.count:
        raise UsageError(f"-l/--files and -c/--count are two output modes: give one. {SUBCOMMANDS['grep'].usage()}")
    mode = "files_with_matches" if a.files else "count" if a.count else None
    return m.call("grep", {**tool_arguments(_SPECS["grep"], a), **given(output_mode=mode)})


def _write(m, a, cell):
    # IPython refuses a cell magic with an empty body, so an empty file is the line form's flag.
    return m.call("write", {"file_path": a.file_path, "content": "" if a.empty else cell})


def parse_edit_body(body: str, separator: str = EDIT_SEPARATOR) -> tuple[str, str]:
    """Split an edit cell body into (old, new) at its one line ``separator`` (``=======``).

    The lines before the separator are the old text, the lines after it the new text, each
    joined with newlines and without a final newline (the one IPython adds to every cell body
    is dropped). No separator or more than one is a usage error: the split would be a guess;
    text that holds a line ``=======`` is edited with another ``--separator``.
    """
    if not separator or "\n" in separator or "\r" in separator:
        raise UsageError(f"--separator must be one non-empty line, got {separator!r}. {_EDIT_USAGE}")
    text = body[:-1] if body.endswith("\n") else body
    lines = text.split("\n")
    marks = [i for i, line in enumerate(lines) if line == separator]
    if len(marks) != 1:
        found = "none" if not marks else f"{len(marks)} (lines {', '.join(str(i + 2) for i in marks)} of the cell)"
        raise UsageError(
            f"the edit body needs exactly one line {separator} between the old and the new text; found {found}. "
            f"{_EDIT_USAGE}"
        )
    i = marks[0]
    return "\n".join(lines[:i]), "\n".join(lines[i + 1 :])


_EDIT_USAGE = (
    f"Usage: %%dsh edit FILE [--replace-all] [--dry-run] [--cell-id ID] [--separator LINE] with the body: old "
    f"text, a line {EDIT_SEPARATOR} (or the --separator line), new text; several edits are separated by a line "
    f"{EDIT_BLOCK_END}"
)


def _edit(m, a, cell):
    blocks = split_edit_blocks(cell)
    if len(blocks) > 1:  # several edits, applied in order, all or nothing
        edits = []
        for block in blocks:
            old, new = parse_edit_body(block, a.separator)
            edits.append({"old_string": old, "new_string": new, **({"replace_all": True} if a.replace_all else {})})
        return m.call("edit", given(file_path=a.file_path, edits=edits, cell_id=a.cell_id, dry_run=a.dry_run))
    old, new = parse_edit_body(cell, a.separator)
    return m.call(
        "edit",
        given(
            file_path=a.file_path,
            old_string=old,
            new_string=new,
            replace_all=a.replace_all,
            cell_id=a.cell_id,
            dry_run=a.dry_run,
        ),
    )


def split_edit_blocks(body: str) -> list[str]:
    """The cell body's edits: the parts between lines ``~~~~~~~`` (one part when there is none).

    A final ``~~~~~~~`` line ends the last edit and starts none.
    """
    text = body[:-1] if body.endswith("\n") else body
    blocks: list[str] = []
    current: list[str] = []
    for line in text.split("\n"):
        if line == EDIT_BLOCK_END:
            blocks.append("\n".join(current))
            current = []
        else:
            current.append(line)
    if current or not blocks:
        blocks.append("\n".join(current))
    return blocks


def _session(m, a, cell):
    ws = m.workspace
    if a.name is not None:
        try:
            m.use_session(a.name)
        except ToolError as exc:
            raise UsageError(f"{exc.message}. Usage: %dsh session [NAME]") from None
    try:
        info = ws.session_info()
        sessions = ws.sessions()
    except (ToolError, StateError) as exc:
        return error_info("session", getattr(exc, "message", str(exc)), ws.session, ws)
    return session_info(ws.session, info, sessions, ws.state_path, switched=a.name is not None, workspace=ws)


def _spills(m, a, cell):
    ws = m.workspace
    try:
        return spills_info(ws.spill_list(), ws.session, ws)
    except (ToolError, StateError) as exc:
        return error_info("spills", getattr(exc, "message", str(exc)), ws.session, ws)


def _calls(m, a, cell):
    ws = m.workspace
    limit = a.limit if a.limit is not None else CALLS_DEFAULT_LIMIT
    if limit < 1 or (a.offset is not None and a.offset < 1):
        raise UsageError("--offset and --limit must be at least 1. Usage: %dsh calls [--offset N] [--limit N]")
    try:
        if a.offset is None:  # the newest page, newest last
            total = ws.calls(limit=0)["total"]
            start = max(0, total - limit)
        else:
            start = a.offset - 1
        return calls_info(ws.calls(offset=start, limit=limit), ws)
    except (ToolError, StateError) as exc:
        return error_info("calls", getattr(exc, "message", str(exc)), ws.session, ws)


def _tools(m, a, cell):
    ws = m.workspace
    return tools_info(ws.tools(), ws.session, ws)


def _status(m, a, cell):
    ws = m.workspace
    return status_info(ws.status(), ws.root, ws.session, ws)


def _help(m, a, cell):
    if a.subcommand is None:
        print(overview())
    elif a.subcommand not in SUBCOMMANDS:
        raise UsageError(f'unknown subcommand "{a.subcommand}". {short_usage()}')
    else:
        print(SUBCOMMANDS[a.subcommand].parser().format_help().rstrip())
    return None


_INT = {"type": int, "metavar": "N"}


# What a tool's subcommand declares besides its input schema; see the module docstring.
TOOL_COMMANDS: dict[str, ToolCommand] = {
    "list": ToolCommand("List one page of a directory's direct children.", positional=(("path", "PATH"),)),
    "glob": ToolCommand(
        "Find files by glob pattern (sampled across top-level entries over the cap).",
        positional=(("pattern", "PATTERN"), ("path", "PATH")),
        metavars={"exclude": "GLOB"},
    ),
    "grep": ToolCommand(
        "Search file contents with a ripgrep regex.",
        positional=(("pattern", "PATTERN"), ("path", "PATH")),
        short={"ignore_case": "-i", "context": "-C"},
        metavars={"include": "GLOB", "exclude": "GLOB"},
        elsewhere=("output_mode",),
        own=(
            (("-l", "--files"), {"action": "store_true", "help": "matching files with their counts, by path"}),
            (("-c", "--count"), {"action": "store_true", "help": "matching files with their counts, most first"}),
        ),
        run=_grep,
    ),
    "read": ToolCommand(
        "Read a window of a text file as numbered lines.",
        positional=(("file_path", "FILE"),),
        metavars={"cell_id": "ID", "output": "K"},
    ),
    "write": ToolCommand(
        "Create or replace FILE with the cell body (%%dsh write FILE), or empty it (--empty).",
        positional=(("file_path", "FILE"),),
        elsewhere=("content",),
        own=(
            (
                ("--empty",),
                {"action": "store_true", "help": "write an empty FILE from the line magic (a cell magic needs a body)"},
            ),
        ),
        run=_write,
        cell=True,
        line_flag="empty",
    ),
    "edit": ToolCommand(
        f"Replace text in FILE; cell body: old text, a line {EDIT_SEPARATOR}, new text (more edits after a line "
        f"{EDIT_BLOCK_END}).",
        positional=(("file_path", "FILE"),),
        metavars={"cell_id": "ID"},
        elsewhere=("old_string", "new_string", "edits"),
        own=(
            (
                ("--separator",),
                {
                    "metavar": "LINE",
                    "default": EDIT_SEPARATOR,
                    "help": f"the line between old and new text (default {EDIT_SEPARATOR})",
                },
            ),
        ),
        run=_edit,
        cell=True,
    ),
    "edit_cells": ToolCommand(
        "Insert, delete, move or retype cells of notebook FILE, or clear outputs; OPERATIONS is a JSON list.",
        positional=(("file_path", "FILE"), ("operations", "OPERATIONS")),
    ),
    "move": ToolCommand(
        "Move or rename a file or folder (never over an existing one, unless --overwrite and read).",
        positional=(("source", "SRC"), ("destination", "DEST")),
    ),
    "list_dir": ToolCommand(
        "Compatibility listing as JSON (optionally recursive, bounded).", positional=(("path", "PATH"),)
    ),
}


def _call_tool(spec: ToolSpec) -> Callable:
    """The runner of a subcommand that calls the tool with the arguments given, and nothing else."""

    def run(m, a, cell):
        return m.call(spec.name, tool_arguments(spec, a))

    return run


def tool_subcommand(spec: ToolSpec) -> Subcommand:
    """A tool's subcommand: its ``TOOL_COMMANDS`` entry, or the required properties positional."""
    command = TOOL_COMMANDS.get(spec.name) or ToolCommand(
        positional=tuple((name, name.upper()) for name in spec.input_schema.get("required", ()))
    )
    summary = command.summary or spec.description.partition(". ")[0].rstrip(".") + "."
    return Subcommand(
        spec.name,
        summary,
        schema_arguments(spec, command),
        command.run or _call_tool(spec),
        cell=command.cell,
        line_flag=command.line_flag,
    )


_SPECS: dict[str, ToolSpec] = {t.name: t for t in TOOLS}

SUBCOMMANDS: dict[str, Subcommand] = {
    **{t.name: tool_subcommand(t) for t in TOOLS},
    **{
        s.name: s
        for s in (
            Subcommand(
                "session",
                "Show the current session, or switch to session NAME.",
                ((("name",), {"nargs": "?", "metavar": "NAME"}),),
                _session,
            ),
            Subcommand("spills", "List the saved full results of the current session.", (), _spills),
            Subcommand(
                "calls",
                "Show the session's call log, newest last (default: the newest 50).",
                (
                    (("--offset",), {**_INT, "help": "1-based first call (default: the newest page)"}),
                    (("--limit",), {**_INT, "help": f"calls per page (default {CALLS_DEFAULT_LIMIT})"}),
                ),
                _calls,
            ),
            Subcommand("tools", "List the tools with their arguments.", (), _tools),
            Subcommand("status", "Show how the workspace confines the tools, and its index.", (), _status),
            Subcommand(
                "help",
                "Show this overview, or one subcommand's help.",
                ((("subcommand",), {"nargs": "?", "metavar": "SUBCOMMAND"}),),
                _help,
                outputs=False,
            ),
        )
    },
}


def short_usage() -> str:
    return f"Usage: %dsh SUBCOMMAND [ARGS] where SUBCOMMAND is one of {', '.join(SUBCOMMANDS)}"


def overview() -> str:
    """The help text of ``%dsh``: one usage line per subcommand, generated from the parsers."""
    lines = ["%dsh SUBCOMMAND [ARGS]: the dsh workspace tools from a notebook.", ""]
    for sub in SUBCOMMANDS.values():
        usage = sub.parser().one_line_usage().removeprefix("usage: ")
        if sub.cell:
            usage = "%" + usage
        lines.append(f"  {usage}\n      {sub.summary}")
    lines += [
        "",
        "--text prints exactly the text the model sees; --json prints the value. Without them the",
        "result object is returned: a widget in JupyterLab/Notebook, its text elsewhere;",
        "r.to_frame() gives a pandas DataFrame. Quote arguments with spaces; put -- before a",
        "PATTERN that starts with -.",
    ]
    return "\n".join(lines)
