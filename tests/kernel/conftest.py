"""Fixtures for the kernel layer: a real IPython shell with ``%load_ext dsh_jupyter`` in a temp workspace.

``DSH_ROOT`` and ``DSH_STATE_PATH`` point at the test's own tree and state file (monkeypatched),
so neither the magic nor the widgets ever touch the user's default state. Widgets are built for
real; their comms are ``comm``'s own recording stand-in (no kernel, no browser), which lets a
test count the messages a click sends.
"""

from __future__ import annotations

from typing import ClassVar

import comm
import pytest
from comm.base_comm import BaseComm
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config
from trees import TREE as SERVED

from dsh_jupyter import Workspace

# The workspace the server tests serve, with a third line in notes.txt.
TREE = {**SERVED, "notes.txt": "first line\nsecond line\nthird line\n"}


@pytest.fixture
def workspace_tree(root, tree):
    tree(root, TREE)
    return root


@pytest.fixture
def big(root, tree):
    """The widget tests' tree: ``big/``: 450 files of growing size and 2 directories; ``long.txt``: 5,000 lines."""
    spec = {f"big/file{i:03}.txt": "x" * i + "\n" for i in range(450)}
    spec["big/dir_a/inner.txt"] = "inner\n"
    spec["big/dir_b"] = {}
    spec["long.txt"] = "".join(f"row {i}\n" for i in range(1, 5001))
    spec["src/app.py"] = "import os\n\ndef main():\n    return 'hello world'\n"
    spec["src/lib/util.py"] = "".join(f"x = {i}\n" for i in range(1, 40)) + "hello = 'util'   # hello again\n"
    tree(root, spec)
    return root


@pytest.fixture
def env(root, state_file, monkeypatch):
    """The variables a server-started kernel inherits, pointed at this test's tree and state."""
    monkeypatch.setenv("DSH_ROOT", str(root))
    monkeypatch.setenv("DSH_STATE_PATH", str(state_file))
    monkeypatch.delenv("DSH_SPILL_ROOT", raising=False)
    monkeypatch.chdir(root)
    return {"root": root, "state": state_file}


@pytest.fixture(scope="session")
def ipython(tmp_path_factory):
    """The process's ``InteractiveShell``, with its profile and history kept out of the user's."""
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    return InteractiveShell.instance(config=config, ipython_dir=str(tmp_path_factory.mktemp("ipython")))


@pytest.fixture
def shell(ipython, env, workspace_tree):
    """A real ``InteractiveShell`` with the extension loaded (and unloaded afterwards)."""
    ip = ipython
    ip.config.pop("DshMagics", None)  # %config in one test must not reach the next
    ip.run_line_magic("load_ext", "dsh_jupyter")
    yield ip
    ip.run_line_magic("unload_ext", "dsh_jupyter")
    ip.config.pop("DshMagics", None)


@pytest.fixture
def cell(shell, capsys):
    """``cell(code)`` -> (ExecutionResult, stdout, stderr) of one real ``run_cell``."""

    def run(code: str):
        capsys.readouterr()
        result = shell.run_cell(code)
        out, err = capsys.readouterr()
        return result, out, err

    return run


@pytest.fixture
def python_ws(env):
    """``python_ws(session="default", **settings)``: a plain-Python Workspace on the same state."""

    def make(session: str = "default", **settings) -> Workspace:
        return Workspace(session=session, **settings)

    return make


class RecordingComm(BaseComm):
    """A comm that keeps what it would send (``sent`` is shared by every comm of a test)."""

    sent: ClassVar[list] = []

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        RecordingComm.sent.append((self.comm_id, msg_type, data))


@pytest.fixture
def comms(monkeypatch):
    """Record every widget message; ``comms.sent`` lists (comm_id, msg_type, data)."""
    sent: list = []
    monkeypatch.setattr(RecordingComm, "sent", sent)
    monkeypatch.setattr(comm, "create_comm", lambda *a, **k: RecordingComm(*a, **k))

    class Box:
        pass

    box = Box()
    box.sent = sent
    return box
