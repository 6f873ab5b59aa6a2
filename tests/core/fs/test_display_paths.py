"""Display paths are relative to the session cwd, with ../ elsewhere in the root, never absolute."""

from __future__ import annotations

from conftest import assert_error


def test_a_session_below_the_root_names_other_places_with_dotdot(make_ws, root):
    (root / "sub").mkdir()
    (root / "other").mkdir()
    (root / "other" / "o.txt").write_text("needle\n")
    (root / "top.txt").write_text("needle\n")
    ws = make_ws()
    ws.create_session("s1", "sub")
    assert_error(ws.run("read", file_path="../missing.txt"), "FS_NOT_FOUND", 'cannot read "../missing.txt": not found')
    assert_error(
        ws.run("read", file_path=str(root / "missing.txt")), "FS_NOT_FOUND", 'cannot read "../missing.txt": not found'
    )
    assert ws.run("read", file_path="../top.txt").text.startswith("<path>../top.txt</path>")
    assert ws.run("list", path="..").text.startswith("<path>..</path>")
    assert ws.run("list", path="../other").value["path"] == "../other"
    assert ws.run("glob", pattern="*.txt", path="..").text == "../other/o.txt\n../top.txt"  # oldest first
    assert ws.run("grep", pattern="needle", path="../other").text == "Found 1 match\n\n../other/o.txt\nLine 1: needle"
    assert ws.run("write", file_path="../other/new.txt", content="n\n").text.startswith("<path>../other/new.txt</path>")
    for tool, args in (
        ("read", {"file_path": "../nope"}),
        ("list", {"path": "../nope"}),
        ("grep", {"pattern": "x", "path": "../nope"}),
    ):
        r = ws.run(tool, **args)
        assert str(root) not in r.text, r.text
