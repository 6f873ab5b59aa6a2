"""Trees on disk for the tests and the benchmarks: one builder and the tests' small workspace.

- ``build_tree(base, spec)`` writes a spec: str/bytes -> file, dict -> folder, ``Link`` -> symlink;
  keys may hold ``/`` to create nested paths in one go. The tests reach it as the ``tree`` fixture
  (tests/conftest.py), the benchmarks through ``benchmarks/bigtrees.py``, which builds its big
  generated trees with it.
- ``TREE``: the small workspace the server, MCP and kernel tests serve.

Why here: it is test support that the benchmarks share, so it lives beside the other helper
modules of ``tests/`` (on ``sys.path`` while pytest runs; a benchmark puts ``tests/`` there itself).
What it must never do: import the package or pytest, or create anything when imported; the
benchmarks import it as plain scripts.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["TREE", "Link", "build_tree"]


class Link:
    """A symlink in a ``tree`` spec: ``{"l": Link("target")}``."""

    def __init__(self, target: str | os.PathLike) -> None:
        self.target = os.fspath(target)


def build_tree(base: Path, spec: dict) -> Path:
    """Create ``spec`` under ``base``: str/bytes -> file, dict -> directory, Link -> symlink.

    Keys may hold ``/`` to create nested paths in one go.
    """
    base = Path(base)
    base.mkdir(parents=True, exist_ok=True)
    for name, node in spec.items():
        path = base / name
        if isinstance(node, dict):
            build_tree(path, node)
        elif isinstance(node, Link):
            path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(node.target, path)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            data = node.encode("utf-8") if isinstance(node, str) else bytes(node)
            path.write_bytes(data)
    return base


# The small workspace the server, MCP and kernel tests serve.
TREE = {
    "src": {
        "app.py": "def main():\n    return 'hello world'\n",
        "util/helpers.py": "def helper():\n    return 'hello helper'\n",
    },
    "docs/guide with space.md": "# Guide\nhello again\n",
    "données/été.txt": "café hello\n",
    "notes.txt": "first line\nsecond line\n",
    "empty": {},
}
