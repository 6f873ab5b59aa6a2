"""The public entry point: value shapes, frames, errors, call log, state failures."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest
from conftest import Link, assert_error

from dsh_jupyter import Result, Workspace


@pytest.fixture
def populated(root, tree):
    tree(root, {"src/a.py": "print(1)\n", "src/b.txt": "b\n", "src/sub": {}, "src/link": Link("a.py")})
    return root


def test_list_value_shape(ws, populated):
    r = ws.run("list", path="src", offset=1)
    assert isinstance(r, Result) and not r.is_error
    v = r.value
    assert set(v) == {"path", "offset", "entries", "totalEntries", "counts", "hiddenEntries", "nextOffset", "footer"}
    assert v["hiddenEntries"] == 0
    assert v["path"] == "src" and v["offset"] == 1 and v["totalEntries"] == 4
    assert v["counts"] == {"directories": 1, "files": 2, "other": 1}
    assert [(e["name"], e["type"]) for e in v["entries"]] == [
        ("sub", "directory"),
        ("a.py", "file"),
        ("b.txt", "file"),
        ("link", "other"),
    ]
    a = v["entries"][1]
    assert a["size"] == 9 and isinstance(a["mtime"], float)
    assert v["entries"][3]["target"] == "src/a.py"  # where it leads, from the root
    assert "target" not in a
    json.dumps(v)
    # the text never carries the widget detail
    assert "a.py\n" in r.text and "9" not in r.text.split("<content>")[1].split("(")[0]


def test_list_frame(ws, populated):
    frame = ws.run("list", path="src").to_frame()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == ["name", "type", "size", "mtime", "target"]
    assert frame["name"].tolist() == ["sub", "a.py", "b.txt", "link"]
    assert frame["type"].tolist() == ["directory", "file", "file", "other"]
    assert frame.loc[3, "target"] == "src/a.py"
    assert frame.loc[1, "size"] == 9


def test_read_value_and_frame(ws, populated):
    r = ws.run("read", file_path="src/b.txt")
    assert set(r.value) == {"path", "offset", "lines", "totalLines", "capped", "nextOffset", "footer"}
    frame = r.to_frame()
    assert list(frame.columns) == ["number", "text"]
    assert frame.to_dict("records") == [{"number": 1, "text": "b"}]


def test_list_dir_frame(ws, populated):
    frame = ws.run("list_dir", path="src").to_frame()
    assert list(frame.columns) == ["entry"]
    assert frame["entry"].tolist() == ["a.py", "b.txt", "link", "sub"]


def test_frames_of_other_results_are_empty(ws, populated):
    w = ws.run("write", file_path="new.txt", content="x")
    assert w.to_frame().empty
    err = ws.run("list", path="nope")
    frame = err.to_frame()
    assert frame.empty and list(frame.columns) == ["name", "type", "size", "mtime", "target"]
    assert ws.run("read", file_path="nope").to_frame().empty


def test_error_value_shape(ws):
    r = ws.run("read", file_path="missing.txt")
    assert r.is_error
    assert r.value == {"name": "FsError", "code": "FS_NOT_FOUND", "message": 'cannot read "missing.txt": not found'}
    assert r.text == 'Error: cannot read "missing.txt": not found'
    assert str(r) == r.text
    assert r._repr_mimebundle_()["text/plain"] == r.text


def test_unknown_tool(ws):
    r = ws.run("delete", path="x")
    names = ", ".join(ws.registry)
    assert_error(r, "TOOL_UNKNOWN", f'unknown tool "delete"; available tools: {names}')
    assert {"list", "read", "write", "edit", "list_dir"} <= set(ws.registry)


def test_arguments_must_be_an_object(ws):
    assert_error(ws.call("list", ["."]), "ARGUMENT_INVALID", "arguments must be an object")
    assert not ws.call("list", None).is_error


def test_tool_definitions(ws):
    defs = {d["name"]: d for d in ws.tools()}
    assert {"list", "read", "write", "edit", "list_dir"} <= set(defs)
    for d in defs.values():
        assert set(d) == {"name", "description", "inputSchema", "guidance"}
        assert d["inputSchema"]["type"] == "object"
        assert d["inputSchema"]["additionalProperties"] is False
    assert defs["read"]["inputSchema"]["required"] == []  # file_path or file_paths: checked by the tool
    assert defs["edit"]["inputSchema"]["required"] == ["file_path"]  # old_string + new_string, or edits
    json.dumps(ws.tools())


def test_call_log_records_python_calls(ws, populated):
    ws.run("list", path="src")
    ws.run("read", file_path="src/b.txt")
    ws.run("read", file_path="nope")
    calls = ws.store.list_calls(ws.key("s1"))
    assert [c.tool for c in calls] == ["list", "read", "read"]
    assert all(c.surface == "python" and c.session == ws.key("s1") for c in calls)
    assert calls[0].args == {"path": "src"}
    assert calls[1].args == {"file_path": "src/b.txt"}
    assert calls[1].text == ws.run("read", file_path="src/b.txt").text
    assert [c.is_error for c in calls] == [False, False, True]
    assert calls[2].text == 'Error: cannot read "nope": not found'
    assert all(c.duration_ms >= 0 and c.started > 0 for c in calls)
    assert len({c.call_id for c in calls}) == 3


def test_call_log_is_per_session(make_ws, populated):
    a = make_ws(session="a")
    b = make_ws(session="b")
    a.run("list")
    b.run("list", path="src")
    b.run("list_dir", path="src")
    assert [c.tool for c in a.store.list_calls(a.key("a"))] == ["list"]
    assert [c.tool for c in a.store.list_calls(a.key("b"))] == ["list", "list_dir"]


def test_call_surface_and_session_override(ws, populated):
    r = ws.call("list", {"path": "src"}, session="other", surface="magic")
    assert r.session == "other"
    (c,) = ws.store.list_calls(ws.key("other"))
    assert c.surface == "magic"


def test_result_json_serialisable_for_every_tool(ws, populated):
    for tool, args in [
        ("list", {}),
        ("read", {"file_path": "src/a.py"}),
        ("write", {"file_path": "w.txt", "content": "x"}),
        ("edit", {"file_path": "w.txt", "old_string": "x", "new_string": "y"}),
        ("list_dir", {"path": ".", "recursive": True}),
        ("read", {"file_path": "nope"}),
    ]:
        r = ws.call(tool, args)
        json.dumps(r.value)
        assert isinstance(r.text, str) and isinstance(r.is_error, bool)


def test_state_file_that_cannot_be_opened(tmp_path, root):
    (tmp_path / "blocker").write_text("a regular file, not a folder")
    (root / "f.txt").write_text("hello\n")
    ws = Workspace(root, session="s1", state_path=tmp_path / "blocker" / "state.sqlite")
    assert ws.store is None
    r = ws.run("read", file_path="f.txt")
    assert (
        r.text
        == "<path>f.txt</path>\n<type>file</type>\n<content>\n1: hello\n\n(End of file - total 1 line)\n</content>"
    )
    assert not ws.run("list").is_error
    assert ws.run("list_dir", path=".").value == {"entries": ["f.txt"], "nextOffset": None, "footer": ""}
    assert_error(
        ws.run("write", file_path="f.txt", content="x"),
        "STATE_UNAVAILABLE",
        'cannot write "f.txt": the session state is unavailable',
    )
    assert_error(
        ws.run("edit", file_path="f.txt", old_string="hello", new_string="x"),
        "STATE_UNAVAILABLE",
        'cannot edit "f.txt": the session state is unavailable',
    )
    assert_error(
        ws.run("write", file_path="new.txt", content="x"),
        "STATE_UNAVAILABLE",
        'cannot write "new.txt": the session state is unavailable',
    )
    assert ws.run("write", file_path="new.txt", content="x").value["name"] == "StateError"
    assert (root / "f.txt").read_text() == "hello\n"
    assert sorted(os.listdir(root)) == ["f.txt"]


def test_state_path_from_the_environment(monkeypatch, tmp_path, root):
    state = tmp_path / "env-state" / "s.sqlite"
    monkeypatch.setenv("DSH_STATE_PATH", str(state))
    ws = Workspace(root, session="s1")
    assert ws.state_path == str(state)
    ws.run("list")
    assert state.exists()
    assert [c.tool for c in ws.store.list_calls(ws.key("s1"))] == ["list"]


def test_state_file_is_private(ws, state_file):
    ws.run("list")
    assert os.stat(state_file).st_mode & 0o077 == 0


def test_default_session_name(root, state_file):
    ws = Workspace(root, state_path=state_file)
    assert ws.session == "default"
    assert ws.run("list").session == "default"


def test_root_defaults_to_the_cwd(monkeypatch, root, state_file):
    monkeypatch.delenv("DSH_ROOT", raising=False)
    monkeypatch.chdir(root)
    ws = Workspace(state_path=state_file)
    assert ws.root == str(root)


def test_call_with_an_undecodable_path_is_logged(ws, root):
    with open(os.fsencode(root) + b"/bad\xff.txt", "wb") as fh:
        fh.write(b"x\n")
    r = ws.run("read", file_path=os.fsdecode(b"bad\xff.txt"))
    assert not r.is_error
    assert [c.tool for c in ws.store.list_calls(ws.key("s1"))] == ["read"]


def test_call_log_cuts_huge_arguments(ws, root):
    big = "x" * 200_000
    r = ws.run("write", file_path="big.txt", content=big)
    assert not r.is_error
    (call,) = ws.store.list_calls(ws.key("s1"))
    logged = call.args["content"]
    assert logged.startswith("x" * 65_536)
    assert logged.endswith("... (cut from 200000 characters in the call log)")
    assert (root / "big.txt").read_text() == big


def test_error_messages_escape_hostile_names(ws):
    r = ws.run("read", file_path='evil\n"name')
    assert r.text == 'Error: cannot read "evil\\u000a\\"name": not found'
    r = ws.run("read", file_path="two\nlines")
    assert r.text == 'Error: cannot read "two\\u000alines": not found'
    assert "\n" not in r.text


def test_write_refuses_a_path_ending_in_a_slash(ws, root):
    r = ws.run("write", file_path="foo/", content="x")
    assert r.value["code"] == "ARGUMENT_INVALID"
    assert r.text == 'Error: file_path must name a file; "foo/" ends with "/"'
    assert not (root / "foo").exists()


def test_python_calls_record_the_os_user(ws, root):
    from dsh_jupyter.core.workspace import os_user

    ws.run("list")
    ws.call("list", {}, user="agent-bob")
    calls = ws.calls()["calls"]
    assert [c["user"] for c in calls] == [os_user(), "agent-bob"]
    assert [c["user"] for c in ws.calls(user="agent-bob")["calls"]] == ["agent-bob"]
    assert ws.sessions()[0]["user"] == os_user()


def test_cancel_running_stops_a_search_in_progress(tmp_path, marker):
    """What a stopping server calls: every running call is cancelled, a search's rg is killed."""
    import threading
    import time

    from servers import processes_with

    script = tmp_path / "rg-hangs"
    script.write_text(f"#!/bin/sh\nexec sleep {marker}\n")
    script.chmod(0o755)
    root = tmp_path / "root"
    root.mkdir()
    ws = Workspace(root, state_path=tmp_path / "s.sqlite", rg_path=str(script))
    assert ws.cancel_running() == 0
    results = []
    thread = threading.Thread(target=lambda: results.append(ws.run("grep", pattern="x")))
    thread.start()
    deadline = time.monotonic() + 30
    while not processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ws.cancel_running() == 1
    thread.join(timeout=10)
    assert results[0].text == "Error: grep was cancelled before it finished"
    assert processes_with(marker) == []
