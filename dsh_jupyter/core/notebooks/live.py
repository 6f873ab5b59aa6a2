"""The seam through which a server lets the notebook tools use notebooks open in Jupyter.

Why it exists: with real-time collaboration (jupyter-collaboration) the notebook a person has
open is a shared document in the server; the file on disk lags behind it (unsaved typing), and a
tool writing the file would either be overwritten at the document's next save or yank the
document from under the person. A server that runs jupyter-collaboration puts a
``LiveDocuments`` into its ``Workspace`` (``workspace.documents``); the notebook tools then read
and edit the open document, with the document's version in the read-before-write gate. The core
stays free of Jupyter: it only calls this interface.

What an implementation must never do: change a document whose version is not the one the caller
checked, block the server's event loop for long, or raise for a notebook that is simply not open
(that is ``None``: the tools use the file).
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["DocumentChanged", "LiveDocuments"]


class DocumentChanged(Exception):
    """The document moved on (someone typed, ran a cell, closed it) since the caller looked."""


class LiveDocuments(Protocol):
    def snapshot(self, real: str) -> tuple[dict, str] | None:
        """``(notebook dict, version)`` of the open document of the file at ``real``; None if none is open.

        The version is a string that changes whenever the document changes (it is what ``read``
        records and ``edit`` checks, in place of the file's version).
        """

    def replace_sources(self, real: str, version: str, sources: dict[int, tuple[str, str]]) -> str:
        """Give cells new sources (1-based index -> ``(old, new)``) if the document is still at
        ``version``; return its new version. ``DocumentChanged`` otherwise."""

    def replace_notebook(self, real: str, version: str, data: dict) -> str:
        """Replace the whole document with the notebook ``data`` if it is still at ``version``; return
        its new version. ``DocumentChanged`` otherwise."""
