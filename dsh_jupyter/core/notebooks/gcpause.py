"""The cyclic garbage collector kept off a notebook's parse: its objects go straight to the oldest generation.

Why it exists: ``json.loads`` of a big notebook makes tens of thousands of lists and dicts. With
the collector on, it runs every 700 of them, and on its older generations as they fill; every few
parses the oldest generation is full enough that it runs on the whole heap (the notebooks kept in
``caches.parsed`` included), which took 75-165 ms beside a 27 ms parse of a 4.4 MiB notebook. Yet
a parse makes no reference cycle: its objects are freed by their reference counts, and the
collector can only ever find them alive. So the collector is off during the parse, and after it
every object the parse made is moved to the oldest generation at once (``gc.freeze`` and
``gc.unfreeze`` together move every tracked object there, without looking at any): the young
generations are never walked over them, and they do not count towards the next whole-heap run.

How: the first of the threads parsing at once turns the collector off and runs it once on the
young generations (a few thousand objects at most: the program's own young garbage is collected
as it would have been; outside the lock, as a finalizer it runs may parse a notebook too); the
last to finish moves what was made meanwhile to the oldest generation and turns it on again.
Nothing changes when the program turned the collector off itself, and nothing is moved when it
froze objects of its own (``gc.get_freeze_count``): ``gc.unfreeze`` would thaw them.

What it must never do: leave the collector off after the last parse ends (an exception included),
turn on a collector it did not turn off, or keep anything frozen (a frozen object is never
collected). Another thread's objects made during a parse move to the oldest generation with it: a
cycle among them is collected at the next whole-heap run instead of a young one.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]

_lock = threading.Lock()
_holders = 0  # parses under way
_turned_off = False  # whether the first of them turned the collector off


@contextmanager
def collector_paused() -> Iterator[None]:
    """No collection while the block runs; what it made goes to the oldest generation after it.

    Other threads' blocks share the pause: the collector is on again when the last one ends.
    """
    global _holders, _turned_off
    first = False
    with _lock:
        if _holders == 0 and gc.isenabled():
            gc.disable()
            _turned_off = first = True
        _holders += 1
    try:
        if first:  # outside the lock: a finalizer it runs may parse a notebook too
            gc.collect(1)  # the young generations hold only what the block will make
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _turned_off:
                if gc.get_freeze_count() == 0:
                    gc.freeze()  # every tracked object to the permanent generation, none walked
                    gc.unfreeze()  # and from there to the oldest generation
                _turned_off = False
                gc.enable()
