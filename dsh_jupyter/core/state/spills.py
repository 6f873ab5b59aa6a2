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
import threading
import time
from dataclasses import dataclass

from ..fs.files import create_file
from ..fs.tree import Tree

__all__ = ["PendingSpill", "SpillLimits", "SpillStore", "session_folder"]

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


class SpillStore:
    def __init__(self, root: str, store, limits: SpillLimits) -> None:
        self.root = os.path.realpath(root)
        self.store = store
        self.limits = limits
        self._tree: Tree | None = None
        self._tree_made = threading.Lock()

    def close(self) -> None:
        if self._tree is not None:
            self._tree.close()
            self._tree = None

    def _folder_tree(self) -> Tree:
        with self._tree_made:  # calls on several threads, and spill writers, ask for it at once
            if self._tree is None:
                os.makedirs(self.root, mode=0o700, exist_ok=True)
                self._tree = Tree(self.root)
            return self._tree

    def start_save(
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
        background: bool = True,
    ) -> PendingSpill:
        """Save ``text`` (or bytes already in UTF-8): ``finish()`` on the answer returns its
        locator (an absolute path), or None if it could not be saved. ``quota`` (bytes) further
        limits what this caller's saved results may hold together. With ``background``, a big
        file is written on a thread while the caller goes on, and ``finish()`` waits for it.

        Why: writing a spill of megabytes is mostly the kernel's work (and on a machine whose
        disk is slow, waiting for the page cache to drain), and the caller has its page to build
        meanwhile. The index is written by the caller's thread (a state connection belongs to
        one thread). Below ``BACKGROUND_FROM`` bytes the file is written at once.
        """
        if self.store is None:
            return PendingSpill(self, None, None)  # unindexed files could not be limited, listed or owned
        data = text if isinstance(text, bytes) else text.encode("utf-8", "replace")
        cap = self.limits.per_session if quota is None else min(quota, self.limits.per_session)
        if len(data) > min(cap, self.limits.total):
            log.warning("the full %s result (%d bytes) is larger than the spill limits allow", tool, len(data))
            return PendingSpill(self, None, None)
        folder = session_folder(key)
        name = f"{call_id[:12]}-{tool}-results.txt"
        record = {"key": key, "tool": tool, "size": len(data), "label": label, "user": user}
        record.update(visibility=visibility, quota=quota)
        pending = PendingSpill(self, os.path.join(self.root, folder, name), record)
        if background and len(data) >= BACKGROUND_FROM:
            thread = threading.Thread(
                target=pending.write, args=(f"{folder}/{name}", data), name="dsh-spill-writer", daemon=True
            )
            try:
                thread.start()
                pending.thread = thread
                return pending
            except RuntimeError as exc:  # no thread to be had: written at once, as a small one is
                log.warning("could not start a thread for the full %s result (%s); writing it now", tool, exc)
        pending.write(f"{folder}/{name}", data)
        return pending

    def _write(self, rel: str, data: bytes) -> None:
        with self._folder_tree().locate(rel, follow_last=False, make_parents=True, dir_mode=0o700) as entry:
            create_file(entry.dir_fd, entry.name, data, mode=0o600, durable=False)  # derived data: see create_file

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


BACKGROUND_FROM = 1 << 18  # bytes: a smaller spill is written at once (a thread costs more than it saves)


class PendingSpill:
    """A spill being saved (``SpillStore.start_save``); ``finish()`` once, from the caller's thread."""

    def __init__(self, spills: SpillStore, locator: str | None, record: dict | None) -> None:
        self._spills = spills
        self._locator = locator
        self._record = record
        self._failed: Exception | None = None
        self.thread: threading.Thread | None = None

    def write(self, rel: str, data: bytes) -> None:
        try:
            self._spills._write(rel, data)
        except Exception as exc:  # a spill is a courtesy: reported by ``finish``
            self._failed = exc

    def finish(self) -> str | None:
        """The locator once the file is written and indexed, or None if it could not be saved."""
        if self.thread is not None:
            self.thread.join()
            self.thread = None
        if self._locator is None or self._record is None:
            return None
        rec, self._record = self._record, None
        spills = self._spills
        try:
            if self._failed is not None:
                raise self._failed
            spills.store.add_spill(
                rec["key"],
                self._locator,
                rec["tool"],
                rec["size"],
                time.time(),
                label=rec["label"],
                user=rec["user"],
                visibility=rec["visibility"],
            )
        except Exception as exc:  # a spill is a courtesy: never fail the search for it
            log.warning("could not save the full %s result: %s", rec["tool"], exc)
            return None
        quota = rec["quota"]
        spills.enforce(rec["key"], user=rec["user"] if quota is not None else None, user_cap=quota)
        return self._locator
