"""``python -m dsh_jupyter.demo [FOLDER]``: the tools on a workspace shaped like the seed failure.

Without FOLDER it builds the seed-shaped tree in a temporary folder and runs everything there.
With FOLDER it only reads there — list, glob, grep, read — and changes nothing in it: the
read-before-write part of the demo edits a note of its own in the demo's temporary folder.
Either way, what an agent would have seen before (the oldest-first head of a broad glob) is shown
beside what it sees now. State and spills go to that temporary folder, which is removed when the
demo ends, so nothing is left behind.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

from . import Workspace
from .seedtree import build_seed_tree

_NOTE = "A note the demo writes to show the read-before-write gate.\n"


def _show(title: str, text: str, max_lines: int = 14) -> None:
    lines = text.splitlines()
    print(f"\n=== {title}")
    if len(lines) > max_lines:
        keep = max_lines // 2
        hidden = len(lines) - 2 * keep
        lines = [*lines[:keep], f"   [... {hidden} lines not printed by the demo ...]", *lines[-keep:]]
    print("\n".join(lines))


def _explore(root: str, scratch: str, grep_pattern: str) -> Workspace:
    """The read-only part: list, glob the old way and now, the saved full result, grep."""
    state = os.path.join(scratch, "state.sqlite")
    spills = os.path.join(scratch, "spills")
    ws = Workspace(root, session="demo", state_path=state, spill_root=spills)
    _show('list()  -- "what is here?"', ws.run("list").text, max_lines=40)
    head = Workspace(root, session="demo", state_path=state, spill_root=spills, glob_sample_over_cap=False).run(
        "glob", pattern="*"
    )
    tops = {p.split("/", 1)[0] for p in head.value.get("paths", [])}
    _show(f'glob("*") the old way: oldest-first head ({len(tops)} top-level name(s) visible)', head.text)
    now = ws.run("glob", pattern="*")
    tops = {p.split("/", 1)[0] for p in now.value.get("paths", [])}
    _show(f'glob("*") now: sampled across top-level entries ({len(tops)} names visible)', now.text)
    if now.value.get("spill"):
        _show("read the saved full result, lines 1-5", ws.run("read", file_path=now.value["spill"], limit=5).text)
    _show(f"grep({grep_pattern!r})", ws.run("grep", pattern=grep_pattern).text)
    return ws


def _gate(ws: Workspace, target: str, old: str, new: str) -> None:
    """The read-before-write gate: an edit before a read is refused, after a read it works."""
    edit = {"file_path": target, "old_string": old, "new_string": new}
    _show("edit before read (refused)", ws.call("edit", edit).text)
    ws.run("read", file_path=target)
    _show("edit after read", ws.call("edit", edit).text)


def main(argv: list[str]) -> int:
    if argv and not os.path.isdir(argv[0]):
        print(
            f"dsh demo: {argv[0]!r} is not a folder; give an existing folder, or none for the seed-shaped demo",
            file=sys.stderr,
        )
        return 2
    scratch = tempfile.mkdtemp(prefix="dsh-demo-")
    try:
        if argv:
            root = os.path.abspath(argv[0])
            print(
                f"workspace: {root}\n           only read: the demo lists, globs, greps and reads here and "
                "changes nothing;\n           its edit demo runs on a note in a temporary folder"
            )
            ws = _explore(root, scratch, "TODO")
            notes = os.path.join(scratch, "notes")
            os.mkdir(notes)
            with open(os.path.join(notes, "note.md"), "w", encoding="utf-8") as f:
                f.write(_NOTE)
            note_ws = Workspace(
                notes,
                session="demo",
                state_path=os.path.join(scratch, "state.sqlite"),
                spill_root=os.path.join(scratch, "spills"),
            )
            print(f"\nthe edit demo works on a note of its own in {notes}, never on your files")
            _gate(note_ws, "note.md", "the read-before-write gate", "the read-before-write gate, passed")
        else:
            root = os.path.join(scratch, "workspace")
            build_seed_tree(root)
            print(f"workspace: {root}\n           a seed-shaped tree built for the demo (removed at the end)")
            ws = _explore(root, scratch, "module 1[0-9]$")
            _gate(ws, "README.md", "README", "Read me")
        print(f"\n{ws.calls()['total']} calls in the session's call log.")
        print(f"state and spills were in {scratch}, which is removed now.")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
