"""``run_rg`` for an event loop: the same contract as ``rg.run_rg``, awaited instead of blocking.

The tools call ``rg.run_rg`` (on a worker thread where a server is involved); this variant is
for asyncio callers and is measured by ``benchmarks/bench_rg_runner.py``. rg writes into a pipe
enlarged to 1 MiB, read with ``loop.add_reader``; cancelling the awaiting task kills rg's group.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time

from .rg.runner import CHUNK, SETTLE_S, RgOutcome, _argv, _killpg, _missing, _group_alive, _Sink, scrubbed_env

__all__ = ["run_rg_async"]


def _grow_pipe(fd: int) -> int:
    """Ask for a CHUNK-sized pipe (Linux); return the capacity we ended up with."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, CHUNK)
        return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
    except (ImportError, AttributeError, OSError):
        return 1 << 16


async def _settle_async(pgid: int) -> None:
    if not _killpg(pgid):
        return
    end = time.monotonic() + SETTLE_S
    while _group_alive(pgid) and time.monotonic() < end:
        await asyncio.sleep(0.005)


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
        _grow_pipe(out_r)
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
        for fd in (out_r, err_r):
            loop.remove_reader(fd)
            os.close(fd)
    return sink.outcome(returncode, start, timed_out=timed_out, cancelled=False)
