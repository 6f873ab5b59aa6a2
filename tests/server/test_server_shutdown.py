"""A server with the extension stops promptly on SIGTERM, a search in flight and kernels running.

A real ``jupyter server`` whose rg never finishes (a stand-in that sleeps), two kernels, a grep
waiting on that rg; SIGTERM to the server process alone, as a service manager or Ctrl+C sends it.
Python's exit joins the executor's threads, so a search left running held the exit until its
timeout (about 30 s); the extension's stop cancels running calls, which kills their rg.
"""

from __future__ import annotations

import signal
import threading
import time

import pytest
from servers import processes_with, start_server

pytestmark = pytest.mark.slow


def test_sigterm_with_a_search_in_flight_exits_within_seconds(tmp_path, marker):
    script = tmp_path / "rg-hangs"
    script.write_text(f"#!/bin/sh\nexec sleep {marker}\n")
    script.chmod(0o755)
    server = start_server(tmp_path / "srv", extra_args=[f"--DshJupyter.rg_path={script}"])
    try:
        for _ in range(2):
            status, _ = server.request("POST", "api/kernels", {"name": "python3"})
            assert status == 201
        answers: list = []

        def grep() -> None:
            try:
                answers.append(server.request("POST", "dsh/api/tools/grep", {"args": {"pattern": "x"}}, timeout=60))
            except Exception as exc:  # the server may close the connection as it goes
                answers.append(exc)

        thread = threading.Thread(target=grep, daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_with(marker), "the search never started its rg"
        t0 = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(timeout=20)
        took = time.monotonic() - t0
        assert took < 10, f"the server took {took:.1f} s to exit"
        assert "cancelled 1 running call(s) at shutdown" in server.log_tail(20_000)
        deadline = time.monotonic() + 5
        while processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_with(marker) == [], "the search's rg outlived the server"
        thread.join(timeout=10)
    finally:
        server.stop()
