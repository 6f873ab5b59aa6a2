"""``python -m dsh_jupyter.demo [FOLDER]``: the tools on a workspace shaped like the seed failure.

Builds the seed-shaped tree (or uses FOLDER if it is given and not empty), then shows what an
agent would have seen before (the oldest-first head of a broad glob) and what it sees now.
State and spills go to a temporary folder, so the demo leaves nothing behind in yours.
"""

from __future__ import annotations

import os
import sys
import tempfile

from . import Workspace
from .seedtree import build_seed_tree


def _show(title: str, text: str, max_lines: int = 14) -> None:
    lines = text.splitlines()
    print(f"\n=== {title}")
    if len(lines) > max_lines:
        keep = max_lines // 2
        hidden = len(lines) - 2 * keep
        lines = [*lines[:keep], f"   [... {hidden} lines not printed by the demo ...]", *lines[-keep:]]
    print("\n".join(lines))


def main(argv: list[str]) -> int:
    scratch = tempfile.mkdtemp(prefix="dsh-demo-")
    if argv and os.path.isdir(argv[0]) and os.listdir(argv[0]):
        root = argv[0]
    else:
        root = argv[0] if argv else os.path.join(scratch, "workspace")
        build_seed_tree(root)
    state = os.path.join(scratch, "state.sqlite")
    ws = Workspace(root, session="demo", state_path=state)
    print(f"workspace: {root}\nstate:     {state}")

    _show('list()  -- "what is here?"', ws.run("list").text, max_lines=40)
    head = Workspace(root, session="demo", state_path=state, glob_sample_over_cap=False).run("glob", pattern="*")
    tops = {p.split("/", 1)[0] for p in head.value["paths"]}
    _show(f'glob("*") the old way: oldest-first head ({len(tops)} top-level name(s) visible)', head.text)
    now = ws.run("glob", pattern="*")
    tops = {p.split("/", 1)[0] for p in now.value["paths"]}
    _show(f'glob("*") now: sampled across top-level entries ({len(tops)} names visible)', now.text)
    if now.value["spill"]:
        _show("read the saved full result, lines 1-5", ws.run("read", file_path=now.value["spill"], limit=5).text)
    _show('grep("module 1[0-9]$")', ws.run("grep", pattern="module 1[0-9]$").text)
    target = "README.md" if os.path.exists(os.path.join(root, "README.md")) else None
    if target:
        _show("edit before read (refused)", ws.run("edit", file_path=target, old_string="README", new_string="Read me").text)
        ws.run("read", file_path=target)
        _show("edit after read", ws.run("edit", file_path=target, old_string="README", new_string="Read me").text)
    print(f"\n{ws.calls()['total']} calls in the session's call log.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
