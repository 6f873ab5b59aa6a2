"""``find``: files by a fragment of their path, fuzzy, ranked best first, with the exact total.

How: rg lists the files below the search root with glob's visibility and ignore rules (``rg
--files``), and a second rg reads that list through a pipe as it comes (NUL-separated) and keeps
the paths that hold the query's longest word as a subsequence, a linear-time regex in rg's engine; the other
words, the checks glob makes of rg's output (protected folders, VCS folders, a recheck where rg
runs unfenced) and the ranking (``rank.py``) run on what it kept. The total counts every matching
path; a page is ``offset`` .. ``offset + find_max_results - 1`` of the ranking.

What it must never do: show a path glob would not show, or answer a page that reads as the whole
when it is not (the footer names the total and how to go on).
"""

from __future__ import annotations

import os
import threading

from ...errors import Codes, ToolError
from ...render.find import find_next_offset, find_page_footer, render_find
from ...rg.recheck import Rechecker
from ...text.quoting import in_message
from ..context import CallContext
from ..indexing.ask import indexed_text, say_rg
from ..search.flags import VCS_EXCLUDES, VCS_IN_PATH, discovery_flags, exclusion_flags, hide_flags
from ..search.root import excluded_below, inside_vcs, open_search_root
from ..search.run import diagnostic, file_errors, run_search, unfenced
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
from .listed import matching_joined
from .rank import MAX_QUERY, fuzzy_regex, matches_all, query_words, rank_page

__all__ = ["FIND", "execute_find"]


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
        in_index = matching_joined(got, words) if got is not None else None
        if got is not None and in_index is None:
            say_rg(value, "a path holds a line break")
        if in_index is not None:
            rels, unreadable = in_index, 0
        else:
            rels, unreadable = _walked(ctx, root, excluded, words)
    total = len(rels)
    if offset > max(total, 1):
        raise ToolError(Codes.ARGUMENT_INVALID, f"offset {offset} is out of range ({total} matching paths)")
    page = rank_page(rels, words, offset, limit)
    value["paths"] = [root.prefix + p for p in page] if root.prefix else page
    value["totalPaths"] = total
    if unreadable:
        value["unreadable"] = unreadable
    return value


def _walked(ctx: CallContext, root, excluded: list[str], words: list[str]) -> tuple[list[str], int]:
    """The matching paths from rg's walk (the filter in a second rg), and the folders it could not read."""
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
    rels, unreadable = _listed_and_matched(ctx, root, argv, fuzzy_regex(words))
    # rg was told to leave VCS and protected folders out; what it printed is checked again,
    # path by path only where one scan of the whole output finds such a name at all
    joined = "\n".join(rels)
    if lines_name_any(joined, excluded):
        rels = drop_excluded(rels, excluded)
    if lines_have_vcs(joined):
        rels = [p for p in rels if not VCS_IN_PATH.search(p)]
    if unfenced(ctx):
        with Rechecker(root.fd) as check:
            rels = [p for p in rels if check.is_file(p)]
    if len(words) > 1:  # rg tested the longest word; the others are tested here
        lowered = list(map(str.lower, rels))
        rels = [rels[i] for i in matches_all(lowered, words, max(words, key=len))]
    return rels, unreadable


def _listed_and_matched(ctx: CallContext, root, argv: list[str], regex: str) -> tuple[list[str], int]:
    """The listed paths (without "./") that ``regex`` matches, and how many folders rg could not read.

    The list goes from the first rg to the second through a pipe between the two, so the filter
    runs while the walk does and the list never passes through this process; only the matching
    paths reach it, decoded as they come (``_Records``).
    """
    # each record is one path, case ignored, "." also a newline; the match starts after "./"
    pattern = f"(?is)^\\./.*{regex}"
    filter_argv = [
        "--null-data",
        "--no-filename",
        "--no-line-number",
        "--color=never",
        f"--regexp={pattern}",
        "--",
        "-",
    ]
    read_end, write_end = os.pipe()
    box: dict = {}
    matched = _Records()

    def second() -> None:
        try:
            box["outcome"] = run_search(
                ctx, filter_argv, "find", root, stdin=read_end, consume=matched.take, keep_stdout=False
            )
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc
        finally:  # once the filter is gone (or never started), a walk still writing stops at once
            os.close(read_end)

    matcher = threading.Thread(target=second, name="dsh-find-filter", daemon=True)
    matcher.start()
    try:  # the walk writes straight into the pipe the filter reads: no copy through this process
        listed = run_search(ctx, argv, "find", root, stdout=write_end)
    finally:
        os.close(write_end)  # the filter reads to the end of what the walk wrote
        matcher.join()
    unreadable = file_errors(listed)
    if listed.returncode == 2 and not matched.taken and not unreadable:
        raise ToolError(Codes.SEARCH_FAILED, f"find failed: {diagnostic(listed)}")
    if "error" in box:
        raise box["error"]
    found = box["outcome"]
    if found.returncode == 2 and not matched.taken:
        raise ToolError(Codes.SEARCH_FAILED, f"find failed: {diagnostic(found)}")
    return matched.finish(), unreadable


class _Records:
    """The filter's NUL-separated paths, each without "./", decoded and split as rg writes them.

    The work runs while the walk goes on (each chunk as it comes), in a few C-level calls per
    chunk: a decode, one replace that takes every "./" off, a split; a record cut by a chunk's
    end waits for the next chunk (a NUL is never part of a UTF-8 character).
    """

    def __init__(self) -> None:
        self.rels: list[str] = []
        self.taken = 0  # bytes rg wrote
        self._rest = b""

    def take(self, chunk: bytes) -> None:
        self.taken += len(chunk)
        data = self._rest + chunk if self._rest else chunk
        cut = data.rfind(b"\0") + 1
        self._rest = data[cut:]
        if cut:
            self._add(data[:cut])

    def _add(self, block: bytes) -> None:
        text = ("\0" + block.decode("utf-8", "surrogateescape")).replace("\0./", "\0")
        parts = text[1:].split("\0")
        parts.pop()  # after the last NUL
        self.rels.extend(parts)

    def finish(self) -> list[str]:
        """Every path; a last one rg ended without a NUL counts too."""
        if self._rest:
            self._add(self._rest + b"\0")
            self._rest = b""
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
