"""Executors for ``glob`` and ``grep``: parse arguments, build the rg argv, run, shape the value.

Every model-controlled value reaches ripgrep as one argv element that cannot be read as an
option: the glob as ``--glob=<pattern>``, the regex as ``--regexp=<pattern>``, the target after
``--``. Discovery is the same for both: hidden files included, ignore files not honoured,
symlinks not followed, VCS folders excluded at any depth (and filtered out of the output too, so
a search rooted inside ``.git`` still shows none of its internals), the spill root left out.
"""

from __future__ import annotations

import os
import re
import stat as statmod

from ..context import CallContext
from ..errors import Codes, ToolError
from ..paths import Resolved, is_within
from ..registry import ToolSpec
from ..render.search import _TRUNCATED, render_glob, render_glob_spill, render_grep, render_grep_spill, truncate_line
from ..rg import RgMissing, RgOutcome, run_rg
from ..rgjson import parse_match_records, submatch_spans
from ..sampling import sample_across_groups
from ..render.quoting import in_message

__all__ = ["GLOB", "GREP", "execute_glob", "execute_grep", "VCS_DIRS"]

VCS_DIRS = (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")
_VCS_EXCLUDES = [f"--glob=!{name}" for name in VCS_DIRS]
_VCS_IN_PATH = re.compile("(?:^|/)(?:" + "|".join(re.escape(v) for v in VCS_DIRS) + ")(?:/|$)")
_DISCOVERY = ["--no-config", "--no-ignore", "--hidden", "--no-follow"]


def _search_root(ctx: CallContext, path: str | None, verb: str, allow_spill: bool) -> Resolved:
    target = ctx.resolver.resolve(ctx.cwd, path, verb=verb, allow_spill=allow_spill)
    if not target.exists:
        raise ToolError(Codes.FS_NOT_FOUND, f'cannot {verb} {in_message(target.display)}: not found')
    return target


def _inside_vcs(ctx: CallContext, target: Resolved) -> bool:
    if target.in_spill:
        return False
    rel = os.path.relpath(target.real, ctx.resolver.root)
    return rel != "." and bool(_VCS_IN_PATH.search(rel.replace(os.sep, "/")))


def _rg_target(ctx: CallContext, target: Resolved) -> tuple[str, str]:
    """The path argument for rg and the prefix to strip from its output for display."""
    if target.lexical == ctx.cwd:
        return ".", "./"
    return target.display, ""


def _spill_exclusion(ctx: CallContext) -> str | None:
    """The spill root as rg prints it, when it lies inside the workspace (to filter it out)."""
    spill = ctx.resolver.spill_root
    if spill and is_within(spill, ctx.resolver.root):
        return spill
    return None


def _run(ctx: CallContext, args: list[str], tool: str) -> RgOutcome:
    if ctx.rg is None:
        raise ToolError(Codes.SEARCH_FAILED, f"{tool} is unavailable: no ripgrep (rg) binary was found")
    try:
        outcome = run_rg(
            ctx.rg,
            args,
            cwd=ctx.cwd,
            timeout_s=ctx.settings.search_timeout_ms / 1000,
            max_stdout_bytes=ctx.settings.raw_output_max_bytes,
            cancel=ctx.cancel,
        )
    except RgMissing:
        raise ToolError(Codes.SEARCH_FAILED, f"{tool} failed: the ripgrep (rg) binary could not be started") from None
    if outcome.timed_out:
        raise ToolError(
            Codes.SEARCH_ABORTED,
            f"{tool} was stopped after {ctx.settings.search_timeout_ms} ms; narrow the pattern or path",
        )
    if outcome.cancelled:
        raise ToolError(Codes.SEARCH_ABORTED, f"{tool} was cancelled before it finished")
    if outcome.overflow:
        raise ToolError(
            Codes.SEARCH_RAW_OUTPUT_OVERFLOW,
            f"{tool} produced more than {ctx.settings.raw_output_max_bytes} bytes of raw output and was "
            "stopped; narrow the pattern, path or include",
        )
    return outcome


def _diagnostic(stderr: str) -> str:
    return " ".join(stderr.split())[-1000:]


def _keep(display: str, spill_prefix: str | None, real_prefix: str) -> bool:
    if _VCS_IN_PATH.search(display):
        return False
    if spill_prefix is not None:
        full = display if os.path.isabs(display) else os.path.join(real_prefix, display)
        if is_within(os.path.normpath(full), spill_prefix):
            return False
    return True


# ---------------------------------------------------------------------------------------- glob


def execute_glob(ctx: CallContext, args: dict) -> dict:
    pattern: str = args["pattern"]
    if pattern.startswith("!"):
        raise ToolError(Codes.ARGUMENT_INVALID, 'pattern must not start with "!"; negated globs are not supported')
    target = _search_root(ctx, args.get("path"), "glob", allow_spill=False)
    if not os.path.isdir(target.real):
        raise ToolError(Codes.FS_NOT_DIRECTORY, f'cannot glob {in_message(target.display)}: not a directory')
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
    if _inside_vcs(ctx, target):
        return value
    arg, strip = _rg_target(ctx, target)
    # The pattern comes before the exclusions: with rg, a later glob wins over an earlier one.
    # --null: a file name may hold a newline, so paths are NUL-separated on the wire.
    argv = ["--files", "--null", "--sort=modified", *_DISCOVERY, f"--glob={pattern}", *_VCS_EXCLUDES, "--", arg]
    outcome = _run(ctx, argv, "glob")
    if outcome.returncode not in (0, 1) and not outcome.stdout:
        raise ToolError(Codes.SEARCH_FAILED, f"glob failed: {_diagnostic(outcome.stderr_tail)}")
    # One decode of the whole output (invalid UTF-8 in a name becomes U+FFFD for display).
    blob = outcome.stdout.decode("utf-8", "replace")
    if strip:
        blob = blob.replace("\0" + strip, "\0")
        if blob.startswith(strip):
            blob = blob[len(strip) :]
    paths = blob.split("\0")
    if paths and paths[-1] == "":
        paths.pop()
    spill_prefix = _spill_exclusion(ctx)
    if spill_prefix is not None or _has_vcs(outcome.stdout):
        paths = [p for p in paths if _keep(p, spill_prefix, ctx.cwd)]
    return _shape_glob(ctx, value, paths, target)


def _has_vcs(stdout: bytes) -> bool:
    return any(name.encode() + b"/" in stdout for name in VCS_DIRS)


def _shape_glob(ctx: CallContext, value: dict, paths: list[str], target: Resolved) -> dict:
    cap = ctx.settings.glob_max_results
    total = len(paths)
    value["totalPaths"] = total
    if total <= cap:
        value["paths"] = paths
        return value
    prefix = "" if target.lexical == ctx.cwd else target.display.rstrip("/") + "/"
    cut = len(prefix)
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
    value["spill"] = ctx.spills.save(ctx.session, ctx.call_id, "glob", render_glob_spill(paths)) if ctx.spills else None
    return value


# ---------------------------------------------------------------------------------------- grep


def execute_grep(ctx: CallContext, args: dict) -> dict:
    pattern: str = args["pattern"]
    include: str | None = args.get("include")
    if include is not None and ("," in include or include.startswith("!")):
        raise ToolError(
            Codes.ARGUMENT_INVALID,
            "include must be one positive glob such as *.py (no commas, no leading !)",
        )
    target = _search_root(ctx, args.get("path"), "grep", allow_spill=True)
    try:
        mode = os.stat(target.real).st_mode
    except OSError as exc:
        raise ToolError(Codes.FS_ERROR, f'cannot grep {in_message(target.display)}: {exc.strerror or exc}') from None
    if not (statmod.S_ISDIR(mode) or statmod.S_ISREG(mode)):
        # Never hand rg a FIFO or a device: opening one can block forever.
        raise ToolError(Codes.FS_NOT_REGULAR_FILE, f'cannot grep {in_message(target.display)}: not a regular file')
    value = {"pattern": pattern, "matches": [], "totalMatches": 0, "files": 0, "spill": None, "unreadable": 0}
    if _inside_vcs(ctx, target):
        return value
    arg, strip = _rg_target(ctx, target)
    argv = ["--json", *_DISCOVERY]
    if include is not None:
        argv.append(f"--glob={include}")
    argv += [*_VCS_EXCLUDES, f"--regexp={pattern}", "--", arg]
    outcome = _run(ctx, argv, "grep")
    if outcome.returncode == 2 and not outcome.stdout:
        diagnostic = _diagnostic(outcome.stderr_tail)
        if "regex" in diagnostic or "pattern" in diagnostic:
            raise ToolError(Codes.SEARCH_INVALID_PATTERN, f"invalid pattern: {diagnostic}")
        raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {diagnostic}")
    try:
        found, records = parse_match_records(outcome.stdout)
    except ValueError as exc:
        raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {exc}") from None
    if outcome.returncode == 2:
        value["unreadable"] = sum(1 for line in outcome.stderr_tail.splitlines() if line.startswith("rg: "))
    return _shape_grep(ctx, value, found, strip, records)


def _shape_grep(ctx: CallContext, value: dict, found, strip: str, records: list[bytes]) -> dict:
    """Display paths, cut previews, stable file order; dicts only for the shown page.

    The complete result stays a list of ``(path, line, text)`` tuples: a broad grep can hold tens
    of thousands of matches, and only the spill needs them all. Only the shown page's matches get
    ``submatches`` (character spans of the pattern in ``text``, for highlighting; never in model
    text), parsed from their raw records (``records``, in ``found``'s order).
    """
    cut = len(strip)
    limit = ctx.settings.grep_max_line_bytes
    quick = limit // 4  # a text of at most this many characters cannot pass the byte cap
    rows = []
    append = rows.append
    for m in found:
        path = m.path[cut:] if cut and m.path.startswith(strip) else m.path
        text = m.text
        if len(text) <= quick and "\r" not in text:
            text = text[:-1] if text.endswith("\n") else text
        else:
            text = truncate_line(text, limit)
        append((path, m.line, text))
    paths = [r[0] for r in rows]
    files = set(paths)
    order = range(len(rows))
    spill_prefix = _spill_exclusion(ctx)
    if spill_prefix is not None or any(_VCS_IN_PATH.search(p) for p in files):
        keep = {p for p in files if _keep(p, spill_prefix, ctx.cwd)}
        order = [i for i in order if paths[i] in keep]
    # rg searches files in parallel; a stable file order makes pages repeatable. The order is
    # kept as indices so the shown rows can find their raw records.
    order = sorted(order, key=paths.__getitem__)
    rows = [rows[i] for i in order]
    total = len(rows)
    cap = ctx.settings.grep_max_matches
    shown = []
    for i, (p, n, t) in zip(order[:cap], rows[:cap]):
        keep_chars = len(t) if t == _untruncated(found[i].text) else len(t) - len(_TRUNCATED.format(limit))
        try:
            spans = submatch_spans(records[i], keep_chars)
        except ValueError as exc:
            raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {exc}") from None
        shown.append({"path": p, "line": n, "text": t, "submatches": spans})
    value["matches"] = shown
    value["totalMatches"] = total
    value["files"] = len({m["path"] for m in shown})
    if total > cap and ctx.spills is not None:
        value["spill"] = ctx.spills.save(ctx.session, ctx.call_id, "grep", render_grep_spill(rows, total))
    return value


def _untruncated(text: str) -> str:
    """``text`` without rg's line terminator: what a shown line is when it was not cut."""
    if text.endswith("\n"):
        return text[:-2] if text.endswith("\r\n") else text[:-1]
    return text


_PATTERN = {"type": "string", "minLength": 1}

GLOB = ToolSpec(
    name="glob",
    description=(
        "Find files by glob pattern (ripgrep glob syntax). A pattern without / matches file names at "
        "any depth, so * means every file below path, not just the top level. Results are files, "
        "never directories. A result within the cap is shown whole, oldest first; a larger one is "
        "sampled across the top-level entries of path and the complete sorted list is saved."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "pattern": {**_PATTERN, "description": "Glob such as **/*.py or src/**/test_*.py."},
            "path": {"type": "string", "minLength": 1, "description": "Directory to search (default: working directory)."},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
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
    description=(
        "Search file contents with a regular expression (ripgrep syntax). path is a file or a "
        "directory (default: working directory); include is one glob that limits the files searched. "
        "Matches are grouped by file with line numbers; past the cap the complete result is saved."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "pattern": {**_PATTERN, "description": "Regular expression to search for."},
            "path": {"type": "string", "minLength": 1, "description": "File or directory to search."},
            "include": {"type": "string", "minLength": 1, "description": "One glob such as *.py; no commas, no leading !."},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
    guidance=(
        "Use grep to find where text occurs. Narrow with path or include when a search is broad; "
        "read a matching file for context around a line. A capped result names the file holding "
        "every match: read it with offset/limit or grep it."
    ),
    execute=execute_grep,
    render=render_grep,
    rows_key="matches",
)
