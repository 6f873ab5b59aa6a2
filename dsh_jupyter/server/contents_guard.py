"""Jupyter's contents manager, kept from changing files a person only looks at.

Why it exists: with real-time collaboration (jupyter-collaboration) JupyterLab saves a shared
document whenever it changes, and opening a file changes it (the front end sets its state when it
connects, the kernel's ``language_info`` lands in a notebook's metadata), so merely *looking* at a
file rewrote it: a new modification time (``glob`` orders by it, so the file looked at became the
newest), a ``.ipynb_checkpoints/`` folder for a notebook, and a CRLF file turned into LF (the room
loads text with ``\\r\\n`` made ``\\n`` and saves the document back). Without collaboration the
same ``save`` serves JupyterLab's saves and autosaves. ``guard_contents`` wraps the server's contents
manager's ``save`` on that one instance: a save whose content is what the file already holds
(line endings aside; for a notebook, the same notebook once Jupyter's transient values and the
kernel's ``metadata.language_info`` are set aside) writes nothing and answers the file's current
model, and a real change of a file that ends every line with CRLF is written with CRLF.

Jupyter's own hooks cannot do the first part: a ``pre_save_hook`` may change the model but not
leave the file alone (an HTTPError it raises refuses the save, and the person sees an error), and
a ``post_save_hook`` runs after the write. jupyter-collaboration has no setting for it either
(``document_save_delay = None`` turns off every autosave, changes included). So the decision is
made here, once, from one read of the file.

Looking made one more change: listing a file's checkpoints (JupyterLab does it for a tab's
caption) creates the ``.ipynb_checkpoints/`` folder beside the file. The listing is wrapped too: with
no such folder there are no checkpoints to list, and none is made. Making a checkpoint still makes it.

What it must never do: skip a save that changes a file's content; raise where the save itself
would not (any failure of its own look hands the save through unchanged); touch a chunked upload,
a directory, a new file or a contents manager that does not keep files on this disk; hide a
checkpoint that exists; or read a file on the event loop (an async manager's look runs on a thread).
"""

from __future__ import annotations

import asyncio
import base64
import functools
import inspect
import json
import os
import re
import stat
from typing import Any

import nbformat
from nbformat.notebooknode import NotebookNode
from nbformat.v4.rwbase import rejoin_lines, strip_transient

__all__ = ["UNCHANGED", "guard_contents", "plan_save"]

UNCHANGED = None  # plan_save's answer for a save that would leave the file as it is
_BARE_LF = re.compile(r"(?<!\r)\n")


def _crlf_throughout(data: bytes) -> bool:
    """Every line of the file ends with CRLF (and it has at least one line end)."""
    crlf = data.count(b"\r\n")
    return crlf > 0 and crlf == data.count(b"\n")


def _notebook_key(nb: Any) -> Any:
    """A notebook as its saved content is compared: lines joined, transient values and the kernel's
    ``language_info`` (which the front end copies from every kernel it connects) set aside.

    ``nb`` is a fresh copy (it is changed in place). nbformat's own ``rejoin_lines`` and
    ``strip_transient`` do the work; they reach the notebook, its cells and their outputs by
    attribute, so only those become ``NotebookNode`` (``from_dict`` would wrap every line of a
    big notebook, several times slower)."""
    if not isinstance(nb, dict) or nb.get("nbformat") != 4:
        return None
    node = NotebookNode(nb)
    node["cells"] = [
        NotebookNode(cell, outputs=[NotebookNode(o) for o in cell["outputs"]])
        if "outputs" in cell
        else NotebookNode(cell)
        for cell in node["cells"]
    ]
    rejoin_lines(node)
    strip_transient(node)
    node.metadata.pop("language_info", None)
    return node


def _same_notebook(content: Any, on_disk: bytes) -> bool:
    new = _notebook_key(json.loads(json.dumps(content)))  # a deep copy, at C speed
    return new is not None and new == _notebook_key(json.loads(on_disk))


def plan_save(model: dict, on_disk: bytes) -> dict | None:
    """What a save of ``model`` over a file holding ``on_disk`` must do: ``UNCHANGED`` (write
    nothing) or the model to save, with a text file's bare ``\\n`` made ``\\r\\n`` when the file
    ends every line with CRLF. Pure; raises on content the save itself would refuse."""
    kind, fmt, content = model.get("type"), model.get("format"), model.get("content")
    if kind == "file" and fmt == "text" and isinstance(content, str):
        crlf = _crlf_throughout(on_disk)
        if crlf:
            content = content.replace("\n", "\r\n") if "\r" not in content else _BARE_LF.sub("\r\n", content)
        new = content.encode("utf-8")
        # with CRLF throughout both, equal line ends aside is equal (reading \r\n as \n is one-to-one)
        if new == on_disk or (
            not crlf
            and (b"\r" in new or b"\r" in on_disk)
            and new.replace(b"\r\n", b"\n") == on_disk.replace(b"\r\n", b"\n")
        ):
            return UNCHANGED
        return model if content is model["content"] else {**model, "content": content}
    if kind == "file" and fmt == "base64" and isinstance(content, str):
        return UNCHANGED if base64.decodebytes(content.encode("ascii")) == on_disk else model
    if kind == "notebook" and isinstance(content, dict):
        return UNCHANGED if _same_notebook(content, on_disk) else model
    return model


def _look(cm, model: dict, path: str) -> dict | None:
    """``plan_save`` against the file at ``path``, or ``model`` itself when there is nothing to
    compare: no content, a chunk of an upload, no regular file there (a missing one raises)."""
    if not isinstance(model, dict) or "chunk" in model or model.get("type") not in ("file", "notebook"):
        return model
    os_path = cm._get_os_path(path.strip("/"))
    if not stat.S_ISREG(os.stat(os_path).st_mode):
        return model
    fd = os.open(os_path, os.O_RDONLY | os.O_NONBLOCK)  # never waits on a FIFO put there meanwhile
    with open(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return model
        on_disk = f.read()
    return plan_save(model, on_disk)


def _skipped(cm, model: dict, path: str, log) -> None:
    """What the save would have done besides writing: a notebook whose cells are all trusted is
    signed (in the notary's database, never the file)."""
    if model.get("type") == "notebook":
        cm.check_and_sign(nbformat.from_dict(model["content"]), path.strip("/"))
    log.info("dsh_jupyter: %s is saved unchanged; the file is left as it was", path.strip("/"))


def _checkpoint_folder(checkpoints, path: str) -> str:
    """The folder a file's checkpoints would be in (``FileCheckpoints.checkpoint_path``'s, unmade)."""
    parent = path.strip("/").rpartition("/")[0]
    return os.path.join(checkpoints._get_os_path(parent), checkpoints.checkpoint_dir)


def _guard_checkpoint_listing(checkpoints) -> None:
    listing = checkpoints.list_checkpoints

    def none_there(path) -> bool:
        try:
            return not os.path.isdir(_checkpoint_folder(checkpoints, path))
        except Exception:  # a bad path is the listing's to refuse
            return False

    if inspect.iscoroutinefunction(listing):

        @functools.wraps(listing)
        async def guarded_async(path):
            return [] if none_there(path) else await listing(path)

        checkpoints.list_checkpoints = guarded_async
    else:

        @functools.wraps(listing)
        def guarded_sync(path):
            return [] if none_there(path) else listing(path)

        checkpoints.list_checkpoints = guarded_sync


def guard_contents(cm, log) -> bool:
    """Wrap ``cm.save`` and, for checkpoints kept as files, their listing (see the module
    docstring); False, and nothing changed, for a contents manager that does not keep files on
    this disk (not a ``FileContentsManager``)."""
    from jupyter_server.services.contents.filecheckpoints import FileCheckpoints
    from jupyter_server.services.contents.filemanager import FileContentsManager

    if not isinstance(cm, FileContentsManager):
        return False
    if getattr(cm.save, "_dsh_guarded", False):
        return True
    if isinstance(cm.checkpoints, FileCheckpoints):
        _guard_checkpoint_listing(cm.checkpoints)
    save = cm.save

    def look(model, path):
        try:
            return _look(cm, model, path)
        except Exception as exc:  # the save decides what is wrong; this look only ever stands aside
            log.debug("dsh_jupyter: save of %s goes through as asked (%r)", path, exc)
            return model

    if inspect.iscoroutinefunction(save):

        @functools.wraps(save)
        async def guarded_async(model, path=""):
            planned = await asyncio.to_thread(look, model, path)
            if planned is UNCHANGED:
                try:
                    current = await cm.get(path, content=False)
                    _skipped(cm, model, path, log)
                    return current
                except Exception:
                    planned = model
            return await save(planned, path)

        guarded: Any = guarded_async
    else:

        @functools.wraps(save)
        def guarded_sync(model, path=""):
            planned = look(model, path)
            if planned is UNCHANGED:
                try:
                    current = cm.get(path, content=False)
                    _skipped(cm, model, path, log)
                    return current
                except Exception:
                    planned = model
            return save(planned, path)

        guarded = guarded_sync
    guarded._dsh_guarded = True
    cm.save = guarded  # type: ignore[method-assign]
    return True
