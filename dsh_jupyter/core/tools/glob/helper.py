"""A second process that dates part of glob's paths, so dating runs on two cores.

Why it exists: glob's dated walk (``dating``) stats every path rg lists. Where the compiled
dater (``fs/mtimes``) is missing, that costs about 2 µs a path in this thread, and on a tree of
60,000 matches dating, not rg's walk, is what the caller waits for. (With the compiled dater no
helper is started: it keeps pace with the walk alone.) Threads of one process do not help (each
stat gives the interpreter up and takes it back, and two threads fight over it), so half of
each piece of rg's output is handed to a small Python process that dates it the same way,
beneath the same root descriptor (``python -I -S core/rg/recheck.py FD``: the standard library
only, started in about 10 ms).

It is started only once a walk has listed ``START_AFTER`` paths, so a small glob never pays for
it. A writer thread starts and feeds it, so this thread dates its own half meanwhile; the answer
comes back when the walk is over. The helper's half is queued in small pieces, and when the walk
is over the pieces not yet handed to it are taken back and dated here while it finishes the
rest: however the two cores were shared during the walk, neither side then waits long for the
other. It leaves with ``os._exit`` once its answer is written, so its reader does not wait for an
interpreter's teardown. If the helper cannot be started or its answer is not whole,
the paths it held are dated here instead (the result is the same, only slower), and no helper
is started again in this process: the reason is logged once.

What it must never do: change what glob answers. The helper applies ``Rechecker.mtimes``, the
same lookup as this thread, and a path it could not date is dropped (and counted) as it would
be here.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from collections import deque

from ...rg import recheck

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
    """One dating process for one walk: ``send`` pieces of rg output, ``take_back()`` what it has
    not been handed yet, then ``answer()``."""

    def __init__(self, root_fd: int) -> None:
        self.sent = 0  # paths handed over (written, or being written, to the helper)
        self.failed: OSError | None = None
        self._root_fd = root_fd
        self._proc: subprocess.Popen | None = None
        self._pending: deque[tuple[bytes, int]] = deque()  # pieces not yet handed over
        self._closed = False  # no more pieces: the writer ends once it has handed over its piece
        self._ready = threading.Condition()
        # The writer thread starts the helper too: starting a process holds the calling thread
        # for several milliseconds, which this thread spends dating instead.
        self._writer = threading.Thread(target=self._write, name="dsh-glob-dater", daemon=True)
        self._writer.start()

    def _next(self) -> bytes | None:
        """The next piece to hand over, counted as sent; None once closed."""
        with self._ready:
            while not self._pending and not self._closed:
                self._ready.wait()
            if not self._pending:  # closed, and ``take_back`` took what was left
                return None
            piece, count = self._pending.popleft()
            self.sent += count
            return piece

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
            self.failed = exc  # nothing is handed over: ``take_back`` returns every piece
            return
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            while (piece := self._next()) is not None:
                stdin.write(piece)
        except OSError:  # the helper died; ``answer`` finds its output short
            pass
        finally:
            try:
                stdin.close()
            except OSError:
                pass

    def send(self, piece: bytes, count: int) -> None:
        """Queue ``piece``, ``count`` whole NUL-ended paths of rg's output, for the helper."""
        with self._ready:
            self._pending.append((piece, count))
            self._ready.notify()

    def take_back(self) -> int:
        """Close the queue and return how many pieces, the last ones sent, were never handed
        over: the caller dates those itself while the helper finishes the rest."""
        with self._ready:
            self._closed = True
            back = len(self._pending)
            self._pending.clear()
            self._ready.notify()
        return back

    def answer(self):
        """``(times, real, undated)``: numpy arrays of the time (ns) of every path handed over,
        in order, and of whether it is real (a regular file beneath the root), then the number of
        those paths that could not be looked at; None if the helper did not answer them all (the
        caller dates them itself). Call ``take_back`` first."""
        import numpy as np  # a core dependency (through pandas); imported where it is needed

        self.take_back()
        self._writer.join()
        proc = self._proc
        if proc is None:
            _give_up(f"could not start ({self.failed})")
            return None
        assert proc.stdout is not None
        out = proc.stdout.read()
        proc.stdout.close()
        code = proc.wait()
        if code != 0 or len(out) != self.sent * 9 + 8:
            _give_up(f"answered {len(out)} of {self.sent * 9 + 8} bytes (exit {code})")
            return None
        times = np.frombuffer(out, dtype=np.int64, count=self.sent)
        real = np.frombuffer(out, dtype=np.uint8, offset=self.sent * 8, count=self.sent).astype(bool)
        undated = int(np.frombuffer(out, dtype=np.int64, offset=self.sent * 9, count=1)[0])
        return times, real, undated

    def stop(self) -> None:
        """End the helper now (a walk that failed or was cancelled): killed first, so that a
        write to it cannot keep the writer thread waiting."""
        self.take_back()
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
