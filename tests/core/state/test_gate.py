"""The observation gate across real processes sharing one state file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

# Each child gets: argv[1] = JSON {root, state, session, ...}; prints one JSON line per result.
_PRELUDE = textwrap.dedent(
    """
    import json, os, sys, time
    from dsh_jupyter import Workspace
    cfg = json.loads(sys.argv[1])
    ws = Workspace(cfg["root"], session=cfg["session"], state_path=cfg["state"])
    def emit(r):
        print(json.dumps({"text": r.text, "value": r.value, "is_error": r.is_error}), flush=True)
    """
)


def child(code: str, **cfg) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", _PRELUDE + textwrap.dedent(code), json.dumps(cfg)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_child(code: str, timeout: float = 60, **cfg) -> list[dict]:
    p = subprocess.run(
        [sys.executable, "-c", _PRELUDE + textwrap.dedent(code), json.dumps(cfg)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert p.returncode == 0, p.stderr
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


@pytest.fixture
def cfg(root, state_file):
    return {"root": str(root), "state": str(state_file)}


def test_read_in_one_process_allows_edit_in_another(cfg, root):
    (root / "f.txt").write_text("hello world\n")
    (a,) = run_child('emit(ws.run("read", file_path="f.txt"))', session="shared", **cfg)
    assert not a["is_error"]
    (b,) = run_child(
        'emit(ws.run("edit", file_path="f.txt", old_string="world", new_string="there"))',
        session="shared",
        **cfg,
    )
    assert b["text"].split("\n")[0] == "The file f.txt has been updated successfully."
    assert (root / "f.txt").read_text() == "hello there\n"
    # another session in a third process still may not
    (c,) = run_child('emit(ws.run("write", file_path="f.txt", content="x"))', session="other", **cfg)
    assert c["value"]["code"] == "FS_NOT_OBSERVED"
    assert c["text"] == 'Error: cannot write "f.txt": read it first in this session'


def test_a_change_by_another_process_invalidates_the_observation(cfg, root, make_ws):
    (root / "f.txt").write_text("v1\n")
    ws = make_ws(session="mine")
    assert not ws.run("read", file_path="f.txt").is_error
    (b,) = run_child(
        'emit(ws.run("read", file_path="f.txt")); emit(ws.run("write", file_path="f.txt", content="v2\\n"))',
        session="theirs",
        **cfg,
    )[1:]
    assert b["text"] == "<path>f.txt</path>\n<type>file</type>\n<content>\nUpdated file\n</content>"
    r = ws.run("edit", file_path="f.txt", old_string="v", new_string="w")
    assert r.value == {
        "name": "FsError",
        "code": "FS_NOT_OBSERVED",
        "message": 'cannot write "f.txt": it changed since this session last read it; read it again',
    }


_RACER = """
    r0 = ws.run("read", file_path="f.txt")
    assert not r0.is_error, r0.text
    open(cfg["ready"], "w").close()
    deadline = time.monotonic() + 30
    while not os.path.exists(cfg["go"]):
        if time.monotonic() > deadline:
            raise SystemExit("no go signal")
        time.sleep(0.0005)
    emit(ws.run("edit", file_path="f.txt", old_string="base", new_string=cfg["session"]))
"""


@pytest.mark.parametrize("round_", range(4))
def test_two_sessions_racing_on_one_observed_version(cfg, root, tmp_path, round_):
    (root / "f.txt").write_text("value = base\n")
    sync = tmp_path / "sync"
    sync.mkdir()
    procs = []
    for name in ("racer_a", "racer_b"):
        procs.append(child(_RACER, session=name, ready=str(sync / f"{name}.ready"), go=str(sync / "go"), **cfg))
    deadline = time.monotonic() + 60
    while not all((sync / f"{n}.ready").exists() for n in ("racer_a", "racer_b")):
        assert time.monotonic() < deadline, "racers never got ready"
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.005)
    (sync / "go").touch()
    results = {}
    for name, p in zip(("racer_a", "racer_b"), procs):
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        results[name] = json.loads(out.strip().splitlines()[-1])
    winners = [n for n, r in results.items() if not r["is_error"]]
    losers = [n for n, r in results.items() if r["is_error"]]
    assert len(winners) == 1 and len(losers) == 1, results
    assert results[winners[0]]["text"].split("\n")[0] == "The file f.txt has been updated successfully."
    assert results[losers[0]]["value"] == {
        "name": "FsError",
        "code": "FS_NOT_OBSERVED",
        "message": 'cannot write "f.txt": it changed since this session last read it; read it again',
    }
    assert (root / "f.txt").read_text() == f"value = {winners[0]}\n"
    assert os.listdir(root) == ["f.txt"]


_WRITER = """
    r0 = ws.run("read", file_path="f.txt")
    assert not r0.is_error, r0.text
    content = "new line\\n" * cfg["lines"]
    print("writing", flush=True)
    emit(ws.run("write", file_path="f.txt", content=content))
"""


def test_writer_killed_mid_write_leaves_the_old_content_whole(cfg, root, make_ws):
    old = b"old line\n" * 10_000
    target = root / "f.txt"
    target.write_bytes(old)
    lines = 300_000_000 // 9  # ~300 MB of "new line\n"
    new_size = 9 * lines
    p = child(_WRITER, session="writer", lines=lines, **cfg)
    try:
        first = p.stdout.readline()
        assert first == "writing\n", p.stderr.read()
        # Kill once the temporary file exists, i.e. in the middle of writing the new bytes.
        deadline = time.monotonic() + 60
        while not any(n.endswith(".dsh-tmp") for n in os.listdir(root)):
            if p.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.001)
        time.sleep(0.15)
        finished_early = p.poll() is not None
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()
        p.stderr.close()
    assert p.returncode == -signal.SIGKILL or finished_early

    # the target is the same kind of thing it was, and whole: old, or (if it finished) new
    assert target.is_file() and not target.is_symlink()
    size = target.stat().st_size
    if size == len(old):
        assert target.read_bytes() == old
    else:
        assert size == new_size, f"partial file of {size} bytes"
        with open(target, "rb") as fh:
            block = b"new line\n" * (1 << 16)
            while True:
                data = fh.read(len(block))
                if not data:
                    break
                assert data == block[: len(data)]
    # the only thing that may remain beside it is the writer's own temporary file
    leftovers = [n for n in os.listdir(root) if n != "f.txt"]
    assert all(n.startswith(".f.txt.") and n.endswith(".dsh-tmp") for n in leftovers), leftovers
    for n in leftovers:
        os.unlink(root / n)

    # the gate was released by the kill: another writer gets through at once
    ws = make_ws(session="after")
    assert not ws.run("read", file_path="f.txt", limit=1).is_error
    t0 = time.monotonic()
    r = ws.run("write", file_path="f.txt", content="after\n")
    assert r.text == "<path>f.txt</path>\n<type>file</type>\n<content>\nUpdated file\n</content>"
    assert time.monotonic() - t0 < 5
    assert target.read_bytes() == b"after\n"
