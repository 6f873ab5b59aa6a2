"""``list_dir``, the compatibility listing: JSON text, pre-order, bounded, its own codes."""

from __future__ import annotations

import json
import os

import pytest
from conftest import Link, assert_error


def test_flat(ws, root, tree):
    tree(root, {"b.txt": "", "a": {"x": ""}, "C": {}, "link": Link("a")})
    r = ws.run("list_dir", path=".")
    assert r.text == '{"entries": ["C", "a", "b.txt", "link"]}'
    assert r.value == {"entries": ["C", "a", "b.txt", "link"], "nextOffset": None, "footer": ""}
    assert not r.is_error


def test_flat_empty(ws, root):
    (root / "e").mkdir()
    assert ws.run("list_dir", path="e").text == '{"entries": []}'
    assert ws.run("list_dir", path="e", recursive=True).text == '{"entries": [], "totalEntries": 0}'


def test_recursive_pre_order_alphabetical(ws, root, tree):
    tree(root, {"b": "", "a/y": "", "a/x": ""})
    r = ws.run("list_dir", path=".", recursive=True)
    assert r.value == {"entries": ["a", "a/x", "a/y", "b"], "totalEntries": 4, "nextOffset": None, "footer": ""}
    assert r.text == '{"entries": ["a", "a/x", "a/y", "b"], "totalEntries": 4}'


def test_recursive_deeper_tree(ws, root, tree):
    tree(
        root,
        {
            "src/pkg/__init__.py": "",
            "src/pkg/sub/mod.py": "",
            "src/main.py": "",
            "docs/index.md": "",
            "empty": {},
            "README": "",
            "src/alias": Link("pkg"),
        },
    )
    r = ws.run("list_dir", path=".", recursive=True)
    assert r.value["entries"] == [
        "README",
        "docs",
        "docs/index.md",
        "empty",
        "src",
        "src/alias",  # a symlinked directory is listed, never entered
        "src/main.py",
        "src/pkg",
        "src/pkg/__init__.py",
        "src/pkg/sub",
        "src/pkg/sub/mod.py",
    ]
    assert "truncated" not in r.value
    sub = ws.run("list_dir", path="src/pkg", recursive=True)
    assert sub.value == {
        "entries": ["__init__.py", "sub", "sub/mod.py"],
        "totalEntries": 3,
        "nextOffset": None,
        "footer": "",
    }


def test_recursive_capped(make_ws, root, tree):
    tree(root, {"b": "", "a/y": "", "a/x": "", "c/z": ""})
    ws = make_ws(list_dir_max_entries=3)
    r = ws.run("list_dir", path=".", recursive=True)
    note = "the walk stopped after 3 entries, so the total is not known; list a subfolder to see the rest"
    assert r.text == (f'{{"entries": ["a", "a/x", "a/y"], "truncated": true, "totalEntries": null, "note": "{note}"}}')
    assert r.value == {
        "entries": ["a", "a/x", "a/y"],
        "truncated": True,
        "totalEntries": None,
        "note": note,
        "nextOffset": None,
        "footer": "",
    }
    assert not r.is_error


def test_recursive_exactly_at_the_cap_is_not_truncated(make_ws, root, tree):
    tree(root, {"b": "", "a/y": "", "a/x": ""})
    ws = make_ws(list_dir_max_entries=4)
    assert (
        ws.run("list_dir", path=".", recursive=True).text == '{"entries": ["a", "a/x", "a/y", "b"], "totalEntries": 4}'
    )


def test_recursive_is_bounded_on_a_wide_tree(make_ws, root):
    for i in range(50):
        d = root / f"d{i:02d}"
        d.mkdir()
        for j in range(50):
            (d / f"f{j:02d}").write_text("")
    ws = make_ws(list_dir_max_entries=100)
    r = ws.run("list_dir", path=".", recursive=True)
    assert len(r.value["entries"]) == 100
    assert r.value["entries"][:3] == ["d00", "d00/f00", "d00/f01"]
    assert r.value["truncated"] is True and r.value["totalEntries"] is None


def test_names_are_json_text(ws, root):
    (root / "a\nb").write_text("")
    (root / "é").write_text("")
    os.close(os.open(os.fsencode(root) + b"/bad\xff", os.O_CREAT | os.O_WRONLY, 0o644))
    r = ws.run("list_dir", path=".")
    assert r.text == '{"entries": ["a\\nb", "bad\\udcff", "é"]}'
    assert json.loads(r.text) == {"entries": ["a\nb", "bad\udcff", "é"]}
    assert os.fsencode(json.loads(r.text)["entries"][1]) == b"bad\xff"


def test_not_found(ws):
    r = ws.run("list_dir", path="nope")
    assert_error(r, "not-found", 'cannot list "nope": not found')
    assert r.value["name"] == "FsError"


def test_not_a_dir(ws, root):
    (root / "f.txt").write_text("x")
    assert_error(ws.run("list_dir", path="f.txt"), "not-a-dir", 'cannot list "f.txt": not a directory')
    assert_error(ws.run("list_dir", path="f.txt", recursive=True), "not-a-dir", 'cannot list "f.txt": not a directory')


def test_a_path_under_a_file_is_not_found(ws, root):
    # the resolver treats a path below a regular file as missing (ENOTDIR while resolving)
    (root / "f.txt").write_text("x")
    assert_error(ws.run("list_dir", path="f.txt/sub"), "not-found", 'cannot list "f.txt/sub": not found')


def test_fs_error_for_a_symlink_loop(ws, root):
    os.symlink("loop", root / "loop")
    assert_error(ws.run("list_dir", path="loop"), "fs-error", 'cannot list "loop": symbolic link loop')


def test_fs_error_for_a_name_too_long(ws):
    name = "n" * 300
    assert_error(ws.run("list_dir", path=name), "fs-error", f'cannot list "{name}": File name too long')


def test_outside_root_keeps_its_code(ws):
    assert_error(ws.run("list_dir", path=".."), "FS_OUTSIDE_ROOT", 'cannot list "..": path is outside the workspace')


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "path is required"),
        ({"path": ""}, "path must be a non-empty string"),
        ({"path": ".", "recursive": "yes"}, "recursive must be true or false"),
        ({"path": ".", "depth": 2}, 'unknown argument "depth" (this tool takes: path, recursive)'),
    ],
)
def test_argument_errors(ws, args, message):
    assert_error(ws.run("list_dir", **args), "ARGUMENT_INVALID", message)


def test_to_frame(ws, root, tree):
    tree(root, {"a/x": "", "b": ""})
    frame = ws.run("list_dir", path=".", recursive=True).to_frame()
    assert list(frame.columns) == ["entry"]
    assert frame["entry"].tolist() == ["a", "a/x", "b"]


def test_recursive_says_which_folders_it_could_not_read(tmp_path):
    """Out of descriptors deep in a tree, and a folder without permission: counted and named, never "empty"."""
    import subprocess
    import sys
    import textwrap

    root = tmp_path / "root"
    deep = root / "deep"
    path = deep
    for i in range(600):
        path = path / f"d{i}"
    path.mkdir(parents=True)
    (path / "bottom.txt").write_text("x")
    (root / "closed").mkdir()
    (root / "closed" / "secret.txt").write_text("x")
    (root / "closed").chmod(0)
    code = textwrap.dedent(f"""
        import json, resource
        from dsh_jupyter import Workspace
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        ws = Workspace({str(root)!r}, state_path={str(tmp_path / "st" / "s.sqlite")!r}, list_dir_max_entries=100000)
        print(json.dumps(ws.run("list_dir", path=".", recursive=True).value))
    """)
    argv = [sys.executable, "-c", code]
    if os.geteuid() == 0:  # root ignores file modes; this child may not
        argv = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *argv]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    finally:
        (root / "closed").chmod(0o755)
    assert proc.returncode == 0, proc.stderr
    value = json.loads(proc.stdout)
    entries = value["entries"]
    assert "closed" in entries and "closed/secret.txt" not in entries
    assert value["totalEntries"] == len(entries) and "truncated" not in value
    # the closed folder, and the folder where the descriptors ran out (listed, not entered)
    unreadable = value["unreadable"]
    assert unreadable["count"] == 2
    closed, deepest = unreadable["first"]
    assert closed == "closed" and deepest.startswith("deep/d0/d1/") and deepest == entries[-1]
    assert not any(e.endswith("bottom.txt") for e in entries)
