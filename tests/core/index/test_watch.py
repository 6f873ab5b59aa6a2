"""The watcher reports every change another process makes, and says when it can no longer be trusted.

All real: another process (a small Python script) changes the tree while the watcher watches; the
kernel's own inotify queue is overflowed; folders are moved in, renamed and deleted on disk. Every
test is bounded in time by an alarm, and every child process by a timeout.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from dsh_jupyter.core.caches.stamps import LOCAL_FILESYSTEMS
from dsh_jupyter.core.fs import syscalls
from dsh_jupyter.core.index.filesystems import REMOTE_FILESYSTEMS, remote_filesystem
from dsh_jupyter.core.index.watch import Changes, Watcher

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux-only")

LIMIT_S = 60


@pytest.fixture(autouse=True)
def bounded():
    def expire(signum, frame):
        raise TimeoutError(f"the test took more than {LIMIT_S} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(LIMIT_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def run(script: str, *args: str) -> subprocess.CompletedProcess:
    """Run ``script`` in another Python process, bounded in time; it must succeed."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *args], capture_output=True, text=True, timeout=LIMIT_S / 2
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def _can_unshare_mounts() -> bool:
    try:
        probe = ["unshare", "--mount", "--propagation", "private", "mount", "-t", "tmpfs", "none", "/mnt"]
        return subprocess.run(probe, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _can_limit_watches() -> bool:
    probe = ["unshare", "--user", "--map-root-user", "sh", "-c", "echo 3 > /proc/sys/user/max_inotify_watches"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def make(root: Path, spec: dict[str, str]) -> None:
    for rel, text in spec.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "work space"
    r.mkdir()
    return r


def watching(root: Path, **kw) -> Watcher:
    w = Watcher(str(root), **kw)
    w.start()
    assert w.lost is None
    return w


CHANGER = """
    import json, os, sys
    root = sys.argv[1]
    os.chdir(root)
    touched = []
    def note(*paths):
        touched.extend(paths)
    with open("edit.txt", "w") as f:
        f.write("new text\\n")
    note("edit.txt")
    with open("append.txt", "a") as f:
        f.write("one more line\\n")
    note("append.txt")
    os.remove("gone.txt")
    note("gone.txt")
    os.rename("old name.txt", "new name.txt")
    note("old name.txt", "new name.txt")
    os.chmod("mode.txt", 0o600)
    note("mode.txt")
    with open("sub/deep/ünïcode new.txt", "w") as f:
        f.write("x")
    note("sub/deep/ünïcode new.txt")
    os.rename("sub/inner.txt", "moved.txt")
    note("sub/inner.txt", "moved.txt")
    # nested folders with files, created at once: the watcher sees them only at its next drain
    os.makedirs("fresh/a/b/c")
    note("fresh", "fresh/a", "fresh/a/b", "fresh/a/b/c")
    for rel in ("fresh/top.txt", "fresh/a/one.txt", "fresh/a/b/two.txt", "fresh/a/b/c/three.txt"):
        with open(rel, "w") as f:
            f.write(rel)
        note(rel)
    print(json.dumps(touched))
"""


@pytest.mark.parametrize("resolver", ["openat2", "walk"])
def test_every_change_of_another_process_is_in_one_drain(root: Path, resolver: str, monkeypatch):
    make(
        root,
        {
            "keep.txt": "untouched",
            "edit.txt": "old",
            "append.txt": "first\n",
            "gone.txt": "bye",
            "old name.txt": "name",
            "mode.txt": "m",
            "sub/inner.txt": "inner",
            "sub/deep/file.txt": "deep",
        },
    )
    if resolver == "walk":  # as on a kernel without openat2: one name at a time from the root
        monkeypatch.setattr(syscalls, "openat2_available", lambda: False)
    elif not syscalls.openat2_available():
        pytest.skip("this kernel has no openat2")
    w = watching(root)
    assert w._beneath is (resolver == "openat2")
    touched = set(json.loads(run(CHANGER, str(root)).stdout))
    changes = w.drain()
    assert changes.lost is None
    assert touched - changes.paths == set()
    assert "keep.txt" not in changes.paths and "sub/deep/file.txt" not in changes.paths
    assert all(not p.startswith(("/", "./")) and "//" not in p for p in changes.paths)
    # the new folders are watched now: a later change in the deepest one is reported
    (root / "fresh/a/b/c/later.txt").write_text("later")
    assert w.drain() == Changes({"fresh/a/b/c/later.txt"}, None)
    w.close()


RACER = """
    import json, os, sys
    root, count = sys.argv[1], int(sys.argv[2])
    created = []
    for i in range(count):
        top = os.path.join(root, f"r{i:03d}")
        os.makedirs(os.path.join(top, "x", "y"))
        for rel in ("f.txt", "x/g.txt", "x/y/h.txt"):
            with open(os.path.join(top, rel), "w") as f:
                f.write("data")
            created.append(f"r{i:03d}/{rel}")
    print(json.dumps(created))
"""


def test_nested_folders_created_while_draining_are_all_reported(root: Path):
    """The other process creates folders and fills them as fast as it can, while this one drains
    in a loop: a folder is watched at any point of its filling, and nothing written is missed."""
    w = watching(root)
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(RACER), str(root), "300"], stdout=subprocess.PIPE, text=True
    )
    seen: set[str] = set()
    drains = 0
    while proc.poll() is None:
        seen |= w.drain().paths
        drains += 1
    out, _ = proc.communicate(timeout=LIMIT_S / 2)
    assert proc.returncode == 0
    last = w.drain()
    assert last.lost is None
    seen |= last.paths
    created = set(json.loads(out))
    assert len(created) == 900
    assert created - seen == set()
    assert drains > 1
    w.close()


def test_a_queue_overflow_loses_authority(root: Path):
    queued = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    w = watching(root)
    run(
        """
        import os, sys
        root, n = sys.argv[1], int(sys.argv[2])
        for i in range(n):
            os.close(os.open(os.path.join(root, f"f{i}"), os.O_CREAT | os.O_WRONLY, 0o644))
        """,
        str(root),
        str(queued + 100),
    )
    assert w.drain().lost == "file events were lost (the kernel's event queue overflowed)"
    assert w.lost == "file events were lost (the kernel's event queue overflowed)"
    (root / "after.txt").write_text("x")
    assert w.drain() == Changes(set(), "file events were lost (the kernel's event queue overflowed)")
    w.close()
    assert w.lost == "file events were lost (the kernel's event queue overflowed)"


def test_more_folders_than_max_watches_loses_authority(root: Path, caplog):
    make(root, {"a/1.txt": "", "b/2.txt": "", "c/d/3.txt": ""})  # 5 folders with the root
    w = Watcher(str(root), max_watches=4)
    with caplog.at_level(logging.WARNING, logger="dsh_jupyter.core.index.watch"):
        w.start()
    assert w.lost == "the workspace has more folders than max_watches (4)"
    assert "the workspace has more folders than max_watches (4)" in caplog.text
    assert w.drain().lost == "the workspace has more folders than max_watches (4)"
    w.close()

    w = watching(root, max_watches=5)
    run("import os, sys; os.makedirs(os.path.join(sys.argv[1], 'e'))", str(root))
    assert w.drain().lost == "the workspace has more folders than max_watches (5)"
    w.close()


def test_a_folder_moved_in_from_outside_loses_authority(root: Path, tmp_path: Path):
    make(tmp_path, {"outside/pkg/mod.py": "x = 1\n"})
    w = watching(root)
    run("import os, sys; os.rename(sys.argv[1], sys.argv[2])", str(tmp_path / "outside"), str(root / "outside"))
    assert w.drain().lost == "a folder was moved into the workspace"
    w.close()


def test_a_folder_renamed_inside_loses_authority(root: Path):
    make(root, {"src/pkg/mod.py": "x = 1\n"})
    w = watching(root)
    run("import os, sys; os.rename(sys.argv[1], sys.argv[2])", str(root / "src"), str(root / "lib"))
    assert w.drain().lost == "a folder was renamed in the workspace"
    w.close()


def test_a_file_moved_in_and_a_skipped_folder_moved_in_are_reported(root: Path, tmp_path: Path):
    make(tmp_path, {"in.txt": "in", "node_modules/dep/index.js": ""})
    make(root, {".git/HEAD": "ref"})
    w = watching(root, skip_dir=lambda rel: rel.rpartition("/")[2] in {".git", "node_modules"})
    assert ".git" not in w._wd
    run(
        "import os, sys; os.rename(sys.argv[1], sys.argv[3]); os.rename(sys.argv[2], sys.argv[4]);"
        "open(sys.argv[5], 'w').write('changed')",
        str(tmp_path / "in.txt"),
        str(tmp_path / "node_modules"),
        str(root / "in.txt"),
        str(root / "node_modules"),
        str(root / ".git/HEAD"),
    )
    assert w.drain() == Changes({"in.txt", "node_modules"}, None)
    w.close()


def test_a_skipped_folder_made_later_is_reported_by_name_and_not_watched(root: Path):
    w = watching(root, skip_dir=lambda rel: rel.rpartition("/")[2] == ".git")
    run(
        "import os, sys; os.makedirs(os.path.join(sys.argv[1], 'src/.git/objects'));"
        "open(os.path.join(sys.argv[1], 'src/.git/objects/ab'), 'w').write('x');"
        "open(os.path.join(sys.argv[1], 'src/main.py'), 'w').write('x')",
        str(root),
    )
    assert w.drain() == Changes({"src", "src/.git", "src/main.py"}, None)
    assert set(w._wd) == {"", "src"}
    (root / "src/.git/objects/cd").write_text("y")
    assert w.drain() == Changes(set(), None)
    w.close()


def test_a_folder_deleted_or_moved_out_is_reported_and_unwatched(root: Path, tmp_path: Path):
    make(root, {"gone/a.txt": "a", "gone/deeper/b.txt": "b", "away/c.txt": "c", "stay.txt": ""})
    w = watching(root)
    run(
        "import os, shutil, sys; shutil.rmtree(sys.argv[1]); os.rename(sys.argv[2], sys.argv[3])",
        str(root / "gone"),
        str(root / "away"),
        str(tmp_path / "away"),
    )
    changes = w.drain()
    assert changes.lost is None
    assert {"gone", "gone/a.txt", "gone/deeper", "gone/deeper/b.txt", "away"} <= changes.paths
    assert set(w._wd) == {""}
    (tmp_path / "away/c.txt").write_text("changed outside")  # no longer in the workspace
    (root / "gone").mkdir()
    (root / "gone/again.txt").write_text("again")
    assert w.drain() == Changes({"gone", "gone/again.txt"}, None)
    w.close()


@pytest.mark.parametrize("how", ["removed", "moved"])
def test_the_root_removed_or_moved_loses_authority(root: Path, tmp_path: Path, how: str):
    make(root, {"a/b.txt": "b"})
    w = watching(root)
    if how == "removed":
        run("import shutil, sys; shutil.rmtree(sys.argv[1])", str(root))
    else:
        run("import os, sys; os.rename(sys.argv[1], sys.argv[2])", str(root), str(tmp_path / "elsewhere"))
    assert w.drain().lost == "the workspace folder was deleted or moved"
    w.close()


def test_a_missing_root_is_lost_from_the_start(tmp_path: Path):
    w = Watcher(str(tmp_path / "nothing here"))
    assert w.lost == "the watcher has not started"
    w.start()
    assert w.lost == "the workspace folder was deleted or moved"


def test_the_root_may_be_given_as_a_descriptor(root: Path):
    make(root, {"a/b.txt": "b"})
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        w = Watcher(fd)
        w.start()
        assert w.lost is None
        (root / "a/b.txt").write_text("changed")
        assert w.drain() == Changes({"a/b.txt"}, None)
        w.close()
    finally:
        os.close(fd)


@pytest.mark.parametrize("resolver", ["openat2", "walk"])
def test_symlinks_to_folders_are_not_followed(root: Path, tmp_path: Path, resolver: str, monkeypatch):
    if resolver == "walk":
        monkeypatch.setattr(syscalls, "openat2_available", lambda: False)
    make(tmp_path, {"outside/o.txt": "o", "outside/sub/p.txt": "p"})
    (root / "link").symlink_to(tmp_path / "outside")
    w = watching(root)
    assert set(w._wd) == {""}
    (tmp_path / "outside/o.txt").write_text("changed")
    assert w.drain() == Changes(set(), None)
    # a folder made and then swapped for a symlink before the drain that would watch it
    (root / "made").mkdir()
    (root / "made").rmdir()
    (root / "made").symlink_to(tmp_path / "outside")
    assert w.drain() == Changes({"made"}, None)
    assert set(w._wd) == {""}
    assert w._open_dir("link/sub") is None
    w.close()


def test_a_tree_deeper_than_path_max_is_watched(root: Path):
    """A path of 80 folders of 60 characters (over 4,800) is longer than PATH_MAX: still watched."""
    name = "a-folder-name-sixty-characters-long-for-a-deep-tree-test-000"
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(80):  # made from descriptors: a path this long cannot be named in one call
        os.mkdir(name, dir_fd=fd)
        below = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = below
    try:
        w = watching(root)
        assert len(w._wd) == 81
        os.close(os.open("deep.txt", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
        assert w.drain() == Changes({"/".join([name] * 80 + ["deep.txt"])}, None)
        w.close()
    finally:
        os.close(fd)


def test_close_ends_authority(root: Path):
    w = watching(root)
    w.close()
    assert w.lost == "the watcher was closed"
    (root / "x.txt").write_text("x")
    assert w.drain() == Changes(set(), "the watcher was closed")
    w.close()


def test_no_descriptor_left_for_inotify_is_reported_as_its_limit(root: Path):
    """inotify_init1 failing with EMFILE (the process has no descriptor left) is the watcher limit."""
    out = run(
        """
        import os, resource, sys
        from dsh_jupyter.core.index.watch import Watcher
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
        held = []
        try:
            while True:
                held.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            pass
        w = Watcher(sys.argv[1])
        w.start()
        print(w.lost)
        """,
        str(root),
    ).stdout
    assert out == "the kernel's limit on file-event watchers was reached\n"


WATCH_LIMITED = """
    import sys
    from dsh_jupyter.core.index.watch import Watcher
    with open("/proc/sys/user/max_inotify_watches", "w") as f:
        f.write("3")  # in this user namespace only: the rest of the machine keeps its limit
    w = Watcher(sys.argv[1])
    w.start()
    print(w.lost)
"""


@pytest.mark.skipif(not _can_limit_watches(), reason="needs a user namespace with its own inotify limits")
def test_the_kernel_s_watch_limit_loses_authority(root: Path):
    """The kernel's own limit, lowered to 3 watches in a child's user namespace: the fourth folder's
    inotify_add_watch fails with ENOSPC."""
    make(root, {"a/1.txt": "", "b/2.txt": "", "c/3.txt": ""})
    proc = subprocess.run(
        ["unshare", "--user", "--map-root-user", sys.executable, "-c", textwrap.dedent(WATCH_LIMITED), str(root)],
        capture_output=True,
        text=True,
        timeout=LIMIT_S / 2,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "the kernel's limit on watched folders was reached\n"


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root to run as another user")
def test_a_folder_that_cannot_be_opened_loses_authority():
    """Run as nobody, the watcher meets a folder it may not open: it cannot know what is inside."""
    top = Path(tempfile.mkdtemp(dir="/tmp"))  # outside pytest's 0700 folders, so nobody reaches it
    try:
        top.chmod(0o755)
        make(top, {"open/a.txt": "a", "locked/inner/b.txt": "b"})
        (top / "locked").chmod(0)
        proc = subprocess.run(
            [
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                sys.executable,
                "-c",
                "import sys; from dsh_jupyter.core.index.watch import Watcher; w = Watcher(sys.argv[1]); "
                "w.start(); print(w.lost)",
                str(top),
            ],
            capture_output=True,
            text=True,
            timeout=LIMIT_S / 2,
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "a folder in the workspace could not be watched (Permission denied)\n"
    finally:
        (top / "locked").chmod(0o755)
        shutil.rmtree(top)


ON_FUSE = """
    import json, os, sys
    sys.path.insert(0, sys.argv[2])
    from fusefs import empty_fuse
    from dsh_jupyter.core.index.watch import Watcher
    root = sys.argv[1]
    os.makedirs(os.path.join(root, "mnt"))
    lost = []
    with empty_fuse(os.path.join(root, "mnt")):
        for top in (root, os.path.join(root, "mnt")):
            w = Watcher(top)
            w.start()
            lost.append(w.lost)
            w.close()
    print(json.dumps(lost))
"""


@pytest.mark.skipif(
    not (_can_unshare_mounts() and os.path.exists("/dev/fuse")), reason="needs /dev/fuse and a private mount namespace"
)
def test_a_real_fuse_file_system_loses_authority(root: Path):
    """A real FUSE mount (tests/fusefs.py, served by the child process): below the root, and as the root."""
    tests = str(Path(__file__).resolve().parents[2])
    proc = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            sys.executable,
            "-c",
            textwrap.dedent(ON_FUSE),
            str(root),
            tests,
        ],
        capture_output=True,
        text=True,
        timeout=LIMIT_S / 2,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [
        "a folder in the workspace is on a user-space file system (fuse)",
        "the workspace is on a user-space file system (fuse)",
    ]


def test_the_tmp_folder_is_local(root: Path):
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert remote_filesystem(syscalls.fstatfs_type(fd)) is None
    finally:
        os.close(fd)


def test_the_remote_filesystem_table():
    assert remote_filesystem(0x6969) == ("nfs", "network")
    assert remote_filesystem(0x517B) == ("smb", "network")
    assert remote_filesystem(0xFE534D42) == ("smb2", "network")
    assert remote_filesystem(0xFF534D42) == ("cifs", "network")
    assert remote_filesystem(0x65735546) == ("fuse", "user-space")
    assert remote_filesystem(0x00C36400) == ("ceph", "network")
    assert remote_filesystem(0x01021997) == ("9p", "network")
    assert remote_filesystem(0x5346414F) == ("afs", "network")
    assert remote_filesystem(0xFF534D42 - (1 << 32)) == ("cifs", "network")  # f_type read as a signed long
    for local in (0xEF53, 0x01021994, 0x58465342, 0x9123683E, 0x794C7630):  # ext4 tmpfs xfs btrfs overlay
        assert remote_filesystem(local) is None
    assert not set(REMOTE_FILESYSTEMS) & LOCAL_FILESYSTEMS


@pytest.mark.skipif(not Path("/usr/include/linux/magic.h").exists(), reason="no kernel headers here")
def test_the_table_agrees_with_the_kernel_headers():
    header = Path("/usr/include/linux/magic.h").read_text()
    defined = {m[0]: int(m[1], 16) for m in re.findall(r"#define\s+(\w+)\s+(0x[0-9a-fA-F]+)", header)}
    names = {
        "NFS_SUPER_MAGIC": "nfs",
        "SMB_SUPER_MAGIC": "smb",
        "SMB2_SUPER_MAGIC": "smb2",
        "CIFS_SUPER_MAGIC": "cifs",
        "FUSE_SUPER_MAGIC": "fuse",
        "AFS_SUPER_MAGIC": "afs",
        "AFS_FS_MAGIC": "afs",
        "CEPH_SUPER_MAGIC": "ceph",
        "V9FS_MAGIC": "9p",
        "CODA_SUPER_MAGIC": "coda",
        "NCP_SUPER_MAGIC": "ncp",
        "OCFS2_SUPER_MAGIC": "ocfs2",
    }
    for macro, name in names.items():
        if macro in defined:
            assert REMOTE_FILESYSTEMS[defined[macro]][0] == name, macro


MOUNTED = """
    import json, os, subprocess, sys
    from dsh_jupyter.core.index.watch import Watcher
    root = sys.argv[1]
    os.makedirs(os.path.join(root, "mnt"))
    subprocess.run(["mount", "-t", "tmpfs", "none", os.path.join(root, "mnt")], check=True)
    os.makedirs(os.path.join(root, "mnt", "inner"))
    w = Watcher(root)
    w.start()
    devs = {os.stat(root).st_dev, os.stat(os.path.join(root, "mnt")).st_dev}
    with open(os.path.join(root, "mnt", "inner", "new.txt"), "w") as f:
        f.write("x")
    c = w.drain()
    print(json.dumps({"lost": c.lost, "paths": sorted(c.paths), "watched": sorted(w._wd), "devs": len(devs)}))
"""


@pytest.mark.skipif(not _can_unshare_mounts(), reason="mounting needs root and a private mount namespace")
def test_a_local_filesystem_mounted_below_the_root_is_checked_and_watched(root: Path):
    """A tmpfs mounted under the root (in a private mount namespace of a child process): another
    st_dev, so its type is checked; tmpfs is local, so it is watched like any folder."""
    proc = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", sys.executable, "-c", textwrap.dedent(MOUNTED), str(root)],
        capture_output=True,
        text=True,
        timeout=LIMIT_S / 2,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "lost": None,
        "paths": ["mnt/inner/new.txt"],
        "watched": ["", "mnt", "mnt/inner"],
        "devs": 2,
    }


MOUNT_AFTER_START = """
    import json, os, subprocess, sys
    from dsh_jupyter.core.index.watch import Watcher
    root = sys.argv[1]
    for name in ("later", "early"):
        os.makedirs(os.path.join(root, name))
    mount = ["mount", "-t", "tmpfs", "none"]
    subprocess.run([*mount, os.path.join(root, "early")], check=True)
    lost = []
    w = Watcher(root)
    w.start()
    outside = os.path.join(os.path.dirname(root), "outside mount")
    os.makedirs(outside)
    subprocess.run([*mount, outside], check=True)  # not in the workspace: no matter
    lost.append(w.drain().lost)
    subprocess.run([*mount, os.path.join(root, "later")], check=True)
    lost.append(w.drain().lost)
    w.close()
    w = Watcher(root)
    w.start()
    subprocess.run(["umount", os.path.join(root, "early")], check=True)
    lost.append(w.drain().lost)
    print(json.dumps(lost))
"""


@pytest.mark.skipif(not _can_unshare_mounts(), reason="mounting needs root and a private mount namespace")
def test_a_mount_or_unmount_in_the_workspace_after_start_loses_authority(root: Path):
    """A tmpfs mounted on a watched folder raises no file event: the mount table says it."""
    proc = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            sys.executable,
            "-c",
            textwrap.dedent(MOUNT_AFTER_START),
            str(root),
        ],
        capture_output=True,
        text=True,
        timeout=LIMIT_S / 2,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [
        None,
        "a file system was mounted in the workspace",
        "a file system in the workspace was unmounted",
    ]


def test_shutil_rmtree_of_a_new_tree_between_drains(root: Path):
    """A folder created and removed before the drain that would watch it: reported, not an error."""
    w = watching(root)
    (root / "brief/inner").mkdir(parents=True)
    (root / "brief/inner/x.txt").write_text("x")
    shutil.rmtree(root / "brief")
    changes = w.drain()
    assert changes.lost is None and "brief" in changes.paths
    assert set(w._wd) == {""}
    w.close()


@pytest.mark.parametrize("where", ["tmp", "shm", "other"])
def test_start_lists_only_folders_that_have_subfolders_where_link_counts_say_so(tmp_path, where, monkeypatch):
    """On ext4 (the tmp folder here) and tmpfs (``/dev/shm``) a folder with a link count of 2
    has no subfolder, so ``start`` watches it without listing it; every folder is still watched,
    and a subfolder made in a leaf just after ``start`` is reported and watched at the next drain.
    On a file system not known to keep such counts every folder is listed."""
    from dsh_jupyter.core.index import filesystems

    if where == "shm":
        if not os.path.isdir("/dev/shm") or _fs_type("/dev/shm") != 0x01021994:
            pytest.skip("no tmpfs at /dev/shm")
        base = Path(tempfile.mkdtemp(dir="/dev/shm"))
    else:
        base = tmp_path / "t"
    if where == "other":
        monkeypatch.setattr(filesystems, "SUBFOLDER_LINKS", {})
        monkeypatch.setattr("dsh_jupyter.core.index.watch.SUBFOLDER_LINKS", {})
    try:
        folders = ["a", "a/b", "a/b/c", "leaf", "empty", "only/x", "only/y"]
        for rel in folders:
            (base / rel).mkdir(parents=True, exist_ok=True)
        for rel in ("a/1.txt", "a/b/c/2.txt", "leaf/3.txt", "leaf/4.txt", "only/x/5.txt"):
            (base / rel).write_text(rel)
        listed = []
        real_scandir = os.scandir

        def counting_scandir(arg):
            listed.append(os.readlink(f"/proc/self/fd/{arg}") if isinstance(arg, int) else arg)
            return real_scandir(arg)

        monkeypatch.setattr(os, "scandir", counting_scandir)
        w = watching(base)
        try:
            every = {"", "only", *folders}
            assert set(w._wd) == every
            with_subfolders = {"", "a", "a/b", "only"}
            relative = {"" if p == str(base) else os.path.relpath(p, base) for p in listed}
            assert relative == (every if where == "other" else with_subfolders)
            (base / "leaf" / "new" / "deeper").mkdir(parents=True)
            changes = w.drain()
            assert changes.lost is None and {"leaf/new", "leaf/new/deeper"} <= changes.paths
            assert {"leaf/new", "leaf/new/deeper"} <= set(w._wd)
        finally:
            w.close()
    finally:
        if where == "shm":
            shutil.rmtree(base)


def _fs_type(path: str) -> int:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return syscalls.fstatfs_type(fd)
    finally:
        os.close(fd)
