"""Confinement: every tool path must resolve, symlinks and all, inside the root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import assert_error

ALL_TOOLS = {
    "list": lambda p: {"path": p},
    "list_dir": lambda p: {"path": p},
    "read": lambda p: {"file_path": p},
    "write": lambda p: {"file_path": p, "content": "pwned\n"},
    "edit": lambda p: {"file_path": p, "old_string": "secret", "new_string": "pwned"},
}
VERB = {"list": "list", "list_dir": "list", "read": "read", "write": "write", "edit": "edit"}


@pytest.fixture
def layout(tmp_path, root):
    """tmp/root (the root), tmp/outside/secret.txt, tmp/root-evil/secret.txt (a prefix sibling)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    evil = Path(str(root) + "-evil")
    evil.mkdir()
    (evil / "secret.txt").write_text("secret\n")
    (root / "inside.txt").write_text("inside\n")
    return {"root": root, "outside": outside, "evil": evil}


def snapshot(*dirs: Path) -> dict:
    out = {}
    for d in dirs:
        for dirpath, dirnames, filenames in os.walk(d):
            for n in dirnames + filenames:
                p = os.path.join(dirpath, n)
                out[p] = Path(p).read_bytes() if os.path.isfile(p) and not os.path.islink(p) else None
    return out


def check_outside(ws, tool, path, root, shown=None):
    r = ws.run(tool, **ALL_TOOLS[tool](path))
    assert_error(r, "FS_OUTSIDE_ROOT", f'cannot {VERB[tool]} "{shown or path}": path is outside the workspace')
    assert r.value["name"] == "FsError"
    return r


@pytest.mark.parametrize("tool", list(ALL_TOOLS))
def test_dotdot_is_outside(ws, layout, tool):
    before = snapshot(layout["outside"], layout["evil"])
    for path in ("..", "../outside/secret.txt", "../outside", "sub/../../outside/secret.txt", "../../../../etc/passwd"):
        r = check_outside(ws, tool, path, layout["root"])
        assert str(layout["root"]) not in r.text
    assert snapshot(layout["outside"], layout["evil"]) == before


@pytest.mark.parametrize("tool", list(ALL_TOOLS))
def test_absolute_path_outside(ws, layout, tool):
    before = snapshot(layout["outside"])
    check_outside(ws, tool, str(layout["outside"] / "secret.txt"), layout["root"])
    check_outside(ws, tool, "/", layout["root"])
    assert snapshot(layout["outside"]) == before


@pytest.mark.parametrize("tool", list(ALL_TOOLS))
def test_prefix_sibling_is_outside(ws, layout, tool):
    before = snapshot(layout["evil"])
    r = check_outside(ws, tool, "../root-evil/secret.txt", layout["root"])
    assert str(layout["root"]) not in r.text
    check_outside(ws, tool, str(layout["evil"] / "secret.txt"), layout["root"])
    check_outside(ws, tool, str(layout["evil"]), layout["root"])
    assert snapshot(layout["evil"]) == before


def test_symlink_to_prefix_sibling_is_outside(ws, layout):
    os.symlink(layout["evil"], layout["root"] / "evil_link")
    for tool in ALL_TOOLS:
        r = check_outside(ws, tool, "evil_link/secret.txt", layout["root"])
        assert str(layout["root"]) not in r.text
    assert (layout["evil"] / "secret.txt").read_text() == "secret\n"


def test_absolute_path_inside_the_root_works(ws, layout):
    root = layout["root"]
    p = str(root / "inside.txt")
    r = ws.run("read", file_path=p)
    assert (
        r.text
        == "<path>inside.txt</path>\n<type>file</type>\n<content>\n1: inside\n\n(End of file - total 1 line)\n</content>"
    )
    assert ws.run("edit", file_path=p, old_string="inside", new_string="edited").text.split("\n")[0] == (
        "The file inside.txt has been updated successfully."
    )
    assert ws.run("write", file_path=p, content="written\n").text == (
        "<path>inside.txt</path>\n<type>file</type>\n<content>\nUpdated file\n</content>"
    )
    assert ws.run("write", file_path=str(root / "new" / "n.txt"), content="n").text == (
        "<path>new/n.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>"
    )
    assert ws.run("list", path=str(root)).value["path"] == "."
    assert ws.run("list_dir", path=str(root)).value == {
        "entries": ["inside.txt", "new"],
        "nextOffset": None,
        "footer": "",
    }
    assert (root / "inside.txt").read_text() == "written\n"


def test_dotdot_that_stays_inside_works(ws, layout):
    (layout["root"] / "sub").mkdir()
    r = ws.run("read", file_path="sub/../inside.txt")
    assert not r.is_error and r.value["path"] == "inside.txt"


def test_symlink_to_etc_is_listed_but_never_followed(ws, layout):
    root = layout["root"]
    os.symlink("/etc", root / "etc_link")
    r = ws.run("list")
    assert r.text.split("\n")[3:5] == ["inside.txt", "etc_link@"]
    assert r.text.endswith("(2 entries: 0 directories, 1 file, 1 other)\n</content>")
    check_outside(ws, "list", "etc_link", root)
    check_outside(ws, "list_dir", "etc_link", root)
    check_outside(ws, "read", "etc_link/passwd", root)
    check_outside(ws, "read", "etc_link/hostname", root)
    check_outside(ws, "edit", "etc_link/hostname", root)
    name = "dsh_jupyter_confinement_probe.txt"
    try:
        for path in (f"etc_link/{name}", f"etc_link/dsh_probe_dir/{name}", "etc_link/passwd"):
            r = check_outside(ws, "write", path, root)
            assert str(root) not in r.text
        assert not os.path.lexists(f"/etc/{name}")
        assert not os.path.lexists("/etc/dsh_probe_dir")
    finally:  # if confinement ever broke, do not leave litter in /etc
        if os.path.lexists(f"/etc/{name}"):
            os.unlink(f"/etc/{name}")


def test_symlink_to_outside_file(ws, layout):
    root = layout["root"]
    os.symlink(layout["outside"] / "secret.txt", root / "secret_link")
    for tool in ALL_TOOLS:
        r = check_outside(ws, tool, "secret_link", root)
        assert str(root) not in r.text
    assert (layout["outside"] / "secret.txt").read_text() == "secret\n"
    assert os.path.islink(root / "secret_link")


@pytest.mark.parametrize(
    "target",
    ["outside/new.txt", "outside/newdir/deeper/new.txt", "root-evil/new.txt"],
)
def test_dangling_symlink_pointing_outside_cannot_be_written_through(ws, layout, tmp_path, target):
    root = layout["root"]
    dest = tmp_path / target
    os.symlink(dest, root / "dangling")
    before = snapshot(layout["outside"], layout["evil"])
    r = check_outside(ws, "write", "dangling", root)
    assert str(root) not in r.text
    assert not os.path.lexists(dest)
    assert not os.path.lexists(tmp_path / "outside" / "newdir")
    assert snapshot(layout["outside"], layout["evil"]) == before
    assert os.path.islink(root / "dangling")
    check_outside(ws, "edit", "dangling", root)
    check_outside(ws, "read", "dangling", root)
    # a relative dangling link that climbs out is judged the same way
    os.symlink("../outside/rel.txt", root / "rel_dangling")
    check_outside(ws, "write", "rel_dangling", root)
    assert not os.path.lexists(layout["outside"] / "rel.txt")


def test_dangling_link_in_a_parent_component(ws, layout, tmp_path):
    root = layout["root"]
    os.symlink(tmp_path / "outside" / "made", root / "dir_link")
    check_outside(ws, "write", "dir_link/x/y.txt", root)
    assert not os.path.lexists(tmp_path / "outside" / "made")


@pytest.mark.parametrize("tool", list(ALL_TOOLS))
def test_symlink_loop_for_every_tool(ws, layout, tool):
    root = layout["root"]
    os.symlink("loop", root / "loop")
    os.symlink("ping", root / "pong")
    os.symlink("pong", root / "ping")
    code = "fs-error" if tool == "list_dir" else "FS_SYMLINK_LOOP"
    for path in ("loop", "ping", "loop/below.txt"):
        r = ws.run(tool, **ALL_TOOLS[tool](path))
        assert_error(r, code, f'cannot {VERB[tool]} "{path}": symbolic link loop')
        assert str(root) not in r.text
    assert os.path.islink(root / "loop") and os.path.islink(root / "ping")


def test_a_workspace_root_reached_through_a_symlink(make_ws, layout, tmp_path):
    alias = tmp_path / "alias"
    os.symlink(layout["root"], alias)
    ws = make_ws(root_dir=alias)
    assert ws.root == str(layout["root"])
    r = ws.run("read", file_path="inside.txt")
    assert not r.is_error
    # an absolute path through the alias resolves inside the root
    assert not ws.run("read", file_path=str(alias / "inside.txt")).is_error


@pytest.mark.parametrize("path", ["~/inside.txt", "..\\outside\\secret.txt", "$HOME", "*"])
def test_no_shell_or_home_expansion(ws, layout, path):
    r = ws.run("read", file_path=path)
    shown = path.replace("\\", "\\\\")  # messages escape a backslash as JSON does
    assert_error(r, "FS_NOT_FOUND", f'cannot read "{shown}": not found')


def _spill_of(ws, root):
    """A real saved result: glob over the cap in ``root``."""
    for i in range(3):
        (root / f"many{i}.txt").write_text("m\n")
    r = ws.run("glob", pattern="many*.txt")
    assert r.value["spill"], r.text
    return r.value["spill"]


def test_spill_root_inside_the_workspace_is_read_only(make_ws, layout):
    root = layout["root"]
    ws = make_ws(spill_root=str(root / ".spills"), glob_max_results=1)
    loc = _spill_of(ws, root)
    shown = loc  # in the workspace: shown as any path in it, relative to the cwd
    assert shown.startswith(".spills/session-")
    assert not ws.run("read", file_path=loc).is_error
    before = (root / loc).read_text()
    assert_error(
        ws.run("write", file_path=shown, content="x"),
        "FS_READ_ONLY",
        f'cannot write "{shown}": saved search results are read-only',
    )
    assert_error(
        ws.run("edit", file_path=shown, old_string="many", new_string="x"),
        "FS_READ_ONLY",
        f'cannot edit "{shown}": saved search results are read-only',
    )
    assert (root / loc).read_text() == before
    # A file in the spill root that no search of this session saved is not readable as a spill
    # (and the message names it as the model would, never by the workspace's absolute path).
    (root / ".spills" / "r.txt").write_text("planted\n")
    assert_error(ws.run("read", file_path=".spills/r.txt"), "FS_NOT_FOUND", 'cannot read ".spills/r.txt": not found')


def test_spill_root_outside_is_readable_not_writable(make_ws, layout, tmp_path):
    spills = tmp_path / "spills"
    ws = make_ws(spill_root=str(spills), glob_max_results=1)
    loc = _spill_of(ws, layout["root"])
    r = ws.run("read", file_path=loc)
    assert r.text.startswith(f"<path>{loc}</path>\n<type>file</type>\n<content>\n1: many")
    assert_error(
        ws.run("write", file_path=loc, content="x"),
        "FS_READ_ONLY",
        f'cannot write "{loc}": saved search results are read-only',
    )
    assert_error(
        ws.run("edit", file_path=loc, old_string="many", new_string="x"),
        "FS_READ_ONLY",
        f'cannot edit "{loc}": saved search results are read-only',
    )
    assert ws.run("list", path=str(spills)).value["code"] == "FS_OUTSIDE_ROOT"
    # a planted file in the spill root is not a saved result of this session
    planted = spills / "planted.txt"
    planted.write_text("secret\n")
    assert_error(ws.run("read", file_path=str(planted)), "FS_NOT_FOUND", f'cannot read "{planted}": not found')


@pytest.mark.parametrize("tool", list(ALL_TOOLS))
def test_lone_surrogate_path_is_an_argument_error(ws, tool):
    # JSON can carry "\ud800"; no file name can hold it, and it must not crash the tool
    for path in ("\ud800", "dir/\udfffx"):
        assert_error(
            ws.run(tool, **ALL_TOOLS[tool](path)),
            "ARGUMENT_INVALID",
            "path must not contain an unpaired surrogate character",
        )


def test_undecodable_name_is_addressable_with_surrogate_escapes(ws, root):
    raw = os.fsencode(root) + b"/bad\xff.txt"
    with open(raw, "wb") as fh:
        fh.write(b"one \xfe\n")
    name = os.fsdecode(b"bad\xff.txt")
    r = ws.run("read", file_path=name)
    # the name is quoted with its raw byte as \udcff (valid UTF-8 text); the content's bad byte is U+FFFD
    assert (
        r.text
        == '<path>"bad\\udcff.txt"</path>\n<type>file</type>\n<content>\n1: one \ufffd\n\n(End of file - total 1 line)\n</content>'
    )
    assert r.value["path"] == name


def test_a_loop_outside_the_root_is_reported_as_outside(make_ws, tmp_path):
    """Probing outside the workspace learns nothing: a loop there is simply outside."""
    loop = tmp_path / "outside-loop"
    os.symlink(loop, loop)
    ws = make_ws()
    for tool, args in (("read", {"file_path": str(loop)}), ("list", {"path": str(loop / "x")})):
        r = ws.run(tool, **args)
        assert r.value["code"] == "FS_OUTSIDE_ROOT", r.text
