"""``find``: files by a fragment of their path, fuzzy, ranked best first, with the exact total.

How: rg lists the files below the search root with glob's visibility and ignore rules (``rg
--files``) into a pipe this process reads as it comes; each piece read is filtered at once, while
the walk goes on, by one linear-time regex over the whole piece per word of the query (the longest
first, each next over what the one before kept) that keeps the paths holding the word as a
subsequence (``match.py``), and what it keeps is ranked with the best so far (``rank.py``: a
path's rank depends on that path alone, so the page's best are among each piece's best). The
checks glob makes of rg's output (protected folders, VCS folders: scanned piece by piece; a
recheck where rg runs unfenced) run on what was kept; only if they drop a path are all ranked
again. The total counts every matching path; a page is ``offset`` .. ``offset +
find_max_results - 1`` of the ranking (``rank.find_page`` is the same over any list of paths).

What it must never do: show a path glob would not show, or answer a page that reads as the whole
when it is not (the footer names the total and how to go on).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Callable

from ...errors import Codes, ToolError
from ...render.find import find_next_offset, find_page_footer, render_find
from ...rg.recheck import Rechecker
from ...text.quoting import in_message
from ..context import CallContext
from ..indexing.ask import indexed_text
from ..search.flags import VCS_EXCLUDES, VCS_IN_PATH, discovery_flags, exclusion_flags, hide_flags
from ..search.root import excluded_below, inside_vcs, open_search_root
from ..search.run import diagnostic, file_errors, overflow_error, run_search, unfenced
from ..search.scans import drop_excluded, lines_have_vcs, lines_name_any
from ..spec import (
    BOOLEAN,
    INDEX_FIELDS,
    INTEGER,
    NAME,
    OFFSET,
    PATH,
    STRING,
    Rows,
    ToolSpec,
    object_schema,
    value_schema,
)
from .match import records_holding
from .rank import MAX_QUERY, query_words, rank_page

__all__ = ["FIND", "execute_find"]

RANK_EVERY = 20_000  # paths kept between two rankings of the best so far while the walk goes on
PIPE_SIZE = 1 << 20  # bytes the walk may write ahead of the reader (and the most one read takes)


def execute_find(ctx: CallContext, args: dict) -> dict:
    query: str = args["query"]
    if len(query) > MAX_QUERY:
        raise ToolError(Codes.ARGUMENT_INVALID, f"query must be at most {MAX_QUERY} characters (a fragment of a path)")
    words = query_words(query)
    if not words:
        raise ToolError(Codes.ARGUMENT_INVALID, "query must hold a word: a fragment of a path such as hdl or srv hdl")
    offset = args.get("offset", 1)
    limit = ctx.settings.find_max_results
    with open_search_root(ctx, args.get("path"), "find", spills=False) as root:
        target = root.target
        if not root.is_dir:
            raise ToolError(Codes.FS_NOT_DIRECTORY, f"cannot find in {in_message(target.display)}: not a directory")
        value: dict = {"query": query, "root": target.display, "paths": [], "totalPaths": 0, "offset": offset}
        if ctx.settings.respect_ignore_files:
            value["ignoreFiles"] = True
        if inside_vcs(ctx, root):
            return value
        excluded = excluded_below(ctx, root)
        got = indexed_text(ctx, root, value)
        if got is not None:  # the index's files: no walk, the same words test and ranking
            rels = held_by_all(got, words)
            unreadable, listed = 0, len(rels)
            matched = None
        else:
            rels, unreadable, listed, matched = _walked(ctx, root, excluded, words, offset - 1 + limit)
    total = len(rels)
    if offset > max(total, 1):
        raise ToolError(Codes.ARGUMENT_INVALID, f"offset {offset} is out of range ({total} matching paths)")
    # a path's rank depends on that path alone, so the pages' best are among each piece's best;
    # when a check above dropped a path, all are ranked again
    page = rank_page(matched.best if matched is not None and total == listed else rels, words, offset, limit)
    value["paths"] = [root.prefix + p for p in page] if root.prefix else page
    value["totalPaths"] = total
    if unreadable:
        value["unreadable"] = unreadable
    return value


def held_by_all(joined: str, words: list[str]) -> list[str]:
    """The paths (``joined`` by NULs, as the index gives them) holding every word as a subsequence
    (``match.records_holding``, the walk's own test), in their order."""
    if not joined:
        return []
    records = "\0./" + joined.replace("\0", "\0./")
    paths: list[str] = []
    for word in sorted(words, key=len, reverse=True):
        paths = records_holding(word)(records)
        if not paths:
            break
        records = "\0./" + "\0./".join(paths)
    return paths


def _walked(ctx: CallContext, root, excluded: list[str], words: list[str], need: int):
    """rg's walk, filtered as it comes: the matching paths, the folders rg could not read, how many
    the filter kept, and the records (their best ``need`` ranked as they came)."""
    argv = [
        "--files",
        "--null",
        *discovery_flags(ctx),
        *VCS_EXCLUDES,
        *hide_flags(ctx),
        *exclusion_flags(excluded),
        "--",
        ".",
    ]
    matched = _listed_and_matched(ctx, root, argv, words, excluded, need)
    rels, unreadable = matched.finish(), matched.unreadable
    listed = len(rels)
    # rg was told to leave VCS and protected folders out; what it printed is checked again,
    # path by path only where a scan of each piece as it came found such a name at all
    if matched.names_excluded:
        rels = drop_excluded(rels, excluded)
    if matched.has_vcs:
        rels = [p for p in rels if not VCS_IN_PATH.search(p)]
    if unfenced(ctx):
        with Rechecker(root.fd) as check:
            rels = [p for p in rels if check.is_file(p)]
    return rels, unreadable, listed, matched


def _listed_and_matched(
    ctx: CallContext, root, argv: list[str], words: list[str], excluded: list[str], need: int
) -> _Records:
    """rg's list, read here through a pipe as it comes, each piece filtered at once (``_Records``)
    while the walk goes on: what holds every one of ``words`` as a subsequence is kept, and the
    ``need`` best of it ranked as it comes (``_Records.best``).

    A pipe, not the in-memory file other searches use: rg lists files markedly slower into a
    file. The raw-output guard counts what is kept; when the reader stops (the guard, an error),
    it closes its end and a walk still writing stops at once.
    """
    cap = ctx.settings.raw_output_max_bytes

    def over() -> None:
        raise overflow_error(ctx, "find")

    tests = [records_holding(word) for word in sorted(words, key=len, reverse=True)]  # longest first

    def keep(text: str) -> list[str]:
        kept = tests[0](text)
        for test in tests[1:]:
            if kept:
                kept = test("\0./" + "\0./".join(kept))
        return kept

    def best(paths: list[str]) -> list[str]:
        return rank_page(paths, words, 1, need)

    matched = _Records(keep, excluded, cap, over, best)
    read_end, write_end = os.pipe()
    with contextlib.suppress(OSError):  # fewer, larger reads where the kernel allows it
        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    box: dict = {}

    def reader() -> None:
        try:
            while chunk := os.read(read_end, PIPE_SIZE):
                matched.take(chunk)
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc
        finally:
            os.close(read_end)

    thread = threading.Thread(target=reader, name="dsh-find-filter", daemon=True)
    thread.start()
    try:
        listed = run_search(ctx, argv, "find", root, stdout=write_end)
    finally:
        os.close(write_end)  # the reader reads to the end of what the walk wrote
        thread.join()
    if "error" in box:
        raise box["error"]
    matched.unreadable = file_errors(listed)
    if listed.returncode == 2 and not matched.taken and not matched.unreadable:
        raise ToolError(Codes.SEARCH_FAILED, f"find failed: {diagnostic(listed)}")
    return matched


class _Records:
    """rg's NUL-separated paths as they come, each without "./", decoded, those ``keep`` answers kept.

    Each piece of rg's output is decoded and filtered whole (``match.records_holding``: one regex
    over the piece), so the work runs while the walk goes on and no path costs a Python step of
    its own; a record cut by a piece's end waits for the next piece (a NUL is never part of a
    UTF-8 character). Without ``keep``, every path is kept. What is kept is scanned piece by piece
    for a VCS name (``has_vcs``) and for the folders ``excluded`` (``names_excluded``); ``over``
    is called (and must raise) once what is kept passes ``cap`` characters as rg wrote them.
    ``rank`` picks the best of the best so far and the paths kept since, once ``RANK_EVERY`` have
    been kept (so that a ranking's cost is spread over many paths) and at the end (``best``).
    """

    def __init__(
        self,
        keep: Callable[[str], list[str]] | None = None,
        excluded: list[str] | None = None,
        cap: int = 0,
        over: Callable[[], None] | None = None,
        rank: Callable[[list[str]], list[str]] | None = None,
    ) -> None:
        self.rels: list[str] = []
        self.best: list[str] = []  # what ``rank`` kept of what is kept (after ``finish``: of all)
        self._rank = rank
        self._unranked: list[str] = []
        self.taken = 0  # bytes rg wrote
        self.unreadable = 0  # folders rg could not read
        self.has_vcs = self.names_excluded = False
        self._rest = b""
        self._keep, self._excluded, self._cap, self._over, self._kept = keep, excluded or [], cap, over, 0

    def take(self, chunk: bytes) -> None:
        self.taken += len(chunk)
        data = self._rest + chunk if self._rest else chunk
        cut = data.rfind(b"\0")
        self._rest = data[cut + 1 :]
        if cut >= 0:
            self._add(data[:cut])

    def _add(self, block: bytes) -> None:
        text = "\0" + block.decode("utf-8", "surrogateescape")
        if self._keep is None:
            self.rels.extend(text.replace("\0./", "\0")[1:].split("\0"))
            return
        kept = self._keep(text)
        if not kept:
            return
        self.rels.extend(kept)
        if self._rank is not None:
            self._unranked.extend(kept)
            if len(self._unranked) >= RANK_EVERY:
                self._rank_now()
        # the scans look at what is kept only (a selective query keeps little to look at)
        joined = "\n".join(kept)
        self.has_vcs = self.has_vcs or lines_have_vcs(joined)
        self.names_excluded = self.names_excluded or lines_name_any(joined, self._excluded)
        if self._over is not None:
            self._kept += len(joined) + 2 * len(kept) + 1  # each "./", path and NUL
            if self._kept > self._cap:
                self._over()

    def _rank_now(self) -> None:
        if self._rank is not None:
            self.best = self._rank(self.best + self._unranked)
            self._unranked = []

    def finish(self) -> list[str]:
        """Every path kept; a last one rg ended without a NUL counts too."""
        if self._rest:
            self._add(self._rest)
            self._rest = b""
        self._rank_now()
        return self.rels


FIND = ToolSpec(
    name="find",
    title="Find files by name fragment",
    description=(
        "Find files whose path holds a fragment of a name, fuzzy and case-insensitive: every word of "
        "query must occur in the path in order of its letters, not necessarily together (hdl finds "
        "handlers.py; srv hdl finds server/handlers.py). Answers the total number of matching paths "
        "and a page of the best: the word at the start of the file name first, then at the start of a "
        "path segment, inside the name, inside the path, scattered; shorter paths first. The same files "
        "glob would list (hidden, protected and VCS folders left out)."
    ),
    input_schema=object_schema(
        {
            "query": {**NAME, "description": "A fragment of a path: one or more words, such as hdl or srv hdl."},
            "path": {**PATH, "description": "Directory to search (default: working directory)."},
            "offset": {**OFFSET, "description": "1-based rank of the first path of the page (default 1)."},
        },
        ("query",),
    ),
    output_schema=value_schema(
        {
            "query": STRING,
            "root": STRING,
            "paths": {"type": "array", "items": STRING},
            "totalPaths": INTEGER,
            "offset": INTEGER,
            "ignoreFiles": BOOLEAN,
            "unreadable": INTEGER,
            **INDEX_FIELDS,
        },
        ("query", "root", "paths", "totalPaths", "offset"),
    ),
    guidance=(
        "Use find when you know part of a file's name but not where it is or its exact spelling; use "
        "glob for a pattern (every *.py), grep for what files contain."
    ),
    execute=execute_find,
    render=render_find,
    searches=True,
    rows=(Rows("paths", ("path",)),),
    footer=find_page_footer,
    next_offset=find_next_offset,
)
