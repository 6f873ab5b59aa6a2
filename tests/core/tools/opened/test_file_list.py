"""``tools.opened.file_list``: what of the open files a person's view may show, over real files, with the
workspace's own visibility. (The server's sources of what is open, and the route, are tested on
real servers: ``tests/server/test_open_files.py``, ``tests/server/test_server_open_documents.py``.)"""

from __future__ import annotations

import os

from dsh_jupyter.core.documents import Presence
from dsh_jupyter.core.tools.opened.file_list import open_files_value


def test_a_plain_workspace_has_nothing_open(ws):
    assert ws.open_files() == {"files": [], "total": 0, "notShown": 0}


def test_shared_documents_and_tabs_are_shown_as_list_shows_their_files(make_ws, root, tree):
    tree(root, {"a.py": "a\n", "b/c.ipynb": "{}", ".hidden/d.txt": "d\n", "e.pyc": ""})
    os.mkfifo(root / "pipe")
    ws = make_ws(allow_hidden=False, hide_globs=["*.pyc"])
    found = [
        (str(root / "b" / "c.ipynb"), Presence(shared=True, tabs=2)),
        (str(root / "a.py"), Presence(shared=False, unsaved=True, tabs=1)),
        (str(root / "pipe"), Presence(shared=False, unsaved=False, tabs=1)),  # not a file: named all the same
        (str(root / "gone.txt"), Presence(shared=False, unsaved=False, tabs=1)),  # deleted while open
        (str(root / ".hidden" / "d.txt"), Presence(shared=False, unsaved=False, tabs=1)),
        (str(root / "e.pyc"), Presence(shared=True, tabs=1)),
        (str(root), Presence(shared=False, unsaved=False, tabs=1)),  # the root is no file
        (str(root) + "-evil/x.txt", Presence(shared=False, unsaved=False, tabs=1)),  # a prefix sibling
        ("/etc/hostname", Presence(shared=False, unsaved=False, tabs=1)),
    ]
    assert open_files_value(found, ws.resolver.visibility) == {
        "files": [
            {"path": "a.py", "shared": False, "tabs": 1, "unsaved": True},
            {"path": "b/c.ipynb", "shared": True, "tabs": 2, "unsaved": None},
            {"path": "gone.txt", "shared": False, "tabs": 1, "unsaved": False},
            {"path": "pipe", "shared": False, "tabs": 1, "unsaved": False},
        ],
        "total": 4,
        "notShown": 5,
    }
    shows_all = make_ws()  # the plain Python API's defaults: hidden files and every name shown
    shown = open_files_value(found, shows_all.resolver.visibility)
    assert [f["path"] for f in shown["files"]] == [".hidden/d.txt", "a.py", "b/c.ipynb", "e.pyc", "gone.txt", "pipe"]
    assert shown["notShown"] == 3
