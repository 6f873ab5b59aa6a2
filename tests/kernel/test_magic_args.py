"""``%dsh`` command lines and the tool arguments they become, read back from the real call log.

The table pins the magic's argument parsing: every line below runs in a real shell and the call
log must hold exactly these arguments (the log shows what was asked, nothing the user did not give).
"""

from __future__ import annotations

import pytest

EDIT_BODY = "first line\n=======\nFIRST LINE\n"
TWO_EDITS = "first line\n=======\nFIRST\n~~~~~~~\nsecond line\n=======\nSECOND\n"

# (line, cell body or None) -> (tool, arguments)
TABLE = [
    ("list", None, "list", {}),
    ("list src", None, "list", {"path": "src"}),
    ("list src --offset 2", None, "list", {"path": "src", "offset": 2}),
    ("list --details", None, "list", {"details": True}),
    ("list 'docs' --offset 1 --details --text", None, "list", {"path": "docs", "offset": 1, "details": True}),
    ("glob **/*.py", None, "glob", {"pattern": "**/*.py"}),
    ("glob *.py src", None, "glob", {"pattern": "*.py", "path": "src"}),
    ("glob *.py --exclude util/**", None, "glob", {"pattern": "*.py", "exclude": ["util/**"]}),
    (
        "glob '*.md' --exclude a --exclude 'b c' --json",
        None,
        "glob",
        {"pattern": "*.md", "exclude": ["a", "b c"]},
    ),
    ("grep hello", None, "grep", {"pattern": "hello"}),
    ("grep hello src", None, "grep", {"pattern": "hello", "path": "src"}),
    ("grep hello --include *.py", None, "grep", {"pattern": "hello", "include": "*.py"}),
    ("grep hello --exclude src/**", None, "grep", {"pattern": "hello", "exclude": ["src/**"]}),
    ("grep -i HELLO", None, "grep", {"pattern": "HELLO", "ignore_case": True}),
    ("grep hello --ignore-case", None, "grep", {"pattern": "hello", "ignore_case": True}),
    ("grep hello -l", None, "grep", {"pattern": "hello", "output_mode": "files_with_matches"}),
    ("grep hello --files", None, "grep", {"pattern": "hello", "output_mode": "files_with_matches"}),
    ("grep hello -c", None, "grep", {"pattern": "hello", "output_mode": "count"}),
    ("grep hello src --count", None, "grep", {"pattern": "hello", "path": "src", "output_mode": "count"}),
    ("grep hello -C 2", None, "grep", {"pattern": "hello", "context": 2}),
    ("grep hello --context 1 --offset 3", None, "grep", {"pattern": "hello", "context": 1, "offset": 3}),
    ("grep -- -x", None, "grep", {"pattern": "-x"}),
    (
        "grep 'hello world' src -i -C 1 --include '*.py' --exclude a --exclude b --offset 1 --text",
        None,
        "grep",
        {
            "pattern": "hello world",
            "path": "src",
            "include": "*.py",
            "exclude": ["a", "b"],
            "ignore_case": True,
            "context": 1,
            "offset": 1,
        },
    ),
    ("read notes.txt", None, "read", {"file_path": "notes.txt"}),
    ("read notes.txt --offset 2 --limit 1", None, "read", {"file_path": "notes.txt", "offset": 2, "limit": 1}),
    ("read notes.txt --offset -1", None, "read", {"file_path": "notes.txt", "offset": -1}),
    ("read 'docs/guide with space.md' --json", None, "read", {"file_path": "docs/guide with space.md"}),
    (
        "read notes.txt --cell-id abc --output 2 --offset 3",
        None,
        "read",
        {"file_path": "notes.txt", "cell_id": "abc", "output": 2, "offset": 3},
    ),
    ("read notes.txt --outline --limit 5", None, "read", {"file_path": "notes.txt", "outline": True, "limit": 5}),
    ("write new.txt --empty", None, "write", {"file_path": "new.txt", "content": ""}),
    ("write new.txt", "one\ntwo\n", "write", {"file_path": "new.txt", "content": "one\ntwo\n"}),
    (
        "edit notes.txt --dry-run",
        EDIT_BODY,
        "edit",
        {"file_path": "notes.txt", "old_string": "first line", "new_string": "FIRST LINE", "dry_run": True},
    ),
    (
        "edit notes.txt --replace-all --cell-id abc --separator SEP",
        "first line\nSEP\nFIRST LINE\n",
        "edit",
        {
            "file_path": "notes.txt",
            "old_string": "first line",
            "new_string": "FIRST LINE",
            "replace_all": True,
            "cell_id": "abc",
        },
    ),
    (
        "edit notes.txt --replace-all --dry-run",
        TWO_EDITS,
        "edit",
        {
            "file_path": "notes.txt",
            "edits": [
                {"old_string": "first line", "new_string": "FIRST", "replace_all": True},
                {"old_string": "second line", "new_string": "SECOND", "replace_all": True},
            ],
            "dry_run": True,
        },
    ),
    (
        """edit_cells nb.ipynb '[{"op": "delete", "cell_id": "a1"}]'""",
        None,
        "edit_cells",
        {"file_path": "nb.ipynb", "operations": [{"op": "delete", "cell_id": "a1"}]},
    ),
    (
        """edit_cells nb.ipynb '[{"op": "insert", "cell_type": "code", "source": "x = 1 # one", "at": "end"},"""
        """ {"op": "move", "cell_id": 3, "before": 1}]' --dry-run""",
        None,
        "edit_cells",
        {
            "file_path": "nb.ipynb",
            "operations": [
                {"op": "insert", "cell_type": "code", "source": "x = 1 # one", "at": "end"},
                {"op": "move", "cell_id": 3, "before": 1},
            ],
            "dry_run": True,
        },
    ),
    ("move notes.txt moved.txt", None, "move", {"source": "notes.txt", "destination": "moved.txt"}),
    (
        "move notes.txt src/app.py --overwrite",
        None,
        "move",
        {"source": "notes.txt", "destination": "src/app.py", "overwrite": True},
    ),
    ("list_dir src", None, "list_dir", {"path": "src"}),
    ("list_dir . --recursive", None, "list_dir", {"path": ".", "recursive": True}),
]


@pytest.mark.parametrize(
    ("line", "body", "tool", "args"), TABLE, ids=[row[0] + (" +body" if row[1] else "") for row in TABLE]
)
def test_command_line_becomes_these_tool_arguments(shell, python_ws, capsys, line, body, tool, args):
    if body is None:
        shell.run_line_magic("dsh", line)
    else:
        shell.run_cell_magic("dsh", line, body)
    capsys.readouterr()
    calls = python_ws().calls()["calls"]
    assert [(c["tool"], c["args"]) for c in calls] == [(tool, args)]
