"""The kept folder scans (dircache): reused only while the folder's stamp proves them current.

Real folders on disk. A scan is kept only once the folder's ctime is older than the stamp margin
(``settle`` waits for that, it asserts nothing about time); every create, delete or rename in the
folder must show on the very next call, also when it happens within the same timestamp tick as
the scan.
"""

from __future__ import annotations

import os

from conftest import settle

from dsh_jupyter.core.caches.folders import FolderCache
from dsh_jupyter.core.caches.stamps import look


def names(result) -> list[str]:
    return [e["name"] for e in result.value["entries"]]


def make_folder(root, n: int, prefix: str = "f") -> None:
    for i in range(n):
        (root / f"{prefix}{i:03d}.txt").write_text("")


def test_second_page_comes_from_the_kept_scan(make_ws, root):
    make_folder(root, 30)
    settle(root)
    ws = make_ws(list_max_entries=10)
    first = ws.run("list")
    second = ws.run("list", offset=11)
    assert ws.folders.hits == 1 and len(ws.folders) == 1
    plain = make_ws(list_max_entries=10, list_cache_max_entries=0)
    assert plain.folders is None
    assert first.text == plain.run("list").text
    assert second.text == plain.run("list", offset=11).text
    assert names(second) == [f"f{i:03d}.txt" for i in range(10, 20)]


def test_create_delete_rename_show_on_the_next_call(ws, root):
    make_folder(root, 3)
    settle(root)
    assert names(ws.run("list")) == ["f000.txt", "f001.txt", "f002.txt"]
    assert names(ws.run("list")) == ["f000.txt", "f001.txt", "f002.txt"] and ws.folders.hits == 1
    (root / "new.txt").write_text("")
    assert names(ws.run("list")) == ["f000.txt", "f001.txt", "f002.txt", "new.txt"]
    settle(root)
    ws.run("list")
    (root / "f001.txt").unlink()
    assert names(ws.run("list")) == ["f000.txt", "f002.txt", "new.txt"]
    settle(root)
    ws.run("list")
    os.rename(root / "f000.txt", root / "g000.txt")
    assert names(ws.run("list")) == ["f002.txt", "g000.txt", "new.txt"]
    settle(root)
    ws.run("list")
    os.rename(root / "f002.txt", root / "new.txt")  # replaces: the count stays, the names change
    assert names(ws.run("list")) == ["g000.txt", "new.txt"]


def test_changes_in_the_same_tick_as_the_scan_are_seen(ws, root):
    # The folder changes right before and right after each scan, with no wait: its stamp cannot
    # prove a scan current, so nothing is kept and every call scans again.
    for i in range(20):
        (root / f"n{i:02d}.txt").write_text("")
        assert names(ws.run("list")) == [f"n{k:02d}.txt" for k in range(i + 1)]
    assert len(ws.folders) == 0 and ws.folders.hits == 0


def test_a_changed_stamp_with_restored_mtime_is_still_a_change(ws, root):
    make_folder(root, 2)
    settle(root)
    st = os.stat(root)
    ws.run("list")
    (root / "late.txt").write_text("")
    os.utime(root, ns=(st.st_atime_ns, st.st_mtime_ns))  # the folder's mtime set back: ctime moves
    assert names(ws.run("list")) == ["f000.txt", "f001.txt", "late.txt"]


def test_a_folder_replaced_under_the_same_name_is_a_new_folder(ws, root):
    (root / "d").mkdir()
    (root / "d" / "old.txt").write_text("")
    settle(root / "d")
    assert names(ws.run("list", path="d")) == ["old.txt"]
    os.rename(root / "d", root / "gone")
    (root / "d").mkdir()
    (root / "d" / "new.txt").write_text("")
    settle(root / "d")
    assert names(ws.run("list", path="d")) == ["new.txt"]


def test_other_visibility_rules_never_share_a_filtered_view(make_ws, root):
    (root / ".hidden").write_text("")
    (root / "shown.txt").write_text("")
    (root / "skip.log").write_text("")
    settle(root)
    open_ws = make_ws()
    strict = make_ws(allow_hidden=False, hide_globs=["*.log"])
    strict.folders = open_ws.folders  # one cache, two sets of rules
    assert names(open_ws.run("list")) == [".hidden", "shown.txt", "skip.log"]
    assert names(strict.run("list")) == ["shown.txt"]
    assert names(open_ws.run("list")) == [".hidden", "shown.txt", "skip.log"]
    assert open_ws.folders.hits == 2


def test_browse_pages_and_filters_ride_on_the_kept_scan(ws, root):
    make_folder(root, 30)
    settle(root)
    first = ws.browse(limit=10)
    second = ws.browse(offset=11, limit=10)
    assert [r["name"] for r in second["entries"]] == [f"f{i:03d}.txt" for i in range(10, 20)]
    filtered = ws.browse(name_filter="f02", limit=10)
    assert [r["name"] for r in filtered["entries"]] == [f"f{i:03d}.txt" for i in range(20, 30)]
    assert ws.folders.hits == 2 and first["entries"][0]["name"] == "f000.txt"
    (root / "f02x.txt").write_text("")
    again = ws.browse(name_filter="f02", limit=20)
    assert [r["name"] for r in again["entries"]][-1] == "f02x.txt"


def test_memory_is_bounded_by_names_least_recent_first_out(root):
    for d in ("a", "b", "c"):
        (root / d).mkdir()
        make_folder(root / d, 4)
    (root / "big").mkdir()
    make_folder(root / "big", 12)
    for d in ("a", "b", "c", "big"):
        settle(root / d)
    cache = FolderCache(max_entries=10)

    def scan(d):
        fd = os.open(root / d, os.O_RDONLY | os.O_DIRECTORY)
        try:
            return cache.scan(fd)
        finally:
            os.close(fd)

    assert scan("a").cached and scan("b").cached and cache.total == 8
    assert scan("c").cached and len(cache) == 2 and cache.total == 8  # "a" went out
    assert scan("b").cached and cache.hits == 1
    assert not scan("big").cached and cache.total == 8  # more names than the whole bound
    assert scan("a").cached and cache.hits == 1 and cache.total == 8  # "c" went out, "b" stayed
    assert scan("b").cached and cache.hits == 2


def test_the_stamp_of_a_fresh_folder_proves_nothing(root):
    (root / "x").mkdir()
    fd = os.open(root / "x", os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert not look(fd).settled
        settle(root / "x")
        assert look(fd).settled
    finally:
        os.close(fd)
