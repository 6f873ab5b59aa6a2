"""A second process that dates part of glob's paths, so dating runs on two cores.

Why it exists: glob's dated walk (``globtimes``) stats every path rg lists, about 2 µs a path in
this thread, and on a tree of 60,000 matches that dating, not rg's walk, is what the caller
waits for. Threads of one process do not help (each stat gives the interpreter up and takes it
back, and two threads fight over it), so half of each piece of rg's output is handed to a small
Python process that dates it the same way, beneath the same root descriptor
(``python -I -S core/rg/recheck.py FD``: the standard library only, started in about 10 ms).

It is started only once a walk has listed ``START_AFTER`` paths, so a small glob never pays for
it. A writer thread starts and feeds it, so this thread dates its own half meanwhile; the answer
comes back when the walk is over. If the helper cannot be started or its answer is not whole,
the paths it held are dated here instead (the result is the same, only slower), and no helper
is started again in this process: the reason is logged once.

What it must never do: change what glob answers. The helper applies ``Rechecker.mtimes``, the
same lookup as this thread, and a path it could not date is dropped as it would be here.
"""

from __future__ import annotations

import logging
import queue
import subprocess
import sys
import threading

from ..rg import recheck

__all__ = ["START_AFTER", "Helper", "usable"]

log = logging.getLogger(__name__)

START_AFTER = 4000  # paths listed before a helper is worth its start (about 10 ms of one core)
_broken = False  # a helper failed once (no interpreter to start, a package read from a zip...)


def usable() -> bool:
    """Whether a helper may be started: not after one has failed in this process."""
    return not _broken


def _give_up(why: str) -> None:
    global _broken
    if not _broken:
        _broken = True
        log.warning("dsh_jupyter: glob's dating helper %s; glob dates in this process from now on", why)


class Helper:
    """One dating process for one walk: ``send`` pieces of rg output, then ``answer()``."""

    def __init__(self, root_fd: int) -> None:
        self.sent = 0  # paths handed over
        self.failed: OSError | None = None
        self._root_fd = root_fd
        self._proc: subprocess.Popen | None = None
        self._stopping = False
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        # The writer thread starts the helper too: starting a process holds the calling thread
        # for several milliseconds, which this thread spends dating instead.
        self._writer = threading.Thread(target=self._write, name="dsh-glob-dater", daemon=True)
        self._writer.start()

    def _write(self) -> None:
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", recheck.__file__, str(self._root_fd)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                pass_fds=(self._root_fd,),
                close_fds=True,
            )
        except OSError as exc:
            self.failed = exc
            while self._queue.get() is not None:  # nothing is sent; ``answer`` says so
                pass
            return
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            while (piece := self._queue.get()) is not None:
                if not self._stopping:
                    stdin.write(piece)
        except OSError:  # the helper died; ``answer`` finds its output short
            while self._queue.get() is not None:
                pass
        finally:
            try:
                stdin.close()
            except OSError:
                pass

    def send(self, piece: bytes, count: int) -> None:
        """Hand over ``piece``: ``count`` whole NUL-ended paths of rg's output."""
        self._queue.put(piece)
        self.sent += count

    def answer(self):
        """``(times, real)``: numpy arrays of the time (ns) of every path sent, in order, and
        whether it is real (a regular file beneath the root); None if the helper did not answer
        them all (the caller dates them itself)."""
        import numpy as np  # a core dependency (through pandas); imported where it is needed

        self._queue.put(None)
        self._writer.join()
        proc = self._proc
        if proc is None:
            _give_up(f"could not start ({self.failed})")
            return None
        assert proc.stdout is not None
        out = proc.stdout.read()
        proc.stdout.close()
        code = proc.wait()
        if code != 0 or len(out) != self.sent * 9:
            _give_up(f"answered {len(out)} of {self.sent * 9} bytes (exit {code})")
            return None
        times = np.frombuffer(out, dtype=np.int64, count=self.sent)
        real = np.frombuffer(out, dtype=np.uint8, offset=self.sent * 8).astype(bool)
        return times, real

    def stop(self) -> None:
        """End the helper now (a walk that failed or was cancelled): killed first, so that a
        write to it cannot keep the writer thread waiting."""
        self._stopping = True
        self._queue.put(None)
        for _ in range(2):  # before the writer is joined, and once more if it started one meanwhile
            proc = self._proc
            if proc is not None and proc.poll() is None:
                proc.kill()
            if self._writer.is_alive():
                self._writer.join()
        proc = self._proc
        if proc is not None:
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
