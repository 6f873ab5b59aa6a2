"""The collector held off a notebook's parse: on again after it, its objects moved to the oldest
generation, a program's own choices (collector off, objects frozen) left as they were."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

from dsh_jupyter.core.notebooks.format import parse_notebook
from dsh_jupyter.core.notebooks.gcpause import collector_paused


@pytest.fixture(autouse=True)
def collector_restored():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def in_generation(obj: object, generation: int) -> bool:
    return any(o is obj for o in gc.get_objects(generation=generation))


def test_the_block_runs_with_the_collector_off_and_its_objects_end_in_the_oldest_generation():
    with collector_paused():
        assert not gc.isenabled()
        made = [[i] for i in range(10)]
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0  # nothing is left frozen
    assert in_generation(made, 2) and not in_generation(made, 0)
    assert all(in_generation(inner, 2) for inner in made[:3])


def test_young_garbage_from_before_is_collected_first():
    class Node:
        pass

    gc.collect()
    node = Node()
    node.me = node  # a cycle: only the collector frees it
    gone = weakref.ref(node)
    del node
    assert gone() is not None
    with collector_paused():
        assert gone() is None  # collected as a young generation's run would have, not moved to the oldest


def test_the_collector_is_on_again_after_an_exception():
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("the parse failed")
    assert gc.isenabled()


def test_a_collector_the_program_turned_off_stays_off_and_nothing_is_moved():
    gc.disable()
    with collector_paused():
        made = [[1], [2]]
    assert not gc.isenabled()
    assert in_generation(made, 0)


def test_objects_the_program_froze_stay_frozen():
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with collector_paused():
            made = [[1]]
        assert gc.get_freeze_count() == frozen
        assert gc.isenabled()
        assert in_generation(made, 0)  # not moved: gc.unfreeze would have thawed the program's objects
    finally:
        gc.unfreeze()


def test_two_threads_share_the_pause_and_the_last_to_end_turns_the_collector_on():
    entered, leave = threading.Event(), threading.Event()

    def other() -> None:
        with collector_paused():
            entered.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    try:
        assert entered.wait(10)
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the other thread's parse is still under way
    finally:
        leave.set()
        thread.join(10)
    assert gc.isenabled()


def test_a_parsed_notebook_leaves_the_collector_on_and_nothing_frozen():
    raw = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    nb = parse_notebook(raw)
    assert nb.data["nbformat"] == 4
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert in_generation(nb.data, 2)


def test_a_finalizer_that_parses_a_notebook_while_young_garbage_is_collected_does_not_wait_on_itself():
    raw = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    parsed: list[object] = []

    class Parses:
        def __del__(self) -> None:
            parsed.append(parse_notebook(raw))

    def run() -> None:
        gc.collect()
        node = Parses()
        node.me = node  # only the collector frees it: in the young collection the pause starts with
        del node
        with collector_paused():
            pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive()
    assert len(parsed) == 1 and gc.isenabled() and gc.get_freeze_count() == 0
