"""Which files a grep's rg searches when the workspace index may answer: the candidates, not ".".

Why: on a big tree most of a grep's time is rg opening files that cannot match. The index
(``tools.indexing.keeper``) knows every file rg would search and the trigrams of each one's text;
``index.plan`` says which substrings any matching line holds. rg then searches exactly the files
that hold them, so matching, lines, counts and pages stay rg's.

Where rg named a file differently from meeting it walking, the walk is kept: a file holding a
NUL byte (rg stops at the NUL when walking, reads on when named) is searched by walking its
folder one level deep, rg told by a name glob which of the folder's files to take; every other
candidate in such a folder goes the same way, so no file is searched twice.

What it must never do: leave out a file rg walking from the root would search and match, or
serve a call the index cannot vouch for (the value then says ``source: "rg"`` and why).
"""

from __future__ import annotations

import re

from ...index.globs import select
from ...index.plan import Query
from ...index.store import FileRow, TooMany
from ..context import CallContext
from ..indexing.ask import ask_index, say_rg
from ..indexing.keeper import NotServed, Served
from ..search.root import SearchRoot

__all__ = ["MAX_CANDIDATES", "Targets", "indexed_targets"]

MAX_CANDIDATES = 20_000  # more files than this: rg's walk is as quick, and argv stays small
_PLAIN_NAME = re.compile(r"[A-Za-z0-9._-]+")  # a name a glob names as it is


class Targets:
    """rg's arguments after its flags for an indexed grep: extra flags and the paths."""

    def __init__(self, flags: list[str], paths: list[str]) -> None:
        self.flags = flags  # --max-depth and name globs when folders are walked
        self.paths = paths  # "./rel" files and folders; empty: no file can match


def indexed_targets(
    ctx: CallContext, root: SearchRoot, query: Query, include: str | None, excludes: list[str], value: dict
) -> Targets | None:
    """What rg searches for this grep (or replace) when the index answers (``value["source"]``
    "index"), ``query`` being the pattern's ``index.plan``; or None: rg walks from the root as
    always (``value`` says why, once an index is in play)."""

    def candidates(served: Served) -> tuple[list[FileRow], int]:
        most = MAX_CANDIDATES if include is None and not excludes else None  # a glob may narrow them
        try:
            rows = served.store.candidates(query, served.prefix, most)
        except TooMany as exc:
            raise NotServed(f"too many candidate files (at least {exc.at_least:,})") from None
        if rows is None:
            raise NotServed("the pattern has no three characters every match must hold")
        cut = len(served.prefix) + 1 if served.prefix else 0
        return [r for r in rows if not r.path.endswith(".ipynb")], cut  # notebooks: searched by cells

    got = ask_index(ctx, root, value, candidates)
    if got is None:
        return None
    rows, cut = got
    if include is not None or excludes:
        # rg applies --glob to the files it walks, never to files it is named: decided here
        kept = select([r.path[cut:] for r in rows], include, excludes)
        if kept is None:
            say_rg(value, "the include or exclude glob is not one the index decides as rg does")
            return None
        chosen = set(kept)
        rows = [r for r in rows if r.path[cut:] in chosen]
    if len(rows) > MAX_CANDIDATES:
        say_rg(value, f"too many candidate files ({len(rows):,})")
        return None
    walked = {r.path.rpartition("/")[0] for r in rows if r.nul}
    files: list[str] = []
    names: set[str] = set()
    for r in rows:
        folder, _, name = r.path.rpartition("/")
        if folder in walked:
            if not _PLAIN_NAME.fullmatch(name):
                say_rg(value, "a candidate beside a file holding a NUL byte has a name a glob cannot name")
                return None
            names.add(name)
        else:
            files.append(r.path[cut:])
    folders = sorted(f[cut:] if len(f) >= cut and f else "." for f in walked)
    flags = ["--max-depth=1", *(f"--glob={n}" for n in sorted(names))] if folders else []
    paths = ["./" + p for p in sorted(files, key=_path_order)]
    paths += ["./" + f if f != "." else "." for f in folders]
    return Targets(flags, paths)


def _path_order(rel: str) -> list[str]:
    """rg's path order: component by component (``a/x`` before ``a.b``)."""
    return rel.split("/")
