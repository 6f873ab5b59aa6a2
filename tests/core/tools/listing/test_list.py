"""``list`` through the public API on real trees: exact text, paging, quoting, symlinks."""

from __future__ import annotations

import json
import os
import socket

import pytest
from conftest import Link, assert_error

ORDER = "Directories first, then files, then other, each alphabetical."


def env(path: str, lines: list[str], footer: str) -> str:
    body = "".join(f"{line}\n" for line in lines) + ("\n" if lines else "")
    return f"<path>{path}</path>\n<type>directory</type>\n<content>\n{body}{footer}\n</content>"


# -- footers and envelope, one directory each -------------------------------------------------


def test_empty_directory(ws, root, tree):
    tree(root, {"empty": {}})
    r = ws.run("list", path="empty")
    assert not r.is_error
    assert r.text == env("empty", [], "(Empty directory)")
    # no blank line before the footer when there is no entry line, as the reference prints it
    assert r.text == "<path>empty</path>\n<type>directory</type>\n<content>\n(Empty directory)\n</content>"
    assert r.footer() == "(Empty directory)"
    assert r.value["entries"] == [] and r.value["totalEntries"] == 0


def test_empty_root_default_path(ws):
    assert ws.run("list").text == env(".", [], "(Empty directory)")


@pytest.mark.parametrize(
    ("spec", "lines", "footer"),
    [
        ({"f.txt": "x"}, ["f.txt"], "(1 entry: 0 directories, 1 file)"),
        ({"d": {}}, ["d/"], "(1 entry: 1 directory, 0 files)"),
        ({"l": Link("nowhere")}, ["l@"], "(1 entry: 0 directories, 0 files, 1 other)"),
        ({"a": "", "b": ""}, ["a", "b"], "(2 entries: 0 directories, 2 files)"),
        ({"d1": {}, "d2": {}}, ["d1/", "d2/"], "(2 entries: 2 directories, 0 files)"),
        (
            {"z": {}, "a.txt": "", "m": Link("a.txt"), "b": {}, "c.txt": ""},
            ["b/", "z/", "a.txt", "c.txt", "m@"],
            "(5 entries: 2 directories, 2 files, 1 other)",
        ),
        (
            {"x": {}, "y": "", "l1": Link("x"), "l2": Link("y")},
            ["x/", "y", "l1@", "l2@"],
            "(4 entries: 1 directory, 1 file, 2 other)",
        ),
    ],
)
def test_whole_listing_footers(ws, root, tree, spec, lines, footer):
    tree(root / "d0", spec)
    r = ws.run("list", path="d0")
    assert r.text == env("d0", lines, footer)


def test_order_is_by_code_point_within_each_group(ws, root, tree):
    tree(root, {"b": "", "B": "", "a": "", "é": "", "Z": {}, "_": {}, "10": "", "9": ""})
    r = ws.run("list")
    assert r.text == env(".", ["Z/", "_/", "10", "9", "B", "a", "b", "é"], "(8 entries: 2 directories, 6 files)")


def test_fifo_and_socket_are_other(ws, root):
    os.mkfifo(root / "pipe")
    (root / "f").write_text("x")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(str(root / "sock"))
        r = ws.run("list")
    finally:
        s.close()
    assert r.text == env(".", ["f", "pipe@", "sock@"], "(3 entries: 0 directories, 1 file, 2 other)")
    assert r.value["counts"] == {"directories": 0, "files": 1, "other": 2}


def test_nested_path_and_absolute_path_inside_root(ws, root, tree):
    tree(root, {"src/pkg/mod.py": "", "src/pkg/sub": {}})
    assert ws.run("list", path="src/pkg").text == env("src/pkg", ["sub/", "mod.py"], "(2 entries: 1 directory, 1 file)")
    assert ws.run("list", path=str(root / "src" / "pkg")).text == env(
        "src/pkg", ["sub/", "mod.py"], "(2 entries: 1 directory, 1 file)"
    )
    assert ws.run("list", path=str(root)).text.startswith("<path>.</path>\n")
    assert ws.run("list", path="src/../src/./pkg/").value["path"] == "src/pkg"


def test_symlink_to_directory_inside_root_is_listed_through(ws, root, tree):
    tree(root, {"real/a.txt": "", "alias": Link("real")})
    assert ws.run("list").text == env(".", ["real/", "alias@"], "(2 entries: 1 directory, 0 files, 1 other)")
    assert ws.run("list", path="alias").text == env("alias", ["a.txt"], "(1 entry: 0 directories, 1 file)")


# -- paging over 450 entries ------------------------------------------------------------------


@pytest.fixture
def big(root):
    d = root / "big"
    d.mkdir()
    for i in range(150):
        (d / f"d{i:03d}").mkdir()
    for i in range(200):
        (d / f"f{i:03d}").write_text("")
    for i in range(100):
        os.symlink(f"d{i:03d}" if i % 2 else "missing", d / f"l{i:03d}")
    dirs = [f"d{i:03d}/" for i in range(150)]
    files = [f"f{i:03d}" for i in range(200)]
    links = [f"l{i:03d}@" for i in range(100)]
    return dirs + files + links


COMP = "450: 150 directories, 200 files, 100 other"


def page_footer(a: int, b: int, last: bool) -> str:
    tail = "End of listing." if last else f"Use offset={b + 1} to continue."
    return f"(Showing entries {a}-{b} of {COMP}. {ORDER} {tail})"


def test_paging_first_page(ws, big):
    r = ws.run("list", path="big")
    assert r.text == env("big", big[:200], page_footer(1, 200, False))
    assert r.value["offset"] == 1 and r.value["totalEntries"] == 450
    assert len(r.value["entries"]) == 200


def test_paging_middle_page(ws, big):
    r = ws.run("list", path="big", offset=201)
    assert r.text == env("big", big[200:400], page_footer(201, 400, False))
    assert r.text.split("\n")[3] == "f050"


def test_paging_odd_offset(ws, big):
    r = ws.run("list", path="big", offset=137)
    assert r.text == env("big", big[136:336], page_footer(137, 336, False))


def test_paging_last_page(ws, big):
    r = ws.run("list", path="big", offset=401)
    assert r.text == env("big", big[400:], page_footer(401, 450, True))
    r = ws.run("list", path="big", offset=450)
    assert r.text == env("big", ["l099@"], page_footer(450, 450, True))


def test_paging_walk_covers_every_entry_once(ws, big):
    seen, offset = [], 1
    while True:
        r = ws.run("list", path="big", offset=offset)
        seen += r.text.split("\n")[3 : 3 + len(r.value["entries"])]
        if "End of listing." in r.text:
            break
        offset = int(r.text.rsplit("Use offset=", 1)[1].split(" ")[0])
    assert seen == big


def test_paging_with_a_small_cap(make_ws, big):
    ws = make_ws(list_max_entries=7)
    r = ws.run("list", path="big", offset=148)
    assert r.text == env("big", big[147:154], page_footer(148, 154, False))


def test_offset_out_of_range(ws, big):
    r = ws.run("list", path="big", offset=451)
    assert_error(r, "ARGUMENT_INVALID", 'offset 451 is out of range for "big" (450 entries)')


def test_offset_out_of_range_at_root(ws, root, tree):
    for i in range(450):
        (root / f"f{i:03d}").write_text("")
    r = ws.run("list", offset=451)
    assert r.text == 'Error: offset 451 is out of range for "." (450 entries)'
    assert r.value == {
        "name": "ArgumentError",
        "code": "ARGUMENT_INVALID",
        "message": 'offset 451 is out of range for "." (450 entries)',
    }


def test_offset_out_of_range_singular_and_empty(ws, root, tree):
    tree(root, {"one/f": "", "none": {}})
    assert_error(
        ws.run("list", path="one", offset=2), "ARGUMENT_INVALID", 'offset 2 is out of range for "one" (1 entry)'
    )
    assert_error(
        ws.run("list", path="none", offset=2), "ARGUMENT_INVALID", 'offset 2 is out of range for "none" (0 entries)'
    )
    assert ws.run("list", path="none", offset=1).text == env("none", [], "(Empty directory)")


@pytest.mark.parametrize(
    ("offset", "message"),
    [
        (0, "offset must be at least 1"),
        (-3, "offset must be at least 1"),
        ("2", "offset must be an integer"),
        (1.0, "offset must be an integer"),
        (True, "offset must be an integer"),
    ],
)
def test_bad_offsets(ws, offset, message):
    assert_error(ws.run("list", offset=offset), "ARGUMENT_INVALID", message)


def test_bad_path_arguments(ws):
    assert_error(ws.run("list", path=""), "ARGUMENT_INVALID", "path must be a non-empty string")
    assert_error(ws.run("list", path=3), "ARGUMENT_INVALID", "path must be a string")
    assert_error(ws.run("list", path="a\0b"), "ARGUMENT_INVALID", "path must not contain a NUL character")
    assert_error(
        ws.run("list", dir="."), "ARGUMENT_INVALID", 'unknown argument "dir" (this tool takes: path, offset, details)'
    )


# -- names that could forge structure ---------------------------------------------------------


def test_forging_names_are_quoted(ws, root):
    d = root / "names"
    d.mkdir()
    files = {
        "a\nb": '"a\\u000ab"',
        "x@": '"x@"',
        '"q': '"\\"q"',
        " lead": '" lead"',
        "trail ": '"trail "',
        "back\\slash": '"back\\\\slash"',
        "c1\x85": '"c1\\u0085"',
        "tab\t": '"tab\\u0009"',
        "esc\x1b[31m": '"esc\\u001b[31m"',
        "<": "<",
        "café日本": "café日本",
        "ok name": "ok name",
    }
    for name in files:
        (d / name).write_text("")
    (d / "dir@").mkdir()
    (d / " spaced dir").mkdir()
    os.symlink("nowhere", d / "link\n")
    r = ws.run("list", path="names")
    expected_files = [files[n] for n in sorted(files)]
    assert r.text == env(
        "names",
        ['" spaced dir"/', '"dir@"/', *expected_files, '"link\\u000a"@'],
        "(15 entries: 2 directories, 12 files, 1 other)",
    )
    # one line per entry: no name split the listing
    assert len(r.text.split("\n")) == 3 + 15 + 1 + 1 + 1


def test_content_closing_tag_in_a_display_path(ws, root):
    (root / "<" / "content>").mkdir(parents=True)
    (root / "<" / "content>" / "f").write_text("")
    r = ws.run("list", path="</content>")
    assert r.text == env('"<\\/content>"', ["f"], "(1 entry: 0 directories, 1 file)")
    assert r.text.count("</content>") == 1


def test_invalid_utf8_name_is_quoted_and_round_trips(ws, root):
    os.close(os.open(os.fsencode(root) + b"/bad\xff\xfename.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    os.mkdir(os.fsencode(root) + b"/dir\x80")
    r = ws.run("list")
    # each undecodable byte is shown as \udcXX inside the quoted (JSON string) form
    assert r.text == env(".", ['"dir\\udc80"/', '"bad\\udcff\\udcfename.txt"'], "(2 entries: 1 directory, 1 file)")
    entry = r.value["entries"][1]
    assert entry["name"] == "bad\udcff\udcfename.txt" and entry["encoding"] == "bytes"
    # the value stays JSON-serialisable, and the JSON form of the name names the same file again
    import json

    wire = json.dumps(r.value)
    back = json.loads(wire)["entries"][1]["name"]
    assert back == entry["name"]
    assert not ws.run("read", file_path=back).is_error
    assert os.fsencode(back) == b"bad\xff\xfename.txt"


# -- symlinks ---------------------------------------------------------------------------------


def test_symlink_out_of_root_is_listed_never_followed(ws, root):
    os.symlink("/etc", root / "etc_link")
    r = ws.run("list")
    assert r.text == env(".", ["etc_link@"], "(1 entry: 0 directories, 0 files, 1 other)")
    assert r.value["entries"][0]["target"] == "(outside the workspace)"  # never where it leads out to
    assert_error(
        ws.run("list", path="etc_link"), "FS_OUTSIDE_ROOT", 'cannot list "etc_link": path is outside the workspace'
    )


def test_symlink_targets_are_shown_from_the_root_never_as_absolute_paths(ws, root):
    """An absolute target that lands inside names the root's absolute path: it is shown relative to
    the root, as a relative one is; one that leads out is only said to."""
    (root / "data" / "raw").mkdir(parents=True)
    (root / "sub").mkdir()
    os.symlink(str(root / "data" / "raw"), root / "sub" / "abs_in")
    os.symlink("../data", root / "sub" / "rel_in")
    os.symlink(str(root), root / "sub" / "to_root")
    os.symlink("../../outside", root / "sub" / "rel_out")
    os.symlink(os.path.expanduser("~"), root / "sub" / "home")
    r = ws.run("list", path="sub")
    targets = {e["name"]: e["target"] for e in r.value["entries"]}
    assert targets == {
        "abs_in": "data/raw",
        "rel_in": "data",
        "to_root": ".",
        "rel_out": "(outside the workspace)",
        "home": "(outside the workspace)",
    }
    assert str(root) not in json.dumps(r.value)
    page = ws.browse(path="sub", sort="modified")
    assert {e["name"]: e["target"] for e in page["entries"]} == targets
    assert {e["name"]: e["target"] for e in ws.browse(path="sub")["entries"]} == targets


def test_symlink_loop(ws, root):
    os.symlink("loop", root / "loop")
    os.symlink("b", root / "a")
    os.symlink("a", root / "b")
    assert ws.run("list").text == env(".", ["a@", "b@", "loop@"], "(3 entries: 0 directories, 0 files, 3 other)")
    assert_error(ws.run("list", path="loop"), "FS_SYMLINK_LOOP", 'cannot list "loop": symbolic link loop')
    assert_error(ws.run("list", path="a"), "FS_SYMLINK_LOOP", 'cannot list "a": symbolic link loop')
    assert_error(ws.run("list", path="loop/deeper"), "FS_SYMLINK_LOOP", 'cannot list "loop/deeper": symbolic link loop')


# -- errors -----------------------------------------------------------------------------------


def test_not_found_and_not_a_directory(ws, root, tree):
    tree(root, {"f.txt": "x"})
    assert_error(ws.run("list", path="nope"), "FS_NOT_FOUND", 'cannot list "nope": not found')
    assert_error(ws.run("list", path="nope/deeper"), "FS_NOT_FOUND", 'cannot list "nope/deeper": not found')
    assert_error(ws.run("list", path="f.txt"), "FS_NOT_DIRECTORY", 'cannot list "f.txt": not a directory')
    assert ws.run("list", path="f.txt").value["name"] == "FsError"


def test_name_too_long_is_fs_error(ws):
    r = ws.run("list", path="x" * 300)
    assert_error(r, "FS_ERROR", f'cannot list "{"x" * 300}": File name too long')


def test_listing_records_no_observation(ws, root, tree):
    tree(root, {"f.txt": "x\n"})
    ws.run("list")
    assert ws.store.observed_version(ws.key("s1"), str(root / "f.txt")) is None


# -- details --------------------------------------------------------------------------------------

T0 = 1_764_513_731  # 2025-11-30 14:42:11 UTC


def test_details_add_size_and_time_to_file_rows_only(ws, root, tree):
    tree(root, {"sub": {}, "small.txt": "x" * 7, "big.bin": b"\0" * 1_234_567, "kilo.txt": "k" * 1024})
    for name in ("small.txt", "big.bin", "kilo.txt"):
        os.utime(root / name, (T0, T0))
    os.symlink("small.txt", root / "link")
    r = ws.run("list", details=True)
    assert r.text == env(
        ".",
        [
            "sub/",
            "big.bin  (1.2 MiB, 1234567 bytes, 2025-11-30 14:42:11 UTC)",
            "kilo.txt  (1.0 KiB, 1024 bytes, 2025-11-30 14:42:11 UTC)",
            "small.txt  (7 bytes, 2025-11-30 14:42:11 UTC)",
            "link@",
        ],
        "(5 entries: 1 directory, 3 files, 1 other)",
    )
    assert r.value["details"] is True
    # the default text stays as it was
    assert ws.run("list").text == env(
        ".", ["sub/", "big.bin", "kilo.txt", "small.txt", "link@"], "(5 entries: 1 directory, 3 files, 1 other)"
    )


def test_a_name_cannot_pass_for_a_row_with_details(ws, root, tree):
    tree(root, {"a.txt  (9 GiB, 1 bytes, 2000-01-01 00:00:00 UTC)": "x", "one byte": "y"})
    for name in os.listdir(root):
        os.utime(root / name, (T0, T0))
    r = ws.run("list", details=True)
    assert r.text == env(
        ".",
        [
            '"a.txt  (9 GiB, 1 bytes, 2000-01-01 00:00:00 UTC)"  (1 byte, 2025-11-30 14:42:11 UTC)',
            "one byte  (1 byte, 2025-11-30 14:42:11 UTC)",
        ],
        "(2 entries: 0 directories, 2 files)",
    )


def test_details_must_be_a_boolean(ws):
    r = ws.run("list", details="yes")
    assert r.is_error and r.text == "Error: details must be true or false"
