"""``write`` and ``edit``: the observation gate, exact texts, atomicity leftovers, line endings,
modes and bytes kept."""

from __future__ import annotations

import os
import stat
import time

import pytest
from conftest import assert_error

CREATED = "<path>{}</path>\n<type>file</type>\n<content>\nCreated file\n</content>"
UPDATED = "<path>{}</path>\n<type>file</type>\n<content>\nUpdated file\n</content>"


@pytest.fixture
def f(root):
    p = root / "f.txt"
    p.write_bytes(b"alpha\nbeta\ngamma\n")
    return p


def read_ok(ws, path="f.txt", **kw):
    r = ws.run("read", file_path=path, **kw)
    assert not r.is_error, r.text
    return r


# -- the observation gate ---------------------------------------------------------------------


def test_write_without_read_is_refused(ws, f):
    r = ws.run("write", file_path="f.txt", content="new\n")
    assert r.text == 'Error: cannot write "f.txt": read it first in this session'
    assert r.value == {
        "name": "FsError",
        "code": "FS_NOT_OBSERVED",
        "message": 'cannot write "f.txt": read it first in this session',
    }
    assert f.read_bytes() == b"alpha\nbeta\ngamma\n"


def test_write_after_read_updates(ws, f):
    read_ok(ws)
    r = ws.run("write", file_path="f.txt", content="new\n")
    assert r.text == UPDATED.format("f.txt")
    assert r.value == {"path": "f.txt", "operation": "update", "bytes": 4, "nextOffset": None, "footer": ""}
    assert f.read_bytes() == b"new\n"


def test_a_partial_window_counts_as_a_read(ws, f):
    read_ok(ws, offset=2, limit=1)
    assert not ws.run("edit", file_path="f.txt", old_string="alpha", new_string="ALPHA").is_error


def test_a_failed_read_does_not_count(ws, f):
    assert ws.run("read", file_path="f.txt", offset=99).is_error
    assert_error(
        ws.run("edit", file_path="f.txt", old_string="alpha", new_string="A"),
        "FS_NOT_OBSERVED",
        'cannot write "f.txt": read it first in this session',
    )


def test_create_needs_no_read_and_makes_parents(ws, root):
    r = ws.run("write", file_path="a/b/c/new.txt", content="hello\n")
    assert r.text == CREATED.format("a/b/c/new.txt")
    assert r.value == {"path": "a/b/c/new.txt", "operation": "create", "bytes": 6, "nextOffset": None, "footer": ""}
    assert (root / "a/b/c/new.txt").read_bytes() == b"hello\n"


def test_create_empty_file_and_file_with_nul(ws, root):
    assert ws.run("write", file_path="empty.txt", content="").text == CREATED.format("empty.txt")
    assert (root / "empty.txt").read_bytes() == b""
    assert not ws.run("write", file_path="nul.bin", content="a\0b").is_error
    assert (root / "nul.bin").read_bytes() == b"a\x00b"


def test_edit_without_read_is_refused(ws, f):
    r = ws.run("edit", file_path="f.txt", old_string="beta", new_string="BETA")
    assert_error(r, "FS_NOT_OBSERVED", 'cannot write "f.txt": read it first in this session')
    assert r.value["name"] == "FsError"
    assert f.read_bytes() == b"alpha\nbeta\ngamma\n"


def test_outside_change_with_size_and_mtime_restored_is_detected(ws, f):
    read_ok(ws)
    before = os.stat(f)
    # The version rests on ctime_ns; on kernels with coarse (per-tick) timestamps a change within
    # the same tick as the file's creation would keep it. Step past one tick, as real edits do.
    time.sleep(0.05)
    with open(f, "r+b") as fh:  # same size, in place, then the mtime set back
        fh.write(b"ALPHA")
    os.utime(f, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(f)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    message = 'cannot write "f.txt": it changed since this session last read it; read it again'
    assert_error(ws.run("edit", file_path="f.txt", old_string="beta", new_string="B"), "FS_NOT_OBSERVED", message)
    assert_error(
        ws.run("write", file_path="f.txt", content="x"),
        "FS_NOT_OBSERVED",
        'cannot write "f.txt": it changed since this session last read it; read it again',
    )
    assert f.read_bytes() == b"ALPHA\nbeta\ngamma\n"
    read_ok(ws)
    assert ws.run("edit", file_path="f.txt", old_string="beta", new_string="B").text == (
        "The file f.txt has been updated successfully.\n"
        "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n ALPHA\n-beta\n+B\n gamma"
    )
    assert f.read_bytes() == b"ALPHA\nB\ngamma\n"


def test_outside_atomic_replace_is_detected(ws, f, root):
    read_ok(ws)
    before = os.stat(f)
    other = root / "other.tmp"
    other.write_bytes(b"ALPHA\nbeta\ngamma\n")
    os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(other, f)
    assert_error(
        ws.run("write", file_path="f.txt", content="x"),
        "FS_NOT_OBSERVED",
        'cannot write "f.txt": it changed since this session last read it; read it again',
    )


def test_list_does_not_count_as_a_read(ws, f):
    assert not ws.run("list").is_error
    assert not ws.run("list_dir", path=".").is_error
    assert_error(
        ws.run("write", file_path="f.txt", content="x"),
        "FS_NOT_OBSERVED",
        'cannot write "f.txt": read it first in this session',
    )
    assert_error(
        ws.run("edit", file_path="f.txt", old_string="beta", new_string="x"),
        "FS_NOT_OBSERVED",
        'cannot write "f.txt": read it first in this session',
    )


def test_own_write_and_edit_need_no_new_read(ws, f):
    read_ok(ws)
    first = "The file f.txt has been updated successfully."
    assert ws.run("edit", file_path="f.txt", old_string="alpha", new_string="one").text.startswith(first + "\n")
    assert ws.run("edit", file_path="f.txt", old_string="beta", new_string="two").text.startswith(first + "\n")
    assert ws.run("write", file_path="f.txt", content="three\n").text == UPDATED.format("f.txt")
    assert ws.run("edit", file_path="f.txt", old_string="three", new_string="four").text == (
        first + "\n--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-three\n+four"
    )
    assert f.read_bytes() == b"four\n"


def test_created_file_can_be_edited_without_a_read(ws, root):
    ws.run("write", file_path="n.txt", content="x = 1\n")
    assert not ws.run("edit", file_path="n.txt", old_string="1", new_string="2").is_error
    assert (root / "n.txt").read_bytes() == b"x = 2\n"


def test_read_in_one_session_does_not_allow_another(make_ws, f):
    s1 = make_ws(session="s1")
    s2 = make_ws(session="s2")
    read_ok(s1)
    assert_error(
        s2.run("write", file_path="f.txt", content="x"),
        "FS_NOT_OBSERVED",
        'cannot write "f.txt": read it first in this session',
    )
    assert_error(
        s2.run("edit", file_path="f.txt", old_string="beta", new_string="x"),
        "FS_NOT_OBSERVED",
        'cannot write "f.txt": read it first in this session',
    )
    # and s1's own session still may; afterwards s2 is stale even once it had read
    read_ok(s2)
    assert not s1.run("edit", file_path="f.txt", old_string="beta", new_string="B").is_error
    assert_error(
        s2.run("edit", file_path="f.txt", old_string="gamma", new_string="G"),
        "FS_NOT_OBSERVED",
        'cannot write "f.txt": it changed since this session last read it; read it again',
    )


def test_same_session_in_two_workspaces_shares_observations(make_ws, f):
    a = make_ws(session="shared")
    b = make_ws(session="shared")
    read_ok(a)
    assert not b.run("edit", file_path="f.txt", old_string="beta", new_string="B").is_error


def test_observation_is_by_real_path(ws, f, root):
    os.symlink("f.txt", root / "alias.txt")
    read_ok(ws, "alias.txt")
    assert not ws.run("edit", file_path="f.txt", old_string="beta", new_string="B").is_error
    assert not ws.run("edit", file_path="alias.txt", old_string="B", new_string="C").is_error
    assert os.path.islink(root / "alias.txt")  # the link is kept; its target was replaced
    assert f.read_bytes() == b"alpha\nC\ngamma\n"


# -- edit -------------------------------------------------------------------------------------


def test_edit_success_exact(ws, f):
    read_ok(ws)
    r = ws.run("edit", file_path="f.txt", old_string="beta", new_string="BETA")
    diff = "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma"
    assert r.text == "The file f.txt has been updated successfully.\n" + diff
    assert r.value == {
        "path": "f.txt",
        "replaceAll": False,
        "replacements": 1,
        "diff": diff,
        "diffLines": 7,
        "nextOffset": None,
        "footer": "",
    }
    assert f.read_bytes() == b"alpha\nBETA\ngamma\n"


def test_edit_not_found(ws, f):
    read_ok(ws)
    r = ws.run("edit", file_path="f.txt", old_string="delta", new_string="x")
    assert_error(r, "EDIT_NOT_FOUND", 'old_string not found in "f.txt"')
    assert r.value["name"] == "EditError"


def test_edit_ambiguous_and_replace_all(ws, root):
    p = root / "f.txt"
    p.write_bytes(b"x = 1\nx = 1\nx = 1\n")
    read_ok(ws)
    r = ws.run("edit", file_path="f.txt", old_string="x = 1", new_string="x = 2")
    assert_error(r, "EDIT_AMBIGUOUS", 'old_string appears 3 times in "f.txt"; add context or set replace_all')
    assert p.read_bytes() == b"x = 1\nx = 1\nx = 1\n"
    r = ws.run("edit", file_path="f.txt", old_string="x = 1", new_string="x = 2", replace_all=True)
    diff = "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n-x = 1\n-x = 1\n-x = 1\n+x = 2\n+x = 2\n+x = 2"
    assert r.text == "The file f.txt has been updated. All occurrences were successfully replaced.\n" + diff
    assert r.value == {
        "path": "f.txt",
        "replaceAll": True,
        "replacements": 3,
        "diff": diff,
        "diffLines": 9,
        "nextOffset": None,
        "footer": "",
    }
    assert p.read_bytes() == b"x = 2\nx = 2\nx = 2\n"


def test_replace_all_with_one_occurrence(ws, f):
    read_ok(ws)
    r = ws.run("edit", file_path="f.txt", old_string="beta", new_string="b", replace_all=True)
    assert r.text.startswith("The file f.txt has been updated. All occurrences were successfully replaced.\n")
    assert r.value["replacements"] == 1


def test_edit_inserts_literally(ws, f):
    read_ok(ws)
    new = r"$& \1 \g<0> $1 \\n"
    assert not ws.run("edit", file_path="f.txt", old_string="beta", new_string=new).is_error
    assert f.read_bytes() == b"alpha\n" + new.encode() + b"\ngamma\n"


def test_edit_old_string_is_literal_not_a_regex(ws, root):
    p = root / "r.txt"
    p.write_bytes(b"a.c abc a.c\n")
    read_ok(ws, "r.txt")
    assert_error(
        ws.run("edit", file_path="r.txt", old_string="a.c", new_string="X"),
        "EDIT_AMBIGUOUS",
        'old_string appears 2 times in "r.txt"; add context or set replace_all',
    )
    assert not ws.run("edit", file_path="r.txt", old_string="a.c", new_string="X", replace_all=True).is_error
    assert p.read_bytes() == b"X abc X\n"


def test_edit_delete_text(ws, f):
    read_ok(ws)
    assert not ws.run("edit", file_path="f.txt", old_string="beta\n", new_string="").is_error
    assert f.read_bytes() == b"alpha\ngamma\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"old_string": "beta", "new_string": "beta"}, "old_string and new_string must differ"),
        ({"old_string": "", "new_string": "x"}, "old_string must be a non-empty string"),
        ({"old_string": "", "new_string": ""}, "old_string must be a non-empty string"),
        ({"new_string": "x"}, "old_string is required (or give edits, a list of them)"),
        ({"old_string": "x"}, "new_string is required (or give edits, a list of them)"),
        ({"old_string": "a", "new_string": 1}, "new_string must be a string"),
        ({"old_string": "a", "new_string": "b", "replace_all": "yes"}, "replace_all must be true or false"),
        ({"old_string": "a", "new_string": "b", "replace_all": 1}, "replace_all must be true or false"),
        (
            {"old_string": "a", "new_string": "b", "count": 1},
            'unknown argument "count" (this tool takes: file_path, old_string, new_string, replace_all, edits, '
            "dry_run, cell_id)",
        ),
    ],
)
def test_edit_argument_errors(ws, f, args, message):
    read_ok(ws)
    assert_error(ws.run("edit", file_path="f.txt", **args), "ARGUMENT_INVALID", message)
    assert f.read_bytes() == b"alpha\nbeta\ngamma\n"


def test_edit_missing_file_and_directory(ws, root):
    assert_error(
        ws.run("edit", file_path="nope.txt", old_string="a", new_string="b"),
        "FS_NOT_FOUND",
        'cannot edit "nope.txt": not found',
    )
    (root / "d").mkdir()
    assert_error(
        ws.run("edit", file_path="d", old_string="a", new_string="b"),
        "FS_NOT_REGULAR_FILE",
        'cannot edit "d": not a regular file',
    )


def test_edit_crlf_file_with_lf_strings_stays_crlf(ws, root):
    p = root / "win.txt"
    p.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    read_ok(ws, "win.txt")
    r = ws.run("edit", file_path="win.txt", old_string="one\ntwo", new_string="uno\ndos\nmas")
    assert r.text == (  # the diff shows lines, not their CRLF endings
        "The file win.txt has been updated successfully.\n"
        "--- win.txt\n+++ win.txt\n@@ -1,3 +1,4 @@\n-one\n-two\n+uno\n+dos\n+mas\n three"
    )
    assert p.read_bytes() == b"uno\r\ndos\r\nmas\r\nthree\r\n"
    # CRLF in the strings works too
    assert not ws.run("edit", file_path="win.txt", old_string="mas\r\nthree", new_string="tres").is_error
    assert p.read_bytes() == b"uno\r\ndos\r\ntres\r\n"


def test_edit_keeps_missing_trailing_newline(ws, root):
    p = root / "nonl.txt"
    p.write_bytes(b"first\nlast")
    read_ok(ws, "nonl.txt")
    assert not ws.run("edit", file_path="nonl.txt", old_string="last", new_string="final").is_error
    assert p.read_bytes() == b"first\nfinal"


def test_edit_keeps_mode(ws, f):
    os.chmod(f, 0o640)
    read_ok(ws)
    assert not ws.run("edit", file_path="f.txt", old_string="beta", new_string="B").is_error
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o640
    os.chmod(f, 0o755)
    read_ok(ws)
    assert not ws.run("edit", file_path="f.txt", old_string="B", new_string="C").is_error
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o755


def test_edit_keeps_invalid_utf8_bytes_elsewhere(ws, root):
    p = root / "mixed.txt"
    raw = b"caf\xe9 \xff\xfe\nkeep \x80\x81 me\nchange me\n\xc3(\n"
    p.write_bytes(raw)
    r = read_ok(ws, "mixed.txt")
    assert "caf\ufffd" in r.text
    assert not ws.run("edit", file_path="mixed.txt", old_string="change me", new_string="changed é").is_error
    assert p.read_bytes() == raw.replace(b"change me", "changed é".encode())


def test_edit_binary_file_is_refused(ws, root):
    # written by this session, so observed: the refusal is about the content
    assert not ws.run("write", file_path="blob.bin", content="head\0tail").is_error
    r = ws.run("edit", file_path="blob.bin", old_string="head", new_string="HEAD")
    assert_error(r, "FS_NOT_TEXT", 'cannot edit "blob.bin": binary file')
    assert (root / "blob.bin").read_bytes() == b"head\x00tail"


def test_edit_unread_binary_file_says_binary_not_read_first(ws, root):
    # "read it first" would send the model to a read that can only fail
    (root / "img.bin").write_bytes(b"\x89PNG\x00\x00data")
    assert_error(
        ws.run("edit", file_path="img.bin", old_string="data", new_string="x"),
        "FS_NOT_TEXT",
        'cannot edit "img.bin": binary file',
    )


def test_edit_symlink_loop(ws, root):
    os.symlink("loop", root / "loop")
    assert_error(
        ws.run("edit", file_path="loop", old_string="a", new_string="b"),
        "FS_SYMLINK_LOOP",
        'cannot edit "loop": symbolic link loop',
    )


# -- write ------------------------------------------------------------------------------------


def test_write_crlf_file_with_lf_content_stays_crlf(ws, root):
    p = root / "win.txt"
    p.write_bytes(b"a\r\nb\r\n")
    read_ok(ws, "win.txt")
    assert ws.run("write", file_path="win.txt", content="x\ny\nz\n").text == UPDATED.format("win.txt")
    assert p.read_bytes() == b"x\r\ny\r\nz\r\n"


def test_write_keeps_trailing_newline(ws, f):
    read_ok(ws)
    ws.run("write", file_path="f.txt", content="no newline")
    assert f.read_bytes() == b"no newline\n"


def test_write_keeps_mode(ws, f):
    os.chmod(f, 0o640)
    read_ok(ws)
    assert not ws.run("write", file_path="f.txt", content="x\n").is_error
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o640


def test_new_file_mode_follows_umask(ws, root):
    old = os.umask(0o027)
    try:
        ws.run("write", file_path="new.txt", content="x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(root / "new.txt").st_mode) == 0o640


def test_write_and_edit_leave_only_the_target(ws, root):
    d = root / "d"
    d.mkdir()
    assert ws.run("write", file_path="d/t.txt", content="one\n").text == CREATED.format("d/t.txt")
    assert not ws.run("write", file_path="d/t.txt", content="two\n").is_error
    assert not ws.run("edit", file_path="d/t.txt", old_string="two", new_string="three").is_error
    assert ws.run("write", file_path="d/t.txt", content="four\n").text == UPDATED.format("d/t.txt")
    assert os.listdir(d) == ["t.txt"]
    assert (d / "t.txt").read_bytes() == b"four\n"
    # refusals leave nothing behind either
    (d / "u.txt").write_text("u")
    ws.run("write", file_path="d/u.txt", content="x")
    ws.run("edit", file_path="d/u.txt", old_string="u", new_string="x")
    assert sorted(os.listdir(d)) == ["t.txt", "u.txt"]
    assert sorted(os.listdir(root)) == ["d"]


def test_names_near_name_max_can_be_written(ws, root):
    # the temporary file beside the target must not be longer than NAME_MAX itself
    name = "n" * 255
    (root / name).write_text("old\n")
    read_ok(ws, name)
    assert ws.run("write", file_path=name, content="new\n").text == UPDATED.format(name)
    assert ws.run("edit", file_path=name, old_string="new", new_string="newer").text.startswith(
        f"The file {name} has been updated successfully.\n--- {name}\n"
    )
    wide = "é" * 127  # 254 bytes
    assert ws.run("write", file_path=wide, content="x\n").text == CREATED.format(wide)
    assert ws.run("write", file_path=wide, content="y\n").text == UPDATED.format(wide)
    assert sorted(os.listdir(root)) == sorted([name, wide])
    assert (root / name).read_text() == "newer\n"


def test_failed_replace_removes_its_temporary_file(root):
    # The exchange itself fails (the target is a non-empty directory, the new one a file...) or
    # the displaced entry is not the checked file: either way the temporary file goes away.
    from dsh_jupyter.core.fs.files import Changed, replace_file

    target = root / "t"
    target.mkdir()
    (target / "keep").write_text("k")
    (root / "f.txt").write_text("old\n")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises((OSError, Changed)):
            replace_file(fd, "t", b"data", os.stat(root / "f.txt"))
    finally:
        os.close(fd)
    assert sorted(os.listdir(root)) == ["f.txt", "t"]
    assert os.listdir(target) == ["keep"]
    assert (root / "f.txt").read_text() == "old\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"file_path": "f.txt"}, "content is required"),
        ({"content": "x"}, "file_path is required"),
        ({"file_path": "", "content": "x"}, "file_path must be a non-empty string"),
        ({"file_path": "f.txt", "content": b"x"}, "content must be a string"),
        ({"file_path": ["f.txt"], "content": "x"}, "file_path must be a string"),
        (
            {"file_path": "f.txt", "content": "x", "mode": "w"},
            'unknown argument "mode" (this tool takes: file_path, content)',
        ),
        ({"file_path": "f\0.txt", "content": "x"}, "file_path must not contain a NUL character"),
    ],
)
def test_write_argument_errors(ws, root, args, message):
    assert_error(ws.run("write", **args), "ARGUMENT_INVALID", message)
    assert os.listdir(root) == []


def test_write_to_a_directory_or_under_a_file(ws, root, f):
    (root / "d").mkdir()
    assert_error(
        ws.run("write", file_path="d", content="x"), "FS_NOT_REGULAR_FILE", 'cannot write "d": not a regular file'
    )
    assert_error(
        ws.run("write", file_path="f.txt/under.txt", content="x"),
        "FS_NOT_DIRECTORY",
        'cannot write "f.txt/under.txt": a parent is not a directory',
    )
    assert sorted(os.listdir(root)) == ["d", "f.txt"]


def test_write_fifo_is_refused_at_once(ws, root, guarded):
    os.mkfifo(root / "pipe")
    r = guarded(lambda: ws.run("write", file_path="pipe", content="x"), timeout=10)
    assert_error(r, "FS_NOT_REGULAR_FILE", 'cannot write "pipe": not a regular file')
    assert stat.S_ISFIFO(os.lstat(root / "pipe").st_mode)


def test_write_symlink_loop(ws, root):
    os.symlink("loop", root / "loop")
    assert_error(
        ws.run("write", file_path="loop", content="x"), "FS_SYMLINK_LOOP", 'cannot write "loop": symbolic link loop'
    )
    assert_error(
        ws.run("write", file_path="loop/new.txt", content="x"),
        "FS_SYMLINK_LOOP",
        'cannot write "loop/new.txt": symbolic link loop',
    )
    assert os.path.islink(root / "loop")


def test_write_through_dangling_link_inside_root_creates_its_target(ws, root):
    os.symlink("target.txt", root / "dangling")
    r = ws.run("write", file_path="dangling", content="x\n")
    assert r.text == CREATED.format("dangling")
    assert os.path.islink(root / "dangling")
    assert (root / "target.txt").read_bytes() == b"x\n"


def test_lone_surrogate_in_new_string_does_not_corrupt_other_bytes(ws, root):
    p = root / "mixed.txt"
    p.write_bytes(b"bad \xff here\nchange me\n")
    read_ok(ws, "mixed.txt")
    assert not ws.run("edit", file_path="mixed.txt", old_string="change", new_string="x\ud800y").is_error
    assert p.read_bytes() == b"bad \xff here\nx\xef\xbf\xbdy me\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")
def test_write_and_edit_keep_owner_and_group(ws, f):
    os.chown(f, 1234, 2345)
    os.chmod(f, 0o664)
    read_ok(ws)
    assert not ws.run("edit", file_path="f.txt", old_string="beta", new_string="B").is_error
    st = os.stat(f)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1234, 2345, 0o664)
    assert not ws.run("write", file_path="f.txt", content="x\n").is_error
    st = os.stat(f)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1234, 2345, 0o664)


def test_file_with_an_undecodable_name_can_be_read_then_edited(ws, root):
    # its observation must be storable although the name is not valid UTF-8
    raw = os.fsencode(root) + b"/bad\xff.txt"
    with open(raw, "wb") as fh:
        fh.write(b"one \xfe\n")
    name = os.fsdecode(b"bad\xff.txt")
    assert_error(
        ws.run("edit", file_path=name, old_string="one", new_string="two"),
        "FS_NOT_OBSERVED",
        'cannot write "bad\\udcff.txt": read it first in this session',
    )
    read_ok(ws, name)
    r = ws.run("edit", file_path=name, old_string="one", new_string="two")
    # the name is quoted in the diff's labels as everywhere; the undecodable byte kept on disk shows as U+FFFD
    assert r.text == (
        'The file "bad\\udcff.txt" has been updated successfully.\n'
        '--- "bad\\udcff.txt"\n+++ "bad\\udcff.txt"\n@@ -1 +1 @@\n-one \ufffd\n+two \ufffd'
    )
    assert ws.run("write", file_path=name, content="three\n").text == UPDATED.format('"bad\\udcff.txt"')
    with open(raw, "rb") as fh:
        assert fh.read() == b"three\n"


def test_a_failed_write_removes_the_folders_it_created(ws, root):
    # The folders are made, then the file's name is refused (longer than NAME_MAX): nothing stays.
    name = "n" * 300
    r = ws.run("write", file_path=f"made/by/write/{name}", content="x\n")
    assert r.is_error and r.value["code"] == "FS_ERROR", r.text
    assert os.listdir(root) == []
    (root / "kept").mkdir()  # a folder that existed before is not the write's to remove
    r = ws.run("write", file_path=f"kept/new/{name}", content="x\n")
    assert r.is_error
    assert os.listdir(root) == ["kept"] and os.listdir(root / "kept") == []


def _huge_text_file(path, size: int) -> None:
    """``size`` bytes whose first 64 KiB are text lines and the rest a hole (no disk, no time)."""
    with open(path, "wb") as fh:
        fh.write(b"a line of text\n" * 4096)
        fh.truncate(size)


def test_edit_refuses_before_it_loads_a_file_it_was_not_allowed_to_change(tmp_path):
    """A session that never read a 300 MiB file is told to read it first without the file being loaded."""
    import subprocess
    import sys
    import textwrap

    root = tmp_path / "root"
    root.mkdir()
    _huge_text_file(root / "big.log", 300 * 2**20)
    code = textwrap.dedent(f"""
        from dsh_jupyter import Workspace
        ws = Workspace({str(root)!r}, state_path={str(tmp_path / "st" / "s.sqlite")!r})
        before = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])
        r = ws.run("edit", file_path="big.log", old_string="a line", new_string="one line")
        grew = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) - before
        print(r.text)
        print(grew // 1024)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    text, grew_mib = proc.stdout.splitlines()
    assert text == 'Error: cannot write "big.log": read it first in this session'
    assert int(grew_mib) < 32, f"edit grew the process by {grew_mib} MiB before refusing"


def test_edit_refuses_a_file_over_edit_max_bytes_after_the_gate(make_ws, root):
    _huge_text_file(root / "big.log", 3 * 2**20)
    ws = make_ws(edit_max_bytes=2**20)
    assert not ws.run("read", file_path="big.log", limit=1).is_error
    r = ws.run("edit", file_path="big.log", old_string="a line", new_string="one line", replace_all=True)
    assert_error(
        r,
        "FS_TOO_LARGE",
        'cannot edit "big.log": it is 3145728 bytes, more than the 1048576 an edit loads (setting edit_max_bytes)',
    )
    assert (root / "big.log").stat().st_size == 3 * 2**20
    small = make_ws(edit_max_bytes=2**22)
    assert not small.run("read", file_path="big.log", limit=1).is_error
    assert not small.run(
        "edit", file_path="big.log", old_string="a line", new_string="one line", replace_all=True
    ).is_error
