"""The observation policy: a write needs this session's read of the file's current version.

Reads record what they saw; ``write`` over an existing file and ``edit`` check it. The check and
the rename happen inside the state store's write gate, a lock that holds across processes, so of
two sessions racing on one observed version exactly one wins. Nothing else may happen inside it:
an ``edit`` is computed before the gate is taken (after a first, read-only check), and inside it
only compares versions and renames. A listing records nothing: seeing a name is not reading a
file.

The store failing never makes a read fail (its observation is simply not recorded), but a write
that cannot check or record fails closed with ``STATE_UNAVAILABLE``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator

from ..errors import Codes, ToolError
from ..fs.files import file_version
from ..text.quoting import in_message

__all__ = [
    "changed_since_read",
    "check_observed",
    "check_observed_version",
    "gated",
    "observation_key",
    "record_read",
    "state_unavailable",
]

log = logging.getLogger(__name__)


def observation_key(real: str) -> str:
    """The state store's key for ``real``: the path itself, or, for a name that is not valid
    UTF-8 (surrogate escapes, which SQLite text cannot hold), its bytes with ``\\xNN`` escapes.

    A clash with a name that really holds ``\\xNN`` is harmless: the stored version names the
    inode, so an observation of one file never passes for the other.
    """
    try:
        real.encode("utf-8")
        return real
    except UnicodeEncodeError:
        return os.fsencode(real).decode("utf-8", "backslashreplace")


def record_read(store, session: str, real: str, version: str) -> bool:
    """Best effort: remember that ``session`` read ``real`` at ``version``."""
    if store is None:
        return False
    try:
        store.record_observation(session, observation_key(real), version)
        return True
    except Exception as exc:  # the store is not allowed to break a read
        log.warning("could not record an observation of %s: %s", real, exc)
        return False


def state_unavailable(verb: str, display: str) -> ToolError:
    """``STATE_UNAVAILABLE``: there is no state to check a write against, or its gate cannot be had."""
    return ToolError(Codes.STATE_UNAVAILABLE, f"cannot {verb} {in_message(display)}: the session state is unavailable")


def changed_since_read(verb: str, display: str) -> ToolError:
    """``FS_NOT_OBSERVED``: the file is no longer the version the session read (or the call computed from)."""
    return ToolError(
        Codes.FS_NOT_OBSERVED,
        f"cannot {verb} {in_message(display)}: it changed since this session last read it; read it again",
    )


@contextlib.contextmanager
def gated(store, verb: str, display: str) -> Iterator[object]:
    """Hold the cross-process write gate, or fail closed with STATE_UNAVAILABLE.

    An exception in the body rolls back what it recorded, unless it says ``keep_recorded``: a
    write that failed but put the file back as this session read it records that version and
    still fails.
    """
    unavailable = state_unavailable(verb, display)
    if store is None:
        raise unavailable
    try:
        cm = store.write_gate()
        gate = cm.__enter__()
    except Exception as exc:
        log.warning("write gate unavailable: %s", exc)
        raise unavailable from None
    finished = False
    try:
        yield gate
        finished = True
    finally:
        if not finished:  # roll back, and let the original exception through ...
            failure = sys.exc_info()[1]
            if getattr(failure, "keep_recorded", False):  # ... unless what was recorded must stay
                with contextlib.suppress(Exception):
                    cm.__exit__(None, None, None)
            else:
                with contextlib.suppress(Exception):
                    cm.__exit__(*sys.exc_info())
    try:
        cm.__exit__(None, None, None)
    except Exception as exc:
        log.warning("could not commit the write gate: %s", exc)
        raise ToolError(
            Codes.STATE_UNAVAILABLE,
            f"cannot {verb} {in_message(display)}: the file was written but the session state could not record it",
        ) from None


def check_observed(gate, session: str, real: str, st: os.stat_result, verb: str, display: str) -> None:
    """Raise FS_NOT_OBSERVED unless ``session`` observed exactly this version of ``real``.

    ``gate`` is the held write gate, or the store itself for a first check made without it (an
    edit computed before the gate is taken; the check inside the gate is what decides).
    """
    check_observed_version(gate, session, real, file_version(st), verb, display)


def check_observed_version(gate, session: str, real: str, version: str, verb: str, display: str) -> None:
    """``check_observed`` for a version given as such (an open notebook's document version)."""
    try:
        seen = gate.observed_version(session, observation_key(real))
    except Exception:
        raise state_unavailable(verb, display) from None
    if seen is None:
        raise ToolError(Codes.FS_NOT_OBSERVED, f"cannot {verb} {in_message(display)}: read it first in this session")
    if seen != version:
        raise changed_since_read(verb, display)
