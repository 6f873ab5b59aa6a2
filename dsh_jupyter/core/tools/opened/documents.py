"""Files a person has open in JupyterLab: what ``read``, ``edit``, ``edit_cells``, ``write`` and ``move`` do
instead of the file.

Why it exists: the file under an open document is not what the person sees, and writing it loses
one side's work (see ``core/documents.py``). When the server says a file is open
(``ctx.documents``):

* a **shared document** (real-time collaboration): ``read`` shows it, unsaved typing included, and
  records its version; ``edit`` applies the replacement to it; ``write`` merges the agent's content
  with the person's changes since the agent read it (refused, changing nothing, where both changed
  the same lines); the server's collaboration saves it;
* a document open in a **tab** (no collaboration): a tab with unsaved changes refuses every change
  (``FS_OPEN_UNSAVED``); one without takes the new content and saves it itself, so the person sees
  it at once and no "File Changed" dialog ever comes;
* after a ``move``, the server is told, so the open document follows the file;
* every answer says that a person has the file open (``value["open"]``, a sentence in the text).

Notebooks shared with collaboration keep their own paths (``tools/edit/open_notebook.py``: edits by cell;
``tools/edit_cells/shared.py``: cells inserted, deleted and moved in the document's cells array).

The read-before-write gate stays exact: a shared document's version is its content's digest, and
an observation of the file still counts when the document holds exactly the file's content (the
person opened it after the agent read it and typed nothing).

What it must never do: write a file under a document that holds unsaved changes, tell the agent a
change was made that a tab did not save, or fail a call because the server could not say what is
open (then the file is used, as without a server).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator

from ...documents import DocumentChanged, MergeConflict, OpenUnsaved, PageSilent, Presence
from ...errors import Codes, ToolError
from ...fs.files import file_version, pread_upto
from ...state.gate import changed_since_read, check_observed_version, observation_key, state_unavailable
from ...text.quoting import in_message
from ..context import CallContext

__all__ = [
    "SHARED",
    "TAB",
    "UNSAVED",
    "base_for_merge",
    "check_shared_observed",
    "merged",
    "moving",
    "presence",
    "record_if_saved",
    "record_version",
    "save_in_tabs",
    "shared_text",
    "unsaved",
]

log = logging.getLogger(__name__)

# value["open"]: how a person has the file open
SHARED, TAB, UNSAVED = "shared", "tab", "unsaved"


def presence(ctx: CallContext, target) -> Presence | None:
    """Whether a person has ``target`` open in JupyterLab; None when not, or when nobody can say."""
    docs = ctx.documents
    if docs is None or target.in_spill:
        return None
    try:
        return docs.presence(target.real)
    except Exception as exc:  # the server cannot say: the file is used, as without one
        log.warning("could not tell whether %s is open in JupyterLab: %s", target.real, exc)
        return None


def unsaved(verb: str, shown: str) -> ToolError:
    return ToolError(
        Codes.FS_OPEN_UNSAVED,
        f"cannot {verb} {in_message(shown)}: it is open in JupyterLab with unsaved changes; nothing was changed. "
        "Ask the person to save or close it, then read it again",
    )


def _silent(verb: str, shown: str) -> ToolError:
    return ToolError(
        Codes.FS_OPEN_UNANSWERED,
        f"cannot {verb} {in_message(shown)}: it is open in JupyterLab, and the page that has it open did not "
        "answer in time; nothing was changed; try again",
    )


def _conflict(verb: str, shown: str, where: str) -> ToolError:
    return ToolError(
        Codes.FS_OPEN_CONFLICT,
        f"cannot {verb} {in_message(shown)}: it is open in JupyterLab, and the person changed {where} since this "
        "session read it, which this change changes too; nothing was changed. Read it again",
    )


# -- shared documents -------------------------------------------------------------------------------


def shared_text(ctx: CallContext, target, pres: Presence | None) -> tuple[str, str] | None:
    """``(text, version)`` of the shared document of a text file open with collaboration, or None."""
    if pres is None or not pres.shared or ctx.documents is None:
        return None
    return ctx.documents.text_snapshot(target.real)


def _disk_text(target) -> tuple[str, str] | None:
    """The file's text as a shared document holds it (CRLF read as LF), and its version; None if unreadable."""
    try:
        fd, fst = target.open_regular()
    except ToolError:
        return None
    try:
        raw = pread_upto(fd, fst.st_size)
    except OSError:
        return None
    finally:
        os.close(fd)
    return raw.decode("utf-8", "replace").replace("\r\n", "\n"), file_version(fst)


def check_shared_observed(gate, ctx: CallContext, target, version: str, content, verb: str) -> None:
    """The gate for a shared document at ``version`` holding ``content``: this session read that
    version, or read the file at its current version and the document holds exactly the file."""
    shown = target.display
    try:
        seen = gate.observed_version(ctx.session_key, observation_key(target.real))
    except Exception:
        raise state_unavailable(verb, shown) from None
    if seen is not None and seen != version and isinstance(content, str):
        disk = _disk_text(target)
        if disk is not None and disk[1] == seen and disk[0] == content:
            return  # the person opened it after this session read it, and nothing changed
    check_observed_version(gate, ctx.session_key, target.real, version, verb, shown)


def base_for_merge(ctx: CallContext, target, verb: str) -> str | dict:
    """What this session read of an open document: the base a ``write`` merges from.

    A version of the shared document it reported lately (remembered), or the file's text when the
    session read the file and the file is still that version. Otherwise the session must read again.
    """
    shown = target.display
    if ctx.store is None:
        raise state_unavailable(verb, shown)
    try:
        seen = ctx.store.observed_version(ctx.session_key, observation_key(target.real))
    except Exception:
        raise state_unavailable(verb, shown) from None
    if seen is None:
        raise ToolError(Codes.FS_NOT_OBSERVED, f"cannot {verb} {in_message(shown)}: read it first in this session")
    assert ctx.documents is not None
    base = ctx.documents.remembered(target.real, seen)
    if base is not None:
        return base
    disk = _disk_text(target)
    if disk is not None and disk[1] == seen:
        return disk[0]
    raise changed_since_read(verb, shown)


def merged(ctx: CallContext, target, base, content, notebook: bool, verb: str) -> tuple[str, bool]:
    """The shared document made the merge of ``base``, ``content`` and what it holds; its new version,
    and whether the person's changes since ``base`` were kept beside ``content``."""
    docs = ctx.documents
    assert docs is not None
    try:
        if notebook:
            return docs.merge_notebook(target.real, base, content)
        return docs.merge_text(target.real, base, content)
    except MergeConflict as exc:
        raise _conflict(verb, target.display, exc.where) from None
    except DocumentChanged:
        raise changed_since_read(verb, target.display) from None


def record_version(ctx: CallContext, gate, target, version: str, verb: str) -> None:
    """Record what this session now knows the file (or its document) to be, after its own change."""
    try:
        gate.record_observation(ctx.session_key, observation_key(target.real), version)
    except Exception:
        raise ToolError(
            Codes.STATE_UNAVAILABLE,
            f"cannot {verb} {in_message(target.display)}: the change was made but the session state could not "
            "record it",
        ) from None


# -- tabs without collaboration -----------------------------------------------------------------------


def save_in_tabs(
    ctx: CallContext, target, pres: Presence, data: bytes, notebook: bool, verb: str, version: str
) -> bool:
    """Hand ``data`` to the tabs that have the file open, which take it and save it; True once saved,
    False when no tab has it open any more (the tool writes the file). ``version`` is the file's
    version the content was made from: a person's save since then refuses it (``FS_NOT_OBSERVED``).
    Refusals: ``FS_OPEN_UNSAVED`` for a tab with unsaved changes, ``FS_OPEN_UNANSWERED`` for a page
    that did not answer."""
    shown = target.display
    if pres.unsaved:
        raise unsaved(verb, shown)
    docs = ctx.documents
    assert docs is not None
    try:
        return docs.save_in_tabs(target.real, data.decode("utf-8", "surrogateescape"), notebook, version)
    except OpenUnsaved:
        raise unsaved(verb, shown) from None
    except PageSilent:
        raise _silent(verb, shown) from None
    except DocumentChanged:
        raise changed_since_read(verb, shown) from None


def record_if_saved(ctx: CallContext, target, data: bytes, verb: str) -> None:
    """After a tab saved a change: the file's new version counts as read by this session when the
    file holds exactly what was handed over (else the session's next change needs a read)."""
    with ctx.changing(verb, target.display, lambda: [target.change()]) as gate:
        try:
            fd, fst = target.open_regular()
        except ToolError:
            return
        try:
            same = fst.st_size == len(data) and pread_upto(fd, fst.st_size) == data
        except OSError:
            same = False
        finally:
            os.close(fd)
        if same:
            record_version(ctx, gate, target, file_version(fst), verb)


@contextlib.contextmanager
def moving(ctx: CallContext, old_real: str, new_real: str) -> Iterator[None]:
    """Around a rename: the server holds the saves of a document open at the old path and, once the
    rename is done, is told, so the open document follows the file (``LiveDocuments.moving``)."""
    docs = ctx.documents
    if docs is None:
        yield
        return
    try:
        held = docs.moving(old_real, new_real)
        held.__enter__()
    except Exception as exc:  # the server cannot hold or tell: the file moves as without one
        log.warning("could not hold the open documents of %s for a move: %s", old_real, exc)
        yield
        return
    try:
        yield
    except BaseException:
        held.__exit__(*sys.exc_info())
        raise
    try:
        held.__exit__(None, None, None)
    except Exception as exc:
        log.warning("could not tell JupyterLab that %s moved: %s", old_real, exc)
