"""Executors for ``glob`` and ``grep``: parse arguments, build the rg argv, run, shape the value.

Opening the search root, rg's flags and running rg under the fence live in ``searchroot``; this
module decides what to ask rg and how a complete result becomes a page, a value and a spill.
"""

from __future__ import annotations

import os

from ..fs.tree import proc_fd_path
from .context import CallContext
from ..errors import Codes, ToolError
from ..rg.recheck import Rechecker
from ..text.quoting import in_message
from ..render.search import render_glob, render_glob_spill, render_grep
from ..rg.runner import RgOutcome
from ..rg.headingform import HEADING_FLAGS, BlockStream, FileBlocks
from ..rg.jsonstream import Matches, MatchStream, parse_all
from .sampling import sample_across_groups
from ..fs.textwindow import BINARY_SNIFF_BYTES
from .spec import NAME, PATH, ToolSpec, nullable, object_schema, value_schema
from .globsplit import Background, merge_by_mtime, plan_split, stamper
from .grepshape import shape_grep
from .grepspans import line_records
from .notebook_grep import NOT_NOTEBOOKS, NotebookListing, search_notebooks, searches_notebook_file
from .searchroot import (
    DISCOVERY,
    VCS_DIRS,
    VCS_EXCLUDES,
    VCS_IN_PATH,
    diagnostic,
    discovery_flags,
    drop_excluded,
    excluded_below,
    exclusion_flags,
    hide_flags,
    inside_vcs,
    open_search_root,
    overflow_error,
    run_search,
    unfenced,
)

__all__ = ["GLOB", "GREP", "execute_glob", "execute_grep", "VCS_DIRS", "DISCOVERY", "VCS_EXCLUDES"]


# ---------------------------------------------------------------------------------------- glob


def execute_glob(ctx: CallContext, args: dict) -> dict:
    pattern: str = args["pattern"]
    if pattern.startswith("!"):
        raise ToolError(Codes.ARGUMENT_INVALID, 'pattern must not start with "!"; negated globs are not supported')
    with open_search_root(ctx, args.get("path"), "glob", spills=False) as root:
        target = root.target
        if not root.is_dir:
            raise ToolError(Codes.FS_NOT_DIRECTORY, f"cannot glob {in_message(target.display)}: not a directory")
        value = {
            "pattern": pattern,
            "root": target.display,
            "paths": [],
            "totalPaths": 0,
            "sampled": False,
            "groupsShown": 0,
            "groupsTotal": 0,
            "spill": None,
            "capped": False,
        }
        if inside_vcs(ctx, root):
            return value
        excluded = excluded_below(ctx, root)
        # The pattern comes before the exclusions: with rg, a later glob wins over an earlier one.
        # --null: a file name may hold a newline, so paths are NUL-separated on the wire.
        argv = ["--files", "--null", "--sort=modified", *discovery_flags(ctx), f"--glob={pattern}", *VCS_EXCLUDES,
                *hide_flags(ctx), *exclusion_flags(excluded)]
        split = plan_split(root.fd, _not_for_part_b(excluded))
        if split is not None:  # two sorted walks at once, merged by time (globsplit.py)
            rels, stdout = _two_walks(ctx, root, argv, split)
        else:
            outcome = run_search(ctx, [*argv, "--", "."], "glob", root)
            if outcome.returncode == 2 and not outcome.stdout:
                raise ToolError(Codes.SEARCH_FAILED, f"glob failed: {diagnostic(outcome)}")
            stdout, rels = outcome.stdout, None
        recheck = unfenced(ctx)
        filtered = rels is not None or bool(excluded) or recheck or _has_vcs(stdout)
        if filtered:
            if rels is None:
                # One decode of the whole output; bytes that are not UTF-8 stay as surrogate
                # escapes, so a path that is shown (quoted, as \udcXX) can be named back.
                rels = [p[2:] for p in stdout.decode("utf-8", "surrogateescape").split("\0") if p]
            if excluded or _has_vcs(stdout):
                rels = [p for p in drop_excluded(rels, excluded) if not VCS_IN_PATH.search(p)]
            if recheck:
                with Rechecker(root.fd) as check:
                    rels = [p for p in rels if check.is_file(p)]
    if filtered:
        paths = [root.prefix + p for p in rels] if root.prefix else rels
    else:
        # rg names every path "./…" from its working directory: one replace makes them display paths.
        blob = stdout.decode("utf-8", "surrogateescape")
        paths = ("\0" + blob).replace("\0./", "\0" + root.prefix)[1:].split("\0")
        if paths and paths[-1] == "":
            paths.pop()
    return _shape_glob(ctx, value, paths, root.prefix)


def _not_for_part_b(excluded: list[str]):
    """Which folders the cut must leave in part A: dot folders (hidden, or VCS), protected ones
    and those above a protected one (their exclusion globs are anchored at the root)."""
    def skip(rel: str) -> bool:
        name = rel.rpartition("/")[2]
        return name.startswith(".") or any(e == rel or e.startswith(rel + "/") for e in excluded)
    return skip


def _two_walks(ctx: CallContext, root, argv: list[str], split) -> tuple[list[str], bytes]:
    """Both parts' sorted walks at once (B on a thread), merged: ``(paths without "./", raw output)``."""
    def walk(flags: list[str]) -> bytes:
        outcome = run_search(ctx, [*argv, *flags, "--", "."], "glob", root)
        if outcome.returncode == 2 and not outcome.stdout:
            raise ToolError(Codes.SEARCH_FAILED, f"glob failed: {diagnostic(outcome)}")
        return outcome.stdout

    part_b = Background(lambda: walk(split.b_flags))
    try:
        out_a = walk(split.a_flags)
    except BaseException:
        part_b.wait()  # before the root's descriptor can close: B's rg runs in that folder
        raise
    out_b = part_b.result()
    if len(out_a) + len(out_b) > ctx.settings.raw_output_max_bytes:  # the cap holds for the two together
        raise overflow_error(ctx, "glob")
    a = [p[2:] for p in out_a.decode("utf-8", "surrogateescape").split("\0") if p]
    b = [p[2:] for p in out_b.decode("utf-8", "surrogateescape").split("\0") if p]
    b = split.only_b(b)  # an entry made after the cut was planned is A's
    stamp, close = stamper(root.fd)
    try:
        return merge_by_mtime(a, b, stamp), out_a + b"\0" + out_b
    finally:
        close()


def _has_vcs(stdout: bytes) -> bool:
    # Every VCS folder name starts with a dot, and rg names every path "./…": no "/." at all
    # (one scan) means no VCS folder, before one scan per name.
    return b"/." in stdout and any(name.encode() + b"/" in stdout for name in VCS_DIRS)


def _shape_glob(ctx: CallContext, value: dict, paths: list[str], root_prefix: str) -> dict:
    """The page: all paths within the cap, else a sample across top-level entries (``root_prefix``
    is what every path starts with below the search root)."""
    cap = ctx.settings.glob_max_results
    total = len(paths)
    value["totalPaths"] = total
    if total <= cap:
        value["paths"] = paths
        return value
    cut = len(root_prefix)
    keys = [p[cut:].partition("/")[0] for p in paths] if cut else [p.partition("/")[0] for p in paths]
    sample = sample_across_groups(keys, cap)
    value["groupsTotal"] = sample.groups_total
    if ctx.settings.glob_sample_over_cap and not sample.flat:
        value["paths"] = [paths[i] for i in sample.indices]
        value["sampled"] = True
        value["groupsShown"] = sample.groups_shown
    else:
        value["paths"] = paths[:cap]
        value["groupsShown"] = len(set(keys[:cap]))
    value["capped"] = True
    value["spill"] = _save(ctx, "glob", render_glob_spill(paths), value["pattern"])
    return value


# ---------------------------------------------------------------------------------------- grep


def execute_grep(ctx: CallContext, args: dict) -> dict:
    pattern: str = args["pattern"]
    include: str | None = args.get("include")
    if include is not None:
        _check_include(include)
    with open_search_root(ctx, args.get("path"), "grep", spills=True) as root:
        value = {
            "pattern": pattern, "matches": [], "totalMatches": 0, "files": 0, "filesTotal": 0,
            "sampled": False, "spill": None, "unreadable": 0,
        }
        if inside_vcs(ctx, root):
            return value
        if not root.is_dir and b"\0" in os.pread(root.fd, BINARY_SNIFF_BYTES, 0):
            # rg would print a named binary file's lines with their control bytes; skip it, as rg
            # skips binary files it meets in a folder, and say so.
            value["binarySkipped"] = 1
            return value
        excluded = excluded_below(ctx, root)
        flags = [*discovery_flags(ctx)]
        if include is not None:
            flags.append(f"--glob={include}")
        flags += [*VCS_EXCLUDES, NOT_NOTEBOOKS, *hide_flags(ctx), *exclusion_flags(excluded), f"--regexp={pattern}",
                  "--", "." if root.is_dir else (proc_fd_path(root.fd) or root.real)]
        # Read in rg's heading form (rglines); what that form cannot say for sure (a name holding
        # a newline, a line that is not a match) is asked again in --json, parsed as it streams
        # (rgstream) or, failing that, whole and carefully. Notebooks are searched by their cell
        # sources (notebookgrep.py), not as JSON.
        one_notebook = searches_notebook_file(root)
        listing = NotebookListing(ctx, root, include, excluded)  # below a folder: runs alongside
        try:
            outcome, found = (RgOutcome(1, b"", ""), Matches([], [], [])) if one_notebook else _search(ctx, root, flags)
        finally:
            listing.wait()  # before the root's descriptor can close: its rg runs in that folder
        if root.is_dir and unfenced(ctx):
            with Rechecker(root.fd) as check:
                found = _confirmed(check, found)
        sources = [found]
        in_cells, cell_records = search_notebooks(ctx, root, pattern, include, excluded, listing)
        if in_cells:
            sources.append(Matches([m.path for m in in_cells], [m.line for m in in_cells],
                                   [m.text for m in in_cells], list(cell_records)))
        if outcome.returncode == 2:
            value["unreadable"] = sum(1 for line in outcome.stderr_tail.splitlines() if line.startswith("rg: "))
        if root.is_dir:
            strip, prefix = "./", root.prefix
        else:
            strip, prefix = None, root.target.display

        def spans_of(lines: list[bytes]) -> list[bytes | None]:
            return line_records(ctx, root, pattern, lines)

        spill = shape_grep(ctx, value, sources, strip, prefix, [root.prefix + rel for rel in excluded], root.prefix,
                           spans_of)
        if spill is not None:
            value["spill"] = _save(ctx, "grep", spill, pattern)
        return value


def _relative(path: str) -> str:
    return path.removeprefix("./")


def _confirmed(check: Rechecker, found: FileBlocks | Matches) -> FileBlocks | Matches:
    """The matches whose line the file beneath the root really holds (rg ran unfenced)."""
    if isinstance(found, Matches):
        return found.subset(check.confirm_matches([found.match(i) for i in range(len(found))],
                                                  lambda m: _relative(m.path)))
    keep = []
    for block, path in enumerate(found.paths):
        lines = found.lines(block)
        held = check.lines(_relative(path), {number for number, _ in lines}) or {}
        keep.append([k for k, (number, text) in enumerate(lines)
                     if number in held and held[number].removesuffix(b"\n") == text])
    return found.kept(keep)


def _search(ctx: CallContext, root, flags: list[str]) -> tuple[RgOutcome, FileBlocks | Matches]:
    """The main search: heading form first, ``--json`` when that output cannot be read for sure."""
    blocks = BlockStream()
    outcome = run_search(ctx, [*HEADING_FLAGS, *flags], "grep", root, consume=blocks.feed, keep_stdout=False)
    if outcome.returncode == 2 and not blocks.size:
        raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {diagnostic(outcome)}")
    found = blocks.finish()
    if found is not None:
        return outcome, found
    stream = MatchStream()
    outcome = run_search(ctx, ["--json", *flags], "grep", root, consume=stream.feed)
    if outcome.returncode == 2 and not outcome.stdout:
        raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {diagnostic(outcome)}")
    matches = stream.finish()
    if matches is None:
        try:
            matches = parse_all(outcome.stdout)
        except ValueError as exc:
            raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {exc}") from None
    return outcome, matches


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


def _save(ctx: CallContext, tool: str, text: str, pattern: str) -> str | None:
    """Save a complete result in this session's spill folder; None when it could not be."""
    if ctx.spills is None:
        return None
    return ctx.spills.save(ctx.session_key, ctx.call_id, tool, text, label=f"{tool} {pattern}", user=ctx.user,
                           quota=ctx.spill_quota)


_STR, _INT, _BOOL = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}

GLOB_OUTPUT = value_schema({
    "pattern": _STR,
    "root": _STR,
    "paths": {"type": "array", "items": _STR},
    "totalPaths": _INT,
    "sampled": _BOOL,
    "groupsShown": _INT,
    "groupsTotal": _INT,
    "spill": nullable(_STR),
    "capped": _BOOL,
}, ("pattern", "root", "paths", "totalPaths", "sampled", "spill"))

GREP_OUTPUT = value_schema({
    "pattern": _STR,
    "matches": {"type": "array", "items": value_schema({
        "path": _STR, "line": _INT, "text": _STR,
        "submatches": {"type": "array", "items": {"type": "array", "items": _INT}},
        "cell": _INT, "cellId": nullable(_STR),
    }, ("path", "line", "text"))},
    "totalMatches": _INT,
    "files": _INT,
    "filesTotal": _INT,
    "sampled": _BOOL,
    "spill": nullable(_STR),
    "unreadable": _INT,
    "binarySkipped": _INT,
}, ("pattern", "matches", "totalMatches", "files", "spill"))

GLOB = ToolSpec(
    name="glob",
    title="Find files",
    description=(
        "Find files by glob pattern (ripgrep glob syntax). A pattern without / matches file names at "
        "any depth, so * means every file below path, not just the top level. Results are files, "
        "never directories. A result within the cap is shown whole, oldest first; a larger one is "
        "sampled across the top-level entries of path and the complete sorted list is saved."
    ),
    input_schema=object_schema({
        "pattern": {**NAME, "description": "Glob such as **/*.py or src/**/test_*.py."},
        "path": {**PATH, "description": "Directory to search (default: working directory)."},
    }, ("pattern",)),
    output_schema=GLOB_OUTPUT,
    guidance=(
        "Use glob to find files by name. Remember that a pattern without / matches at any depth and "
        "that only files are returned: to see what a directory holds, use list. When the footer "
        "says the page was sampled, the page shows breadth, not the first files; read the saved "
        "full result for the rest."
    ),
    execute=execute_glob,
    render=render_glob,
    rows_key="paths",
)

GREP = ToolSpec(
    name="grep",
    title="Search file contents",
    description=(
        "Search file contents with a regular expression (ripgrep syntax). path is a file or a "
        "directory (default: working directory); include is one glob that limits the files searched. "
        "Matches are grouped by file with line numbers; in a notebook (.ipynb) only cell sources are "
        "searched, never outputs, and a match reads Cell C, line L (C as read numbers cells, offset "
        "C with limit 1 reads that cell). A result within the cap is shown whole; a "
        "larger one is sampled across the top-level entries of path and their files, and the "
        "complete result is saved."
    ),
    input_schema=object_schema({
        "pattern": {**NAME, "description": "Regular expression to search for."},
        "path": {**PATH, "description": "File or directory to search."},
        "include": {
            **NAME,
            "description": "One glob such as *.py or *.{py,md}; not a comma list (*.py,*.md), no leading !.",
        },
    }, ("pattern",)),
    output_schema=GREP_OUTPUT,
    guidance=(
        "Use grep to find where text occurs. Narrow with path or include when a search is broad; "
        "read a matching file for context around a line. A capped result names the file holding "
        "every match: read it with offset/limit or grep it. When the footer says the page was "
        "sampled, it shows breadth (how many of the matching files it covers), not the first matches."
    ),
    execute=execute_grep,
    render=render_grep,
    rows_key="matches",
)
