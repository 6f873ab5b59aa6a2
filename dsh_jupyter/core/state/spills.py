"""The spill store: complete results of over-cap searches, saved for the model to page through.

A search page is bounded; the spill is what makes the rest recoverable. Files live in a
per-session folder of the spill root -- outside the workspace by default -- and are indexed in
the state store so they can be listed per session, read only by the session that made them,
kept within limits (per session, in total, by age; oldest removed first) and deleted with their
session. A locator whose file was removed for the limits is remembered, so reading it says why.

Saving is best effort: a spill that cannot be written (no state to index it, too big for the
limits, a full disk) turns the footer into "could not be saved", never the search into an error.
``read`` and ``grep`` may open spills of their own session; ``write`` and ``edit`` may not.

What it must never do: write outside the spill root (files are created through the descriptor
of the session's folder), or remove a file it did not index.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import time
from dataclasses import dataclass

from ..fs.files import create_file
from ..fs.tree import Tree

__all__ = ["SpillLimits", "SpillStore", "session_folder"]

log = logging.getLogger(__name__)


def session_folder(key: str) -> str:
    """A folder name for a session key: readable, and safe in a URL or a shell.

    ``session-`` + the session name with anything but letters, digits, ``.``, ``_`` and ``-``
    made ``_`` (at most 40 characters) + a hash of the whole key, so two keys never share a folder
    and the locator needs no quoting in ``/dsh/api/spill?locator=…``.
    """
    name = key.split(":", 1)[-1]
    readable = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:40]
    return f"session-{readable}-{hashlib.sha256(key.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}"


@dataclass(frozen=True)
class SpillLimits:
    per_session: int
    total: int
    max_age_s: float
    per_user: int | None = None  # a smaller quota for callers that may only read


class SpillStore:
    def __init__(self, root: str, store, limits: SpillLimits) -> None:
        self.root = os.path.realpath(root)
        self.store = store
        self.limits = limits
        self._tree: Tree | None = None

    def close(self) -> None:
        if self._tree is not None:
            self._tree.close()
            self._tree = None

    def _folder_tree(self) -> Tree:
        if self._tree is None:
            os.makedirs(self.root, mode=0o700, exist_ok=True)
            self._tree = Tree(self.root)
        return self._tree

    def save(
        self,
        key: str,
        call_id: str,
        tool: str,
        text: str | bytes,
        *,
        label: str = "",
        user: str = "",
        quota: int | None = None,
        visibility: str | None = None,
    ) -> str | None:
        """Save ``text`` (or bytes already in UTF-8) and return its locator (an absolute path), or
        None if it could not be.

        ``quota`` (bytes) further limits what this caller's saved results may hold together.
        """
        if self.store is None:
            return None  # unindexed files could not be limited, listed or owned
        data = text if isinstance(text, bytes) else text.encode("utf-8", "replace")
        cap = self.limits.per_session if quota is None else min(quota, self.limits.per_session)
        if len(data) > min(cap, self.limits.total):
            log.warning("the full %s result (%d bytes) is larger than the spill limits allow", tool, len(data))
            return None
        folder = session_folder(key)
        name = f"{call_id[:12]}-{tool}-results.txt"
        try:
            tree = self._folder_tree()
            with tree.locate(f"{folder}/{name}", follow_last=False, make_parents=True, dir_mode=0o700) as entry:
                create_file(entry.dir_fd, entry.name, data, mode=0o600, durable=False)  # derived data: see create_file
            locator = os.path.join(self.root, folder, name)
            self.store.add_spill(
                key, locator, tool, len(data), time.time(), label=label, user=user, visibility=visibility
            )
        except Exception as exc:  # a spill is a courtesy: never fail the search for it
            log.warning("could not save the full %s result: %s", tool, exc)
            return None
        self.enforce(key, user=user if quota is not None else None, user_cap=quota)
        return locator

    def enforce(self, key: str, *, user: str | None = None, user_cap: int | None = None) -> None:
        """Remove saved results past the limits, oldest first (best effort)."""
        try:
            doomed = self.store.spills_to_evict(
                older_than=time.time() - self.limits.max_age_s,
                key=key,
                session_cap=self.limits.per_session,
                total_cap=self.limits.total,
                user=user,
                user_cap=user_cap,
            )
            if doomed:
                self.store.mark_evicted(doomed)
                self.delete(doomed)
        except Exception as exc:
            log.warning("could not apply the spill limits: %s", exc)

    def delete(self, locators: list[str]) -> None:
        """Remove spill files (evicted, or of a deleted session); only ever below the root."""
        tree = self._folder_tree()
        for loc in locators:
            rel = tree.relative(os.path.normpath(loc))
            if not rel or "/" not in rel:
                continue
            try:
                with tree.locate(rel, follow_last=False) as entry:
                    if entry.exists:
                        os.unlink(entry.name, dir_fd=entry.dir_fd)
                    if entry.dir_fd >= 0 and not entry.missing_parent:
                        try:
                            os.rmdir(rel.split("/", 1)[0], dir_fd=tree.fd)
                        except OSError:
                            pass  # other spills of the session remain
            except Exception as exc:
                log.warning("could not delete spill %s: %s", loc, exc)
