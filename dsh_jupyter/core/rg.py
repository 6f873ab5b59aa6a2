"""The one place that starts ripgrep.

``glob`` and ``grep`` both run over ripgrep, and a search launched on behalf of a model or a
notebook user is untrusted work: it may be huge, slow or abandoned half-way. This runner gives
every caller the same bounded contract (a deadline, a cancel, a cap on stdout, a short stderr
tail) so the tools only ever decide *what* to ask rg, never *how* to survive it.

What it must never do:

* **never a shell** -- rg gets an argv list; no string is ever parsed by ``/bin/sh``;
* **never inherit rg configuration** -- the environment is rebuilt from scratch (PATH, HOME,
  locale), so ``RIPGREP_CONFIG_PATH`` and friends cannot inject options, and ``--no-config``
  is always the first argument;
* **never leave a process behind** -- rg runs in its own session/process group; a timeout,
  cancel or overflow SIGKILLs the whole group, the leader is always reaped, whatever rg leaves
  in its group when it exits is killed (so it cannot hold the pipes open), and the group is
  killed again on the way out whatever happened.

Standard library only: this module is part of the Jupyter-free core.
"""

from __future__ import annotations

import asyncio
import os
import selectors
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RgMissing", "RgOutcome", "find_rg", "run_rg", "run_rg_async", "scrubbed_env"]

CHUNK = 1 << 20  # read size; also the pipe capacity we ask the kernel for
STDERR_TAIL = 8 * 1024
STDERR_HEAD = 4 * 1024  # rg's first words say what kind of error it is (a regex, a glob, a file)
POLL_S = 0.05  # longest we go without looking at the deadline and the cancel event
NAP_S = 0.002  # pause after a small stdout read so the next one is large
SETTLE_S = 0.5  # how long we wait for SIGKILLed group members to actually die


class RgMissing(Exception):
    """The ripgrep binary could not be started (gone, or not executable)."""


@dataclass(frozen=True)
class RgOutcome:
    returncode: int | None  # None when killed by us
    stdout: bytes
    stderr_tail: str
    stderr_head: str = ""
    overflow: bool = False
    timed_out: bool = False
    cancelled: bool = False
    duration_s: float = 0.0

    def __repr__(self) -> str:
        # never the payload: asyncio and pytest repr results, and stdout can be many MB
        return (
            f"RgOutcome(returncode={self.returncode!r}, stdout=<{len(self.stdout)} bytes>, "
            f"stderr_tail={self.stderr_tail[-200:]!r}, overflow={self.overflow}, "
            f"timed_out={self.timed_out}, cancelled={self.cancelled}, "
            f"duration_s={self.duration_s:.3f})"
        )


def _is_exe(path: str | os.PathLike[str]) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_rg(rg_path: str | None = None) -> str | None:
    """The rg to use: the explicit setting (if executable), else the packaged one, else PATH."""
    if rg_path is not None:
        return rg_path if _is_exe(rg_path) else None
    candidates = [Path(sys.executable).parent / "rg"]
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidates.append(Path(scripts) / "rg")
    for candidate in candidates:
        if _is_exe(candidate):
            return str(candidate)
    return shutil.which("rg")


def scrubbed_env() -> dict[str, str]:
    """A from-scratch environment for rg: search path, home and a UTF-8 locale, nothing else."""
    env = {
        "PATH": os.environ.get("PATH") or os.defpath,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }
    home = os.environ.get("HOME")
    if home:
        env["HOME"] = home
    return env


def _argv(rg: str, args: list[str]) -> list[str]:
    # rg accepts a repeated --no-config, so "first argument" is the simple, unambiguous test
    # (a "--no-config" later on could be the value of -e or follow "--").
    args = list(args)
    if args[:1] != ["--no-config"]:
        args.insert(0, "--no-config")
    return [rg, *args]


def _missing(rg: str, cwd: str, exc: OSError) -> BaseException:
    if exc.filename is not None and os.fspath(exc.filename) == cwd:
        return exc  # the working directory is the problem, not the binary
    return RgMissing(f"ripgrep could not be started from {rg!r} ({exc.strerror or exc}).")


def _killpg(pgid: int, sig: int = signal.SIGKILL) -> bool:
    """Signal the whole group; False when it no longer exists."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _group_alive(pgid: int) -> bool:
    """Whether the group still has a member that is not a zombie waiting for init."""
    if not _killpg(pgid, 0):
        return False
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True  # no /proc: cannot tell zombies apart, assume alive
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _settle(pgid: int) -> None:
    if not _killpg(pgid):
        return
    end = time.monotonic() + SETTLE_S
    while _group_alive(pgid) and time.monotonic() < end:
        time.sleep(0.005)


async def _settle_async(pgid: int) -> None:
    if not _killpg(pgid):
        return
    end = time.monotonic() + SETTLE_S
    while _group_alive(pgid) and time.monotonic() < end:
        await asyncio.sleep(0.005)


def _grow_pipe(fd: int) -> int:
    """Ask for a CHUNK-sized pipe (Linux); return the capacity we ended up with."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, CHUNK)
        return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
    except (ImportError, AttributeError, OSError):
        return 1 << 16


class _Sink:
    """Collects stdout up to the cap (chunks, joined once) and a bounded stderr tail."""

    def __init__(self, max_stdout_bytes: int) -> None:
        self.chunks: list[bytes] = []
        self.room = max_stdout_bytes
        self.err = bytearray()
        self.head = bytearray()
        self.overflow = False

    def out(self, data: bytes) -> bool:
        """Keep ``data``; False (and only the part that fits kept) once the cap is exceeded."""
        if len(data) > self.room:
            self.chunks.append(data[: self.room])
            self.room = 0
            self.overflow = True
            return False
        self.chunks.append(data)
        self.room -= len(data)
        return True

    def errs(self, data: bytes) -> None:
        if len(self.head) < STDERR_HEAD:
            self.head += data[: STDERR_HEAD - len(self.head)]
        self.err += data
        del self.err[:-STDERR_TAIL]

    def outcome(self, returncode: int | None, start: float, **flags: bool) -> RgOutcome:
        killed = self.overflow or any(flags.values())
        return RgOutcome(
            returncode=None if killed else returncode,
            stdout=b"".join(self.chunks),
            stderr_tail=bytes(self.err).decode("utf-8", errors="replace"),
            stderr_head=bytes(self.head).decode("utf-8", errors="replace"),
            overflow=self.overflow,
            duration_s=time.monotonic() - start,
            **flags,
        )


def run_rg(
    rg: str, args: list[str], *, cwd: str, timeout_s: float, max_stdout_bytes: int,
    cancel: threading.Event | None = None, pass_fds: tuple[int, ...] = (),
    spawn: Callable[[Callable[[], subprocess.Popen]], subprocess.Popen] | None = None,
    stdin: int | None = None,
) -> RgOutcome:
    """Run rg to completion, deadline, cancel or stdout overflow, whichever comes first.

    ``cwd`` may be ``/proc/self/fd/N`` for a folder descriptor ``N`` this process holds (the
    child changes into it before rg starts); ``pass_fds`` keeps descriptors open for rg (a file
    it is given as ``/proc/self/fd/N``). ``spawn`` wraps the start of rg (the Landlock fence):
    it is called with a function that starts rg and must return what that returns. ``stdin`` is
    a descriptor rg reads as its standard input (``-``), e.g. text made for it; default: nothing.
    """
    argv = _argv(rg, args)
    start = time.monotonic()
    deadline = start + timeout_s
    # stdin is opened here: the thread a fence starts rg from may no longer open /dev/null.
    devnull = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)

    def popen() -> subprocess.Popen:
        return subprocess.Popen(
            argv, cwd=cwd, env=scrubbed_env(), stdin=devnull if stdin is None else stdin, pass_fds=pass_fds,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )

    try:
        proc = spawn(popen) if spawn is not None else popen()
    except (FileNotFoundError, PermissionError) as exc:
        raise _missing(rg, cwd, exc) from exc
    finally:
        os.close(devnull)
    pgid = proc.pid
    sink = _Sink(max_stdout_bytes)
    timed_out = cancelled = finished = False
    sel = selectors.DefaultSelector()
    try:
        out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()  # type: ignore[union-attr]
        small = _grow_pipe(out_fd) // 4
        sel.register(out_fd, selectors.EVENT_READ)
        sel.register(err_fd, selectors.EVENT_READ)
        while not sink.overflow:
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            wait_s = min(POLL_S, remaining)
            if not sel.get_map():  # both pipes at EOF: only the exit is left to wait for
                try:
                    proc.wait(wait_s)
                    finished = True
                    break
                except subprocess.TimeoutExpired:
                    continue
            events = sel.select(wait_s)
            if not events and proc.poll() is not None:
                _killpg(pgid)  # rg is gone; stragglers must not hold the pipes open
            for key, _ in events:
                data = os.read(key.fd, CHUNK)
                if not data:
                    sel.unregister(key.fd)
                elif key.fd == err_fd:
                    sink.errs(data)
                elif not sink.out(data):
                    break
                elif len(data) < small:
                    # rg writes in small pieces; letting them pile up for a moment turns
                    # tens of thousands of wake-ups into hundreds (a trickle this slow
                    # cannot fill the pipe meanwhile)
                    time.sleep(NAP_S)
    finally:
        if not finished:
            _killpg(pgid)
            proc.wait()
        sel.close()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
        _settle(pgid)
    return sink.outcome(proc.returncode, start, timed_out=timed_out, cancelled=cancelled)


async def run_rg_async(
    rg: str, args: list[str], *, cwd: str, timeout_s: float, max_stdout_bytes: int
) -> RgOutcome:
    """``run_rg`` for an event loop; cancelling the awaiting task kills rg, then re-raises.

    The pipes are our own, read with ``loop.add_reader`` and large ``os.read`` calls (no
    StreamReader buffering or flow control in between), which also means ``proc.wait()``
    returns on exit without waiting for the pipes to close, so stragglers can be killed.
    """
    argv = _argv(rg, args)
    start = time.monotonic()
    loop = asyncio.get_running_loop()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        small = _grow_pipe(out_r) // 4
        os.set_blocking(out_r, False)
        os.set_blocking(err_r, False)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=cwd, env=scrubbed_env(), stdin=subprocess.DEVNULL,
                stdout=out_w, stderr=err_w, start_new_session=True,
            )
        except (FileNotFoundError, PermissionError) as exc:
            raise _missing(rg, cwd, exc) from exc
        finally:
            os.close(out_w)
            os.close(err_w)
    except BaseException:
        os.close(out_r)
        os.close(err_r)
        raise
    pgid = proc.pid
    sink = _Sink(max_stdout_bytes)
    drained = loop.create_future()
    open_fds = {out_r, err_r}
    naps: dict[int, asyncio.TimerHandle] = {}

    def resume(fd: int) -> None:
        del naps[fd]
        loop.add_reader(fd, on_readable, fd)

    def on_readable(fd: int) -> None:
        try:
            data = os.read(fd, CHUNK)
        except BlockingIOError:
            return
        if data:
            if fd == err_r:
                sink.errs(data)
                return
            if sink.out(data):
                if len(data) < small:  # same batching as run_rg: pause reading for a moment
                    loop.remove_reader(fd)
                    naps[fd] = loop.call_later(NAP_S, resume, fd)
                return
            _killpg(pgid)  # overflow: stop reading stdout and kill the group
        loop.remove_reader(fd)
        open_fds.discard(fd)
        if not open_fds and not drained.done():
            drained.set_result(None)

    async def run() -> int:
        returncode = await proc.wait()
        _killpg(pgid)  # rg is gone; stragglers must not hold the pipes open
        await drained
        return returncode

    async def kill_and_reap() -> None:
        _killpg(pgid)
        try:
            await asyncio.wait_for(proc.wait(), 5)  # SIGKILLed: only a wedged kernel is slower
        except asyncio.TimeoutError:
            pass
        finally:
            await _settle_async(pgid)

    timed_out = False
    returncode: int | None = None
    try:
        loop.add_reader(out_r, on_readable, out_r)
        loop.add_reader(err_r, on_readable, err_r)
        try:
            returncode = await asyncio.wait_for(run(), timeout_s)
        except asyncio.TimeoutError:
            timed_out = True
            await kill_and_reap()
        except BaseException:  # CancelledError above all: kill, reap, re-raise
            reaper = asyncio.ensure_future(kill_and_reap())
            try:
                await asyncio.shield(reaper)
            except BaseException:
                pass
            raise
        await _settle_async(pgid)
    finally:
        for handle in naps.values():
            handle.cancel()
        for fd in (out_r, err_r):
            loop.remove_reader(fd)
            os.close(fd)
    return sink.outcome(returncode, start, timed_out=timed_out, cancelled=False)
