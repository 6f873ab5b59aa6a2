"""The call policy: who is calling, what they may do, and how their call runs — one place for every surface.

Why it exists: REST, MCP over HTTP, MCP over stdio, the magic, the widgets and the Python API all
run tools for someone. Only the surface knows who (an authenticated Jupyter user, a token, the OS
user) and what the server's authorizer allows; only the core knows what each tool does (its spec
says whether it writes and whether it searches) and what the state holds. So a surface describes
the caller (``Caller``) and the core decides (``admit``), with the same rules everywhere:

* a tool that writes needs a caller who may write (a server's ``contents:write``);
* a caller who may not write uses sessions that exist, or ``default``: creating sessions is
  bookkeeping a read-only token must not be able to fill the state with;
* a caller who may not write gets the small spill quota (``spill_max_bytes_read_only``), counted
  per caller; callers a server cannot tell apart count as one (Jupyter names a token-only request
  anew each time, so a per-name count would be no quota at all);
* a call is admitted when it arrives, and that is when its wait starts: a search that waited
  longer than ``search_timeout_ms`` for a free search slot is not started; searches run on a
  pool of their own (``Admission.searches``), so hung searches never delay a list or a read;
* a read-only caller's call records count against a bound of their own (``state.store``), so
  they cannot push the owner's out of the call log;
* a read that is not a tool call (a listing page for a person, a page of a saved result, a
  session's records, a call's progress, the status) is a ``View`` (``Workspace.admit_view``): it
  changes nothing, ever. It creates no session (a writer naming one that does not exist is
  answered as for a new, empty session), records no observation and logs no call, so a server
  may serve it on a GET, which Jupyter does not check for XSRF. A view that uses a session
  (a listing page, a saved result) follows the session rule above as a tool call does; one that
  asks about a session's records does not use it, and finds no such session the same way for
  every caller;
* the list of files open in JupyterLab (``Workspace.open_files``) is a view of no session: it
  reads no state, so there is nothing to admit, and every caller who may read sees the same list,
  with ``contents:write`` or without, whoever has the files open. It names files ``list`` shows
  them anyway (and leaves out what ``list`` leaves out), and every tool answer about an open file
  tells any caller that it is open;
* a call's progress is seen only by the caller who started it (``Caller.identity``);
* a caller who may not write learns how the tools are confined, not where the state file is;
* a JupyterLab page that reports its open tabs and waits for the server's requests
  (``admit_page``) is bound to the one caller who reported it, who alone sees its requests; its
  answers to them lead to writes (the page saves the file), so answering needs a caller who may
  write, and a caller whom nothing identifies across requests cannot hold a page at all.

What it must never do: trust a surface's own list of writing or searching tools (the spec says),
or let a refusal pass as a tool result (a refusal is ``CallRefused``, which a server answers with
403: the call never ran).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .progress import Reporter

__all__ = ["ANONYMOUS", "Admission", "CallRefused", "Caller", "View", "admit_page"]

# Who the callers a server cannot tell apart count as, for quotas and the call log's user filter.
ANONYMOUS = "(token-only callers)"

WRITE_REFUSED = "User is not authorized to write on resource: contents."
SESSION_REFUSED = "a caller without contents:write cannot create sessions; use an existing session or default"
PAGE_REFUSED = "a caller that nothing identifies across requests cannot report a page's tabs"


class CallRefused(Exception):
    """The caller may not make this call; ``message`` says why in one sentence (HTTP 403)."""

    def __init__(self, message: str, code: str = "FORBIDDEN") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass(frozen=True)
class Caller:
    """Who calls, as the surface knows it.

    ``surface`` names it in the call log; ``user`` is who (None: the OS user); ``may_write`` is
    the server's ``contents:write`` (always true for a local process: whoever runs it has its
    rights); ``anonymous`` says that ``user`` is a name the server made up for this one request
    (a token without a login cookie), so it identifies nobody across requests; ``credential`` is
    then a digest of the token the request carried (never the token), the only thing that
    tells such a caller from another.
    """

    surface: str = "python"
    user: str | None = None
    may_write: bool = True
    anonymous: bool = False
    credential: str | None = None

    @property
    def identity(self) -> str | None:
        """Who this caller is across requests, for what only they may see (their calls' progress).

        A named caller is their name (``user:NAME``; the OS user's calls share ``user:``). A
        token-only caller is the token they hold (``token:DIGEST``): every request with that token
        is the same caller to the server, which can tell them apart by nothing else, and a caller
        with another token is another. None: nothing identifies this caller, so nothing is kept
        for them.
        """
        if self.anonymous:
            return f"token:{self.credential}" if self.credential else None
        return f"user:{self.user or ''}"

    @property
    def quota_owner(self) -> str | None:
        """Whose read-only spill quota this caller's saved results count against (None: no quota)."""
        if self.may_write:
            return None
        return ANONYMOUS if self.anonymous or not self.user else self.user


@dataclass(frozen=True)
class Admission:
    """A call the policy let in: who, in which session, how it runs, since when it waits."""

    tool: str
    session: str
    caller: Caller
    searches: bool  # run it on the search pool
    queued_since: float  # time.monotonic() when it was admitted
    spill_quota: int | None  # bytes this caller's saved results may hold (None: the session's limits)
    progress: Reporter | None = None  # how far it got, for its caller only (``Workspace.call_progress``)

    @property
    def waited_ms(self) -> float:
        return (time.monotonic() - self.queued_since) * 1000


@dataclass(frozen=True)
class View:
    """A read that is not a tool call, let in by the policy: who, which session, where it stands.

    ``cwd`` is the session's working directory (absolute, real) when the session exists, None
    when it does not (nothing is created for a view: it is answered as for a session with nothing
    in it yet).
    """

    session: str
    caller: Caller
    cwd: str | None

    @property
    def exists(self) -> bool:
        return self.cwd is not None


def admit_page(caller: Caller, answers: bool = False) -> str:
    """The identity a JupyterLab page of ``caller`` is bound to (``Caller.identity``).

    A page tells the server what its tabs have open and waits for its requests: reads, which
    change nothing but what the server knows of that page. Its answers to a request lead to a
    write (the page takes a change and saves the file), so ``answers`` needs a caller who may
    write. ``CallRefused`` otherwise, or when nothing identifies the caller across requests (no
    one could be told apart as the page's owner).
    """
    if answers and not caller.may_write:
        raise CallRefused(WRITE_REFUSED)
    identity = caller.identity
    if identity is None:
        raise CallRefused(PAGE_REFUSED)
    return identity
