"""``grep``: lines matching a regular expression, grouped by file; notebooks searched by their cells.

Opening the search root, rg's flags and running rg under the fence live in ``tools/search``; this
module decides what to ask rg (its heading form first; when that cannot be read for sure, the
form that names the file on every line; ``--json`` last), adds the notebooks' cell matches
(``notebooks``) and hands the whole result to ``page``, which makes the page, the value
and the spill.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

from ...errors import Codes, ToolError
from ...fs.textwindow import BINARY_SNIFF_BYTES
from ...fs.tree import proc_fd_path
from ...index.plan import plan
from ...render.search import grep_header, grep_next_offset, grep_page_footer, render_grep
from ...rg.countform import COUNT_FLAGS, parse_counts
from ...rg.headingform import HEADING_FLAGS, BlockStream, FileBlocks
from ...rg.jsonstream import Matches, MatchStream, parse_all, parse_finished
from ...rg.lineform import LINE_FLAGS, parse_lines
from ...rg.recheck import Rechecker
from ...rg.runner import RgOutcome
from ..context import CallContext
from ..search.flags import (
    VCS_EXCLUDES,
    discovery_flags,
    exclusion_flags,
    hide_flags,
    user_excludes,
    user_exclusion_flags,
)
from ..search.root import excluded_below, inside_vcs, open_search_root
from ..search.run import diagnostic, file_errors, overflow_error, run_search, unfenced
from ..search.spill import save_spill
from ..spec import (
    BOOLEAN,
    EXCLUDE,
    INDEX_FIELDS,
    INTEGER,
    NAME,
    OFFSET,
    PATH,
    STRING,
    Rows,
    ToolSpec,
    nullable,
    object_schema,
    value_schema,
)
from .context_lines import add_context
from .cut import complete_before
from .early import early_rows
from .indexed import indexed_targets
from .notebooks import NOT_NOTEBOOKS, SCOPES, NotebookListing, search_notebooks, searches_notebook_file
from .page import preview_columns, shape_grep, without_preview
from .spans import line_records

__all__ = ["GREP", "INCLUDE_ONE_GLOB", "MAX_CONTEXT", "MODES", "execute_grep"]


MODES = ("content", "files_with_matches", "count")
MAX_CONTEXT = 20


def execute_grep(ctx: CallContext, args: dict) -> dict:
    pattern: str = args["pattern"]
    include: str | None = args.get("include")
    if include is not None:
        _check_include(include)
    excludes = user_excludes(args.get("exclude"))
    mode: str = args.get("output_mode", "content")
    around: int = args.get("context", 0)
    if around and mode != "content":
        raise ToolError(Codes.ARGUMENT_INVALID, f"context applies to output_mode content, not {mode}")
    # rg reads (?i) at the start as "the whole pattern, any case": the same flag reaches the main
    # search, the notebooks' cells and the page's highlighting.
    search = f"(?i){pattern}" if args.get("ignore_case") else pattern
    try:
        return _grep(ctx, args, pattern, search, include, excludes, mode, around)
    except ToolError as exc:
        if search is pattern or exc.code != Codes.SEARCH_INVALID_PATTERN:
            raise
        raise ToolError(exc.code, exc.message.replace(search, pattern, 1), exc.name) from None


def _grep(
    ctx: CallContext,
    args: dict,
    pattern: str,
    search: str,
    include: str | None,
    excludes: list[str],
    mode: str,
    around: int,
) -> dict:
    with open_search_root(ctx, args.get("path"), "grep", spills=True) as root:
        value: dict[str, Any] = {
            "pattern": pattern,
            "matches": [],
            "totalMatches": 0,
            "files": 0,
            "filesTotal": 0,
            "sampled": False,
            "spill": None,
            "unreadable": 0,
        }
        if excludes:
            value["exclude"] = excludes
        if mode != "content":
            value["outputMode"] = mode
            value["fileCounts"] = []
        if args.get("ignore_case"):
            value["ignoreCase"] = True
        if around:
            value["context"] = around
        scope: str = args.get("notebook_scope", "sources")
        if scope != "sources":
            value["notebookScope"] = scope
        if args.get("offset") is not None:
            value["offset"] = args["offset"]
        if ctx.settings.respect_ignore_files and root.is_dir:  # a file named by its path is searched anyway
            value["ignoreFiles"] = True
        if inside_vcs(ctx, root):
            return value
        if not root.is_dir and b"\0" in os.pread(root.fd, BINARY_SNIFF_BYTES, 0):
            # rg would print a named binary file's lines with their control bytes; skip it, as rg
            # skips binary files it meets in a folder, and say so.
            value["binarySkipped"] = 1
            return value
        excluded = excluded_below(ctx, root)
        # served by the workspace index: rg searches the candidate files only (indexed.py)
        targets = indexed_targets(ctx, root, plan(search), include, excludes, value)
        flags = [*discovery_flags(ctx), *(targets.flags if targets is not None else [])]
        if include is not None:
            flags.append(f"--glob={include}")
        flags += [
            *VCS_EXCLUDES,
            NOT_NOTEBOOKS,
            *hide_flags(ctx),
            *exclusion_flags(excluded),
            *user_exclusion_flags(excludes),
            f"--regexp={search}",
            "--",
        ]
        if targets is not None:  # no candidate: rg reads its empty standard input, yet judges the pattern
            flags += targets.paths or ["-"]
        else:
            flags.append("." if root.is_dir else (proc_fd_path(root.fd) or root.real))
        # Read in rg's heading form (rglines); what that form cannot say for sure (a name holding
        # a newline, a line that is not a match) is asked again in --json, parsed as it streams
        # (rgstream) or, failing that, whole and carefully. Notebooks are searched by their cell
        # sources, or their outputs' text, as notebook_scope says (grep/notebooks.py), not as JSON.
        one_notebook = searches_notebook_file(root)
        listing = NotebookListing(ctx, root, include, excluded, excludes)  # below a folder: runs alongside
        # files_with_matches and count need no line: rg counts (unless every line must be
        # checked again beneath the root, which needs the lines: an unfenced rg)
        counting = mode != "content" and not (root.is_dir and unfenced(ctx))
        found: FileBlocks | Matches
        try:
            if one_notebook:
                outcome, found = RgOutcome(1, b"", ""), Matches([], [], [])
            else:
                early = early_rows(ctx, root, excluded)
                outcome, found = _count(ctx, root, flags) if counting else _search(ctx, root, flags, early)
        finally:
            listing.wait()  # before the root's descriptor can close: its rg runs in that folder
        # cut short (rg walked in path order): nothing after the first path it may not have searched
        before = _complete_before(root, found) if outcome.overflow else None
        if root.is_dir and unfenced(ctx):
            with Rechecker(root.fd) as check:
                found = _confirmed(check, found, ctx.settings.grep_max_line_bytes)
        linked = ctx.resolver.visibility.linked_protected()
        if linked and root.is_dir:
            found = _not_linked(root.fd, found, linked)
        sources = [found]
        in_cells, cell_records = search_notebooks(ctx, root, search, include, excluded, listing, excludes, scope)
        if in_cells:
            sources.append(
                Matches(
                    [m.path for m in in_cells],
                    [m.line for m in in_cells],
                    [m.text for m in in_cells],
                    list(cell_records),
                )
            )
        if outcome.overflow:
            value["partialAfterBytes"] = ctx.settings.raw_output_max_bytes
        if outcome.returncode == 2:
            value["unreadable"] = file_errors(outcome) or sum(
                1 for line in outcome.stderr_tail.splitlines() if line.startswith("rg: ")
            )
        if root.is_dir:
            strip, prefix = "./", root.prefix
        else:
            strip, prefix = None, root.target.display

        def spans_of(lines: list[bytes]) -> list[bytes | None]:
            return line_records(ctx, root, search, lines)

        if before is not None:  # as the page names paths
            last, unsearched = before
            before = (prefix + last, None if unsearched is None else prefix + unsearched)
        spill = shape_grep(
            ctx,
            value,
            sources,
            strip,
            prefix,
            [root.prefix + rel for rel in excluded],
            root.prefix,
            spans_of,
            search,
            before,
        )
        if around and value["matches"]:
            add_context(root, value["matches"], around, ctx.settings.grep_max_line_bytes)
        if spill is not None:
            value["spill"] = save_spill(ctx, "grep", spill, pattern)
        return value


def _complete_before(root, found: FileBlocks | Matches) -> tuple[str, str | None] | None:
    """For a search cut short in path order: the last file rg finished and the first path that
    may sort among the files it did not search (``cut.complete_before``), relative to the root."""
    if not root.is_dir or not isinstance(found, FileBlocks) or not found.paths:
        return None
    last = _relative(found.paths[-1])
    return last, complete_before(root.fd, last)


def _relative(path: str) -> str:
    return path.removeprefix("./")


def _same_line(held: bytes, text: bytes, limit: int) -> bool:
    """Whether ``text`` as rg printed it is the line ``held``: all of it, or rg's preview of its start."""
    held = held.removesuffix(b"\n")
    if held == text:
        return True
    decoded = text.decode("utf-8", "surrogateescape")
    start = without_preview(decoded, limit)
    return start != decoded and held.startswith(start.encode("utf-8", "surrogateescape"))


def _confirmed(check: Rechecker, found: FileBlocks | Matches, limit: int) -> FileBlocks | Matches:
    """The matches whose line the file beneath the root really holds (rg ran unfenced)."""
    if isinstance(found, Matches):
        return found.subset(
            check.confirm_matches([found.match(i) for i in range(len(found))], lambda m: _relative(m.path))
        )
    keep = []
    for block, path in enumerate(found.paths):
        lines = found.lines(block)
        # rg printed at most the start of a long line: that start is all that must be compared
        held = check.lines(_relative(path), {number for number, _ in lines}, 4 * preview_columns(limit) + 8) or {}
        keep.append(
            [k for k, (number, text) in enumerate(lines) if number in held and _same_line(held[number], text, limit)]
        )
    return found.kept(keep)


def _not_linked(fd: int, found: FileBlocks | Matches, linked: frozenset) -> FileBlocks | Matches:
    """The matches without those in a protected file reached under another name (a hard link)."""

    def protected(path: str) -> bool:
        try:
            st = os.stat(_relative(path), dir_fd=fd, follow_symlinks=False)
        except OSError:
            return True  # gone or changed since rg read it: nothing to vouch for
        return st.st_nlink > 1 and (st.st_dev, st.st_ino) in linked

    if isinstance(found, Matches):
        drop = {p for p in set(found.paths) if protected(p)}
        return found.subset([i for i, p in enumerate(found.paths) if p not in drop]) if drop else found
    keep = [[] if protected(path) else list(range(found.counts[block])) for block, path in enumerate(found.paths)]
    return found.kept(keep)


def _count(ctx: CallContext, root, flags: list[str]) -> tuple[RgOutcome, FileBlocks]:
    """The main search of files_with_matches and count: rg counts each file's matching lines."""
    outcome = run_search(ctx, [*COUNT_FLAGS, *flags], "grep", root, consume=_counting(ctx))
    if outcome.returncode == 2 and not outcome.stdout and not file_errors(outcome):
        raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {diagnostic(outcome)}")
    try:
        return outcome, parse_counts(outcome.stdout)
    except ValueError as exc:
        raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {exc}") from None


def _search(ctx: CallContext, root, flags: list[str], early=None) -> tuple[RgOutcome, FileBlocks | Matches]:
    """The main search: heading form first, then the line form (``rg.lineform``), then
    ``--json``, each when the one before cannot be read for sure."""
    blocks = BlockStream()
    # rg prints at most the start of a long line (a minified bundle, a lock file): what it writes
    # grows with the matches, not with line length; the page marks the line as cut.
    columns = [f"--max-columns={preview_columns(ctx.settings.grep_max_line_bytes)}", "--max-columns-preview"]
    outcome = run_search(
        ctx,
        [*HEADING_FLAGS, *columns, *flags],
        "grep",
        root,
        consume=_reporting(ctx, blocks, early),
        keep_stdout=False,
        cut_ok=True,
    )
    if outcome.overflow:
        # Stopped at the raw-output guard. rg searched on several threads, so the files finished
        # by then are any subset: asked again walking in path order (one thread), the files it
        # finishes are the first ones in that order, the same on every page (``cut_in_path_order``).
        # Asking again in --json would only stop sooner.
        blocks = BlockStream()
        outcome = run_search(
            ctx,
            [*HEADING_FLAGS, *columns, "--sort=path", *flags],
            "grep",
            root,
            consume=_reporting(ctx, blocks, early),
            keep_stdout=False,
            cut_ok=True,
        )
        if outcome.overflow:
            cut = blocks.finish_cut()
            if cut is None or not cut.paths:  # nothing finished, or nothing read for sure: no page
                raise overflow_error(ctx, "grep")
            return outcome, cut
    if outcome.returncode == 2 and not blocks.size and not file_errors(outcome):
        raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {diagnostic(outcome)}")
    found = blocks.finish()
    if found is not None:
        return outcome, found
    # A name holding a newline (or a line the heading form cannot vouch for): the form that
    # names the file on every line is still exact and still bounded by --max-columns.
    outcome = run_search(ctx, [*LINE_FLAGS, *columns, *flags], "grep", root)
    if outcome.returncode == 2 and not outcome.stdout and not file_errors(outcome):
        raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {diagnostic(outcome)}")
    found = parse_lines(outcome.stdout)
    if found is not None:
        return outcome, found
    # Last, --json, which says what is what whatever the names hold (but prints whole lines, so
    # a search stopped at the raw-output guard answers the files rg had finished, as above).
    stream = MatchStream()
    outcome = run_search(ctx, ["--json", *flags], "grep", root, consume=stream.feed, cut_ok=True)
    if outcome.overflow:
        cut_matches = stream.finish_cut()
        if cut_matches is None:  # a record the quick reading cannot vouch for: the careful one
            cut_matches = parse_finished(outcome.stdout)
        if cut_matches is None or not len(cut_matches):
            raise overflow_error(ctx, "grep")
        return outcome, cut_matches
    if outcome.returncode == 2 and not outcome.stdout and not file_errors(outcome):
        raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {diagnostic(outcome)}")
    matches = stream.finish()
    if matches is None:
        try:
            matches = parse_all(outcome.stdout)
        except ValueError as exc:
            raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {exc}") from None
    return outcome, matches


PROGRESS_EVERY_S = 0.5  # how often a long search tells ``ctx.progress`` how far it got


def _reporting(ctx: CallContext, blocks: BlockStream, early=None):
    """``blocks.feed``, telling ``ctx.progress`` how far the search got, and ``early``
    (``early.early_rows``) its first matches, every PROGRESS_EVERY_S. A caller that asks for them
    (``ctx.preview``: a person's panel polling its progress, never left blank) is told as soon as
    rg has written a whole file's matches; one told by messages (a widget) only once the search
    has run PROGRESS_EVERY_S, so a short search sends none."""
    tell = ctx.progress
    if tell is None and early is None:
        return blocks.feed
    due = [0.0 if ctx.preview is not None else time.monotonic() + PROGRESS_EVERY_S]

    def feed(data: bytes) -> None:
        blocks.feed(data)
        now = time.monotonic()
        if now >= due[0] and blocks.matches:
            due[0] = now + PROGRESS_EVERY_S
            files = blocks.files
            if early is not None:
                early(blocks)
            if tell is not None:
                tell(
                    f"{blocks.matches:,} {'match' if blocks.matches == 1 else 'matches'} in {files:,} "
                    f"{'file' if files == 1 else 'files'} so far"
                )

    return feed


_COUNT_ROW = re.compile(rb"\0([0-9]+)\n")


def _counting(ctx: CallContext):
    """What reads rg's count rows as they come (``PATH NUL COUNT newline``) to tell
    ``ctx.progress`` how far a counting search got, as ``_reporting`` does; None when nobody asks."""
    tell = ctx.progress
    if tell is None:
        return None
    due = [0.0 if ctx.preview is not None else time.monotonic() + PROGRESS_EVERY_S]
    seen = [0, 0]  # files, matches
    carry = [b""]  # a row cut between two pieces

    def feed(data: bytes) -> None:
        text = carry[0] + data
        end = text.rfind(b"\n") + 1
        carry[0] = text[end:]
        counts = _COUNT_ROW.findall(text, 0, end)
        seen[0] += len(counts)
        seen[1] += sum(map(int, counts))
        now = time.monotonic()
        if now >= due[0] and seen[1]:
            due[0] = now + PROGRESS_EVERY_S
            files, matches = seen
            tell(
                f"{matches:,} {'match' if matches == 1 else 'matches'} in {files:,} "
                f"{'file' if files == 1 else 'files'} so far"
            )

    return feed


INCLUDE_ONE_GLOB = "include must be one positive glob such as *.py or *.{py,md} (no comma list, no leading !)"


def _check_include(include: str) -> None:
    """Refuse what is not one positive glob: a leading ``!``, a comma outside braces, or braces
    that do not pair up.

    A comma inside ``{}`` separates alternatives of the one glob (``*.{py,md}``), as ripgrep
    reads it, and a comma inside ``[...]`` or after a backslash is a literal comma (``*[,]*``,
    ``*\\,*``). Only a top-level comma makes a list of globs, which ``--glob`` does not take.
    """
    if include.startswith("!"):
        raise ToolError(Codes.ARGUMENT_INVALID, INCLUDE_ONE_GLOB)
    depth = 0
    i, n = 0, len(include)
    while i < n:
        c = include[i]
        if c == "\\":
            i += 1  # the next character is literal
        elif c == "[":
            # a class runs to the next ], which may come first ([]x], [!]x]) as a literal
            j = i + 1
            if j < n and include[j] in "!^":
                j += 1
            if j < n and include[j] == "]":
                j += 1
            close = include.find("]", j)
            if close >= 0:
                i = close
        elif c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                raise ToolError(Codes.ARGUMENT_INVALID, "include has a } without its {; write [}] for a literal brace")
            depth -= 1
        elif c == "," and depth == 0:
            raise ToolError(Codes.ARGUMENT_INVALID, INCLUDE_ONE_GLOB)
        i += 1
    if depth:
        raise ToolError(Codes.ARGUMENT_INVALID, "include has a { without its }; write [{] for a literal brace")


GREP_OUTPUT = value_schema(
    {
        "pattern": STRING,
        "matches": {
            "type": "array",
            "items": value_schema(
                {
                    "path": STRING,
                    "line": INTEGER,
                    "text": STRING,
                    "submatches": {"type": "array", "items": {"type": "array", "items": INTEGER}},
                    "cell": INTEGER,
                    "cellId": nullable(STRING),
                    "output": INTEGER,
                },
                ("path", "line", "text"),
            ),
        },
        "totalMatches": INTEGER,
        "files": INTEGER,
        "filesTotal": INTEGER,
        "sampled": BOOLEAN,
        "spill": nullable(STRING),
        "unreadable": INTEGER,
        "binarySkipped": INTEGER,
        "exclude": {"type": "array", "items": STRING},
        "ignoreFiles": BOOLEAN,
        "outputMode": {"type": "string", "enum": list(MODES)},
        "fileCounts": {
            "type": "array",
            "items": value_schema({"path": STRING, "matches": INTEGER}, ("path", "matches")),
        },
        "ignoreCase": BOOLEAN,
        "context": INTEGER,
        "notebookScope": {"type": "string", "enum": list(SCOPES)},
        "offset": INTEGER,
        **INDEX_FIELDS,
    },
    ("pattern", "matches", "totalMatches", "files", "spill"),
)


GREP = ToolSpec(
    name="grep",
    title="Search file contents",
    description=(
        "Search file contents with a regular expression (ripgrep syntax). path is a file or a "
        "directory (default: working directory); include is one glob that limits the files searched. "
        "Matches are grouped by file with line numbers; in a notebook (.ipynb) cell sources are "
        "searched, not its JSON, and a match reads Cell C, line L (C as read numbers cells, offset "
        "C with limit 1 reads that cell); notebook_scope outputs or all searches the text of cell "
        "outputs instead or too, a match there reading Cell C, output K, line L (K as read numbers "
        "outputs). A result within the cap is shown whole; a "
        "larger one is sampled across the top-level entries of path and their files, and the "
        "complete result is saved; offset pages through it in path order. output_mode "
        "files_with_matches or count answers one row per matching file with its match count."
    ),
    input_schema=object_schema(
        {
            "pattern": {**NAME, "description": "Regular expression to search for."},
            "path": {**PATH, "description": "File or directory to search."},
            "include": {
                **NAME,
                "description": "One glob such as *.py or *.{py,md}; not a comma list (*.py,*.md), no leading !.",
            },
            "exclude": EXCLUDE,
            "output_mode": {
                "type": "string",
                "enum": list(MODES),
                "description": "content (default): matching lines grouped by file; files_with_matches: "
                "each matching file with its match count, in path order; count: the same rows, most "
                "matches first.",
            },
            "ignore_case": {**BOOLEAN, "description": "Match letters in any case (default false)."},
            "context": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_CONTEXT,
                "description": f"Lines to show before and after each shown match (content only; 0 to "
                f"{MAX_CONTEXT}); context rows read Line N- instead of Line N:.",
            },
            "notebook_scope": {
                "type": "string",
                "enum": list(SCOPES),
                "description": "What of a notebook's cells is searched: sources (default): cell sources; "
                "outputs: the text of cell outputs (stream text, text/plain, an error's name, value and "
                "traceback; never images or other data); all: both.",
            },
            "offset": {
                **OFFSET,
                "description": "1-based position in the whole result, in path order (files for "
                "files_with_matches and count): pages through it instead of the sampled overview.",
            },
        },
        ("pattern",),
    ),
    output_schema=GREP_OUTPUT,
    guidance=(
        "Use grep to find where text occurs. Narrow with path or include when a search is broad; "
        "read a matching file for context around a line. A capped result names the file holding "
        "every match: read it with offset/limit or grep it. When the footer says the page was "
        "sampled, it shows breadth (how many of the matching files it covers), not the first matches. "
        "For an overview of where a pattern occurs, ask output_mode files_with_matches first; ask "
        "context=3 to see the lines around each match without a read."
    ),
    execute=execute_grep,
    render=render_grep,
    searches=True,
    # output_mode files_with_matches and count: one row per file
    rows=(Rows("fileCounts", ("path", "matches")), Rows("matches", ("path", "line", "text"))),
    footer=grep_page_footer,
    next_offset=grep_next_offset,
    header=grep_header,
)
