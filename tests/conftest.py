"""Shared fixtures: a workspace factory over a real temporary tree, a tree builder, a hang guard.

Every workspace a test makes keeps its state file under the test's ``tmp_path``: a test must never
touch the user's default state file.

The tree builder (``build_tree``, ``Link``) is the one the benchmarks use too, in
``tests/trees.py``, beside the small workspace ``TREE`` the server, MCP and kernel tests serve;
any test module imports ``from trees import ...`` (and ``from conftest import build_tree, Link``
still works).
"""

from __future__ import annotations

import ast
import os
import random
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from trees import Link, build_tree  # tests/trees.py

from dsh_jupyter import Workspace
from dsh_jupyter.core.caches.stamps import COARSE_MARGIN_NS, MARGIN_NS


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The confinement root: ``tmp_path/root`` (its real path)."""
    r = tmp_path / "root"
    r.mkdir()
    return Path(os.path.realpath(r))


@pytest.fixture
def state_file(tmp_path: Path) -> Path:
    return tmp_path / "state" / "state.sqlite"


@pytest.fixture
def make_ws(root: Path, state_file: Path):
    """``make_ws(root=None, session="s1", state_path=None, **settings)`` -> Workspace."""

    def factory(root_dir=None, session: str = "s1", state_path=None, **settings) -> Workspace:
        return Workspace(
            root_dir if root_dir is not None else root,
            session=session,
            state_path=state_path if state_path is not None else state_file,
            **settings,
        )

    return factory


@pytest.fixture
def ws(make_ws) -> Workspace:
    return make_ws()


@pytest.fixture
def tree():
    """``tree(base, spec)``: the tree builder as a fixture."""
    return build_tree


@pytest.fixture
def link():
    return Link


@pytest.fixture
def marker() -> str:
    """A ``sleep`` duration no other process uses, so the test finds its stand-in rg in /proc
    (the hung searches of ``servers.hanging_rg_settings``)."""
    return f"60.{uuid.uuid4().int % 10**9:09d}"


def run_guarded(fn, timeout: float = 5.0):
    """Run ``fn()`` in a daemon thread; fail the test (instead of hanging) if it does not return."""
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # pragma: no cover - reported below
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        pytest.fail(f"call did not return within {timeout} s (it hangs)")
    if "error" in box:
        raise box["error"]
    return box["value"]


@pytest.fixture
def guarded():
    return run_guarded


def slow_imports_after(code: str) -> list[str]:
    """The nbformat and jsonschema modules a fresh Python has imported after running ``code``.
    Importing jsonschema builds the grammars of the format checkers installed beside it (2.6 s
    here), so the core keeps both out of a kernel's notebook reads and writes."""
    code += "\nprint(sorted(m for m in sys.modules if m.split('.')[0] in ('nbformat', 'jsonschema')))\n"
    done = subprocess.run([sys.executable, "-c", "import sys\n" + code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return ast.literal_eval(done.stdout.strip().splitlines()[-1])


def assert_error(result, code: str, message: str | None = None) -> None:
    """An error result with ``code`` (and exactly ``message``, when given)."""
    assert result.is_error, result.text
    assert result.value["code"] == code, result.value
    assert set(result.value) == {"name", "code", "message"}
    assert result.text == f"Error: {result.value['message']}"
    if message is not None:
        assert result.value["message"] == message, result.value["message"]


@pytest.fixture
def expect_error():
    return assert_error


def jupyter_folders_in(root: Path, monkeypatch) -> Path:
    """Jupyter's runtime, data and config folders (and IPython's) placed inside ``root`` and
    pointed to by their environment variables, as in a workspace that is someone's home; the
    runtime folder is returned for the files a test puts there."""
    runtime = root / ".local" / "share" / "jupyter" / "runtime"
    runtime.mkdir(parents=True)
    (root / ".jupyter").mkdir()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(runtime.parent))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(root / ".jupyter"))
    monkeypatch.setenv("IPYTHONDIR", str(root / ".ipython"))
    return runtime


def settle(path) -> None:
    """Wait until ``path``'s ctime is old enough for its stamp to prove a kept scan current."""
    st = os.stat(path)
    margin = MARGIN_NS if st.st_ctime_ns % 1_000_000_000 else COARSE_MARGIN_NS
    while time.time_ns() <= st.st_ctime_ns + margin + 1_000_000:
        time.sleep(0.01)


# --- Several processes (./dev test runs pytest-xdist with --dist loadfile) ---
# A module's tests share its servers, so a module runs in one process; the person-and-agent trials
# start a lab per mode, so each mode is a unit of its own and the two run side by side. The units
# that take longest (a hub and its users' environment, Binder's build, the trials, the races) are
# handed out first, the rest largest first, so no long unit starts last. The trials' base seed is
# chosen once, here, so every process replays the same run, and their counts come back from the
# processes to be printed once, at the end.

TRIALS_KEY = pytest.StashKey[list]()
TRIALS_MODULE = "tests/e2e/test_person_and_agent.py"
LONGEST_FIRST = ("tests/hub/test_hub.py", "tests/test_binder.py", TRIALS_MODULE, "tests/core/test_races.py")


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its module, or for a trial its module and mode."""
    module, _, rest = nodeid.partition("::")
    if module == TRIALS_MODULE and "[" in rest:
        return f"{module}::{rest.split('[', 1)[1].split('-', 1)[0]}"
    return module


def pytest_configure(config) -> None:
    if not hasattr(config, "workerinput"):  # the run itself, not one of its processes
        os.environ.setdefault("DSH_TRIALS_SEED", str(random.SystemRandom().randrange(10**6)))
        config.stash[TRIALS_KEY] = []


@pytest.hookimpl(trylast=True)  # after -m and -k chose
def pytest_collection_modifyitems(config, items) -> None:
    sizes: dict[str, int] = {}
    for item in items:
        sizes[unit_of(item.nodeid)] = sizes.get(unit_of(item.nodeid), 0) + 1

    def order(item) -> tuple[int, int]:
        unit = unit_of(item.nodeid)
        module = unit.partition("::")[0]
        return (LONGEST_FIRST.index(module) if module in LONGEST_FIRST else len(LONGEST_FIRST), -sizes[unit])

    items.sort(key=order)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class ByUnit(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    config.option.loadscopereorder = False  # the order above
    return ByUnit(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    found = getattr(node, "workeroutput", {}).get("dsh_trials")
    if found:
        node.config.stash[TRIALS_KEY].extend(found)


def pytest_terminal_summary(terminalreporter, config) -> None:
    records = config.stash.get(TRIALS_KEY, [])
    if records:
        from e2e.trials import Tally

        Tally.from_dicts(os.environ["DSH_TRIALS_SEED"], records).report(terminalreporter.write)
