"""A real JupyterLab running in the test's own process, on a thread of its own.

Why: the browser tests of open tabs (``test_tabs.py``) call the server's ``TabDocuments``
(``save_in_tabs``, ``moved``, ``presence``) directly, as a tool thread does, while Chromium plays
the person. A ``jupyter lab`` subprocess (``conftest.start_lab``) keeps that object out of reach,
and pytest-jupyter's in-process server runs on the test's own event loop, which the synchronous
Playwright API cannot share. So this starts ``jupyter lab`` as its command does (the server, its
extensions found in the installed config, JupyterLab as the starting extension) inside this
process, with the event loop on a thread: the test's thread is then exactly a tool thread.

Everything else is as ``start_lab``: 127.0.0.1, a token, no real-time collaboration, news and
update checks off, the app exposed as ``window.jupyterapp``, Jupyter's folders and the dsh state
under a temporary folder, and Notebook 7's server extensions off (``EXTENSIONS``). ``stop()``
stops the server (its kernels too) and puts the process's environment back.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import urllib.request
from pathlib import Path

from servers import free_port, isolated_env

TOKEN = "dsh-tabs-token"
EXTENSIONS = {"jupyterlab": True, "notebook": False, "notebook_shim": False}


class InProcessLab:
    def __init__(self, tmp: Path, root: Path, extra_args: tuple[str, ...] = ()) -> None:
        self.tmp, self.root, self.token = tmp, root, TOKEN
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.extra_args = list(extra_args)
        self.serverapp = None
        self._thread: threading.Thread | None = None
        self._saved_env: dict[str, str] = {}

    def start(self, timeout: float = 120) -> InProcessLab:
        home = self.tmp / "jupyter"
        settings = home / "lab-settings" / "@jupyterlab" / "apputils-extension"
        settings.mkdir(parents=True)
        (settings / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False})
        )
        self._saved_env = dict(os.environ)
        os.environ.clear()
        os.environ.update(isolated_env(home, self._saved_env))
        argv = [
            "--no-browser",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            f"--DshJupyter.state_path={self.tmp / 'dsh-state.sqlite'}",
            f"--DshJupyter.spill_root={self.tmp / 'dsh-spills'}",
            "--LabApp.expose_app_in_browser=True",
            "--YDocExtension.disable_rtc=True",
            *self.extra_args,
        ]
        ready = threading.Event()
        failed: list[BaseException] = []

        def serve() -> None:
            from jupyter_server.serverapp import ServerApp
            from jupyterlab.labapp import LabApp

            asyncio.set_event_loop(asyncio.new_event_loop())
            try:
                ServerApp.clear_instance()
                # Notebook 7's extensions stay off: notebook_shim patches the server's classes for
                # the whole process, which would break every in-process server after this one.
                app = LabApp.make_serverapp(jpserver_extensions=dict(EXTENSIONS))
                app.init_signal = lambda: None  # signals belong to the main thread
                app.aliases.update(LabApp.aliases)
                app.initialize(argv=argv, starter_extension=LabApp.name, find_extensions=True)
                self.serverapp = app
                app.io_loop.add_callback(ready.set)
            except BaseException as exc:
                failed.append(exc)
                ready.set()
                return
            app.start()

        self._thread = threading.Thread(target=serve, name="in-process-lab", daemon=True)
        self._thread.start()
        if not ready.wait(timeout) or failed:
            self.stop()
            raise RuntimeError(f"JupyterLab did not start in this process: {failed[:1]}")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}api/status?token={self.token}", timeout=5) as reply:
                    if reply.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("JupyterLab in this process did not answer")

    @property
    def tabs(self):
        """The server's ``TabDocuments`` (what a tool thread calls)."""
        assert self.serverapp is not None
        return self.serverapp.web_app.settings["dsh_jupyter_tabs"]

    def stop(self) -> None:
        app, thread = self.serverapp, self._thread
        if app is not None and thread is not None and thread.is_alive():
            app.stop()  # thread-safe: it schedules the shutdown on the server's loop
            thread.join(60)
        from jupyter_server.serverapp import ServerApp

        ServerApp.clear_instance()
        if self._saved_env:
            os.environ.clear()
            os.environ.update(self._saved_env)
