"""The ``dsh_jupyter`` server extension: configuration, the shared ``Workspace``, the routes.

Why it exists: Jupyter loads exactly one ``ExtensionApp`` per extension. This one turns the
``DshJupyter`` traitlets (every core setting, under the same snake_case names) into one validated
core ``Workspace`` rooted at the server's ``root_dir``, owns the thread pool tool calls run on,
exports ``DSH_STATE_PATH``/``DSH_ROOT``/``DSH_SPILL_ROOT`` so kernels started by this server attach
to the same state, and ``DSH_SETTINGS`` (every setting, as JSON) so their ``%dsh`` pages as REST
does, keeps what JupyterLab pages have open in their tabs (``TabDocuments``, in
``settings["dsh_jupyter_tabs"]``), gives the core one ``LiveDocuments`` over them and the shared
documents of collaboration (``documents.py``), and registers the ``/dsh/api`` routes and the
``/dsh/mcp`` MCP endpoint. It also keeps JupyterLab from changing files a person only looks at:
saves that change nothing write nothing (``contents_guard.py``), a folder listed while a file in it
moves is listed without it rather than refused (``listing_guard.py``), and jupyter-collaboration's
own state goes to Jupyter's data folder (``collab_state.py``).

What it must never do: start with a setting the core refuses (a ``SettingsError`` stops the
extension with the message naming the setting), keep a module-level Workspace (handlers reach it
through ``self.settings``), or run a tool call on the event loop.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from jupyter_core.paths import jupyter_config_dir, jupyter_data_dir, jupyter_runtime_dir
from jupyter_server.extension.application import ExtensionApp
from jupyter_server.serverapp import ServerApp
from traitlets import Bool, Float, Int

from ..core.locations import default_state_path
from ..core.settings import ROOT_ENV, SETTINGS_ENV, SPILL_ROOT_ENV, STATE_PATH_ENV, SettingsError, settings_to_env
from ..core.workspace import Workspace
from ..settings_traits import SettingTraits
from . import mcp_bridge as mcp
from .collab import CollabDocuments
from .collab_state import place_collaboration_state
from .contents_guard import guard_contents
from .documents import Documents
from .handlers import route_table
from .listing_guard import guard_listings
from .tab_documents import TabDocuments

__all__ = ["DEFAULT_MAX_BODY_BYTES", "DshJupyter", "DshJupyterApp"]

# Large enough for a multi-MiB `write`; a tool call bigger than this is a mistake, not a request.
DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024


def default_spill_root() -> str:
    """``<jupyter runtime dir>/dsh-spills``: outside the workspace, private to the user."""
    return os.path.join(jupyter_runtime_dir(), "dsh-spills")


class DshJupyter(SettingTraits, ExtensionApp):
    """The registry's agent tools over REST at ``/dsh/api``."""

    name = "dsh_jupyter"
    description = "Agent workspace tools over REST, sharing session state with kernels."
    load_other_extensions = True

    # The core settings come from SettingTraits, one traitlet each, same names.
    # -- server-only settings ----------------------------------------------------------------
    max_body_bytes = Int(
        DEFAULT_MAX_BODY_BYTES,
        help="Largest request body (bytes) the /dsh/api endpoints accept; larger bodies get 413.",
    ).tag(config=True)
    tool_threads = Int(
        8,
        help="Threads that run tool calls other than searches off the event loop.",
    ).tag(config=True)
    search_threads = Int(
        4,
        help="Threads that run glob and grep; more searches queue, and one that waits longer than "
        "search_timeout_ms is answered SEARCH_ABORTED. A separate pool, so hung searches never delay "
        "list or read.",
    ).tag(config=True)
    mcp_json_response = Bool(
        False,
        help="Answer MCP requests at /dsh/mcp with one JSON body instead of an SSE stream.",
    ).tag(config=True)
    live_documents = Bool(
        True,
        help="Read and change a file that is open in JupyterLab through its open document: with "
        "jupyter-collaboration its shared document (the change shows at once, unsaved typing is kept, a "
        "write is merged), without it the tab that has it open (which saves the change, or refuses it "
        "while it holds unsaved changes); False: always the file.",
    ).tag(config=True)
    skip_unchanged_saves = Bool(
        True,
        help="A save through Jupyter's contents API whose content is what the file already holds (line "
        "endings aside) writes nothing, so opening a file in JupyterLab leaves its bytes and modification "
        "time as they were; a changed file that ends every line with CRLF is saved with CRLF; listing a "
        "file's checkpoints makes no checkpoint folder. False: every save writes, as in plain Jupyter.",
    ).tag(config=True)

    tabs_poll_s = Float(
        20.0,
        help="Seconds a JupyterLab page's long poll for the server's requests (changes to take into an open "
        "tab, moves to follow) is held when none is waiting; a page not heard from for three times this long "
        "is forgotten. From 0.05 to 300.",
    ).tag(config=True)

    @property
    def server(self) -> ServerApp:
        """The Jupyter server this extension runs in (there before any method below is called)."""
        assert self.serverapp is not None
        return self.serverapp

    def core_settings(self) -> dict:
        """The traitlet values under their core names, with the server's own rules filled in.

        Hidden files follow the server's ContentsManager (``allow_hidden``, ``hide_globs``): the
        tools are never more permissive than Jupyter's contents API. The server's runtime folder
        and config folders join the protected folders.
        """
        values = self.setting_values()
        values["state_path"] = values["state_path"] or default_state_path()
        values["spill_root"] = values["spill_root"] or default_spill_root()
        cm = self.server.contents_manager
        values["allow_hidden"] = bool(getattr(cm, "allow_hidden", False))
        values["hide_globs"] = [str(g) for g in getattr(cm, "hide_globs", [])]
        server_dirs = [
            self.server.runtime_dir,
            jupyter_config_dir(),
            jupyter_data_dir(),
            *getattr(self.server, "config_file_paths", []),
        ]
        values["protected_paths"] = [*values["protected_paths"], *(d for d in server_dirs if d)]
        return values

    def initialize_settings(self) -> None:
        try:
            for name in ("max_body_bytes", "tool_threads", "search_threads"):
                value = getattr(self, name)
                if value < 1:
                    raise SettingsError(f"setting {name} must be at least 1, got {value}")
            if not 0.05 <= self.tabs_poll_s <= 300:
                raise SettingsError(f"setting tabs_poll_s must be between 0.05 and 300, got {self.tabs_poll_s}")
            workspace = Workspace(root=self.server.root_dir, surface="rest", **self.core_settings())
            if self.rg_path is not None and workspace.rg is None:
                # The core would quietly offer no glob/grep; on a server that is a typo to report.
                raise SettingsError(f"setting rg_path must name an executable file, got {self.rg_path!r}")
        except SettingsError as exc:
            self.log.error("dsh_jupyter is not started: %s", exc)
            raise
        # files open in JupyterLab tabs without collaboration (server/tab_documents.py)
        loop = self.server.io_loop.asyncio_loop  # type: ignore[attr-defined]
        tabs = TabDocuments(self.server, loop, self.tabs_poll_s)
        self.settings["dsh_jupyter_tabs"] = tabs
        if self.live_documents:
            # files open in JupyterLab are read and changed through their open documents: a shared
            # document (server/collab.py) or the tabs that have them open
            workspace.documents = Documents(CollabDocuments(self.server, loop), tabs)
        self.workspace = workspace
        if self.skip_unchanged_saves and not guard_contents(self.server.contents_manager, self.log):
            self.log.info(
                "dsh_jupyter: saves are not checked for changes: the contents manager %s keeps no files on this disk",
                type(self.server.contents_manager).__name__,
            )
        # a folder listed while a file in it moves (an agent's move) lists the rest, not a 404
        guard_listings(self.server.contents_manager)
        place_collaboration_state(self.server, jupyter_data_dir(), self.log)
        self.executor = ThreadPoolExecutor(max_workers=self.tool_threads, thread_name_prefix="dsh-tool")
        self.search_executor = ThreadPoolExecutor(max_workers=self.search_threads, thread_name_prefix="dsh-search")
        # Kernels this server starts inherit these and attach to the same state.
        os.environ[STATE_PATH_ENV] = workspace.state_path
        os.environ[ROOT_ENV] = workspace.root
        spill_root = workspace.resolver.spill_root
        assert spill_root is not None  # a Workspace always has one
        os.environ[SPILL_ROOT_ENV] = spill_root
        # ... and every cap, so %dsh in those kernels pages exactly as REST does
        exported = workspace.settings.replace(state_path=workspace.state_path, spill_root=spill_root)
        os.environ[SETTINGS_ENV] = settings_to_env(exported)
        self.settings["dsh_jupyter_workspace"] = workspace
        self.settings["dsh_jupyter_executor"] = self.executor
        self.settings["dsh_jupyter_search_executor"] = self.search_executor
        self.settings["dsh_jupyter_max_body_bytes"] = self.max_body_bytes
        self.settings["dsh_jupyter_mcp"] = mcp.McpEndpoint(
            workspace,
            self.executor,
            max_body_bytes=self.max_body_bytes,
            json_response=self.mcp_json_response,
            search_executor=self.search_executor,
        )
        status = workspace.status()
        self.log.info(
            "dsh_jupyter: tools %s; state %s (%s journal on %s); spills %s; paths resolved by %s; ripgrep "
            "confined by %s; hidden files %s",
            ", ".join(workspace.registry),
            workspace.state_path,
            status["state"]["journal"],
            status["state"]["filesystem"],
            workspace.resolver.spill_root,
            status["resolver"],
            status["confinement"],
            "shown" if status["allowHidden"] else "not shown (ContentsManager.allow_hidden)",
        )

    def initialize_handlers(self) -> None:
        self.handlers.extend(route_table())
        self.handlers.extend(mcp.route_table())

    async def stop_extension(self) -> None:
        workspace = self.settings.get("dsh_jupyter_workspace")
        if workspace is not None:
            # a running search kills its rg now: Python's exit joins the executor's threads, and
            # a search left running would hold the server's exit until its timeout
            told = workspace.cancel_running()
            if told:
                self.log.info("dsh_jupyter: cancelled %d running call(s) at shutdown", told)
        endpoint = self.settings.get("dsh_jupyter_mcp")
        if endpoint is not None:
            await endpoint.stop()
        for executor in (getattr(self, "executor", None), getattr(self, "search_executor", None)):
            if executor is not None:
                executor.shutdown(wait=False, cancel_futures=True)


DshJupyterApp = DshJupyter  # the name the extension-point convention reads best with
