"""An edit is computed before the write gate is taken: the gate only compares versions and renames.

Real processes share one state file: a dry run and every refusal answer while another process
holds the gate; a file changed by another process after the edit was computed (the editing
process is stopped, by signal, right after it loaded the file) is not overwritten; and writes in
another process go through, all of them recorded, while big edits run.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from dsh_jupyter.core.errors import ToolError
from dsh_jupyter.core.fs.files import file_version
from dsh_jupyter.core.state.store import StateStore, session_key

_PRELUDE = textwrap.dedent(
    """
    import json, os, sys, time
    from dsh_jupyter import Workspace
    cfg = json.loads(sys.argv[1])
    ws = Workspace(cfg["root"], session=cfg["session"], state_path=cfg["state"], **cfg.get("settings", {}))
    def emit(r, **more):
        print(json.dumps({"text": r.text, "value": r.value, "is_error": r.is_error, **more}), flush=True)
    def wait_for(path):
        deadline = time.monotonic() + 60
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                raise SystemExit("no go signal")
            time.sleep(0.001)
    """
)


def child(code: str, **cfg) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", _PRELUDE + textwrap.dedent(code), json.dumps(cfg)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_ok(ws, path="f.txt"):
    r = ws.run("read", file_path=path, limit=1)
    assert not r.is_error, r.text
    return r


def run_edit(ctx, ws, **args) -> dict:
    """The edit tool's executor alone (no session bookkeeping, no call log: both write the state)."""
    spec = ws.registry.get("edit")
    try:
        return {"text": spec.render(spec.execute(ctx, args))}
    except ToolError as exc:
        return exc.as_value()


def test_a_dry_run_and_refusals_answer_while_another_process_holds_the_gate(make_ws, root, state_file):
    f = root / "f.txt"
    f.write_bytes(b"alpha\nbeta\n")
    ws = make_ws(edit_max_bytes=64)
    read_ok(ws)
    ctx = ws.context("s1", ws.user)
    held = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys, sqlite3
            conn = sqlite3.connect({str(state_file)!r}, isolation_level=None)
            conn.execute("BEGIN IMMEDIATE")  # the write gate, held until stdin closes
            print("held", flush=True)
            sys.stdin.read()
        """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert held.stdout.readline() == "held\n"
        # Had any of these waited for the gate, it would have answered STATE_UNAVAILABLE.
        dry = run_edit(ctx, ws, file_path="f.txt", old_string="beta", new_string="BETA", dry_run=True)
        assert dry["text"] == (
            "Dry run: f.txt was not changed. The edit would make 1 replacement:\n"
            "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA"
        )
        assert run_edit(ctx, ws, file_path="f.txt", old_string="gamma", new_string="x") == {
            "name": "EditError",
            "code": "EDIT_NOT_FOUND",
            "message": 'old_string not found in "f.txt"',
        }
        assert run_edit(ctx, ws, file_path="f.txt", old_string="a", new_string="a" * 20, replace_all=True) == {
            "name": "FsError",
            "code": "FS_TOO_LARGE",
            "message": 'cannot edit "f.txt": the result would be 68 bytes, more than the 64 an edit may write '
            "(setting edit_max_bytes)",
        }
    finally:
        held.stdin.close()
        held.wait(timeout=30)
        held.stdout.close()
    assert f.read_bytes() == b"alpha\nbeta\n"


def _rchar(pid: int) -> int:
    """Bytes the process has read so far (read and pread calls), from /proc."""
    with open(f"/proc/{pid}/io") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("rchar:"))


_EDITOR = """
    r0 = ws.run("read", file_path="other.txt")  # the session, the imports: all set up before
    assert not r0.is_error, r0.text
    print("ready", flush=True)
    wait_for(cfg["go"])
    emit(ws.run("edit", file_path="f.txt", old_string=",", new_string=";", replace_all=True))
"""


@pytest.mark.slow
@pytest.mark.parametrize("read_again", [False, True], ids=["observation-old", "observation-new"])
def test_a_file_changed_after_the_edit_was_computed_is_not_written_over(
    make_ws, root, state_file, tmp_path, read_again
):
    f = root / "f.txt"
    line = b"a,a,a,a,a,a,a,\r\n"
    f.write_bytes(line * (8 * 2**20 // len(line)))  # 8 MiB: loaded in two whole reads
    size = f.stat().st_size
    (root / "other.txt").write_text("other\n")
    ws = make_ws(session="mine")
    read_ok(ws)
    go = tmp_path / "go"
    p = child(_EDITOR, root=str(root), state=str(state_file), session="mine", go=str(go))
    theirs = b"their own bytes\r\n"
    try:
        assert p.stdout.readline() == "ready\n", p.stderr.read()
        base = _rchar(p.pid)
        go.touch()
        deadline = time.monotonic() + 60
        while _rchar(p.pid) - base < size:  # until the edit has read the whole file
            assert p.poll() is None and time.monotonic() < deadline, p.stderr.read()
        os.kill(p.pid, signal.SIGSTOP)  # stopped before it computed the edit, so before the gate
        try:
            replace = (
                "import os, sys\n"
                "tmp = sys.argv[1] + '.theirs'\n"
                "open(tmp, 'wb').write(sys.argv[2].encode())\n"
                "os.replace(tmp, sys.argv[1])\n"
            )
            subprocess.run([sys.executable, "-c", replace, str(f), theirs.decode()], check=True, timeout=60)
            if read_again:  # the session now observes the new version; the edit was computed from the old
                read_ok(ws)
        finally:
            os.kill(p.pid, signal.SIGCONT)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, err
    answer = json.loads(out.strip().splitlines()[-1])
    assert answer["value"] == {
        "name": "FsError",
        "code": "FS_NOT_OBSERVED",
        "message": 'cannot write "f.txt": it changed since this session last read it; read it again',
    }
    assert f.read_bytes() == theirs
    assert sorted(os.listdir(root)) == ["f.txt", "other.txt"]


_WRITER = """
    r0 = ws.run("read", file_path="other.txt")
    assert not r0.is_error, r0.text
    print("ready", flush=True)
    i = 0
    with open(cfg["log"], "w") as log:  # a file, not the pipe: a full pipe would stop the writer
        while not os.path.exists(cfg["stop"]) or i < 3:
            t0 = time.time()
            r = ws.run("write", file_path="other.txt", content=f"write {i}\\n")
            log.write(json.dumps({"text": r.text, "is_error": r.is_error, "started": t0, "ended": time.time()}) + "\\n")
            i += 1
"""


@pytest.mark.slow
def test_writes_in_another_process_all_go_through_while_big_edits_run(make_ws, root, state_file, tmp_path):
    f = root / "big.csv"
    text = "a," * (2 * 2**20) + "\r\n"  # one 4 MiB line
    f.write_bytes(text.encode())
    (root / "other.txt").write_text("other\n")
    stop = tmp_path / "stop"
    log = tmp_path / "writes.jsonl"
    p = child(_WRITER, root=str(root), state=str(state_file), session="writer", stop=str(stop), log=str(log))
    try:
        assert p.stdout.readline() == "ready\n", p.stderr.read()
        ws = make_ws(session="big")
        read_ok(ws, "big.csv")
        started = time.time()
        for old, new in ((",", ";"), (";", ",\n"), (",\n", ","), (",", ";")):
            r = ws.run("edit", file_path="big.csv", old_string=old, new_string=new, replace_all=True)
            assert not r.is_error, r.text[:300]
            assert r.value["replacements"] == 2 * 2**20
        ended = time.time()
        stop.touch()
        _, err = p.communicate(timeout=120)
    finally:
        stop.touch()
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, err
    assert f.read_bytes() == text.replace(",", ";").encode()
    writes = [json.loads(line) for line in log.read_text().splitlines()]
    assert writes and all(
        w["text"] == "<path>other.txt</path>\n<type>file</type>\n<content>\nUpdated file\n</content>" for w in writes
    ), [w["text"] for w in writes if w["is_error"]][:3]
    # some of them were made while the edits ran: the edits never kept them waiting
    assert any(started < w["started"] and w["ended"] < ended for w in writes), (started, ended, writes[-3:])
    assert (root / "other.txt").read_text() == f"write {len(writes) - 1}\n"
    # the state holds every one of them and the writer's observation of what it wrote last
    writer = session_key(str(root), "writer")
    conn = sqlite3.connect(state_file)
    try:
        logged = conn.execute(
            "SELECT COUNT(*) FROM calls WHERE session = ? AND tool = 'write' AND is_error = 0", (writer,)
        ).fetchone()[0]
        seen = conn.execute(
            "SELECT version FROM observations WHERE session = ? AND real_path = ?", (writer, str(root / "other.txt"))
        ).fetchone()
    finally:
        conn.close()
    assert logged == len(writes)
    assert seen == (file_version(os.stat(root / "other.txt")),)
    assert StateStore(state_file).count_calls(writer) == len(writes) + 1  # and its read
