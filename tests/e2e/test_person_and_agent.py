"""End to end: a person in JupyterLab and agents over REST and MCP work on one file and lose nothing.

Chromium plays the person (``person.py``: Playwright's keyboard, Ctrl+S, closing the tab); agents
call the tools over REST and over the server's MCP endpoint with the MCP SDK's client
(``agents.py``). Each scenario runs with real-time collaboration on (jupyter-collaboration: the
file is a shared document) and off (``--YDocExtension.disable_rtc=True``: the page's own copy,
reported by the extension), on a text file and on a notebook:

1. ``unsaved``: the person typed and did not save; the agent reads, then edits another line;
2. ``typing``: the person types on (a few characters every 30-150 ms, Ctrl+S now and then) while
   the agent reads and edits, several times;
3. ``saved``: the person typed and saved; the agent edits;
4. ``write``: the agent reads, the person types elsewhere (and saves, or not), the agent writes a
   whole new version;
5. ``move``: the agent moves the open file; its tab follows; the agent edits it at its new path;
   the person types and saves; exactly one copy exists, at the new path;
6. ``two_agents``: two sessions (one over REST, one over MCP) edit different lines at the same
   moment, several times, while the person types on.

A refused change (``FS_OPEN_UNSAVED``, ``FS_NOT_OBSERVED``, ``FS_OPEN_CONFLICT``,
``FS_OPEN_UNANSWERED``) changes nothing, and the agent reads again and retries. Every trial ends
with the person's save and checks (``trials.py``): every character typed and every change the
agents were told they made is on disk and in the browser, no refused change is, no dialog ever
appeared, a notebook validates, a moved file exists once. Timings come from a ``random.Random``
seeded per trial from ``DSH_TRIALS_SEED`` (a new base seed each run unless set; a failure names
it); ``TRIALS`` seeds per scenario, kind and mode. One lab per mode serves every trial, each on a
fresh file; notebooks share one running kernel, so no kernel starts per trial. The counts per
scenario and mode are printed at the end of the run (and written as JSON to ``DSH_TRIALS_REPORT``);
docs/server.md quotes them.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import random
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import TRIALS_KEY

from .agents import McpAgent, RestAgent
from .conftest import start_lab
from .person import Person
from .trials import Tally, Trial

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MODES = ("collab", "tabs")
SCENARIOS = ("unsaved", "typing", "saved", "write", "move", "two_agents")
KINDS = ("text", "notebook")
TRIALS = int(os.environ.get("DSH_TRIALS", "2"))  # seeds per scenario, kind and mode: 6 × 2 × 2 × 2 = 48 trials
BASE_SEED = os.environ.get("DSH_TRIALS_SEED") or str(random.SystemRandom().randrange(10**6))
_numbers = itertools.count(1)


@dataclass
class Side:
    """One mode's lab, the person's page in it, and the agents."""

    mode: str
    lab: object
    person: Person
    kernel_id: str
    language_info: dict
    rest: RestAgent
    mcp: McpAgent
    probe: RestAgent  # a session of its own that only looks (is the file open yet?)


@pytest.fixture(scope="session")
def tally(request):
    """Every trial's record, handed at the end to the run (``pytest_terminal_summary`` in
    tests/conftest.py prints the table once, whether the trials ran in one process or several)."""
    found = Tally(BASE_SEED)
    yield found
    records = [dataclasses.asdict(r) for r in found.records]
    if hasattr(request.config, "workeroutput"):  # one of several processes: back to the run
        request.config.workeroutput["dsh_trials"] = records
    else:
        request.config.stash[TRIALS_KEY].extend(records)


@pytest.fixture(scope="module", params=MODES)
def side(request, tmp_path_factory, browser):
    from ipykernel.ipkernel import IPythonKernel

    mode = request.param
    tmp = tmp_path_factory.mktemp(f"person-agent-{mode}")
    root = Path(os.path.realpath(tmp / "root"))
    root.mkdir()
    lab = start_lab(tmp, root, collaborative=mode == "collab")
    page = browser.new_page()
    page.set_default_timeout(60_000)
    agents: list = []
    try:
        status, kernel = lab.request("POST", "api/kernels", {"name": "python3"})
        assert status == 201, (status, kernel)
        person = Person(page, lab)
        person.start()
        agents = [RestAgent(lab, f"{mode}-rest"), McpAgent(lab, f"{mode}-mcp"), RestAgent(lab, f"{mode}-probe")]
        # the kernel's own language_info: a notebook that has it is not changed when it connects
        yield Side(mode, lab, person, kernel["id"], dict(IPythonKernel.language_info), *agents)
    finally:
        for agent in agents:
            agent.close()
        page.close()
        lab.stop()


def one_agent(t: Trial):
    """The agent of a one-agent scenario: over REST or over MCP, as the trial's seed says."""
    return t.rng.choice([t.side.rest, t.side.mcp])


def save_if_unsaved(t: Trial) -> None:
    if t.dirty():
        t.save()


def agent_loop(t: Trial, agent, who: str, until: threading.Event, seed: float, start=None) -> None:
    """An agent that reads and edits, again and again, until ``until`` is set (at least three
    times), pausing 50-300 ms before each. Both agents of ``two_agents`` leave the barrier
    together, so their calls meet; when one is done, the other goes on alone."""
    rng = random.Random(seed)
    rounds = 0
    try:
        while rounds < 3 or not until.is_set():
            rounds += 1
            if start is not None:
                try:
                    start.wait(60)
                except threading.BrokenBarrierError:
                    start = None  # the other agent is done: on alone
            time.sleep(rng.uniform(0.05, 0.3))
            t.attempt_edit(agent, who, rng)
    except Exception as exc:  # failed at the end of the trial, in the test's thread
        t.problem(f"agent {who} failed: {exc!r}")
    finally:
        if start is not None:
            start.abort()  # the other agent stops waiting for this one


# -- the scenarios ----------------------------------------------------------------------------------


def unsaved(t: Trial) -> None:
    agent = one_agent(t)
    t.type(t.rng.randint(6, 14))
    made = t.attempt_edit(agent, "A")
    if not t.collab:
        assert not made and t.changes[-1].code == "FS_OPEN_UNSAVED", t.changes[-1]
    if not made:
        assert t.edit_until_made(agent, "A", between=lambda: save_if_unsaved(t)), t.changes
    t.type(t.rng.randint(3, 8))


def typing(t: Trial) -> None:
    agent = one_agent(t)
    typed = threading.Event()
    worker = threading.Thread(target=agent_loop, args=(t, agent, "A", typed, t.rng.random()))
    worker.start()
    try:
        t.type_on(t.rng.uniform(2.0, 3.5), save_p=0.2)
    finally:
        typed.set()
        worker.join(120)
    t.save()
    assert t.edit_until_made(agent, "A"), t.changes


def saved(t: Trial) -> None:
    agent = one_agent(t)
    t.type(t.rng.randint(6, 14))
    t.save()
    assert t.attempt_edit(agent, "A"), t.changes  # nothing unsaved, nothing typed since the read
    t.type(t.rng.randint(3, 8))


def meanwhile(t: Trial, call, n: int):
    """``call()`` on a thread, 0-300 ms after the person starts typing ``n`` characters at the end
    of their line: what it answers."""
    delay = t.rng.uniform(0, 0.3)
    box: dict = {}

    def run() -> None:
        time.sleep(delay)
        try:
            box["made"] = call()
        except BaseException as exc:  # raised again in the test's thread
            box["error"] = exc

    t.click()
    worker = threading.Thread(target=run)
    worker.start()
    try:
        t.type(n, click=False)
    finally:
        worker.join(120)
    if "error" in box:
        raise box["error"]
    return box["made"]


def write(t: Trial) -> None:
    agent = one_agent(t)
    read = t.read(agent)
    content, tag = t.new_version(read, "A")
    if t.rng.random() < 0.5:  # the write lands while the person types
        made = meanwhile(t, lambda: t.write(agent, "A", content, tag), t.rng.randint(6, 14))
    else:
        t.type(t.rng.randint(6, 14))
        if t.rng.random() < 0.5:
            t.save()
        made = t.write(agent, "A", content, tag)
        if not t.collab:  # unsaved typing refuses; a save since the read makes the read stale
            assert not made and t.changes[-1].code in ("FS_OPEN_UNSAVED", "FS_NOT_OBSERVED"), t.changes[-1]
    for _ in range(3):
        if made:
            break
        save_if_unsaved(t)
        content, tag = t.new_version(t.read(agent), "A")
        made = t.write(agent, "A", content, tag)
    assert made, t.changes
    t.type(t.rng.randint(3, 8))


def move(t: Trial) -> None:
    agent = one_agent(t)
    stem, suffix = t.path.rsplit(".", 1)
    destination = t.rng.choice([f"moved-{t.path}", f"{stem}-moved/{stem}.{suffix}"])
    if t.rng.random() < 0.5:  # the move lands while the person types
        made = meanwhile(t, lambda: t.move(agent, destination), t.rng.randint(6, 14))
    else:
        t.type(t.rng.randint(6, 14))
        if t.rng.random() < 0.5:
            t.save()
        made = t.move(agent, destination)
    if not made:  # without collaboration, unsaved typing refuses: its tab would save it at the old path
        assert not t.collab and t.changes[-1].code == "FS_OPEN_UNSAVED", t.changes[-1]
        t.save()
        # the page reports the save a moment after it: an agent refused meanwhile tries again
        for _ in range(4):
            made = t.move(agent, destination)
            if made:
                break
            assert t.changes[-1].code == "FS_OPEN_UNSAVED", t.changes[-1]
            time.sleep(0.5)
            save_if_unsaved(t)
        assert made, t.changes
    t.person.wait(lambda: t.person.seen(destination), timeout=30, what=f"the tab following {destination}")
    assert t.edit_until_made(agent, "A", between=lambda: save_if_unsaved(t)), t.changes
    t.type(t.rng.randint(3, 8))


def two_agents(t: Trial) -> None:
    first, second = t.side.rest, t.side.mcp
    typed = threading.Event()
    start = threading.Barrier(2)
    workers = [
        threading.Thread(target=agent_loop, args=(t, first, "A", typed, t.rng.random(), start)),
        threading.Thread(target=agent_loop, args=(t, second, "B", typed, t.rng.random(), start)),
    ]
    for w in workers:
        w.start()
    try:
        t.type_on(t.rng.uniform(2.0, 3.5), save_p=0.2)
    finally:
        typed.set()
        for w in workers:
            w.join(120)
    t.save()
    assert t.edit_until_made(first, "A"), t.changes
    assert t.edit_until_made(second, "B"), t.changes


PLAYS = {
    "unsaved": unsaved,
    "typing": typing,
    "saved": saved,
    "write": write,
    "move": move,
    "two_agents": two_agents,
}


@pytest.mark.parametrize("trial", range(TRIALS), ids=lambda n: f"t{n}")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_person_and_agents_lose_nothing(side, scenario, kind, trial, tally):
    seed = f"{BASE_SEED}:{side.mode}:{scenario}:{kind}:{trial}"
    print(f"seed {seed} (DSH_TRIALS_SEED={BASE_SEED} replays this run)")
    t = Trial(side, scenario, kind, random.Random(seed), seed, next(_numbers))
    try:
        t.create()
        t.open()
        PLAYS[scenario](t)
        t.finish()
    except AssertionError as exc:
        t.record.failure = str(exc)[:500]
        raise AssertionError(f"[seed {seed}; replay with DSH_TRIALS_SEED={BASE_SEED}] {exc}") from exc
    finally:
        tally.add(t.record)
        side.person.dismiss_dialogs()
        side.person.page.evaluate(
            """() => { for (const w of [...window.jupyterapp.shell.widgets('main')]) {
                 if (w.context) { w.context.model.dirty = false; } w.dispose(); } }"""
        )
