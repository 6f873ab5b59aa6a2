"""What the Landlock fence lets a fenced child do, tried by a real child on real files.

The child is a shell script standing in for rg (the fence then also lets it run /bin's
commands); it tries each operation beneath the search root and outside it, and the files are
checked on disk afterwards. The system Python's ``os.truncate`` is truncate(2) by path, the one change the fence
grants beneath the root (so that Landlock's check of each open stops at the root).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from dsh_jupyter.core.fs import syscalls
from dsh_jupyter.core.rg.fence import Fencing

pytestmark = [
    pytest.mark.skipif(syscalls.landlock_abi() < 3, reason="needs Landlock ABI 3 (truncate right)"),
    pytest.mark.skipif(not os.path.exists("/usr/bin/python3"), reason="the system Python makes the truncate(2) call"),
]

SCRIPT = """#!/bin/sh
try() { name=$1; shift; if "$@"; then echo "$name ok"; else echo "$name refused"; fi; }
try read-inside cat "$1/inside.txt"
try read-outside cat "$2/outside.txt"
try write-inside sh -c 'echo more >> "$1/inside.txt"' - "$1"
try create-inside sh -c 'echo new > "$1/new.txt"' - "$1"
try truncate-open-inside truncate -s 1 "$1/long.txt"
try truncate-inside /usr/bin/python3 -I -S -c 'import os, sys; os.truncate(sys.argv[1], 1)' "$1/long.txt"
try truncate-outside /usr/bin/python3 -I -S -c 'import os, sys; os.truncate(sys.argv[1], 1)' "$2/outside.txt"
"""


def test_the_fenced_child_reads_beneath_the_root_and_may_only_truncate_there(tmp_path: Path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "inside.txt").write_text("inside\n")
    (root / "long.txt").write_text("0123456789\n")
    (outside / "outside.txt").write_text("secret\n")
    fake_rg = tmp_path / "bin" / "rg"
    fake_rg.parent.mkdir()
    fake_rg.write_text(SCRIPT)
    fake_rg.chmod(0o755)
    fence = Fencing(True, str(fake_rg))
    assert fence.mode == "landlock"
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    null = os.open(os.devnull, os.O_RDWR)  # opened here: the fenced child may not open it (nor redirect to it)
    try:
        child = fence.spawn(
            lambda: subprocess.Popen(
                [str(fake_rg), str(root), str(outside)], stdout=subprocess.PIPE, stderr=null, stdin=null
            ),
            [(root_fd, True)],
        )
        out, _ = child.communicate(timeout=30)
    finally:
        os.close(root_fd)
        os.close(null)
    assert out.decode().splitlines() == [
        "inside",
        "read-inside ok",
        "read-outside refused",
        "write-inside refused",
        "create-inside refused",
        "truncate-open-inside refused",  # truncate(1) opens for writing: no write right
        "truncate-inside ok",  # truncate(2) by path, granted beneath the root (see fence.py)
        "truncate-outside refused",
    ]
    # on disk: nothing outside changed, nothing inside written; only the granted truncate happened
    assert (outside / "outside.txt").read_text() == "secret\n"
    assert (root / "inside.txt").read_text() == "inside\n"
    assert not (root / "new.txt").exists()
    assert (root / "long.txt").read_bytes() == b"0"
