"""``python -m dsh_jupyter.demo [FOLDER]`` as a user runs it: it changes nothing in FOLDER and
leaves no temporary folder behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def snapshot(folder: Path) -> dict:
    """Every entry below ``folder``: bytes, mode and mtime of files, mode and mtime of folders."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
            out[str(path.relative_to(folder))] = (data, st.st_mode, st.st_mtime_ns)
    return out


def run_demo(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, Path]:
    temp = tmp_path / "tmpdir"
    temp.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_")}
    env["TMPDIR"] = str(temp)  # where tempfile puts the demo's own folder
    proc = subprocess.run(
        [sys.executable, "-m", "dsh_jupyter.demo", *args], capture_output=True, text=True, env=env, timeout=120
    )
    return proc, temp


@pytest.fixture
def folder(tmp_path: Path, tree) -> Path:
    f = tmp_path / "my project"
    tree(
        f,
        {
            "README.md": "# My project\nREADME and TODO: more\n",
            "src/app.py": "# TODO: tidy\nprint('hi')\n",
            "src/deep/x.txt": "x\n" * 10,
            "notes": {},
            **{f"many/d{i}/f{j}.txt": "TODO\n" for i in range(30) for j in range(5)},
        },
    )
    for i, path in enumerate(sorted((f / "many").rglob("*.txt"))):  # an old subtree sorts first
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
    return f


def test_the_demo_only_reads_the_folder_it_is_given(tmp_path, folder):
    before = snapshot(folder)
    proc, temp = run_demo(tmp_path, str(folder))
    assert proc.returncode == 0, proc.stderr
    assert snapshot(folder) == before  # bytes, modes and mtimes as they were; nothing added
    assert list(temp.iterdir()) == []  # its temporary folder is gone
    out = proc.stdout
    assert out.startswith(
        f"workspace: {folder}\n           only read: the demo lists, globs, greps and reads here and changes nothing;\n"
    )
    assert "(Showing 100 of 153 paths, sampled across 3 of the 3 top-level entries" in out
    assert "the edit demo works on a note of its own in " in out
    assert 'Error: cannot write "note.md": read it first in this session' in out
    assert "The file note.md has been updated successfully." in out


def test_the_seed_demo_cleans_up_after_itself(tmp_path):
    proc, temp = run_demo(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert list(temp.iterdir()) == []
    assert "sampled across 23 of the 23 top-level entries" in proc.stdout
    assert "The file README.md has been updated successfully." in proc.stdout


def test_a_folder_that_is_not_there_is_refused(tmp_path):
    missing = tmp_path / "missing"
    proc, temp = run_demo(tmp_path, str(missing))
    assert proc.returncode == 2
    assert (
        proc.stderr == f"dsh demo: {str(missing)!r} is not a folder; give an existing folder, or none for the "
        "seed-shaped demo\n"
    )
    assert not missing.exists() and list(temp.iterdir()) == []
