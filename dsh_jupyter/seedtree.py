"""Build a workspace shaped like the one in which a capped glob page misled an agent.

The failure: asked what a workspace held, an agent called ``glob("*")``; the page showed the
first 100 of the matches in modification-time order (oldest first), all of which sat in one
freshly unpacked subfolder whose archive timestamps predated everything else -- and the agent
described that subfolder as the whole project.

This module recreates that shape at a small scale (24 top-level entries, 716 files, one subtree
of 355 files dated 2001, one empty directory) for the tests, the demo and the notebooks. Every
file gets its own modification time so the oldest-first order is fully determined.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["OLD_SUBTREE", "SeedTree", "build_seed_tree"]

OLD_SUBTREE = "vendor-unpacked"
_DIRS = [
    "api",
    "app",
    "assets",
    "bin",
    "config",
    "db",
    "docs",
    "examples",
    "infra",
    "lib",
    "migrations",
    "notebooks",
    "scripts",
    "services",
    "src",
    "templates",
    "tests",
    "tools",
    "web",
]
_TOP_FILES = ["Makefile", "README.md", "pyproject.toml"]
_EMPTY = "empty-cache"
_OLD_FILES = 355
_TOTAL_FILES = 716
_YEAR_2001 = 978_307_200  # 2001-01-01T00:00:00Z
_RECENT = 1_767_225_600  # 2026-01-01T00:00:00Z


@dataclass(frozen=True)
class SeedTree:
    root: str
    top_level: list[str]  # every top-level entry name, the empty directory included
    with_files: list[str]  # top-level entries that hold at least one file (or are files)
    files: int
    old_files: int


def build_seed_tree(root: str) -> SeedTree:
    """Create the tree under ``root`` (which must be empty or missing) and describe it."""
    os.makedirs(root, exist_ok=True)
    written = 0
    # The unpacked archive: 355 files in nested folders, all dated 2001 (older than anything else).
    for i in range(_OLD_FILES):
        rel = os.path.join(OLD_SUBTREE, f"pkg{i // 50:02d}", f"mod{i % 50:02d}.py")
        _write(root, rel, f"# archived module {i}\n", _YEAR_2001 + i)
        written += 1
    # The project itself: the rest spread over the other directories, dated 2026.
    recent = _TOTAL_FILES - _OLD_FILES - len(_TOP_FILES)
    for i in range(recent):
        top = _DIRS[i % len(_DIRS)]
        rel = os.path.join(top, f"part{i // len(_DIRS) % 3}", f"file{i:03d}.txt")
        _write(root, rel, f"{top} file {i}\n", _RECENT + i * 60)
        written += 1
    for j, name in enumerate(_TOP_FILES):
        _write(root, name, f"{name}\n", _RECENT + (recent + j) * 60)
        written += 1
    os.makedirs(os.path.join(root, _EMPTY), exist_ok=True)
    top_level = sorted([OLD_SUBTREE, *_DIRS, *_TOP_FILES, _EMPTY])
    with_files = sorted([OLD_SUBTREE, *_DIRS, *_TOP_FILES])
    return SeedTree(root, top_level, with_files, written, _OLD_FILES)


def _write(root: str, rel: str, text: str, mtime: int) -> None:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.utime(path, (mtime, mtime))
