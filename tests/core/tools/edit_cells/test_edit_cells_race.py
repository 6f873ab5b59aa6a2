"""``edit_cells`` from two processes at once on one observed version: exactly one wins, the
other is refused, and the notebook holds the winner's change whole (nothing half-written, no
temporary file left)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import nbformat
import pytest
from nbformat import v4

_RACER = textwrap.dedent(
    """
    import json, os, sys, time
    from dsh_jupyter import Workspace
    cfg = json.loads(sys.argv[1])
    ws = Workspace(cfg["root"], session=cfg["session"], state_path=cfg["state"])
    r0 = ws.run("read", file_path="nb.ipynb")
    assert not r0.is_error, r0.text
    open(cfg["ready"], "w").close()
    deadline = time.monotonic() + 30
    while not os.path.exists(cfg["go"]):
        if time.monotonic() > deadline:
            raise SystemExit("no go signal")
        time.sleep(0.0005)
    ops = [
        {"op": "insert", "cell_type": "markdown", "source": cfg["session"], "at": "start"},
        {"op": "delete", "cell_id": "b"},
    ]
    r = ws.run("edit_cells", file_path="nb.ipynb", operations=ops)
    print(json.dumps({"text": r.text, "value": r.value, "is_error": r.is_error}), flush=True)
    """
)


@pytest.mark.parametrize("round_", range(3))
def test_two_sessions_racing_on_one_observed_version(root, state_file, tmp_path, round_):
    nbformat.write(
        v4.new_notebook(cells=[v4.new_code_cell("a", id="a"), v4.new_code_cell("b", id="b")]), str(root / "nb.ipynb")
    )
    sync = tmp_path / "sync"
    sync.mkdir()
    names = ("racer_a", "racer_b")
    procs = []
    for name in names:
        cfg = {
            "root": str(root),
            "state": str(state_file),
            "session": name,
            "ready": str(sync / f"{name}.ready"),
            "go": str(sync / "go"),
        }
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", _RACER, json.dumps(cfg)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    deadline = time.monotonic() + 60
    while not all((sync / f"{n}.ready").exists() for n in names):
        assert time.monotonic() < deadline, "racers never got ready"
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.005)
    (sync / "go").touch()
    results = {}
    for name, p in zip(names, procs):
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        results[name] = json.loads(out.strip().splitlines()[-1])
    winners = [n for n, r in results.items() if not r["is_error"]]
    losers = [n for n, r in results.items() if r["is_error"]]
    assert len(winners) == 1 and len(losers) == 1, results
    assert results[winners[0]]["text"].startswith(
        "The notebook nb.ipynb has been updated successfully: 2 operations.\n"
    )
    assert results[losers[0]]["value"] == {
        "name": "FsError",
        "code": "FS_NOT_OBSERVED",
        "message": 'cannot write "nb.ipynb": it changed since this session last read it; read it again',
    }
    nb = nbformat.read(str(root / "nb.ipynb"), as_version=nbformat.NO_CONVERT)
    nbformat.validate(nb)
    assert [(c.cell_type, c.source) for c in nb.cells] == [("markdown", winners[0]), ("code", "a")]
    assert os.listdir(root) == ["nb.ipynb"]
