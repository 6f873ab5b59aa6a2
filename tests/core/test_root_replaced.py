"""A root removed and made again under a running workspace is noticed (``Resolver.check_root``).

``rm -rf ws; mkdir ws; echo b > ws/b.txt`` — a fresh clone, a volume mounted again — used to leave
the tools answering about the deleted folder until a restart. Every call now compares the root's
path with the folder held open and opens the new one; a root that is gone says so.
"""

from __future__ import annotations

import logging
import os
import shutil

import pytest
from conftest import assert_error

GONE = (
    "the workspace root was removed or replaced by something that is not a folder; make the folder again, "
    "or start the tools on another root"
)


def replace(root) -> None:
    shutil.rmtree(root)
    root.mkdir()
    (root / "b.txt").write_text("b\n")


@pytest.mark.parametrize("openat2", [True, False], ids=["openat2", "walk"])
def test_a_root_made_again_is_served_as_the_new_folder(make_ws, root, caplog, openat2):
    (root / "a.txt").write_text("a\n")
    ws = make_ws(openat2=openat2)
    assert ws.run("list").text.endswith("a.txt\n\n(1 entry: 0 directories, 1 file)\n</content>")
    ws.run("read", file_path="a.txt")
    replace(root)
    with caplog.at_level(logging.WARNING):
        listing = ws.run("list")
    assert (
        listing.text
        == "<path>.</path>\n<type>directory</type>\n<content>\nb.txt\n\n(1 entry: 0 directories, 1 file)\n</content>"
    )
    assert [r.getMessage() for r in caplog.records if "root was replaced" in r.getMessage()] == [
        "the workspace root was replaced (removed and made again); serving the new folder"
    ]
    assert ws.run("read", file_path="b.txt").text.startswith("<path>b.txt</path>")
    assert ws.run("glob", pattern="*.txt").text == "b.txt"
    assert ws.run("grep", pattern="b").text == "Found 1 match\n\nb.txt\nLine 1: b"
    assert_error(ws.run("read", file_path="a.txt"), "FS_NOT_FOUND", 'cannot read "a.txt": not found')
    assert ws.run("write", file_path="c.txt", content="c\n").is_error is False
    assert (root / "c.txt").read_text() == "c\n"
    ws.close()


def test_a_removed_root_is_said_to_be_removed_until_it_is_back(make_ws, root):
    ws = make_ws()
    shutil.rmtree(root)
    for tool, args in [
        ("list", {}),
        ("read", {"file_path": "a.txt"}),
        ("glob", {"pattern": "*"}),
        ("grep", {"pattern": "x"}),
        ("write", {"file_path": "x.txt", "content": "x"}),
        ("list_dir", {"path": "."}),
    ]:
        assert_error(ws.run(tool, **args), "FS_ROOT_UNAVAILABLE", GONE)
    assert not root.exists()  # nothing made it again
    root.write_text("a file now\n")
    assert_error(ws.run("list"), "FS_ROOT_UNAVAILABLE", GONE)
    root.unlink()
    root.mkdir()
    assert ws.run("list").text.endswith("<content>\n(Empty directory)\n</content>")
    ws.close()


def test_a_root_that_now_leads_elsewhere_is_refused(make_ws, tmp_path):
    """The root's path reached through a symlink that was pointed elsewhere: never served as the root."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "secret.txt").write_text("s\n")
    os.symlink("a", tmp_path / "link")
    ws = make_ws(root_dir=str(tmp_path / "link"))
    assert ws.root == str(tmp_path / "a")
    os.rename(tmp_path / "a", tmp_path / "a-old")
    os.symlink("b", tmp_path / "a")  # the root's real path now leads to b
    r = ws.run("list")
    assert_error(
        r,
        "FS_ROOT_UNAVAILABLE",
        "the workspace root now leads to another folder (a symbolic link on its "
        "path changed); start the tools again to serve that folder",
    )
    ws.close()
