"""``Workspace``: the one executor every surface calls (REST, magic, widgets, plain Python).

It owns the settings, the confinement root, the state and spill stores and the tool registry,
and turns a call into a ``Result``: validate arguments, execute, render, log the call. A call
never raises for a tool's own failure; the failure is a result with a stable code.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid

from .context import CallContext
from .errors import Codes, ToolError
from .paths import Resolver, is_within, printable
from .registry import ToolSpec, build_registry
from .result import Result
from .rg import find_rg
from .schema import validate_args
from .settings import Settings, SettingsError
from .spill import SpillStore
from .state import CallRecord, StateError, StateStore
from .tools.listing import browse_listing
from .render.quoting import in_message

__all__ = ["Workspace", "Result", "default_state_path"]

log = logging.getLogger(__name__)

SURFACES = ("python", "rest", "magic", "widget")

# The call log keeps what a model saw (bounded by the caps) but not every byte a model sent: a
# 300 MB ``write`` must not copy 300 MB into the state file. Longer argument strings are cut.
LOGGED_VALUE_MAX = 65_536


def _loggable(args: dict) -> dict:
    """Arguments as the call log stores them: valid UTF-8 text, long strings cut with a note."""
    out = {}
    for key, value in args.items():
        key = printable(str(key))
        if isinstance(value, str):
            value = printable(value)
            if len(value) > LOGGED_VALUE_MAX:
                value = value[:LOGGED_VALUE_MAX] + f"... (cut from {len(value)} characters in the call log)"
        out[key] = value
    return out


def default_state_path() -> str:
    """The server's exported state file, else a per-user file (XDG data home)."""
    env = os.environ.get("DSH_STATE_PATH")
    if env:
        return env
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "dsh-jupyter", "state.sqlite")


def check_session_id(session: object) -> str:
    if not isinstance(session, str) or not session or len(session) > 200:
        raise ToolError(Codes.ARGUMENT_INVALID, "session must be a non-empty string of at most 200 characters")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in session):
        raise ToolError(Codes.ARGUMENT_INVALID, "session must not contain control characters")
    return session


class Workspace:
    """Run the tools against one root with one shared session state.

    ``Workspace(root, session="default", state_path=None, **settings)``; ``root`` defaults to
    ``DSH_ROOT`` (exported by the server extension) or the current directory.
    """

    def __init__(
        self,
        root: str | os.PathLike | None = None,
        session: str = "default",
        state_path: str | os.PathLike | None = None,
        *,
        surface: str = "python",
        **settings,
    ) -> None:
        if state_path is not None:
            settings["state_path"] = os.fspath(state_path)
        self.settings = Settings.from_mapping(settings)
        root = os.fspath(root) if root is not None else os.environ.get("DSH_ROOT") or os.getcwd()
        if not os.path.isdir(root):
            raise SettingsError(f"root {root!r} is not a directory")
        self.root = os.path.realpath(root)
        self.state_path = os.path.abspath(self.settings.state_path or default_state_path())
        spill_root = (
            self.settings.spill_root
            or os.environ.get("DSH_SPILL_ROOT")
            or os.path.join(os.path.dirname(self.state_path), "spills")
        )
        self.resolver = Resolver(self.root, spill_root)
        self.rg = find_rg(self.settings.rg_path)
        self.registry: dict[str, ToolSpec] = build_registry(self.rg)
        try:
            self.store: StateStore | None = StateStore(self.state_path)
        except StateError as exc:
            log.warning("session state unavailable (%s); reads work, writes are refused", exc)
            self.store = None
        self.spills = SpillStore(self.resolver.spill_root, self.store)
        if surface not in SURFACES:
            raise SettingsError(f"surface must be one of {', '.join(SURFACES)}")
        self.surface = surface
        self.session = check_session_id(session)

    # -- tools -------------------------------------------------------------------------------

    def tools(self) -> list[dict]:
        """Each offered tool's name, description, JSON Schema and guidance."""
        return [spec.definition() for spec in self.registry.values()]

    def run(self, tool: str, /, **args) -> Result:
        """Run ``tool`` with keyword arguments in this workspace's session."""
        return self.call(tool, args)

    def call(
        self,
        tool: str,
        args: dict | None = None,
        *,
        session: str | None = None,
        surface: str | None = None,
        cancel: threading.Event | None = None,
        call_id: str | None = None,
    ) -> Result:
        """Run one tool call; the general form used by the REST and kernel surfaces."""
        call_id = call_id or uuid.uuid4().hex
        session = session or self.session
        started = time.time()
        t0 = time.perf_counter()
        args = {} if args is None else args
        try:
            check_session_id(session)
            spec = self.registry.get(tool)
            if spec is None:
                raise ToolError(
                    Codes.TOOL_UNKNOWN,
                    f'unknown tool {in_message(tool)}; available tools: {", ".join(self.registry)}',
                )
            clean = validate_args(spec.input_schema, args)
            ctx = CallContext(
                settings=self.settings,
                resolver=self.resolver,
                store=self.store,
                spills=self.spills,
                session=session,
                cwd=self.session_cwd(session),
                call_id=call_id,
                rg=self.rg,
                cancel=cancel or threading.Event(),
            )
            value = spec.execute(ctx, clean)
            text, is_error = spec.render(value), False
        except ToolError as exc:
            value, text, is_error = exc.as_value(), f"Error: {exc.message}", True
        except Exception as exc:  # a bug must not take the caller down; the log has the detail
            log.exception("tool %s failed unexpectedly", tool)
            message = f"the {tool} tool failed unexpectedly ({type(exc).__name__})"
            value = {"name": "InternalError", "code": "INTERNAL_ERROR", "message": message}
            text, is_error = f"Error: {message}", True
        duration_ms = (time.perf_counter() - t0) * 1000
        result = Result(tool, text, value, is_error, session, call_id, duration_ms)
        self._log_call(result, args, surface or self.surface, started)
        return result

    def browse(self, path: str | None = None, offset: int = 1, limit: int | None = None, sort: str = "model",
               descending: bool = False, name_filter: str | None = None, session: str | None = None) -> dict:
        """A listing page for a person's view (widgets): sorted or filtered over the whole directory.

        Not a tool call: the model never sees it, so it is not in the registry and not in the call
        log. The value is ``list``'s plus ``matchedEntries``, ``sort``, ``descending``, ``filter``
        and ``stamp`` (see ``tools.listing.browse_listing``). A failure raises ``ToolError``.
        """
        session = check_session_id(session or self.session)
        ctx = CallContext(settings=self.settings, resolver=self.resolver, store=self.store, spills=self.spills,
                          session=session, cwd=self.session_cwd(session), call_id="", rg=self.rg)
        return browse_listing(ctx, path, offset, limit, sort, descending, name_filter)

    def _log_call(self, result: Result, args: dict, surface: str, started: float) -> None:
        if self.store is None:
            return
        try:
            safe_args = _loggable(args) if isinstance(args, dict) else {"_": repr(args)[:LOGGED_VALUE_MAX]}
            self.store.append_call(
                CallRecord(
                    call_id=result.call_id,
                    session=result.session,
                    tool=result.tool,
                    args=safe_args,
                    text=result.text,
                    is_error=result.is_error,
                    surface=surface,
                    started=started,
                    duration_ms=result.duration_ms,
                )
            )
        except Exception as exc:  # the call log is best effort
            log.warning("could not append to the call log: %s", exc)

    # -- sessions ----------------------------------------------------------------------------

    def session_cwd(self, session: str | None = None) -> str:
        """The session's cwd, created at the root on first use; the root if the state is down."""
        session = session or self.session
        if self.store is None:
            return self.root
        try:
            info = self.store.ensure_session(session, self.root)
        except StateError as exc:
            log.warning("session state unavailable: %s", exc)
            return self.root
        cwd = info.cwd
        # A state file may be shared by workspaces with different roots: never leave this one.
        return cwd if is_within(cwd, self.root) and os.path.isdir(cwd) else self.root

    def use_session(self, session: str) -> None:
        """Switch this workspace's default session (``%dsh session NAME``)."""
        self.session = check_session_id(session)

    def delete_session(self, session: str) -> bool:
        """Delete a session with its observations, call log and spill files."""
        if self.store is None:
            raise StateError("the session state is unavailable")
        existed = self.store.get_session(session) is not None
        locators = self.store.delete_session(session)
        self.spills.delete(locators)
        return existed

    def _require_store(self) -> StateStore:
        if self.store is None:
            raise ToolError(Codes.STATE_UNAVAILABLE, "the session state is unavailable")
        return self.store

    def session_info(self, session: str | None = None) -> dict | None:
        """``{id, cwd, observations, spills, calls, created}`` with cwd as a display path, or None."""
        info = self._require_store().get_session(check_session_id(session or self.session))
        return None if info is None else self._session_dict(info)

    def sessions(self) -> list[dict]:
        return [self._session_dict(i) for i in self._require_store().list_sessions()]

    def create_session(self, session: str, cwd: str | None = None) -> dict:
        """Create (or move) a session; ``cwd`` is a directory path resolved against the root."""
        store = self._require_store()
        check_session_id(session)
        real = self.root
        if cwd is not None:
            target = self.resolver.resolve(self.root, cwd, verb="use")
            if not target.exists or not os.path.isdir(target.real) or target.in_spill:
                raise ToolError(Codes.FS_NOT_DIRECTORY, f'cannot use {in_message(target.display)} as the cwd: not a directory')
            real = target.real
        store.ensure_session(session, real)
        if cwd is not None:
            store.set_cwd(session, real)
        return self.session_info(session)

    def _session_dict(self, info) -> dict:
        cwd = info.cwd if is_within(info.cwd, self.root) else self.root
        rel = os.path.relpath(cwd, self.root)
        return {
            "id": info.id,
            "cwd": "." if rel == "." else rel,
            "created": info.created,
            "observations": info.observations,
            "spills": info.spills,
            "calls": info.calls,
        }

    def calls(self, session: str | None = None, offset: int = 0, limit: int = 100) -> dict:
        """One page of the session's call log, newest last."""
        store = self._require_store()
        session = check_session_id(session or self.session)
        records = store.list_calls(session, offset, limit)
        return {
            "session": session,
            "offset": offset,
            "total": store.count_calls(session),
            "calls": [
                {
                    "callId": r.call_id,
                    "tool": r.tool,
                    "args": r.args,
                    "text": r.text,
                    "isError": r.is_error,
                    "surface": r.surface,
                    "started": r.started,
                    "durationMs": r.duration_ms,
                }
                for r in records
            ],
        }

    def spill_list(self, session: str | None = None) -> list[dict]:
        store = self._require_store()
        session = check_session_id(session or self.session)
        return [
            {"locator": s.locator, "tool": s.tool, "size": s.size, "created": s.created}
            for s in store.list_spills(session)
        ]

    def spill_page(self, locator: str, session: str | None = None, offset: int = 1, limit: int | None = None,
                   surface: str | None = None) -> Result:
        """One page of a saved full result, rendered exactly as ``read`` renders it.

        Only the session that owns a spill may page it through this call.
        """
        session = session or self.session
        owner = self.store.spill_owner(locator) if self.store is not None else None
        if owner != session:
            message = f'no saved result {in_message(locator)} in session {in_message(session)}'
            value = ToolError(Codes.FS_NOT_FOUND, message).as_value()
            result = Result("read", f"Error: {message}", value, True, session, uuid.uuid4().hex)
            self._log_call(result, {"file_path": locator, "offset": offset}, surface or self.surface, time.time())
            return result
        args = {"file_path": locator, "offset": offset}
        if limit is not None:
            args["limit"] = limit
        return self.call("read", args, session=session, surface=surface)
