"""One page of a 50,000-entry directory over REST: ``/dsh/api/tools/list`` vs Jupyter's contents API.

Usage: python benchmarks/bench_rest_list.py [--runs N] [WORK_DIR]

Builds (once; reused when WORK_DIR already holds it) a directory of 50,000 empty files, starts a
real ``jupyter server`` subprocess on 127.0.0.1 with the extension (auto-enabled by its installed
config file) rooted at WORK_DIR, and times, as the median of N runs each (default 3), run
round-robin in the same server:

* ``POST /dsh/api/tools/list`` ``{"args": {"path": "big"}}`` -- one page (200 entries) plus the
  complete count, and
* ``GET /api/contents/big?content=1`` -- Jupyter's own listing, the whole directory as JSON,

then prints both figures, the response sizes and the ratio, and stops the server by its PID.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from bigtrees import build_tree, built_once, folder_of  # benchmarks/bigtrees.py

N_ENTRIES = 50_000
DONE = ".bench-rest-list-complete"


def build_dir(work: Path) -> Path:
    big = work / "tree" / "big"

    def write() -> None:
        print(f"creating {N_ENTRIES:,} files under {big} ...", flush=True)
        build_tree(big, folder_of(N_ENTRIES, name="file{:06d}.txt", folder_every=0))

    built_once(work / DONE, write)
    return big


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(work: Path, token: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_")}
    for name in ("config", "data", "runtime"):
        env[f"JUPYTER_{name.upper()}_DIR"] = str(work / f"jupyter-{name}")
    argv = [
        sys.executable,
        "-m",
        "jupyter",
        "server",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={work / 'tree'}",
        f"--DshJupyter.state_path={work / 'state.sqlite'}",
        f"--DshJupyter.spill_root={work / 'spills'}",
    ]
    with open(work / "server.log", "wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"jupyter server exited early; see {work / 'server.log'}")
        try:
            urllib.request.urlopen(url + "/api/status", timeout=2)
        except urllib.error.HTTPError:
            return proc, url
        except OSError:
            time.sleep(0.2)
            continue
        return proc, url
    stop_server(proc)
    sys.exit("jupyter server did not answer within 60 s")


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()  # by PID: this process started it
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def fetch(url: str, token: str, body: dict | None = None) -> bytes:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        url,
        data=data,
        method="GET" if body is None else "POST",
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=600) as resp:
        return resp.read()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("work_dir", nargs="?")
    opts = parser.parse_args()
    tmp = None
    if opts.work_dir:
        work = Path(opts.work_dir).resolve()
        work.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="bench-rest-list-")
        work = Path(tmp.name)
    build_dir(work)
    token = secrets.token_hex(16)
    proc, url = start_server(work, token)
    try:

        def dsh() -> bytes:
            return fetch(f"{url}/dsh/api/tools/list", token, {"args": {"path": "big"}})

        def contents() -> bytes:
            return fetch(f"{url}/api/contents/big?content=1", token)

        first = json.loads(dsh())
        assert first["value"]["totalEntries"] == N_ENTRIES, first["text"][-200:]
        contents()  # warm both paths (imports, page cache) before timing
        times: dict[str, list[float]] = {"dsh": [], "contents": []}
        sizes: dict[str, int] = {}
        for _ in range(opts.runs):
            for name, fn in (("dsh", dsh), ("contents", contents)):
                t0 = time.perf_counter()
                sizes[name] = len(fn())
                times[name].append(time.perf_counter() - t0)
        t_dsh, t_contents = (statistics.median(times[k]) for k in ("dsh", "contents"))
        footer = first["text"].rsplit("\n", 2)[-2]
        print(f"{N_ENTRIES:,}-entry directory, median of {opts.runs} runs, one server, 127.0.0.1")
        print(f"  POST /dsh/api/tools/list         {t_dsh * 1000:9.1f} ms  {sizes['dsh'] / 1024:9.1f} KiB")
        print(f"  GET  /api/contents/big?content=1 {t_contents * 1000:9.1f} ms  {sizes['contents'] / 1024:9.1f} KiB")
        print(f"  ratio contents/list: {t_contents / t_dsh:.1f}x time, {sizes['contents'] / sizes['dsh']:.1f}x bytes")
        print(f"  list footer: {footer}")
    finally:
        stop_server(proc)
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()
