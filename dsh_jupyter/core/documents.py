"""The seam through which a server tells the tools about files a person has open in JupyterLab.

Why it exists: a person in JupyterLab and an agent over REST or MCP work on the same files. While a
person has a file open, the document they see — in the server as a shared document with real-time
collaboration, in their browser tab without it — is what will be saved; a tool that writes the
file under it loses one side's work (JupyterLab's "File Changed" dialog: *Overwrite* undoes the
agent's change, *Revert* drops the person's typing). So a server that knows what is open puts a
``LiveDocuments`` into its ``Workspace`` (``workspace.documents``), and the tools:

* read a shared document, unsaved typing included, and record its version for the write gate;
* change a shared document in place (a notebook's cell sources, its cells inserted, deleted,
  moved or retyped, a text file's text, a whole notebook or text merged with what the person
  typed since the agent read it), never the file under it; the server's collaboration saves it;
* without collaboration, hand a change to the tab that has the file open: a tab with no unsaved
  changes takes it and saves it itself (no dialog, as for the person's own save); a tab with
  unsaved changes refuses (``OpenUnsaved``, which the tools answer ``FS_OPEN_UNSAVED``);
* around a move, let the server hold the document's saves and then tell it, so a tab open on the
  file follows it to its new path and nothing makes the file again at its old one;
* say in every answer when a person has the file open (``Presence``);
* list what is open (``open_files``), for a person's view beside the agent's calls.

The core stays free of Jupyter and of the browser: it only calls this interface. Paths are real
(absolute, symlinks resolved), as the tools' targets have them.

What an implementation must never do: change a document whose version is not the one the caller
checked (``DocumentChanged``), report a tab without unsaved changes as one that took a change it did
not save, block the server's event loop for long, or raise for a file that is simply not open
(``presence`` is None, and the tools use the file).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

__all__ = ["DocumentChanged", "LiveDocuments", "MergeConflict", "OpenUnsaved", "PageSilent", "Presence"]


@dataclass(frozen=True)
class Presence:
    """A file a person has open in JupyterLab.

    ``shared``: it is a shared document (real-time collaboration): the tools read and change that
    document, and the server's collaboration saves it. Otherwise it is open in one or more browser
    tabs, each with its own copy. ``unsaved``: whether an open copy holds changes not saved to the
    file (None: not known). ``tabs``: how many tabs have it open (0 when not known; for a shared
    document listed by ``open_files``, the connections to it, one per page).
    """

    shared: bool
    unsaved: bool | None = None
    tabs: int = 0


class DocumentChanged(Exception):
    """The document moved on (someone typed, ran a cell, closed it) since the caller looked."""


class MergeConflict(Exception):
    """The agent's new content and the person's changes since the agent read it touch the same
    lines (or cells); ``where`` names them as a person would (``lines 4-6``, ``cell 3 (id "a1")``)."""

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where


class OpenUnsaved(Exception):
    """A tab that has the file open holds unsaved changes, so it did not take the change."""


class PageSilent(Exception):
    """A tab that has the file open did not answer in time, so the change was not made."""


class LiveDocuments(Protocol):
    """What a server knows of files open in JupyterLab, and how the tools change them there."""

    def presence(self, real: str) -> Presence | None:
        """Whether a person has the file at ``real`` open, and how; None when nobody has."""

    def open_files(self) -> list[tuple[str, Presence]]:
        """Every file a person has open now, once each: ``(real path, presence)``, in no order.

        The presence of each is what ``presence`` answers for it. Real paths as the reports name
        them, wherever they lie: what may be shown is the caller's to decide."""

    # -- shared documents (real-time collaboration) ------------------------------------------------

    def snapshot(self, real: str) -> tuple[dict, str] | None:
        """``(notebook dict, version)`` of the shared document of the notebook at ``real``; None if none.

        The version is a string that changes whenever the document changes (it is what ``read``
        records and ``edit`` checks, in place of the file's version).
        """

    def text_snapshot(self, real: str) -> tuple[str, str] | None:
        """``(text, version)`` of the shared document of the text file at ``real``; None if none."""

    def replace_sources(self, real: str, version: str, sources: dict[int, tuple[str, str]]) -> str:
        """Give cells new sources (1-based index -> ``(old, new)``) if the document is still at
        ``version``; return its new version. ``DocumentChanged`` otherwise."""

    def change_cells(self, real: str, version: str, steps: list[dict]) -> str:
        """Change the notebook document's cells array by ``steps``, in order, if the document is
        still at ``version``; return its new version. ``DocumentChanged`` otherwise (then nothing
        changed).

        Each step is ``{"do", "at", "id"}`` (``at``: a 0-based position in the cells as the steps
        before left them; ``id``: the id the cell there has, None in a notebook without ids):
        ``insert`` puts ``step["cell"]`` (a cell dict) at ``at`` (with ``"moved": True``, it is
        the cell the step before deleted, put back as the document held it); ``delete`` removes the cell at
        ``at``; ``clear`` empties that cell's outputs and execution count. Every other cell, and
        the person's typing in it, is left as it is (``tools/edit_cells/operations.py`` makes them)."""

    def replace_notebook(self, real: str, version: str, data: dict) -> str:
        """Make the notebook document hold ``data`` if it is still at ``version``, changing only
        what differs (cells kept by id); return its new version. ``DocumentChanged`` otherwise."""

    def replace_text(self, real: str, version: str, text: str) -> str:
        """Make the text document hold ``text`` if it is still at ``version``, by the smallest
        deletes and inserts (a person's cursor elsewhere stays put); return its new version.
        ``DocumentChanged`` otherwise."""

    def replace_ranges(
        self, real: str, version: str, notebook: bool, ranges: list[tuple[int | None, int, int, str, str]]
    ) -> str:
        """Change exactly ``ranges`` of the document, if it is still at ``version`` and each range
        still holds its old text; return its new version. ``DocumentChanged`` otherwise (then
        nothing changed).

        Each range is ``(cell, start, end, old, new)``: ``start``/``end`` code points of the text
        (of the 1-based ``cell``'s source in a notebook, ``cell`` None in a text file), ``old`` what
        they hold, ``new`` what they become. Ranges do not overlap. Nothing else in the document is
        deleted or inserted again, so a person typing anywhere else loses nothing (``replace``)."""

    def remembered(self, real: str, version: str) -> str | dict | None:
        """What the shared document of ``real`` held at ``version``, if it reported that version
        lately (a read's snapshot, a change's result) and still remembers it; else None.

        A ``write`` of an open document merges from there: it is what the agent read."""

    def merge_text(self, real: str, base: str, text: str) -> tuple[str, bool]:
        """Make the text document hold the three-way merge of ``base`` (what the agent read),
        ``text`` (the agent's new content) and the document now (the person's changes since),
        applied as changes to the document; return its new version, and whether the person had
        changed it since ``base`` (those changes were kept). ``MergeConflict`` when both
        changed the same lines (nothing is changed); ``DocumentChanged`` when it is no longer open."""

    def merge_notebook(self, real: str, base: dict, data: dict) -> tuple[str, bool]:
        """``merge_text`` for a notebook: cells merged by id, sources line by line."""

    # -- tabs without collaboration --------------------------------------------------------------

    def save_in_tabs(self, real: str, content: str, notebook: bool, version: str | None = None) -> bool:
        """Have every tab that has the file open take ``content`` (a text file's text, or a
        notebook's JSON) and one of them save it, as the person's own save does; True once the
        file is saved.

        Raises ``OpenUnsaved`` when a tab holds unsaved changes (then no tab changed anything),
        ``PageSilent`` when a tab did not answer in time, ``DocumentChanged`` when the file on
        disk is no longer what the tabs show (someone else saved it meanwhile), or no longer at
        ``version`` (``fs.files.file_version`` of the file the caller's content is based on: a
        person's save between the caller's check and this call would otherwise be undone). False,
        having changed nothing, when no tab has the file open any more: the tool writes the file
        itself.
        """

    def moving(self, old_real: str, new_real: str) -> AbstractContextManager[None]:
        """Around a tool's rename of the file (or folder) at ``old_real`` to ``new_real``.

        On entry, what could save an open document at the old path meanwhile is held (a shared
        document's autosave: a save in flight would make the file again at its old path); on a
        clean exit Jupyter is told (file ids, shared documents, tabs), so an open document follows
        the file to its new path; on an exception nothing is told. Best effort: never raises of
        its own."""
