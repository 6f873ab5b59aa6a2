"""How a ``%dsh`` line is read: shell words and ``# comments``, ``write --empty``,
``edit --separator``, and the settings a server exported (``DSH_SETTINGS``)."""

from __future__ import annotations

import json
import subprocess

import pytest

from dsh_jupyter.kernel.magic import split_line

# lines a shell splits the same way; none holds $, ` or an unquoted glob character
SHELL_LINES = [
    "list src # the sources",
    "list src #",
    "# only a comment",
    "grep a#b",
    "grep 'a #b' c",
    'grep "a #b" c',
    "grep \\#x",
    "grep x\\ #y",
    'grep "say \\"hi\\" #1" # then a comment',
    "grep 'it''s' #'unclosed in a comment",
    "grep C# --include x.cs",
    "read notes.txt\t# a tab before it",
    "glob '*.{py,md}'",
]


def shell_words(line: str, tmp_path) -> list[str]:
    """How bash splits ``line`` (no globbing), word by word."""
    out = subprocess.run(
        ["bash", "-c", f"set -f; printf '%s\\0' {line}"], capture_output=True, check=True, cwd=tmp_path
    )
    words = out.stdout.decode().split("\0")[:-1]
    return [] if words == [""] else words


@pytest.mark.parametrize("line", SHELL_LINES)
def test_a_line_splits_as_a_shell_splits_it(line, tmp_path):
    assert split_line(line) == shell_words(line, tmp_path)


def test_a_trailing_comment_is_ignored_in_the_notebook(cell, python_ws):
    _, out, err = cell("%dsh list src --text  # what is in src?")
    assert err == "" and out == python_ws().run("list", path="src").text + "\n"
    _, out, err = cell("%dsh grep hello#x --text")
    assert err == "" and out == python_ws().run("grep", pattern="hello#x").text + "\n"
    result, out, err = cell("%%dsh write made.txt  # a new file\nbody\n")
    assert err == "" and result.result.value["path"] == "made.txt"


# -- write --empty ---------------------------------------------------------------------------


def test_write_empty_creates_an_empty_file(shell, root):
    r = shell.run_line_magic("dsh", "write 'new/empty file.txt' --empty")
    assert r.text == "<path>new/empty file.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>"
    assert (root / "new" / "empty file.txt").read_bytes() == b""
    # emptying an existing file goes through the same read-before-write gate
    r = shell.run_line_magic("dsh", "write notes.txt --empty")
    assert r.is_error and r.value["code"] == "FS_NOT_OBSERVED"
    shell.run_line_magic("dsh", "read notes.txt")
    assert not shell.run_line_magic("dsh", "write notes.txt --empty").is_error
    assert (root / "notes.txt").read_bytes() == b""


def test_a_body_of_one_blank_line_is_one_newline_not_empty(cell, root):
    _, _, err = cell("%%dsh write one.txt\n\n")
    assert err == "" and (root / "one.txt").read_bytes() == b"\n"
    _, _, err = cell("%%dsh write none.txt\n")  # IPython itself refuses an empty body
    assert "the cell body is empty" in err and not (root / "none.txt").exists()


def test_write_empty_takes_no_body_and_write_without_it_needs_one(cell):
    result, _, err = cell("%%dsh write x.txt --empty\nsomething\n")
    assert not result.success
    assert err.strip() == (
        "UsageError: --empty takes no cell body; use the line magic: %dsh write [--empty] [--text | --json] FILE"
    )
    _, _, err = cell("%dsh write x.txt")
    assert err.strip() == (
        "UsageError: write takes the cell body as input; use the cell magic: "
        "%%dsh write [--empty] [--text | --json] FILE (or the line magic with --empty)"
    )


# -- edit --separator ------------------------------------------------------------------------


def test_edit_with_another_separator_changes_a_line_of_equals_signs(shell, root):
    (root / "conflict.txt").write_text("<<<<<<< ours\na\n=======\nb\n~~~~~~~ theirs\n")
    shell.run_line_magic("dsh", "read conflict.txt")
    r = shell.run_cell_magic("dsh", "edit conflict.txt --separator '~~~'", "a\n=======\nb\n~~~\nresolved\n")
    assert r.text.startswith("The file conflict.txt has been updated successfully.\n")
    assert (root / "conflict.txt").read_text() == "<<<<<<< ours\nresolved\n~~~~~~~ theirs\n"


def test_edit_separator_mistakes_are_usage_errors(cell, shell):
    shell.run_line_magic("dsh", "read notes.txt")
    _, _, err = cell("%%dsh edit notes.txt --separator ''\nfirst\n\nline 1\n")
    assert err.strip() == (
        "UsageError: --separator must be one non-empty line, got ''. Usage: %%dsh edit FILE [--replace-all] "
        "[--dry-run] [--cell-id ID] [--separator LINE] with the body: old text, a line ======= (or the --separator "
        "line), new text; several edits are separated by a line ~~~~~~~"
    )
    # a separator that starts with - is given with = (argparse reads ``--separator ---`` as an option)
    _, _, err = cell("%%dsh edit notes.txt --separator=---\nfirst\n=======\nline 1\n")
    assert err.strip().startswith(
        "UsageError: the edit body needs exactly one line --- between the old and the "
        "new text; found none. Usage: %%dsh edit FILE"
    )


# -- the server's settings -------------------------------------------------------------------


def test_exported_server_settings_apply_unless_configured(shell, monkeypatch, root, tree):
    tree(root, {f"many/d{i}/f{j}.txt": "x\n" for i in range(8) for j in range(2)})
    monkeypatch.setenv(
        "DSH_SETTINGS", json.dumps({"glob_max_results": 3, "list_max_entries": 2, "a_setting_from_a_newer_server": 1})
    )
    r = shell.run_line_magic("dsh", "glob *.txt many")
    assert len(r.value["paths"]) == 3 and r.value["sampled"] is True
    assert len(shell.run_line_magic("dsh", "list").value["entries"]) == 2
    # what the user sets in the kernel wins over the server's value, even when it is the default
    shell.run_line_magic("config", "DshMagics.glob_max_results = 5")
    assert len(shell.run_line_magic("dsh", "glob *.txt many").value["paths"]) == 5
    shell.run_line_magic("config", "DshMagics.list_max_entries = 200")
    assert len(shell.run_line_magic("dsh", "list").value["entries"]) > 2


def test_exported_settings_that_are_not_json_are_refused(shell, monkeypatch, cell):
    monkeypatch.setenv("DSH_SETTINGS", "glob_max_results=3")
    _, _, err = cell("%dsh list")
    assert err.strip() == (
        "UsageError: dsh cannot start: DSH_SETTINGS must be a JSON object of settings, got 'glob_max_results=3'"
    )
    monkeypatch.setenv("DSH_SETTINGS", json.dumps({"glob_max_results": 0}))
    _, _, err = cell("%dsh list")
    assert err.strip() == "UsageError: dsh cannot start: setting glob_max_results must be at least 1, got 0"
