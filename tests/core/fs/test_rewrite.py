"""Edits keep the file: owner, group, mode, inode and hard links, as Jupyter's save does.

Run as root (CI is root) with real ``chown`` to other ids, a real hard link, a setgid and a sticky
folder; the sticky and group-shared cases also as an unprivileged user through ``setpriv``, where
the kernel's rules (not ours) decide what a rename may do. A full disk is a real 64 KiB tmpfs.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from dsh_jupyter import Workspace

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown files to other users")

OTHER_UID, OTHER_GID, NOBODY = 1234, 4321, 65534


def edit_after_read(ws: Workspace, path: str, old: str, new: str):
    r = ws.run("read", file_path=path)
    assert not r.is_error, r.text
    return ws.run("edit", file_path=path, old_string=old, new_string=new)


def test_a_file_of_another_user_keeps_owner_group_mode_and_inode(ws, root):
    f = root / "theirs.txt"
    f.write_text("hello world\n")
    os.chown(f, OTHER_UID, OTHER_GID)
    os.chmod(f, 0o640)
    ino = f.stat().st_ino
    r = edit_after_read(ws, "theirs.txt", "world", "there")
    assert r.text.split("\n")[0] == "The file theirs.txt has been updated successfully."
    st = f.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode), st.st_ino) == (OTHER_UID, OTHER_GID, 0o640, ino)
    assert f.read_text() == "hello there\n"
    # and the write after it needs no new read: the new version was recorded
    assert ws.run("write", file_path="theirs.txt", content="whole\n").text.endswith("Updated file\n</content>")
    assert (f.stat().st_uid, f.stat().st_ino, f.read_text()) == (OTHER_UID, ino, "whole\n")
    assert [p.name for p in root.iterdir()] == ["theirs.txt"]


def test_a_hard_link_is_kept(ws, root):
    a, b = root / "a.txt", root / "b.txt"
    a.write_text("shared content\n")
    os.link(a, b)
    assert edit_after_read(ws, "a.txt", "shared", "edited").is_error is False
    assert b.read_text() == "edited content\n"
    assert a.stat().st_ino == b.stat().st_ino and a.stat().st_nlink == 2


def test_a_setgid_folder_keeps_the_group(ws, root):
    team = root / "team"
    team.mkdir()
    os.chown(team, 0, OTHER_GID)
    os.chmod(team, 0o2775)
    f = team / "notes.txt"
    f.write_text("draft\n")
    assert f.stat().st_gid == OTHER_GID  # inherited from the setgid folder
    ino = f.stat().st_ino
    assert not edit_after_read(ws, "team/notes.txt", "draft", "final").is_error
    assert (f.stat().st_gid, f.stat().st_ino, f.read_text()) == (OTHER_GID, ino, "final\n")
    # a new file in it gets the folder's group too (the kernel's rule for setgid folders)
    assert not ws.run("write", file_path="team/new.txt", content="n\n").is_error
    assert (team / "new.txt").stat().st_gid == OTHER_GID


def test_the_own_file_in_a_plain_folder_is_still_replaced_atomically(ws, root):
    f = root / "mine.txt"
    f.write_text("v1\n")
    ino = f.stat().st_ino
    assert not edit_after_read(ws, "mine.txt", "v1", "v2").is_error
    assert f.read_text() == "v2\n" and f.stat().st_ino != ino  # temp file + rename


AS_NOBODY = """
import json, sys
from dsh_jupyter import Workspace
ws = Workspace(sys.argv[1], session="n", state_path=sys.argv[2])
out = []
for path in sys.argv[3:]:
    r = ws.run("read", file_path=path)
    e = ws.run("edit", file_path=path, old_string="before", new_string="after")
    out.append([r.is_error, e.text.split("\\n")[0]])
print(json.dumps(out))
"""


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv")
def test_shared_and_sticky_folders_for_an_unprivileged_member_of_the_group():
    base = Path(tempfile.mkdtemp(prefix="dsh-own-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        root = base / "root"
        (root / "sticky").mkdir(parents=True)
        (root / "shared").mkdir()
        os.chmod(root, 0o755)
        os.chmod(root / "sticky", 0o1777)
        os.chmod(root / "shared", 0o777)
        files = [root / "sticky" / "f.txt", root / "shared" / "f.txt"]
        for f in files:
            f.write_text("before\n")
            os.chown(f, OTHER_UID, OTHER_GID)
            os.chmod(f, 0o664)  # group-writable: the group member may change the content
        inodes = [f.stat().st_ino for f in files]
        state = base / "state"
        state.mkdir()
        os.chown(state, NOBODY, NOBODY)
        argv = [
            "setpriv",
            f"--reuid={NOBODY}",
            f"--regid={NOBODY}",
            f"--groups={OTHER_GID}",
            "--inh-caps=-all",
            sys.executable,
            "-c",
            AS_NOBODY,
            str(root),
            str(state / "s.sqlite"),
            "sticky/f.txt",
            "shared/f.txt",
        ]
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": os.environ["PATH"], "HOME": str(state), "LANG": "C.UTF-8"},
        )
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert out == [
            [False, "The file sticky/f.txt has been updated successfully."],
            [False, "The file shared/f.txt has been updated successfully."],
        ]
        for f, ino in zip(files, inodes):
            st = f.stat()
            assert (st.st_uid, st.st_gid, st.st_ino, f.read_text()) == (OTHER_UID, OTHER_GID, ino, "after\n")
        assert os.listdir(state / "backups") == []  # the copies were removed once the files were whole
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_failed_rewrite_puts_the_old_content_back(make_ws, tmp_path):
    """The disk fills up mid-rewrite (a real 64 KiB tmpfs): the old content is restored."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        f = mnt / "big.txt"
        original = ("line of text\n" * 2000).encode()  # 26 KB
        f.write_bytes(original)
        os.chown(f, OTHER_UID, OTHER_GID)  # not ours: rewritten in place
        ws = make_ws(root_dir=mnt)
        assert not ws.run("read", file_path="big.txt").is_error
        r = ws.run("write", file_path="big.txt", content="x" * 200_000)
        assert r.is_error and r.value["code"] == "FS_ERROR", r.text
        assert r.value["message"].startswith('cannot write "big.txt": ')
        assert f.read_bytes() == original
        assert f.stat().st_uid == OTHER_UID
        assert os.listdir(Path(ws.state_path).parent / "backups") == []
        # The file is byte for byte what this session read, so it may edit it without reading again
        # (its ctime moved with the restore; the session's observation moved with it).
        e = ws.run("edit", file_path="big.txt", old_string="line of text", new_string="text", replace_all=True)
        assert not e.is_error, e.text
        assert f.read_bytes() == b"text\n" * 2000
        ws.close()  # it holds the root open
    finally:
        if subprocess.run(["umount", str(mnt)]).returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)])
