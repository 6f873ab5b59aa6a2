"""Where jupyter-collaboration keeps its own state: in Jupyter's data folder, not in the workspace.

Why it exists: jupyter-collaboration (the ``jupyter_server_ydoc`` server extension) keeps two files
of its own, and by default both land where a person works: the document history
``SQLiteYStore.db_path`` is ``.jupyter_ystore.db`` relative to the server's working folder (the
workspace itself when ``jupyter lab`` is started there), and the record of server sessions
``YDocExtension.session_store_path`` is ``<root>/.jupyter/collaboration_sessions.json``. Opening
one file in JupyterLab thus added a database and a folder to the workspace. ``place_collaboration_state``
points both into ``<jupyter data dir>/dsh_jupyter/`` (beside the tools' own state file) when the
user has not set them: the data folder rather than the runtime folder, because both files are
meant to outlive a server (a document's history, a reconnecting client's session).

When it runs: from this extension's ``initialize_settings``. Jupyter links every extension first,
then loads them in name order, so by then ``jupyter_server_ydoc`` is linked (its configuration
read from the server's config files and command line) but not loaded ("dsh_jupyter" sorts first);
its load reads ``session_store_path`` (into the web application's settings) and hands its
``config`` to every ``SQLiteYStore`` a room makes. A value already in that configuration is the
user's, and wins. Should the collaboration extension ever be loaded before this one, the setting
it already copied is corrected too.

What it must never do: override a location the user configured, or import jupyter_server_ydoc (it
is found among the server's linked extensions, or not at all).
"""

from __future__ import annotations

import os

__all__ = ["SESSIONS_FILE", "STATE_FOLDER", "YSTORE_FILE", "place_collaboration_state"]

STATE_FOLDER = "dsh_jupyter"  # under the Jupyter data folder, beside state.sqlite
YSTORE_FILE = "ystore.db"
SESSIONS_FILE = "collaboration_sessions.json"
YDOC_EXTENSION = "jupyter_server_ydoc"


def _ydoc_app(serverapp):
    """The linked ``YDocExtension`` of this server, or None."""
    manager = getattr(serverapp, "extension_manager", None)
    point = None if manager is None else manager.extension_points.get(YDOC_EXTENSION)
    return None if point is None else point.app


def _configured(config, section: str, name: str) -> bool:
    return section in config and name in config[section]


def place_collaboration_state(serverapp, data_dir: str, log) -> dict[str, str]:
    """Point the collaboration extension's unset locations into ``<data_dir>/dsh_jupyter``;
    the locations set, by trait name (empty when none was, or collaboration is not running)."""
    app = _ydoc_app(serverapp)
    if app is None:
        return {}
    folder = os.path.join(data_dir, STATE_FOLDER)
    placed: dict[str, str] = {}
    if not _configured(app.config, "SQLiteYStore", "db_path"):
        # every SQLiteYStore of a room is made with the extension's config (a partial of its class)
        placed["SQLiteYStore.db_path"] = os.path.join(folder, YSTORE_FILE)
        app.config.SQLiteYStore.db_path = placed["SQLiteYStore.db_path"]
    if not app.session_store_path and not _configured(app.config, "YDocExtension", "session_store_path"):
        path = placed["YDocExtension.session_store_path"] = os.path.join(folder, SESSIONS_FILE)
        app.session_store_path = path
        web_settings = getattr(getattr(serverapp, "web_app", None), "settings", None)
        if web_settings is not None and "collaborative_session_store_path" in web_settings:
            web_settings["collaborative_session_store_path"] = path  # it was loaded first
    if placed:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        log.info(
            "dsh_jupyter: collaboration state outside the workspace: %s",
            ", ".join(f"{name} = {path}" for name, path in placed.items()),
        )
    return placed
