"""What ``%dsh`` returns: tool results and session information, each shown true in every frontend.

Why it exists: the magic returns an object, not printed text, so a notebook user can keep it
(``r = %dsh list``), take ``r.text``, ``r.value`` or ``r.to_frame()``, and see it as a widget.
``KernelResult`` is the core ``Result`` plus the workspace it came from (a widget needs it to
fetch the next page); ``InfoResult`` carries the answers that are not tool calls (the call log,
saved results, the tool list, the session) in the same shape.

What it must never do: change a tool's text (``text`` is exactly what the model saw), hold a
widget before a frontend asks for one, or import the widgets: how a result becomes a widget is
registered from above (``set_view_factory``, called when the extension loads), so the
dependency between results and widgets runs one way, widgets to results.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.result import Result, html_table
from ..core.text.quoting import quote_name
from .display import bundle

__all__ = [
    "INFO_COLUMNS",
    "InfoResult",
    "KernelResult",
    "calls_info",
    "session_info",
    "set_view_factory",
    "spills_info",
    "status_info",
    "tools_info",
]

# Stable, documented columns of ``InfoResult.to_frame()`` per kind (tool results take theirs from their ToolSpec).
INFO_COLUMNS: dict[str, list[str]] = {
    "calls": ["number", "call_id", "tool", "args", "surface", "is_error", "started", "duration_ms", "text"],
    "spills": ["locator", "tool", "size", "created"],
    "tools": ["name", "arguments", "description"],
    "session": ["id", "current", "cwd", "observations", "spills", "calls", "created"],
    "status": [],
}


# The static HTML of a call log is a summary: a saved notebook must not embed every call's text.
_HTML_COLUMNS = {"calls": ["number", "tool", "args", "surface", "is_error", "started", "duration_ms"]}

_view_factory: Callable | None = None  # result -> widget or None, registered by the kernel layer


def set_view_factory(factory: Callable | None) -> None:
    """Install how a result becomes a widget (``kernel.load`` passes the widgets' ``view_for``)."""
    global _view_factory
    _view_factory = factory


class _Shown:
    """Display and widget caching shared by both result types."""

    def _repr_mimebundle_(self, include=None, exclude=None):
        return bundle(self, include, exclude)

    def widget(self):
        """The navigable view of this result (built once), or None when it has none."""
        cached = getattr(self, "_view", None)
        if cached is None and _view_factory is not None:
            cached = _view_factory(self)
            object.__setattr__(self, "_view", cached)
        return cached


@dataclass(frozen=True)
class KernelResult(_Shown, Result):
    """A core ``Result`` that knows its workspace, so its widget can page and navigate."""

    workspace: object = field(default=None, repr=False, compare=False)
    args: dict = field(default_factory=dict, repr=False, compare=False)  # the call's arguments

    @classmethod
    def wrap(cls, result: Result, workspace, args: dict | None = None) -> KernelResult:
        values = {f.name: getattr(result, f.name) for f in dataclasses.fields(Result)}
        return cls(**values, workspace=workspace, args=dict(args or {}))


@dataclass(frozen=True)
class InfoResult(_Shown):
    """An answer that is not a tool call: ``calls``, ``spills``, ``tools`` or ``session``."""

    kind: str
    text: str
    value: object
    rows_: list = field(default_factory=list, repr=False)
    is_error: bool = False
    session: str = "default"
    workspace: object = field(default=None, repr=False, compare=False)
    footer_: str = ""

    tool = property(lambda self: self.kind)

    def __str__(self) -> str:
        return self.text

    def rows(self) -> list[dict]:
        return list(self.rows_)

    def footer(self) -> str:
        return self.footer_

    def to_frame(self):
        import pandas as pd

        columns = INFO_COLUMNS[self.kind]
        return pd.DataFrame([{c: r.get(c) for c in columns} for r in self.rows_], columns=columns)

    def _html(self) -> str:
        if not self.rows_:
            import html

            return f"<pre>{html.escape(self.text)}</pre>"
        first = self.text.partition("\n")[0]
        columns = _HTML_COLUMNS.get(self.kind, INFO_COLUMNS[self.kind])
        rows = self.rows_
        if self.kind == "calls":  # titles only: long arguments by their length, times readable
            rows = [
                {
                    **r,
                    "args": _arg_text(r["args"]),
                    "started": _when(r["started"]),
                    "duration_ms": f"{r['duration_ms']:.1f}",
                }
                for r in rows
            ]
        return html_table(columns, rows, header=first, footer=self.footer_)


def error_info(kind: str, message: str, session: str, workspace=None) -> InfoResult:
    return InfoResult(kind, f"Error: {message}", {"message": message}, [], True, session, workspace)


# -- texts -------------------------------------------------------------------------------------


def _when(ts: float | None) -> str:
    return "" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def _arg_text(args: dict) -> str:
    """Arguments as ``name=value``; a long string says how long it is instead of being cut silently."""
    parts = []
    for key, value in args.items():
        if isinstance(value, str) and len(value) > 80:
            shown = f"<{len(value)} characters>"
        else:
            shown = json.dumps(value, ensure_ascii=False)
        parts.append(f"{key}={shown}")
    return ", ".join(parts)


def calls_info(page: dict, workspace=None) -> InfoResult:
    """``page`` is ``Workspace.calls(...)``: ``{session, offset (0-based), total, calls}``."""
    session, start, total, calls = page["session"], page["offset"], page["total"], page["calls"]
    rows = []
    lines = [f'Calls in session "{session}", newest last:']
    for i, c in enumerate(calls):
        number = start + i + 1
        mark = "  ERROR" if c["isError"] else ""
        withheld = c.get("withheld")
        args = f"withheld: {withheld}" if withheld else _arg_text(c["args"])
        lines.append(
            f"{number}. {_when(c['started'])}  {c['surface']}  {c['tool']}({args})  {c['durationMs']:.1f} ms{mark}"
        )
        rows.append(
            {
                "number": number,
                "call_id": c["callId"],
                "tool": c["tool"],
                "args": c["args"],
                "surface": c["surface"],
                "is_error": c["isError"],
                "started": c["started"],
                "duration_ms": c["durationMs"],
                "text": c["text"] if not withheld else f"(withheld: {withheld})",
            }
        )
    if total == 0:
        footer = "(No calls yet.)"
    elif not calls:
        footer = f"(No calls at offset {start + 1}; the session has {total}.)"
    elif start == 0 and len(calls) == total:
        footer = f"({total} {'call' if total == 1 else 'calls'}.)"
    else:
        footer = f"(Showing calls {start + 1}-{start + len(calls)} of {total}. Use --offset N --limit N to see others.)"
    dropped = page.get("dropped", 0)
    if dropped:
        footer = (
            footer[:-1]
            + f" {dropped} older {'call was' if dropped == 1 else 'calls were'} dropped by the call log's bounds.)"
        )
    lines += ["", footer]
    return InfoResult("calls", "\n".join(lines), page, rows, False, session, workspace, footer)


def spills_info(spills: list[dict], session: str, workspace=None) -> InfoResult:
    rows = [dict(s) for s in spills]
    if not spills:
        text = f'No saved results in session "{session}".'
        return InfoResult("spills", text, spills, rows, False, session, workspace)
    n = len(spills)
    lines = [f'{n} saved {"result" if n == 1 else "results"} in session "{session}":']
    for s in spills:
        lines.append(f"{quote_name(s['locator'])}  ({s['tool']}, {s['size']:,} bytes, {_when(s['created'])})")
    return InfoResult("spills", "\n".join(lines), spills, rows, False, session, workspace)


def _signature(schema: dict) -> str:
    required = set(schema.get("required", []))
    names = schema.get("properties", {})
    return ", ".join(n if n in required else f"{n}?" for n in names)


def index_line(index: dict) -> str:
    """How the workspace index stands, in one line (``%dsh status``)."""
    state = index.get("state")
    if state == "off":
        return "Index: off (index_min_files is 0)"
    if state in ("idle", "counting"):
        return (
            "Index: not built yet (the first search counts the files; a workspace of index_min_files or more gets one)"
        )
    if state == "small":
        return "Index: not needed (fewer files than index_min_files)"
    if state == "building":
        return f"Index: building, {index.get('read', 0):,} of {index.get('listed', 0):,} files read"
    if state == "ready":
        size = index.get("diskBytes", 0) / 1_048_576
        built = f", built in {index['buildSeconds']:.1f} s" if "buildSeconds" in index else ""
        return f"Index: ready, {index.get('files', 0):,} files, {size:,.1f} MiB on disk{built}"
    return f"Index: not used ({index.get('note', state)})"


def status_info(status: dict, root: str, session: str, workspace=None) -> InfoResult:
    """The workspace's confinement and its index (``%dsh status``; the value is ``/dsh/api/status``'s)."""
    state = status.get("state", {})
    fence = status.get("detail") or status.get("confinement")
    lines = [
        f"Workspace: {root}",
        f"Confinement: {fence}; paths resolved with {status.get('resolver')}",
        f"Hidden files: {'shown' if status.get('allowHidden') else 'not shown'}",
        f"State file: {state.get('path', '(not shown)')} ({'available' if state.get('available') else 'unavailable'})",
        index_line(status.get("index", {"state": "off"})),
    ]
    return InfoResult("status", "\n".join(lines), status, [], False, session, workspace)


def tools_info(tools: list[dict], session: str, workspace=None) -> InfoResult:
    rows = [
        {"name": t["name"], "arguments": _signature(t["inputSchema"]), "description": t["description"]} for t in tools
    ]
    lines = [f"{len(tools)} tools (an argument ending in ? is optional):"]
    lines += [f"{r['name']}({r['arguments']}): {r['description']}" for r in rows]
    return InfoResult("tools", "\n".join(lines), tools, rows, False, session, workspace)


def _counts(info: dict) -> str:
    def n(count: int, word: str) -> str:
        return f"{count} {word if count == 1 else word + 's'}"

    return (
        f"cwd {info['cwd']}, {n(info['observations'], 'observation')}, "
        f"{n(info['spills'], 'saved result')}, {n(info['calls'], 'call')}"
    )


def session_info(
    current: str, info: dict | None, sessions: list[dict], state_path: str, switched: bool = False, workspace=None
) -> InfoResult:
    """The current session (``info`` is None when it has no state yet) and every known session."""
    verb = "Switched to session" if switched else "Current session:"
    detail = _counts(info) if info else "no calls yet"
    lines = [f'{verb} "{current}" ({detail})']
    others = [s["id"] for s in sessions]
    lines.append(f"State file: {state_path}")
    if others:
        lines.append(
            f"{len(others)} {'session' if len(others) == 1 else 'sessions'} in it: "
            + ", ".join(json.dumps(o, ensure_ascii=False) for o in others)
        )
    rows = [{**s, "current": s["id"] == current} for s in sessions]
    value = {"session": current, "info": info, "sessions": sessions, "statePath": state_path}
    return InfoResult("session", "\n".join(lines), value, rows, False, current, workspace)
