"""Jupyter's folder listings, kept from failing when a file in the folder moves while it is listed.

Why it exists: the contents manager lists a folder by taking its names, then asking its own ``get``
for each entry's model; an entry renamed or removed between the two makes that ``get`` raise
``HTTPError(404)``, which ends the whole listing with a 404 for the *folder*
(``_dir_model`` in ``jupyter_server.services.contents.filemanager``). JupyterLab's file browser
lists its folder whenever a file in it changes, and answers a 404 with a "Directory not found"
dialog; so an agent's ``move`` in the folder a person is looking at put that dialog in front of
them (found by ``tests/e2e/test_person_and_agent.py``; a folder listed while one file in it was
renamed back and forth answered 404 to a third of the listings). ``guard_listings`` wraps the
manager's ``get`` on that one instance: inside a listing, an entry whose ``get`` answers 404 is
left out, as if the folder had been listed a moment later; the listing itself, and every other
``get``, go through unchanged.

What it must never do: leave out an entry for any reason but a 404 of the entry itself during a
listing; turn a 404 of the folder (or of a file asked for directly) into anything else; or wrap a
contents manager that does not keep files on this disk.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from typing import Any

__all__ = ["guard_listings"]

_LISTING: contextvars.ContextVar[bool] = contextvars.ContextVar("dsh_listing", default=False)
_GONE = object()  # what an entry that vanished while its folder was listed answers; left out


def _left_out(model: Any) -> Any:
    if isinstance(model, dict) and isinstance(model.get("content"), list):
        model["content"] = [entry for entry in model["content"] if entry is not _GONE]
    return model


def _vanished(exc: BaseException) -> bool:
    return getattr(exc, "status_code", None) == 404


def guard_listings(cm) -> bool:
    """Wrap ``cm.get`` (see the module docstring); False, and nothing changed, for a contents
    manager that does not keep files on this disk (not a ``FileContentsManager``)."""
    from jupyter_server.services.contents.filemanager import FileContentsManager

    if not isinstance(cm, FileContentsManager):
        return False
    if getattr(cm.get, "_dsh_guarded", False):
        return True
    get = cm.get

    if inspect.iscoroutinefunction(get):

        @functools.wraps(get)
        async def guarded_async(path, content=True, *args, **kwargs):
            if _LISTING.get() and not content:  # an entry of the folder being listed
                try:
                    return await get(path, content, *args, **kwargs)
                except Exception as exc:
                    if _vanished(exc):
                        return _GONE
                    raise
            token = _LISTING.set(bool(content))
            try:
                return _left_out(await get(path, content, *args, **kwargs))
            finally:
                _LISTING.reset(token)

        guarded: Any = guarded_async
    else:

        @functools.wraps(get)
        def guarded_sync(path, content=True, *args, **kwargs):
            if _LISTING.get() and not content:
                try:
                    return get(path, content, *args, **kwargs)
                except Exception as exc:
                    if _vanished(exc):
                        return _GONE
                    raise
            token = _LISTING.set(bool(content))
            try:
                return _left_out(get(path, content, *args, **kwargs))
            finally:
                _LISTING.reset(token)

        guarded = guarded_sync
    guarded._dsh_guarded = True
    cm.get = guarded  # type: ignore[method-assign]
    return True
