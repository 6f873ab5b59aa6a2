"""``Workspace``: the one executor every surface calls (REST, MCP, magic, widgets, plain Python).

It owns the settings, the confinement root, the state and spill stores and the tool registry,
and turns a call into a ``Result``: validate arguments, execute, render, log the call. A call
never raises for a tool's own failure; the failure is a result with a stable code.

Sessions are named per workspace root: the state file may be shared by several projects, and the
same session name under two roots is two sessions (``state.session_key``).
"""

from __future__ import annotations

import dataclasses
import getpass
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from typing import overload

from .caches.folders import FolderCache
from .caches.lines import LineIndex
from .caches.notebooks import NotebookTree
from .caches.parsed import ParsedNotebooks
from .documents import LiveDocuments
from .errors import Codes, ToolError
from .fs.resolver import Resolver, is_within
from .fs.rewrite import leftover_backups
from .fs.visibility import Visibility, backups_folder, default_identities, default_protected, index_folder
from .locations import default_state_path
from .policy import SESSION_REFUSED, WRITE_REFUSED, Admission, Caller, CallRefused, View
from .progress import ProgressBoard
from .registry import build_registry
from .result import Result
from .rg.fence import Fencing
from .rg.runner import find_rg
from .settings import ROOT_ENV, SPILL_ROOT_ENV, SettingsError, resolve_settings
from .state.journal import recover as recover_renames
from .state.spills import SpillLimits, SpillStore
from .state.store import CallLogLimits, CallRecord, StateError, StateStore, session_key
from .text.quoting import escape_surrogates, in_message
from .tools.arguments import validate_args
from .tools.context import CallContext
from .tools.indexing.keeper import IndexKeeper
from .tools.listing.browse import browse_listing
from .tools.opened.documents import SHARED, TAB, UNSAVED
from .tools.opened.file_list import open_files_value
from .tools.spec import ToolSpec

__all__ = ["Result", "Workspace", "default_state_path", "os_user"]

log = logging.getLogger(__name__)

SURFACES = ("python", "rest", "magic", "widget", "mcp")
# How a call's file was open in JupyterLab, as its value says (tools.opened) and the call log keeps it.
OPEN_KINDS = (SHARED, TAB, UNSAVED)

# The call log keeps what a model saw (bounded by the caps) but not every byte a model sent: a
# 300 MB ``write`` must not copy 300 MB into the state file. Longer argument strings are cut.
LOGGED_VALUE_MAX = 65_536


def os_user() -> str:
    """The OS user running this process (what the python and magic surfaces record as caller)."""
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry (containers): the uid still says who
        return str(os.getuid())


def _loggable(args: dict) -> dict:
    """Arguments as the call log stores them: valid UTF-8 text, long strings cut with a note."""
    out = {}
    for key, value in args.items():
        key = escape_surrogates(str(key))
        if isinstance(value, str):
            value = escape_surrogates(value)
            if len(value) > LOGGED_VALUE_MAX:
                value = value[:LOGGED_VALUE_MAX] + f"... (cut from {len(value)} characters in the call log)"
        out[key] = value
    return out


def _opened(result: Result) -> str | None:
    """How a person had the call's file open in JupyterLab (``value["open"]``: ``shared``, ``tab``
    or ``unsaved``), for the call log; None when it was not open or the call failed."""
    value = result.value if not result.is_error and isinstance(result.value, dict) else {}
    opened = value.get("open")
    return opened if opened in OPEN_KINDS else None


def check_session_id(session: object) -> str:
    if not isinstance(session, str) or not session or len(session) > 200:
        raise ToolError(Codes.ARGUMENT_INVALID, "session must be a non-empty string of at most 200 characters")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in session):
        raise ToolError(Codes.ARGUMENT_INVALID, "session must not contain control characters")
    return session


class Workspace:
    """Run the tools against one root with one shared session state.

    ``Workspace(root, session="default", state_path=None, **settings)``; ``root`` defaults to
    ``DSH_ROOT`` (exported by the server extension) or the current directory. In a process a
    Jupyter server with the extension started (a kernel), the server's settings (``DSH_SETTINGS``)
    are the defaults, so a plain ``Workspace()`` there hides and protects what the server does;
    settings given here win.
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
        self.settings = resolve_settings(settings)
        root = os.fspath(root) if root is not None else os.environ.get(ROOT_ENV) or os.getcwd()
        if not os.path.isdir(root):
            raise SettingsError(f"root {root!r} is not a directory")
        self.state_path = os.path.abspath(os.path.expanduser(self.settings.state_path or default_state_path()))
        spill_root = os.path.expanduser(
            self.settings.spill_root
            or os.environ.get(SPILL_ROOT_ENV)
            or os.path.join(os.path.dirname(self.state_path), "spills")
        )
        s = self.settings
        visibility = Visibility.build(
            root,
            s.allow_hidden,
            s.hide_globs,
            default_protected(self.state_path, spill_root) + list(s.protected_paths),
            default_identities(self.state_path, spill_root),
        )
        self.resolver = Resolver(root, spill_root, use_openat2=s.openat2, visibility=visibility)
        self.root = self.resolver.root
        self.rg = find_rg(self.settings.rg_path)
        # What one call learns that the next may reuse while the stamps prove it current.
        self.folders = FolderCache(s.list_cache_max_entries) if s.list_cache_max_entries else None
        self.lines = LineIndex(s.read_index_max_files) if s.read_index_max_files else None
        self.notebooks = NotebookTree(s.notebook_tree_max_folders) if s.notebook_tree_max_folders else None
        self.parsed = ParsedNotebooks()
        # The cancel events of the calls running now: a server that stops sets them all, so a
        # search in progress kills its rg at once instead of holding the exit until its timeout.
        self._running: set[threading.Event] = set()
        self._running_lock = threading.Lock()
        self.fence = Fencing(self.settings.landlock, self.rg)
        self.registry: dict[str, ToolSpec] = build_registry(self.rg)
        try:
            self.store: StateStore | None = StateStore(self.state_path, journal=s.state_journal)
        except StateError as exc:
            log.warning("session state unavailable (%s); reads work, writes are refused", exc)
            self.store = None
        self.call_limits = CallLogLimits(
            s.call_log_max_records_per_session, s.call_log_max_bytes, s.call_log_max_bytes_read_only
        )
        limits = SpillLimits(s.spill_max_bytes_per_session, s.spill_max_bytes_total, s.spill_max_age_hours * 3600.0)
        self.spills = SpillStore(self.resolver.spill_root or spill_root, self.store, limits)
        if self.store is not None:
            for copy, label in leftover_backups(backups_folder(self.state_path)):
                log.warning("an interrupted write left the old content of %s in %s", label, copy)
            # a replace that a killed process left half-way is completed before any call runs
            recover_renames(self.store, self.resolver.tree.real, self.resolver.tree.fd)
        if surface not in SURFACES:
            raise SettingsError(f"surface must be one of {', '.join(SURFACES)}")
        self.surface = surface
        self.session = check_session_id(session)
        self.user = os_user()
        # Notebooks open in Jupyter, when a server installs a source of them (core/documents.py); the
        # notebook tools then read and edit the open document instead of the file.
        self.documents: LiveDocuments | None = None
        # How far the calls running now got, each for the caller who started it (``call_progress``).
        self.progress = ProgressBoard()
        # The workspace index (tools/indexing): built in the background at the first search of a
        # workspace of index_min_files files or more; None when the settings turn it off.
        self.index: IndexKeeper | None = None
        if s.index_min_files:
            self.index = IndexKeeper(
                lambda cancel: self.context("dsh-index", self.user, cancel=cancel, cwd=self.root),
                index_folder(self.state_path),
                self.resolver.tree.real,
                s.index_min_files,
            )

    def close(self) -> None:
        """Let go of the descriptors this workspace holds (its root, the spill root, the index)."""
        if self.index is not None:
            self.index.close()
        self.resolver.close()
        self.spills.close()

    # -- tools -------------------------------------------------------------------------------

    def tools(self) -> list[dict]:
        """Each offered tool's name, description, JSON Schema and guidance."""
        return [spec.definition() for spec in self.registry.values()]

    def status(self, caller: Caller | None = None) -> dict:
        """How this workspace confines the tools (for ``GET /dsh/api/status`` and the docs).

        A ``caller`` who may not write learns the modes, not the layout: where the state file is
        (an absolute path under the user's home) is left out for them (``policy``).
        """
        reveal_paths = caller is None or caller.may_write
        vis = self.resolver.visibility
        return {
            **self.fence.describe(),
            "resolver": self.resolver.mode,
            "allowHidden": vis.allow_hidden,
            "hideGlobs": list(vis.hide_globs),
            "state": {
                **({"path": self.state_path} if reveal_paths else {}),
                "available": self.store is not None,
                "journal": self.store.journal if self.store is not None else None,
                "filesystem": self.store.filesystem if self.store is not None else None,
            },
            "tools": list(self.registry),
            "index": self.index.status() if self.index is not None else {"state": "off"},
        }

    def key(self, session: str | None = None) -> str:
        """The state's key for ``session`` (default: this workspace's) under this root."""
        return session_key(self.root, session or self.session)

    def run(self, tool: str, /, **args) -> Result:
        """Run ``tool`` with keyword arguments in this workspace's session."""
        return self.call(tool, args)

    def admit(
        self,
        tool: str,
        session: str | None = None,
        caller: Caller | None = None,
        progress_id: str | None = None,
    ) -> Admission:
        """Decide whether ``caller`` may make this call, and how it runs (see ``policy``).

        Raises ``CallRefused`` for a writing tool and a caller who may not write. The admission's
        time is when the call's wait for a free slot starts. It touches no file and no state, so
        a server admits on its event loop as the request arrives; whether a read-only caller's
        session exists is checked when the call runs (``call``), off the loop. With a
        ``progress_id`` the call's progress is kept, from now until it answers, for this caller
        alone (``call_progress``).
        """
        caller = caller or Caller(self.surface)
        session = session or self.session
        spec = self.registry.get(tool)
        if spec is not None and spec.writes and not caller.may_write:
            raise CallRefused(WRITE_REFUSED)
        quota = None if caller.may_write else self.settings.spill_max_bytes_read_only
        progress = self.progress.start(caller.identity, progress_id) if progress_id is not None else None
        return Admission(tool, session, caller, bool(spec and spec.searches), time.monotonic(), quota, progress)

    def admit_view(self, session: str | None = None, caller: Caller | None = None, *, uses: bool = True) -> View:
        """Let in a read that is not a tool call (see ``policy``); it changes nothing, ever.

        It reads the session's row (so a server runs it off the event loop) and creates nothing:
        a session that does not exist is a view with ``cwd`` None, answered as a session with
        nothing in it yet. ``uses``: the view works in the session (a listing page, a page of a
        saved result), so a caller who may not write must name ``default`` or a session that
        exists, as for a tool call (``CallRefused``). A view of the session's own records
        (``uses=False``: its info, call log, saved results) does not use it; every caller finds
        a session that does not exist missing alike. Raises ``ToolError`` for a bad name.
        """
        caller = caller or Caller(self.surface)
        session = check_session_id(session or self.session)
        if uses:
            self.admit_session(session, caller)
        try:
            info = self.store.get_session(self.key(session)) if self.store is not None else None
        except StateError as exc:
            if not uses:
                raise
            log.warning("session state unavailable: %s", exc)  # a listing page works without it
            info = None
        if info is None:
            return View(session, caller, None)
        return View(
            session, caller, info.cwd if is_within(info.cwd, self.root) and os.path.isdir(info.cwd) else self.root
        )

    def admit_session(self, session: str | None, caller: Caller) -> None:
        """``CallRefused`` when ``caller`` may not write and ``session`` does not exist (``default`` always may)."""
        if caller.may_write or not session or session == "default":
            return
        try:
            exists = self._require_store().get_session(self.key(check_session_id(session))) is not None
        except ToolError:
            return  # a bad name or no state: the call itself says so
        if not exists:
            raise CallRefused(SESSION_REFUSED)

    def call(
        self,
        tool: str,
        args: dict | None = None,
        *,
        session: str | None = None,
        surface: str | None = None,
        cancel: threading.Event | None = None,
        call_id: str | None = None,
        user: str | None = None,
        caller: Caller | None = None,
        admission: Admission | None = None,
        progress: Callable[[str], None] | None = None,
        respect_ignore_files: bool | None = None,
    ) -> Result:
        """Run one tool call; the general form used by the REST, MCP and kernel surfaces.

        A server admits the call first (``admit``: who, may they, which pool, since when) and
        passes the ``admission``; without one the call is admitted here for ``caller`` (default:
        this process's user on ``surface``, who may write). ``user`` names who called in the
        call log (default: the OS user). A search admitted longer than ``search_timeout_ms`` ago
        (it waited for a free search slot) is answered ``SEARCH_ABORTED`` without running.
        Raises ``CallRefused`` only for a caller who may not write (see ``admit``, ``admit_session``).
        ``progress`` is told how far a long search got while it runs (``CallContext.progress``).
        ``respect_ignore_files`` True or False searches this one call as that setting says (a
        person's search panel asks for the workspace's ``.gitignore`` rules); None: the setting.
        """
        if admission is None:
            admission = self.admit(tool, session, caller or Caller(surface or self.surface, user))
        try:
            caller = admission.caller
            session = admission.session
            self.admit_session(session, caller)
            user = self.user if caller.user is None else caller.user
            started = time.time()
            args = {} if args is None else args
            if progress is None and admission.progress is not None:
                progress = admission.progress.report
            waited_ms = admission.waited_ms

            def context(spec: ToolSpec, call_id: str) -> CallContext:
                if spec.searches and waited_ms > self.settings.search_timeout_ms:
                    raise ToolError(
                        Codes.SEARCH_ABORTED,
                        f"{tool} waited {waited_ms:.0f} ms for a free search slot and was not started; try again",
                    )
                ctx = self.context(
                    session,
                    user,
                    call_id,
                    cancel=cancel,
                    spill_quota=admission.spill_quota,
                    spill_owner=caller.quota_owner or user,
                )
                ctx.progress = progress
                if admission.progress is not None:
                    ctx.preview = admission.progress.preview
                if respect_ignore_files is not None and respect_ignore_files != ctx.settings.respect_ignore_files:
                    ctx.settings = dataclasses.replace(ctx.settings, respect_ignore_files=respect_ignore_files)
                return ctx

            result = self._run(tool, args, session, call_id or uuid.uuid4().hex, context)
            self._log_call(result, args, caller.surface, started, user, read_only=not caller.may_write)
            return result
        finally:
            if admission.progress is not None:
                admission.progress.end()

    def _run(
        self, tool: str, args: dict, session: str, call_id: str, context: Callable[[ToolSpec, str], CallContext]
    ) -> Result:
        """Validate, execute and render one tool call in the context ``context`` makes; never raises
        for the tool's own failure (nor for a bug: that is ``INTERNAL_ERROR``)."""
        t0 = time.perf_counter()
        ctx: CallContext | None = None
        try:
            check_session_id(session)
            spec = self.registry.get(tool)
            if spec is None:
                raise ToolError(
                    Codes.TOOL_UNKNOWN,
                    f"unknown tool {in_message(tool)}; available tools: {', '.join(self.registry)}",
                )
            clean = validate_args(spec.input_schema, args)
            ctx = context(spec, call_id)
            with self._running_lock:
                self._running.add(ctx.cancel)
            try:
                value = spec.execute(ctx, clean)
            finally:
                with self._running_lock:
                    self._running.discard(ctx.cancel)
                if spec.writes and self.index is not None:
                    self.index.catch_up()  # the index holds what this call changed before it answers
            text, is_error = spec.render(value), False
            value = {**value, **spec.page(value)}  # how the page continues, so no surface parses the text
        except ToolError as exc:
            value, text, is_error = exc.as_value(), f"Error: {exc.message}", True
        except Exception as exc:  # a bug must not take the caller down; the log has the detail
            log.exception("tool %s failed unexpectedly", tool)
            message = f"the {tool} tool failed unexpectedly ({type(exc).__name__})"
            value = {"name": "InternalError", "code": "INTERNAL_ERROR", "message": message}
            text, is_error = f"Error: {message}", True
        duration_ms = (time.perf_counter() - t0) * 1000
        images = tuple(ctx.images) if ctx is not None and not is_error else ()
        spec = self.registry.get(tool)
        return Result(tool, text, value, is_error, session, call_id, duration_ms, images=images, spec=spec)

    def call_progress(self, progress_id: str, caller: Caller | None = None) -> dict:
        """``{running, progress}`` of ``caller``'s call admitted with ``progress_id`` (``admit``):
        whether it has not answered yet, and how far it got (None before its first report); with
        ``rows``, a running search's first matches, once it reported some (``tools.grep.early``).
        Another caller's call under the same id is not running, as far as this caller can tell."""
        identity = (caller or Caller(self.surface)).identity
        running, text = self.progress.get(identity, progress_id)
        rows = self.progress.rows(identity, progress_id) if running else None
        answer: dict = {"running": running, "progress": text}
        if rows is not None:
            answer["rows"] = rows
        return answer

    def cancel_running(self) -> int:
        """Cancel every call running now (a search kills its rg, as a caller who left does); the
        number of calls told. For a server that stops: its exit need not wait for a search."""
        with self._running_lock:
            running = list(self._running)
        for event in running:
            event.set()
        if self.index is not None:
            self.index.cancel()  # its build's rg too: nothing of this workspace's keeps running
        return len(running)

    def browse(
        self,
        path: str | None = None,
        offset: int = 1,
        limit: int | None = None,
        sort: str = "model",
        descending: bool = False,
        name_filter: str | None = None,
        session: str | None = None,
        caller: Caller | None = None,
    ) -> dict:
        """A listing page for a person's view (widgets): sorted or filtered over the whole directory.

        Not a tool call: the model never sees it, so it is not in the registry and not in the call
        log. A view (``admit_view``): it creates no session; a session that does not exist yet is
        listed from the root, where its first call would start it. The value is ``list``'s plus
        ``matchedEntries``, ``sort``, ``descending``, ``filter`` and ``stamp`` (see
        ``tools.listing.browse.browse_listing``). A failure raises ``ToolError``; a caller who may not
        use the session, ``CallRefused``.
        """
        view = self.admit_view(session, caller)
        return browse_listing(self._view_context(view), path, offset, limit, sort, descending, name_filter)

    def open_files(self) -> dict:
        """The files a person has open in JupyterLab, for a person's view beside the agent's calls.

        Not a tool call, and a view of no session (see ``policy``): it reads nothing of the state,
        creates nothing and logs nothing, and every caller who may read is shown the same list,
        whoever has the files open (every tool answer about an open file says so to any caller).
        It shows what ``list`` would show: the value of ``tools.opened.file_list.open_files_value``.
        With no ``documents`` (a plain ``Workspace``, or a server with ``live_documents`` off,
        whose tools use the files as they are) nothing is open.
        """
        found = self.documents.open_files() if self.documents is not None else []
        return open_files_value(found, self.resolver.visibility)

    def context(
        self,
        session: str,
        user: str,
        call_id: str = "",
        *,
        cancel: threading.Event | None = None,
        spill_quota: int | None = None,
        spill_owner: str | None = None,
        cwd: str | None = None,
    ) -> CallContext:
        """What one call runs with: this workspace's settings, confinement, stores and caches, and
        the session's cwd (``cwd``, or the session's own, which creates the session on first use).

        Raises ``ToolError`` (``FS_ROOT_UNAVAILABLE``) when the root was removed; a root made again
        at the same path is opened anew first (``Resolver.check_root``).
        """
        self.resolver.check_root()
        return CallContext(
            settings=self.settings,
            resolver=self.resolver,
            store=self.store,
            spills=self.spills,
            session=session,
            cwd=self.session_cwd(session, user) if cwd is None else cwd,
            call_id=call_id,
            rg=self.rg,
            cancel=cancel or threading.Event(),
            session_key=self.key(session),
            user=user,
            fence=self.fence,
            spill_quota=spill_quota,
            spill_owner=user if spill_owner is None else spill_owner,
            folders=self.folders,
            lines=self.lines,
            notebooks=self.notebooks,
            parsed=self.parsed,
            documents=self.documents,
            index=self.index,
        )

    def _view_context(self, view: View, call_id: str = "") -> CallContext:
        """What a view reads with: the session's cwd, or the root for a session that does not exist
        (never created here); saved results only for this session's own, as ``read`` has them."""
        user = self.user if view.caller.user is None else view.caller.user
        return self.context(view.session, user, call_id, cwd=view.cwd or self.root)

    def _log_call(
        self, result: Result, args: dict, surface: str, started: float, user: str, read_only: bool = False
    ) -> None:
        if self.store is None:
            return
        try:
            safe_args = _loggable(args) if isinstance(args, dict) else {"_": repr(args)[:LOGGED_VALUE_MAX]}
            self.store.append_call(
                CallRecord(
                    call_id=result.call_id,
                    session=self.key(result.session),
                    tool=result.tool,
                    args=safe_args,
                    text=result.text,
                    is_error=result.is_error,
                    surface=surface,
                    started=started,
                    duration_ms=result.duration_ms,
                    user=user,
                    read_only=read_only,
                    visibility=self.resolver.visibility.stamp(),
                    open=_opened(result),
                ),
                self.call_limits,
            )
        except Exception as exc:  # the call log is best effort
            log.warning("could not append to the call log: %s", exc)

    # -- sessions ----------------------------------------------------------------------------

    def session_cwd(self, session: str | None = None, user: str | None = None) -> str:
        """The session's cwd, created at the root on first use; the root if the state is down."""
        session = session or self.session
        if self.store is None:
            return self.root
        try:
            info = self.store.ensure_session(
                self.key(session), self.root, session, self.root, self.user if user is None else user
            )
        except StateError as exc:
            log.warning("session state unavailable: %s", exc)
            return self.root
        cwd = info.cwd
        return cwd if is_within(cwd, self.root) and os.path.isdir(cwd) else self.root

    def use_session(self, session: str) -> None:
        """Switch this workspace's default session (``%dsh session NAME``)."""
        self.session = check_session_id(session)

    def delete_session(self, session: str, caller: Caller | None = None) -> bool:
        """Delete a session with its observations, call log and spill files. A caller who may not
        write deletes nothing (``CallRefused``)."""
        if caller is not None and not caller.may_write:
            raise CallRefused(WRITE_REFUSED)
        if self.store is None:
            raise StateError("the session state is unavailable")
        key = self.key(check_session_id(session))
        existed = self.store.get_session(key) is not None
        locators = self.store.delete_session(key)
        self.spills.delete(locators)
        return existed

    def _require_store(self) -> StateStore:
        if self.store is None:
            raise ToolError(Codes.STATE_UNAVAILABLE, "the session state is unavailable")
        return self.store

    def session_info(self, session: str | None = None, caller: Caller | None = None) -> dict | None:
        """``{id, cwd, observations, spills, calls, lastCall, created, user}`` with cwd as a display path, or None.

        A view of the session's records (``admit_view``): None for every caller alike when there
        is no such session."""
        store = self._require_store()
        view = self.admit_view(session, caller, uses=False)
        info = store.get_session(self.key(view.session)) if view.exists else None
        return None if info is None else self._session_dict(info)

    def sessions(self, user: str | None = None) -> list[dict]:
        """The sessions of this root (optionally only those ``user`` created)."""
        return [self._session_dict(i) for i in self._require_store().list_sessions(self.root, user)]

    def _cwd_target(self, cwd: str) -> str:
        with self.resolver.resolve(self.root, cwd, verb="use") as target:
            if not target.is_dir:
                raise ToolError(
                    Codes.FS_NOT_DIRECTORY, f"cannot use {in_message(target.display)} as the cwd: not a directory"
                )
            return target.real

    def create_session(
        self, session: str, cwd: str | None = None, user: str | None = None, caller: Caller | None = None
    ) -> tuple[dict, bool]:
        """Create a session (at ``cwd``, resolved against the root); never moves an existing one.

        Returns ``(info, created)``; the session is recorded as ``caller``'s (default: ``user``,
        or the OS user). A caller who may not write creates none (``CallRefused``). Moving a
        session is ``move_session``, a separate right.
        """
        caller = caller or Caller(self.surface, user)
        if not caller.may_write:
            raise CallRefused(SESSION_REFUSED)
        user = caller.user
        store = self._require_store()
        check_session_id(session)
        key = self.key(session)
        existing = store.get_session(key)
        if existing is not None:
            return self._session_dict(existing), False
        real = self._cwd_target(cwd) if cwd is not None else self.root
        info = store.ensure_session(key, self.root, session, real, self.user if user is None else user)
        return self._session_dict(info), True

    def move_session(self, session: str, cwd: str, caller: Caller | None = None) -> dict | None:
        """Move an existing session's working directory; None when there is no such session.
        A caller who may not write moves nothing (``CallRefused``)."""
        if caller is not None and not caller.may_write:
            raise CallRefused(WRITE_REFUSED)
        store = self._require_store()
        key = self.key(check_session_id(session))
        if store.get_session(key) is None:
            return None
        store.set_cwd(key, self._cwd_target(cwd))
        return self.session_info(session)

    def _session_dict(self, info) -> dict:
        cwd = info.cwd if is_within(info.cwd, self.root) else self.root
        rel = os.path.relpath(cwd, self.root)
        return {
            "id": info.name,
            "cwd": "." if rel == "." else rel,
            "created": info.created,
            "user": info.user,
            "observations": info.observations,
            "spills": info.spills,
            "calls": info.calls,
            "lastCall": info.last_call,
        }

    @overload
    def calls(self, session: str | None = None, offset: int = 0, limit: int = 100, user: str | None = None) -> dict: ...
    @overload
    def calls(self, session: str | None, offset: int, limit: int, user: str | None, caller: Caller) -> dict | None: ...
    def calls(
        self,
        session: str | None = None,
        offset: int = 0,
        limit: int = 100,
        user: str | None = None,
        caller: Caller | None = None,
    ) -> dict | None:
        """One page of the session's call log, newest last (optionally one user's calls only).

        With a ``caller`` (a surface asking for someone: a view of the session's records, see
        ``admit_view``), a session that does not exist is None; without one (the Python API and
        the kernel), its page is empty. Each call's ``open`` says how a person had its file open
        in JupyterLab when it ran (``shared``, ``tab``, ``unsaved``; None: not open, or it failed).

        A call made where more was shown than here (hidden files, fewer hide globs or protected
        folders: another surface on the same state) is listed as withheld: its tool, surface,
        caller and time, and why, never its arguments or its text. ``dropped`` counts the calls
        the log's bounds removed from this session, oldest first.
        """
        store = self._require_store()
        view = self.admit_view(session, caller, uses=False)
        if caller is not None and not view.exists:
            return None
        session = view.session
        key = self.key(session)
        records = store.list_calls(key, offset, limit, user)
        info = store.get_session(key)
        visibility = self.resolver.visibility
        calls = []
        for r in records:
            row = {
                "callId": r.call_id,
                "tool": r.tool,
                "args": r.args,
                "text": r.text,
                "isError": r.is_error,
                "surface": r.surface,
                "user": r.user,
                "started": r.started,
                "durationMs": r.duration_ms,
                "open": r.open,
            }
            withheld = visibility.withholds(r.visibility)
            if withheld is not None:
                row.update(args={}, text="", open=None, withheld=withheld)
            calls.append(row)
        return {
            "session": session,
            "offset": offset,
            "total": store.count_calls(key, user),
            "dropped": info.dropped_calls if info is not None else 0,
            "calls": calls,
        }

    @overload
    def spill_list(self, session: str | None = None, user: str | None = None) -> list[dict]: ...
    @overload
    def spill_list(self, session: str | None, user: str | None, caller: Caller) -> list[dict] | None: ...
    def spill_list(
        self, session: str | None = None, user: str | None = None, caller: Caller | None = None
    ) -> list[dict] | None:
        """The session's saved results; one made where more was shown than here is listed as
        withheld (no label: it names the pattern) and cannot be read here. With a ``caller``, a
        session that does not exist is None (as for ``calls``)."""
        store = self._require_store()
        view = self.admit_view(session, caller, uses=False)
        if caller is not None and not view.exists:
            return None
        key = self.key(view.session)
        visibility = self.resolver.visibility
        info = store.get_session(key)
        cwd = info.cwd if info is not None and is_within(info.cwd, self.root) else self.root
        out = []
        for s in store.list_spills(key, user):
            row = {
                "locator": self.resolver.spill_display(s.locator, cwd),
                "tool": s.tool,
                "size": s.size,
                "created": s.created,
                "label": s.label,
                "user": s.user,
            }
            withheld = visibility.withholds(s.visibility)
            if withheld is not None:
                row.update(label="", withheld=withheld)
            out.append(row)
        return out

    def spill_page(
        self,
        locator: str,
        session: str | None = None,
        offset: int = 1,
        limit: int | None = None,
        surface: str | None = None,
        user: str | None = None,
        caller: Caller | None = None,
    ) -> Result:
        """One page of a saved full result, rendered exactly as ``read`` renders it.

        A view (``admit_view``), not a tool call: it is not logged and creates no session, and
        ``locator`` must name one of this session's own saved results (anything else, a file
        in the workspace too, is ``FS_NOT_FOUND``), so no file is read unlogged. ``caller``
        (default: ``user`` on ``surface``) must be one who may use the session.
        """
        view = self.admit_view(session, caller or Caller(surface or self.surface, user))
        args: dict = {"file_path": locator, "offset": offset}
        if limit is not None:
            args["limit"] = limit

        def context(spec: ToolSpec, call_id: str) -> CallContext:
            ctx = self._view_context(view, call_id)
            ctx.saved_only = True
            return ctx

        return self._run("read", args, view.session, uuid.uuid4().hex, context)
