"""The ``%dsh`` magic in a real IPython shell: each subcommand, --text/--json, usage errors, sessions."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest
from IPython.core.error import UsageError

from dsh_jupyter import Result
from dsh_jupyter.kernel.commands import SUBCOMMANDS, parse_edit_body
from dsh_jupyter.kernel.results import InfoResult, KernelResult

# (magic line, tool, arguments) with the same meaning
SAME_CALLS = [
    ("list", "list", {}),
    ("list src", "list", {"path": "src"}),
    ("list . --offset 2", "list", {"path": ".", "offset": 2}),
    ('list "docs"', "list", {"path": "docs"}),
    ("glob *.py", "glob", {"pattern": "*.py"}),
    ("glob '*.txt' données", "glob", {"pattern": "*.txt", "path": "données"}),
    ("grep hello", "grep", {"pattern": "hello"}),
    ("grep hello src --include *.py", "grep", {"pattern": "hello", "path": "src", "include": "*.py"}),
    ("read notes.txt", "read", {"file_path": "notes.txt"}),
    ("read notes.txt --offset 2 --limit 1", "read", {"file_path": "notes.txt", "offset": 2, "limit": 1}),
    ("read notes.txt --offset -2", "read", {"file_path": "notes.txt", "offset": -2}),
    ('read "docs/guide with space.md"', "read", {"file_path": "docs/guide with space.md"}),
    ("read missing.txt", "read", {"file_path": "missing.txt"}),
    ("list_dir src", "list_dir", {"path": "src"}),
    ("list_dir src --recursive", "list_dir", {"path": "src", "recursive": True}),
]


def test_import_stays_light():
    code = (
        "import sys, dsh_jupyter; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('IPython', 'ipywidgets', 'pandas') "
        "or m.startswith('dsh_jupyter.kernel')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("line,tool,args", SAME_CALLS)
def test_text_is_exactly_the_model_text(cell, python_ws, line, tool, args):
    _, out, err = cell(f"%dsh {line} --text")
    assert err == ""
    assert out == python_ws().run(tool, **args).text + "\n"


@pytest.mark.parametrize("line,tool,args", SAME_CALLS)
def test_json_is_the_value(cell, python_ws, line, tool, args):
    _, out, err = cell(f"%dsh {line} --json")
    assert err == ""
    assert json.loads(out) == python_ws().run(tool, **args).value


@pytest.mark.parametrize("line,tool,args", SAME_CALLS)
def test_line_magic_returns_the_result_object(shell, python_ws, line, tool, args):
    r = shell.run_line_magic("dsh", line)
    assert isinstance(r, KernelResult) and isinstance(r, Result)
    expected = python_ws().run(tool, **args)
    assert (r.tool, r.text, r.value, r.is_error, r.session) == (
        tool,
        expected.text,
        expected.value,
        expected.is_error,
        "default",
    )
    assert list(r.to_frame().columns) == list(expected.to_frame().columns)


def test_the_cell_value_displays_as_the_model_text(cell, python_ws):
    result, out, _ = cell("%dsh read notes.txt")
    assert isinstance(result.result, KernelResult)
    assert python_ws().run("read", file_path="notes.txt").text in out


def test_calls_are_logged_with_surface_magic(shell, python_ws):
    shell.run_line_magic("dsh", "list")
    shell.run_line_magic("dsh", "read notes.txt")
    shell.run_cell_magic("dsh", "write new.txt", "made here\n")
    calls = python_ws().calls()["calls"]
    assert [(c["tool"], c["surface"]) for c in calls] == [("list", "magic"), ("read", "magic"), ("write", "magic")]
    assert calls[1]["args"] == {"file_path": "notes.txt"}


# -- usage errors ------------------------------------------------------------------------------

BAD_LINES = [
    ("%dsh frobnicate", 'unknown subcommand "frobnicate"'),
    ("%dsh", "Usage: %dsh SUBCOMMAND"),
    ("%dsh grep", "the following arguments are required: PATTERN"),
    ("%dsh glob", "the following arguments are required: PATTERN"),
    ("%dsh list --offset abc", "argument --offset: invalid int value: 'abc'"),
    ("%dsh read notes.txt --limit x", "argument --limit: invalid int value: 'x'"),
    ("%dsh list --bogus", "unrecognized arguments: --bogus"),
    ("%dsh list --text --json", "not allowed with argument --text"),
    ('%dsh read "notes.txt', "cannot split the arguments"),
    ("%dsh write out.txt", "write takes the cell body as input"),
    ("%dsh list_dir", "the following arguments are required: PATH"),
    ("%dsh move notes.txt", "the following arguments are required: DEST"),
    ("%dsh edit_cells nb.ipynb", "the following arguments are required: OPERATIONS"),
    ("%dsh edit_cells nb.ipynb '[{op: delete}]'", "argument OPERATIONS: not valid JSON (Expecting property name"),
    ("%dsh move notes.txt a b", "unrecognized arguments: b"),
    ("%dsh calls --limit 0", "--offset and --limit must be at least 1"),
    ("%dsh session ''", "session must be a non-empty string"),
    ("%%dsh edit notes.txt\nfirst line\nsecond line\n", "found none"),
    ("%%dsh edit notes.txt\na\n=======\nb\n=======\nc\n", "found 2 (lines 3, 5 of the cell)"),
    ("%%dsh list\nsomething\n", "list takes no cell body"),
]


@pytest.mark.parametrize("code,message", BAD_LINES)
def test_bad_arguments_give_one_usage_line_and_no_traceback(cell, code, message):
    result, out, err = cell(code)
    assert not result.success
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("UsageError: "), err
    assert message in lines[0]
    if "unknown" not in message and "%dsh SUBCOMMAND" not in message and "cell body" not in message:
        assert "usage: %" in lines[0].lower()


def test_usage_error_is_raised_by_the_magic(shell):
    with pytest.raises(UsageError, match="PATTERN"):
        shell.run_line_magic("dsh", "grep")


def test_help(cell):
    _, out, err = cell("%dsh help")
    assert err == ""
    for name in SUBCOMMANDS:
        assert f" {name}" in out
    _, out, _ = cell("%dsh grep --help")
    assert out.startswith("usage: %dsh grep")
    _, out, _ = cell("%dsh help read")
    assert "--limit N" in out


def test_pattern_starting_with_a_dash(cell, root, python_ws):
    (root / "flags.txt").write_text("use -v here\n")
    _, out, err = cell("%dsh grep --text -- -v")
    assert err == "" and out == python_ws().run("grep", pattern="-v").text + "\n"
    assert "flags.txt" in out


# -- write and edit ------------------------------------------------------------------------------


def test_write_takes_the_cell_body(shell, root):
    r = shell.run_cell_magic("dsh", "write 'new dir/new file.txt'", "line one\nline two\n")
    assert r.text == "<path>new dir/new file.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>"
    assert (root / "new dir" / "new file.txt").read_text() == "line one\nline two\n"


def test_write_over_an_unread_file_is_refused_then_allowed_after_read(shell, root):
    r = shell.run_cell_magic("dsh", "write notes.txt", "replaced\n")
    assert r.is_error and r.value["code"] == "FS_NOT_OBSERVED"
    shell.run_line_magic("dsh", "read notes.txt")
    r = shell.run_cell_magic("dsh", "write notes.txt", "replaced\n")
    assert r.text.endswith("Updated file\n</content>")
    assert (root / "notes.txt").read_text() == "replaced\n"


def test_edit_body_old_separator_new(cell, shell, root):
    shell.run_line_magic("dsh", "read notes.txt")
    _, out, err = cell("%%dsh edit notes.txt --text\nfirst line\nsecond line\n=======\nline 1\nline 2\n")
    assert err == ""
    assert out.startswith("The file notes.txt has been updated successfully.\n--- notes.txt\n")
    assert (root / "notes.txt").read_text() == "line 1\nline 2\nthird line\n"


def test_edit_dry_run_shows_the_diff_and_changes_nothing(cell, shell, root):
    shell.run_line_magic("dsh", "read notes.txt")
    _, out, err = cell("%%dsh edit notes.txt --dry-run --text\nsecond line\n=======\nline 2\n")
    assert err == ""
    assert out == (
        "Dry run: notes.txt was not changed. The edit would make 1 replacement:\n"
        "--- notes.txt\n+++ notes.txt\n@@ -1,3 +1,3 @@\n first line\n-second line\n+line 2\n third line\n"
    )
    assert (root / "notes.txt").read_text() == "first line\nsecond line\nthird line\n"


def test_edit_several_blocks_in_one_cell_are_one_batch(cell, shell, root):
    shell.run_line_magic("dsh", "read notes.txt")
    # through IPython's whole cell path, as typed: its input transforms keep the separator line
    body = "first line\n=======\nline 1\n~~~~~~~\nline 1\nsecond line\n=======\nline 1\nline 2\n~~~~~~~\n"
    _, out, err = cell("%%dsh edit notes.txt --text\n" + body)
    assert err == ""
    assert out.startswith("The file notes.txt has been updated successfully: 2 edits, 2 replacements.\n")
    assert (root / "notes.txt").read_text() == "line 1\nline 2\nthird line\n"
    missing = shell.run_cell_magic("dsh", "edit notes.txt", "line 1\n=======\none\n~~~~~~~\nnope\n=======\nx\n")
    assert missing.text == 'Error: edit 2 of 2: old_string not found in "notes.txt"; nothing was changed'
    assert (root / "notes.txt").read_text() == "line 1\nline 2\nthird line\n"


def test_edit_a_notebook_cell_by_id(shell, root):
    import nbformat
    from nbformat import v4

    nbformat.write(
        v4.new_notebook(cells=[v4.new_code_cell("x = 1", id="a"), v4.new_code_cell("x = 1", id="b")]),
        str(root / "nb.ipynb"),
    )
    shell.run_line_magic("dsh", "read nb.ipynb")
    r = shell.run_cell_magic("dsh", "edit nb.ipynb --cell-id b", "x = 1\n=======\nx = 2\n")
    assert r.text.startswith("The file nb.ipynb has been updated successfully.\n") and r.value["cells"] == [2]
    assert [c.source for c in nbformat.read(str(root / "nb.ipynb"), as_version=4).cells] == ["x = 1", "x = 2"]


def test_edit_cells_takes_its_operations_as_json_and_shows_its_text(shell, root):
    import nbformat
    from nbformat import v4

    nbformat.write(
        v4.new_notebook(cells=[v4.new_code_cell("x = 1", id="a"), v4.new_markdown_cell("# B", id="b")]),
        str(root / "nb.ipynb"),
    )
    shell.run_line_magic("dsh", "read nb.ipynb")
    r = shell.run_line_magic("dsh", """edit_cells nb.ipynb '[{"op": "move", "cell_id": "b", "at": "start"}]'""")
    assert r.text == (
        "The notebook nb.ipynb has been updated successfully: 1 operation.\n"
        '1. moved cell "b" (markdown) to the start\n'
        "Cell order now (2 cells), around the changes:\n"
        '* 1 "b" markdown\n'
        '  2 "a" code'
    )
    assert r.widget() is None  # no widget: it shows its text, as edit does
    assert [c.id for c in nbformat.read(str(root / "nb.ipynb"), as_version=4).cells] == ["b", "a"]


def test_edit_replace_all_and_empty_new_text(shell, root):
    (root / "rep.txt").write_text("a-b-a-b\n")
    shell.run_line_magic("dsh", "read rep.txt")
    r = shell.run_cell_magic("dsh", "edit rep.txt --replace-all", "a\n=======\nc\n")
    assert r.text.startswith("The file rep.txt has been updated. All occurrences were successfully replaced.\n")
    r = shell.run_cell_magic("dsh", "edit rep.txt --replace-all", "-\n=======\n")
    assert not r.is_error
    assert (root / "rep.txt").read_text() == "cbcb\n"


def test_edit_misses_are_tool_results(shell):
    shell.run_line_magic("dsh", "read notes.txt")
    r = shell.run_cell_magic("dsh", "edit notes.txt", "line\n=======\nrow\n")
    assert r.is_error and r.value["code"] == "EDIT_AMBIGUOUS"
    r = shell.run_cell_magic("dsh", "edit notes.txt", "absent\n=======\nrow\n")
    assert r.is_error and r.value["code"] == "EDIT_NOT_FOUND"


def test_move_renames_and_says_so_exactly(cell, shell, root, python_ws):
    _, out, err = cell("%dsh move notes.txt 'moved dir/notes.txt' --text")
    assert err == ""
    assert out == "Moved file notes.txt to moved dir/notes.txt, creating the missing parent directories.\n"
    assert (root / "moved dir" / "notes.txt").exists() and not (root / "notes.txt").exists()
    r = shell.run_line_magic("dsh", "move 'moved dir/notes.txt' notes.txt")
    assert isinstance(r, KernelResult) and r.text == "Moved file moved dir/notes.txt to notes.txt."
    assert r.value == {
        "source": "moved dir/notes.txt",
        "destination": "notes.txt",
        "type": "file",
        "replaced": False,
        "createdParents": False,
        "nextOffset": None,
        "footer": "",
    }
    calls = python_ws().calls()["calls"]
    assert [(c["tool"], c["surface"], c["args"]) for c in calls] == [
        ("move", "magic", {"source": "notes.txt", "destination": "moved dir/notes.txt"}),
        ("move", "magic", {"source": "moved dir/notes.txt", "destination": "notes.txt"}),
    ]


def test_move_overwrite_needs_a_read_like_write(shell, root):
    (root / "other.txt").write_text("other\n")
    r = shell.run_line_magic("dsh", "move other.txt notes.txt")
    assert r.is_error and r.text == (
        'Error: cannot move to "notes.txt": a file of that name exists; to replace '
        "it, read it in this session and set overwrite"
    )
    r = shell.run_line_magic("dsh", "move other.txt notes.txt --overwrite")
    assert r.text == 'Error: cannot overwrite "notes.txt": read it first in this session'
    shell.run_line_magic("dsh", "read notes.txt")
    r = shell.run_line_magic("dsh", "move other.txt notes.txt --overwrite --json")
    assert r is None
    assert (root / "notes.txt").read_text() == "other\n" and not (root / "other.txt").exists()


def test_a_file_read_then_moved_is_edited_without_a_new_read(shell, root):
    shell.run_line_magic("dsh", "read notes.txt")
    shell.run_line_magic("dsh", "move notes.txt renamed.txt")
    r = shell.run_cell_magic("dsh", "edit renamed.txt", "first line\n=======\nline 1\n")
    assert r.text.split("\n")[0] == "The file renamed.txt has been updated successfully."


@pytest.mark.parametrize(
    "body,old,new",
    [
        ("a\n=======\nb\n", "a", "b"),
        ("a\n=======\nb", "a", "b"),
        ("a\nb\n=======\nc\nd\n", "a\nb", "c\nd"),
        ("a\n=======\n", "a", ""),
        ("  indented\n=======\n\tx\n\n", "  indented", "\tx\n"),
        ("a\n======= \nb\n=======\nc\n", "a\n======= \nb", "c"),
    ],
)
def test_parse_edit_body(body, old, new):
    assert parse_edit_body(body) == (old, new)


@pytest.mark.parametrize("body", ["a\nb\n", "=======\n=======\n", "a\n==========\nb\n"])
def test_parse_edit_body_needs_exactly_one_separator(body):
    with pytest.raises(UsageError, match="exactly one line ======="):
        parse_edit_body(body)


# -- sessions, spills, calls, tools -------------------------------------------------------------


def test_session_show_and_switch(shell, python_ws, cell):
    r = shell.run_line_magic("dsh", "session")
    assert isinstance(r, InfoResult) and r.text.startswith('Current session: "default"')
    shell.run_line_magic("dsh", "list")
    r = shell.run_line_magic("dsh", "session 'agent two'")
    assert r.text.startswith('Switched to session "agent two"')
    shell.run_line_magic("dsh", "read notes.txt")
    assert [c["tool"] for c in python_ws("agent two").calls()["calls"]] == ["read"]
    assert [c["tool"] for c in python_ws().calls()["calls"]] == ["list"]
    # the observation belongs to the new session: an edit there works, in "default" it does not
    assert not shell.run_cell_magic("dsh", "edit notes.txt", "first\n=======\n1st\n").is_error
    assert python_ws().run("edit", file_path="notes.txt", old_string="1st", new_string="x").is_error
    _, out, _ = cell("%dsh session --json")
    value = json.loads(out)
    assert value["session"] == "agent two" and {s["id"] for s in value["sessions"]} == {"default", "agent two"}
    frame = shell.run_line_magic("dsh", "session").to_frame()
    assert frame.set_index("id")["current"].to_dict() == {"default": False, "agent two": True}


def test_calls_subcommand(shell, cell):
    for _ in range(3):
        shell.run_line_magic("dsh", "list")
    shell.run_line_magic("dsh", "read missing.txt")
    r = shell.run_line_magic("dsh", "calls")
    assert r.text.splitlines()[0] == 'Calls in session "default", newest last:'
    assert r.text.endswith("(4 calls.)")
    assert 'read(file_path="missing.txt")' in r.text and r.text.count("ERROR") == 1
    frame = r.to_frame()
    assert frame["number"].tolist() == [1, 2, 3, 4]
    assert frame["surface"].tolist() == ["magic"] * 4
    r = shell.run_line_magic("dsh", "calls --offset 2 --limit 2")
    assert [row["number"] for row in r.rows()] == [2, 3]
    assert r.footer() == "(Showing calls 2-3 of 4. Use --offset N --limit N to see others.)"
    r = shell.run_line_magic("dsh", "calls --limit 1")
    assert [row["tool"] for row in r.rows()] == ["read"]  # the newest page by default
    _, out, _ = cell("%dsh calls --json")
    assert json.loads(out)["total"] == 4


def test_spills_subcommand(shell, python_ws):
    shell.run_line_magic("config", "DshMagics.glob_max_results = 2")
    r = shell.run_line_magic("dsh", "glob *")
    assert r.value["spill"] and "Full sorted result stored at" in r.footer()
    spills = shell.run_line_magic("dsh", "spills")
    assert spills.value == python_ws().spill_list()
    assert [s["locator"] for s in spills.value] == [r.value["spill"]]
    assert list(spills.to_frame().columns) == ["locator", "tool", "size", "created"]
    assert r.value["spill"] in spills.text


def test_tools_subcommand(shell, python_ws):
    r = shell.run_line_magic("dsh", "tools")
    assert r.value == python_ws().tools()
    assert "read(file_path?, file_paths?, offset?, limit?, cell_id?, output?, outline?)" in r.text
    assert r.to_frame()["name"].tolist() == [t["name"] for t in python_ws().tools()]


def test_status_subcommand_reports_the_confinement_and_the_index(shell, root):
    r = shell.run_line_magic("dsh", "status")
    lines = r.text.split("\n")
    assert lines[0] == f"Workspace: {root}"
    assert lines[1].startswith("Confinement: ") and "; paths resolved with " in lines[1]
    assert lines[4] == (
        "Index: not built yet (the first search counts the files; a workspace of index_min_files or more gets one)"
    )
    assert r.value["index"] == {"state": "idle"}
    shell.run_line_magic("config", "DshMagics.index_min_files = 1")
    shell.run_line_magic("dsh", "grep hello")
    deadline = time.monotonic() + 30
    while (r := shell.run_line_magic("dsh", "status")).value["index"]["state"] != "ready":
        assert time.monotonic() < deadline, r.value["index"]
        time.sleep(0.05)
    files = r.value["index"]["files"]
    assert files >= 3
    assert re.fullmatch(
        rf"Index: ready, {files:,} files, [0-9.,]+ MiB on disk, built in [0-9.]+ s", r.text.split("\n")[4]
    )
    shell.run_line_magic("config", "DshMagics.index_min_files = 0")
    assert shell.run_line_magic("dsh", "status").text.split("\n")[4] == "Index: off (index_min_files is 0)"


def test_config_sets_the_kernel_settings(shell):
    shell.run_line_magic("config", "DshMagics.list_max_entries = 2")
    r = shell.run_line_magic("dsh", "list")
    assert len(r.value["entries"]) == 2 and "Use offset=3 to continue." in r.text
    shell.run_line_magic("config", "DshMagics.list_max_entries = 0")
    with pytest.raises(UsageError, match="list_max_entries must be at least 1"):
        shell.run_line_magic("dsh", "list")


def test_kernel_attaches_to_the_exported_state(shell, env):
    ws = shell.run_line_magic("dsh", "list").workspace
    assert ws.state_path == os.path.abspath(env["state"]) and ws.root == str(env["root"])


def test_unload_removes_the_magic(ipython, env, workspace_tree):
    ipython.run_line_magic("load_ext", "dsh_jupyter")
    assert "dsh" in ipython.magics_manager.magics["line"]
    ipython.run_line_magic("unload_ext", "dsh_jupyter")
    assert "dsh" not in ipython.magics_manager.magics["line"]
    assert "dsh" not in ipython.magics_manager.magics["cell"]
    assert not any(type(c).__name__ == "DshMagics" for c in ipython.configurables)
