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
  in its group when it exits is killed (so it cannot hold stdout or stderr), and the group is
  killed again on the way out whatever happened.

Standard library only: this module is part of the Jupyter-free core.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RgMissing", "RgOutcome", "find_rg", "memory_file", "run_rg", "scrubbed_env"]

CHUNK = 1 << 20  # read size (rgasync: also the pipe capacity it asks the kernel for)
STDERR_TAIL = 8 * 1024
STDERR_HEAD = 4 * 1024  # rg's first words say what kind of error it is (a regex, a glob, a file)
POLL_S = 0.05  # longest we go without looking at the deadline and the cancel event
# With a ``consume``r, rg's output is taken this often, so the caller's work on it (grep's parse,
# glob's dating) runs while rg still walks instead of after it.
POLL_STREAM_S = 0.005
SETTLE_S = 0.5  # how long we wait for SIGKILLed group members to actually die
# rg gets a process group of its own (killed whole), not a session of its own: with the kernel's
# autogroup scheduling a new session is a new scheduling group, and on a busy machine rg's walker
# threads then used a third more CPU for the same walk (``rg --files`` on 100,000 paths: 166 ms
# instead of 122-137 ms, medians of 11). Python 3.10 has no ``process_group``: a session there.
_OWN_GROUP: dict = {"process_group": 0} if sys.version_info >= (3, 11) else {"start_new_session": True}


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


def memory_file(name: str) -> int:
    """An anonymous file (rg's stdout, or text made for rg to read): a memfd, else an unlinked
    temporary file."""
    try:
        return os.memfd_create(name, os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        fd, path = tempfile.mkstemp(prefix="dsh-rg-")
        os.unlink(path)
        return fd


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _drain(fd: int, sink: _Sink) -> bool:
    """Read what stderr holds now (non-blocking); False at its EOF."""
    while True:
        try:
            data = os.read(fd, CHUNK)
        except BlockingIOError:
            return True
        if not data:
            return False
        sink.errs(data)


class _Sink:
    """Collects stdout up to the cap (chunks, joined once) and a bounded stderr tail."""

    def __init__(self, max_stdout_bytes: int, keep: bool = True) -> None:
        self.chunks: list[bytes] = []
        self.keep = keep
        self.room = max_stdout_bytes
        self.err = bytearray()
        self.head = bytearray()
        self.overflow = False

    def out(self, data: bytes) -> bool:
        """Keep ``data``; False (and only the part that fits kept) once the cap is exceeded."""
        if len(data) > self.room:
            if self.keep:
                self.chunks.append(data[: self.room])
            self.room = 0
            self.overflow = True
            return False
        if self.keep:
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
    rg: str,
    args: list[str],
    *,
    cwd: str,
    timeout_s: float,
    max_stdout_bytes: int,
    cancel: threading.Event | None = None,
    pass_fds: tuple[int, ...] = (),
    spawn: Callable[[Callable[[], subprocess.Popen]], subprocess.Popen] | None = None,
    consume: Callable[[bytes], None] | None = None,
    stdin: int | None = None,
    keep_stdout: bool = True,
    stdout: int | None = None,
) -> RgOutcome:
    """Run rg to completion, deadline, cancel or stdout overflow, whichever comes first.

    ``cwd`` may be ``/proc/self/fd/N`` for a folder descriptor ``N`` this process holds (the
    child changes into it before rg starts); ``pass_fds`` keeps descriptors open for rg (a file
    it is given as ``/proc/self/fd/N``). ``spawn`` wraps the start of rg (the Landlock fence):
    it is called with a function that starts rg and must return what that returns. ``consume``
    is handed each piece of stdout as it arrives (within the cap), so a caller can parse while rg
    still runs; the outcome's ``stdout`` holds it all the same unless ``keep_stdout`` is False
    (then it is empty: the caller has what it needs, and a big output is not copied again). ``stdin``
    is a descriptor rg reads as its standard input (``-``), e.g. text made for it; default: nothing.
    ``stdout`` is a descriptor rg writes to instead (the write end of a pipe another rg reads:
    what rg writes there is neither seen here nor capped, so the reader's own run caps it); the
    outcome's stdout is then empty and ``consume`` is not called.
    """
    start = time.monotonic()
    proc, out_fd = _start(rg, _argv(rg, args), cwd, stdin, pass_fds, spawn, stdout)
    sink = _Sink(max_stdout_bytes, keep=keep_stdout or consume is None)
    err_fd = proc.stderr.fileno()  # type: ignore[union-attr]
    os.set_blocking(err_fd, False)
    exited = _pidfd(proc.pid)  # readable once rg has exited (None: the kernel has no pidfd)
    watch = _Watch(proc, out_fd if stdout is None else None, err_fd, exited, sink, consume)
    try:
        watch.run(start + timeout_s, cancel)
    finally:
        if not watch.finished:
            _killpg(proc.pid)
            proc.wait()
        _settle(proc.pid)
        _drain(err_fd, sink)
        for fd in (out_fd if stdout is None else None, exited):
            if fd is not None:
                os.close(fd)
        proc.stderr.close()  # type: ignore[union-attr]
    return sink.outcome(proc.returncode, start, timed_out=watch.timed_out, cancelled=watch.cancelled)


def _start(
    rg: str,
    argv: list[str],
    cwd: str,
    stdin: int | None,
    pass_fds: tuple[int, ...],
    spawn: Callable[[Callable[[], subprocess.Popen]], subprocess.Popen] | None,
    stdout: int | None = None,
) -> tuple[subprocess.Popen, int]:
    """Start rg in its own process group; its stdout goes to an anonymous in-memory file (or to
    ``stdout``, a descriptor the caller holds and closes).

    Not a pipe to this process: rg writes without waking it (a pipe woke it for each of tens of
    thousands of small writes), and ``_Watch`` sleeps in ``select()`` until rg exits, writes to
    stderr, or ``POLL_S`` passes, then takes what rg added.
    """
    # stdin is opened here: the thread a fence starts rg from may no longer open /dev/null.
    devnull = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    out_fd = memory_file("rg-stdout") if stdout is None else stdout

    def popen() -> subprocess.Popen:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            env=scrubbed_env(),
            stdin=devnull if stdin is None else stdin,
            pass_fds=pass_fds,
            stdout=out_fd,
            stderr=subprocess.PIPE,
            **_OWN_GROUP,
        )

    try:
        return (spawn(popen) if spawn is not None else popen()), out_fd
    except BaseException as exc:
        if stdout is None:
            os.close(out_fd)
        if isinstance(exc, (FileNotFoundError, PermissionError)):
            raise _missing(rg, cwd, exc) from exc
        raise
    finally:
        os.close(devnull)


class _Watch:
    """Wait for a running rg: hand on its stdout as it grows, keep its stderr, stop at the first
    of exit, deadline, cancel or overflow (``finished``, ``timed_out``, ``cancelled`` say which)."""

    def __init__(
        self,
        proc: subprocess.Popen,
        out_fd: int | None,
        err_fd: int,
        exited: int | None,
        sink: _Sink,
        consume: Callable[[bytes], None] | None,
    ) -> None:
        self.proc, self.out_fd, self.err_fd, self.exited = proc, out_fd, err_fd, exited
        self.sink, self.consume = sink, consume
        self.poll = POLL_S if consume is None else POLL_STREAM_S
        self.taken = 0  # bytes of stdout handed on so far
        self.err_open = True
        self.finished = self.timed_out = self.cancelled = False

    def take(self) -> bool:
        """Hand on what rg wrote since the last look; False once the cap is exceeded."""
        if self.out_fd is None:  # rg writes to the caller's descriptor
            return True
        size = os.fstat(self.out_fd).st_size
        if size <= self.taken:
            return True
        data = os.pread(self.out_fd, min(size, self.taken + self.sink.room + 1) - self.taken, self.taken)
        self.taken += len(data)
        room = self.sink.room
        fits = self.sink.out(data)
        if self.consume is not None:  # over the cap, the part within it is still handed on
            self.consume(data if fits else data[:room])
        return fits

    def run(self, deadline: float, cancel: threading.Event | None) -> None:
        while True:
            if cancel is not None and cancel.is_set():
                self.cancelled = True
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.timed_out = True
                return
            watch = [fd for fd in (self.exited, self.err_fd if self.err_open else None) if fd is not None]
            if watch:
                select.select(watch, [], [], min(self.poll, remaining))
            else:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(min(self.poll, remaining))
            if self.err_open:
                self.err_open = _drain(self.err_fd, self.sink)
            done = self.proc.poll() is not None
            if not self.take():
                return
            if done:  # everything rg wrote is in the file now; stragglers are killed by the caller
                self.finished = True
                return
