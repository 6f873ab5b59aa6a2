"""The spill store: complete results of over-cap searches, saved for the model to page through.

A search page is bounded; the spill is what makes the rest recoverable. Files live in a
per-session folder of the spill root -- outside the workspace by default -- and are indexed in
the state store so they can be listed per session and deleted with it. Saving is best effort:
a spill that cannot be written turns the footer into "could not be saved", never the search into
an error. ``read`` and ``grep`` may open spills; ``write`` and ``edit`` may not.
"""

from __future__ import annotations

import logging
import os
import time
from urllib.parse import quote

from .fsio import atomic_write

__all__ = ["SpillStore", "session_folder"]

log = logging.getLogger(__name__)


def session_folder(session: str) -> str:
    """A folder name for any session id (``session-`` prefix: never ``.`` or ``..``)."""
    return "session-" + quote(session, safe="")


class SpillStore:
    def __init__(self, root: str, store) -> None:
        self.root = os.path.realpath(root)
        self.store = store

    def save(self, session: str, call_id: str, tool: str, text: str) -> str | None:
        """Save ``text`` and return its locator (an absolute path), or None if it could not be."""
        try:
            folder = os.path.join(self.root, session_folder(session))
            os.makedirs(folder, mode=0o700, exist_ok=True)
            locator = os.path.join(folder, f"{call_id[:12]}-{tool}-results.txt")
            data = text.encode("utf-8", "replace")
            atomic_write(locator, data, 0o600)
            if self.store is not None:
                self.store.add_spill(session, locator, tool, len(data), time.time())
            return locator
        except Exception as exc:  # a spill is a courtesy: never fail the search for it
            log.warning("could not save the full %s result: %s", tool, exc)
            return None

    def delete(self, locators: list[str]) -> None:
        """Remove spill files (after their session was deleted); only ever below the root."""
        prefix = self.root.rstrip(os.sep) + os.sep
        for loc in locators:
            real = os.path.realpath(loc)
            if not real.startswith(prefix):
                continue
            try:
                os.unlink(real)
            except FileNotFoundError:
                pass
            except OSError as exc:
                log.warning("could not delete spill %s: %s", loc, exc)
            folder = os.path.dirname(real)
            try:
                os.rmdir(folder)
            except OSError:
                pass
