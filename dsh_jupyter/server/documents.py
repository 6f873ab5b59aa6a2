"""What this server knows of files open in JupyterLab: shared documents and tabs, as one ``LiveDocuments``.

Why it exists: a file a person has open is either a shared document of this server (real-time
collaboration, ``collab.py``) or a copy in a browser tab that reports itself (``tabs.py``, the
JupyterLab extension's half of the work); a server may have both (collaboration switched off for
some documents, or not installed). The tools ask one object (``core/documents.py``); this one
asks the collaboration first — a shared document is what every tab shows — and the tabs next,
for one file (``presence``) and for the list of every open file (``open_files``) alike.

What it must never do: report a file as not open because one of the two could not answer (an
error from either is the caller's to see), list a file twice, or move a document without telling
both.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ..core.documents import DocumentChanged, Presence

__all__ = ["Documents"]


class Documents:
    """``LiveDocuments`` over a ``CollabDocuments`` (or None) and a tabs registry (or None)."""

    def __init__(self, collab: Any = None, tabs: Any = None) -> None:
        self.collab = collab
        self.tabs = tabs

    def presence(self, real: str) -> Presence | None:
        found = self.collab.presence(real) if self.collab is not None else None
        if found is None and self.tabs is not None:
            found = self.tabs.presence(real)
        return found

    def open_files(self) -> list[tuple[str, Presence]]:
        """Every file open in JupyterLab, once: the shared documents, then the files open in tabs
        that are not also shared (a shared document is what every tab shows, as for ``presence``)."""
        shared = self.collab.open_files() if self.collab is not None else []
        seen = {real for real, _ in shared}
        tabs = self.tabs.open_files() if self.tabs is not None else []
        return shared + [(real, found) for real, found in tabs if real not in seen]

    # -- shared documents: the collaboration's ---------------------------------------------------------

    def _shared(self):
        if self.collab is None:
            raise DocumentChanged()
        return self.collab

    def snapshot(self, real: str):
        return self.collab.snapshot(real) if self.collab is not None else None

    def text_snapshot(self, real: str):
        return self.collab.text_snapshot(real) if self.collab is not None else None

    def replace_sources(self, real: str, version: str, sources: dict[int, tuple[str, str]]) -> str:
        return self._shared().replace_sources(real, version, sources)

    def change_cells(self, real: str, version: str, steps: list[dict]) -> str:
        return self._shared().change_cells(real, version, steps)

    def replace_notebook(self, real: str, version: str, data: dict) -> str:
        return self._shared().replace_notebook(real, version, data)

    def replace_text(self, real: str, version: str, text: str) -> str:
        return self._shared().replace_text(real, version, text)

    def replace_ranges(self, real: str, version: str, notebook: bool, ranges: list) -> str:
        return self._shared().replace_ranges(real, version, notebook, ranges)

    def remembered(self, real: str, version: str):
        return self.collab.remembered(real, version) if self.collab is not None else None

    def merge_text(self, real: str, base: str, text: str) -> tuple[str, bool]:
        return self._shared().merge_text(real, base, text)

    def merge_notebook(self, real: str, base: dict, data: dict) -> tuple[str, bool]:
        return self._shared().merge_notebook(real, base, data)

    # -- tabs -------------------------------------------------------------------------------------------

    def save_in_tabs(self, real: str, content: str, notebook: bool, version: str | None = None) -> bool:
        return self.tabs.save_in_tabs(real, content, notebook, version) if self.tabs is not None else False

    @contextlib.contextmanager
    def moving(self, old_real: str, new_real: str) -> Iterator[None]:
        held = self.collab.moving(old_real, new_real) if self.collab is not None else contextlib.nullcontext()
        with held:
            yield
        if self.tabs is not None:
            self.tabs.moved(old_real, new_real)
