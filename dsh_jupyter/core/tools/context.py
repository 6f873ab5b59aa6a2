"""What one tool call runs with: settings, confinement, state, session and cancellation."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import Codes, ToolError
from ..fs.effects import Change
from ..fs.resolver import Resolver, Target
from ..images import Image
from ..settings import Settings
from ..state.gate import gated
from ..state.spills import session_folder
from ..text.quoting import in_message

if TYPE_CHECKING:
    from ..caches.folders import FolderCache
    from ..caches.lines import LineIndex
    from ..caches.notebooks import NotebookTree
    from ..caches.parsed import ParsedNotebooks
    from ..documents import LiveDocuments
    from ..rg.fence import Fencing
    from ..state.spills import SpillStore
    from ..state.store import StateStore

__all__ = ["CallContext"]


@dataclass
class CallContext:
    settings: Settings
    resolver: Resolver
    store: StateStore | None  # None when the state file could not be opened
    spills: SpillStore | None
    session: str  # the session's name, as callers give it
    cwd: str  # the session cwd (absolute, real)
    call_id: str
    rg: str | None = None  # the ripgrep binary, when one was found
    cancel: threading.Event = field(default_factory=threading.Event)
    session_key: str = ""  # the state's key for (root, session)
    user: str = ""  # who called (the authenticated user, or the OS user)
    fence: Fencing | None = None  # how ripgrep is confined
    spill_quota: int | None = None  # a smaller spill quota for this caller (read-only tokens)
    spill_owner: str = ""  # whose quota this caller's saved results count against (``policy.Caller.quota_owner``)
    folders: FolderCache | None = None  # sorted folder scans kept between calls
    lines: LineIndex | None = None  # line offsets of big files kept between calls
    notebooks: NotebookTree | None = None  # where the notebooks are, kept between calls
    parsed: ParsedNotebooks | None = None  # notebooks parsed, per file version, kept between calls
    documents: LiveDocuments | None = None  # notebooks open in Jupyter (server only)
    # the workspace index, when the settings turn it on (``tools.indexing.keeper.IndexKeeper``;
    # not named here: the keeper runs searches with a context, a layer above this one)
    index: Any = None
    images: list[Image] = field(default_factory=list)  # images the result carries besides its value (read)
    # Bytes of images this read may still attach, when several files share one answer's bound
    # (``read`` with ``file_paths``); None: an image file has ``read_image_max_bytes`` to itself.
    image_bytes_left: int | None = None
    # Told how far a long search got ("1,204 matches in 310 files so far"), every PROGRESS_EVERY_S
    # at most, for a caller that can show it while the call runs (the widgets); None: nobody asks.
    progress: Callable[[str], None] | None = None
    # Told a running search's first matches (``grep.early``: rows ``{path, line, text}``), with
    # its progress, for the caller who started it (a person's search panel); None: nobody asks.
    preview: Callable[[list[dict]], None] | None = None
    # A view of saved results (a spill page, ``Workspace.spill_page``): a path that names none of
    # this session's saved results is not found, so no workspace file is read (or observed) there.
    saved_only: bool = False

    def resolve(
        self, path: str | None, verb: str, *, spills: bool = False, follow_last: bool = True, make_parents: bool = False
    ) -> Target:
        """Resolve a tool path for this call; ``spills``: this session's saved results may be named."""
        folder = session_folder(self.session_key) if spills else None
        if spills and self.saved_only:
            raw, lexical = self.resolver.lexical(self.cwd, path)
            if not self.resolver.in_spill(lexical):  # named as given: it may lie anywhere
                raise ToolError(Codes.FS_NOT_FOUND, f"cannot {verb} {in_message(raw)}: not found")
        target = self.resolver.resolve(
            self.cwd, path, verb=verb, spill_folder=folder, follow_last=follow_last, make_parents=make_parents
        )
        if target.in_spill and not target.exists:
            target.close()
            raise self._spill_gone(target, verb)
        if target.in_spill:
            withheld = self._spill_withheld(target)
            if withheld is not None:
                target.close()
                raise ToolError(Codes.FS_HIDDEN, f"cannot {verb} {in_message(target.display)}: {withheld}")
        return target

    @contextlib.contextmanager
    def changing(self, verb: str, display: str, changes: Callable[[], list[Change]]) -> Iterator[object]:
        """The cross-process write gate for a change to the tree, held only for a change that keeps
        away from protected paths; the one way a tool takes the gate.

        ``changes`` says what the operation does (the paths it creates, replaces or removes, see
        ``fs.effects``); it is asked once the gate is held, so the paths are where they lie at the
        moment of the change, and a change that would touch a protected path is refused there
        (``FS_PROTECTED``), by the same rule for every tool.
        """
        with gated(self.store, verb, display) as gate:
            self.resolver.refuse(changes())
            yield gate

    def _spill_withheld(self, target: Target) -> str | None:
        """Why this saved result is not served here (made where more was shown), or None."""
        try:
            record = self.store.spill_record(target.lexical) if self.store is not None else None
        except Exception:
            record = None
        if record is None:
            return None
        return self.resolver.visibility.withholds(record.visibility)

    def _spill_gone(self, target: Target, verb: str) -> ToolError:
        try:
            record = self.store.spill_record(target.lexical) if self.store is not None else None
        except Exception:
            record = None
        if record is not None and record.session == self.session_key and record.evicted is not None:
            return ToolError(
                Codes.FS_NOT_FOUND,
                f"cannot {verb} {in_message(target.display)}: the saved result was "
                "removed (spill limits); run the search again",
            )
        return target.not_found()
