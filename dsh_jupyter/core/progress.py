"""How far the calls running now got (and a search's first matches), each seen only by the caller who started it.

Why it exists: a person's search panel shows "1,204 matches in 310 files so far" while its search
runs, by asking about the call under a name of its own choosing (a progress id). A name a client
chooses is a name another client can choose too, so a call's progress is kept under who started it
(``Caller.identity``) and its id: another caller asking for the same id finds nothing running, and
another caller's call under the same id reports into its own entry, never into this one.

What it must never do: show or change one caller's progress for another, keep anything for a
caller nothing identifies (``identity`` None), keep a call's entry after the call answered, or let
a call that ended take away the entry of a newer call of the same caller under the same id. It
holds only the calls running now, in memory; it touches no file and no state.
"""

from __future__ import annotations

import threading

__all__ = ["ProgressBoard", "Reporter"]


class Reporter:
    """One running call's entry: ``report(text)`` says how far it got; ``end()`` forgets it."""

    def __init__(self, board: ProgressBoard, key: tuple[str, str]) -> None:
        self._board, self._key = board, key
        self.text = ""
        self.rows: list[dict] | None = None

    def report(self, text: str) -> None:
        self.text = text  # read by ``ProgressBoard.get``; a replaced entry is read by nobody

    def preview(self, rows: list[dict]) -> None:
        """A running search's first matches (``tools.grep.early``), read by ``ProgressBoard.rows``."""
        self.rows = rows

    def end(self) -> None:
        self._board._forget(self._key, self)


class ProgressBoard:
    """The progress of the calls running now, under (who started it, its progress id)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[tuple[str, str], Reporter] = {}

    def start(self, identity: str | None, progress_id: str) -> Reporter | None:
        """An entry for a call ``identity`` starts under ``progress_id`` (None: nothing is kept).

        A call of the same caller under an id still in use takes it over: the id then answers
        for the newer call, and the older one's reports and end leave it alone.
        """
        if identity is None:
            return None
        key = (identity, progress_id)
        reporter = Reporter(self, key)
        with self._lock:
            self._running[key] = reporter
        return reporter

    def get(self, identity: str | None, progress_id: str) -> tuple[bool, str | None]:
        """``(running, progress)`` of ``identity``'s call under ``progress_id``; another's is not running."""
        if identity is None:
            return False, None
        with self._lock:
            reporter = self._running.get((identity, progress_id))
        if reporter is None:
            return False, None
        return True, reporter.text or None

    def rows(self, identity: str | None, progress_id: str) -> list[dict] | None:
        """The first matches ``identity``'s running call under ``progress_id`` reported; None if none."""
        if identity is None:
            return None
        with self._lock:
            reporter = self._running.get((identity, progress_id))
        return None if reporter is None else reporter.rows

    def _forget(self, key: tuple[str, str], reporter: Reporter) -> None:
        with self._lock:
            if self._running.get(key) is reporter:
                del self._running[key]

    def __len__(self) -> int:
        with self._lock:
            return len(self._running)
