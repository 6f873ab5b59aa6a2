"""Executors for ``glob`` and ``grep``: parse arguments, build the rg argv, run, shape the value.

Every model-controlled value reaches ripgrep as one argv element that cannot be read as an
option: the glob as ``--glob=<pattern>``, the regex as ``--regexp=<pattern>``, the target after
``--``. Discovery is the same for both: hidden files included, ignore files not honoured,
symlinks not followed, VCS folders excluded at any depth (and filtered out of the output too, so
a search rooted inside ``.git`` still shows none of its internals), the spill root left out.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
from dataclasses import dataclass
from operator import itemgetter

from ..context import CallContext
from ..errors import Codes, ToolError
from ..beneath import proc_fd_path
from ..paths import Target, is_within
from ..render.search import _TRUNCATED, render_glob, render_glob_spill, render_grep, render_grep_spill, truncate_line
from ..rg import RgMissing, RgOutcome, run_rg
from ..recheck import Rechecker
from ..rgfence import FenceError
from ..rgjson import parse_match_records, submatch_spans
from ..sampling import sample_across_groups, sample_sorted_paths
from ..textread import BINARY_SNIFF_BYTES
from ..render.quoting import in_message
from ..toolspec import PATH, ToolSpec

__all__ = ["GLOB", "GREP", "execute_glob", "execute_grep", "VCS_DIRS"]

VCS_DIRS = (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")
_VCS_EXCLUDES = [f"--glob=!{name}" for name in VCS_DIRS]
_VCS_IN_PATH = re.compile("(?:^|/)(?:" + "|".join(re.escape(v) for v in VCS_DIRS) + ")(?:/|$)")
_DISCOVERY = ["--no-config", "--no-ignore", "--hidden", "--no-follow"]
_PATH_OF = itemgetter(0)  # a grep row is (path, line, text)


@dataclass
class _Root:
    """An opened search root: the target, a descriptor rg starts from, how rg names it."""

    target: Target
    fd: int  # a folder descriptor (rg's working directory) or a file descriptor (rg's one input)
    is_dir: bool
    prefix: str  # what rg's paths are prefixed with in display ("" or "DISPLAY/")
    real: str  # the physical path of the search root


@contextlib.contextmanager
def _search_root(ctx: CallContext, path: str | None, verb: str, spills: bool):
    """Open the search root beneath the workspace (or this session's spill folder) for rg."""
    with ctx.resolve(path, verb, spills=spills) as target:
        if not target.exists:
            raise target.not_found()
        if target.is_dir:
            fd, _st = target.open_dir(ToolError(Codes.FS_NOT_DIRECTORY, "unused"))
            is_dir = True
        else:
            # Never hand rg a FIFO or a device: opening one can block forever.
            fd, _st = target.open_regular()
            is_dir = False
        try:
            prefix = "" if target.lexical == ctx.cwd else target.display.rstrip("/") + "/"
            yield _Root(target, fd, is_dir, prefix, target.real)
        finally:
            os.close(fd)


def _inside_vcs(ctx: CallContext, root: _Root) -> bool:
    if root.target.in_spill:
        return False
    rel = ctx.resolver.tree.relative(root.real)
    return bool(rel) and bool(_VCS_IN_PATH.search(rel))


def _excluded(ctx: CallContext, root: _Root) -> list[str]:
    """Folders below the search root that are never shown, relative to it (protected folders)."""
    if root.target.in_spill:
        return []
    out = set(ctx.resolver.visibility.protected_below(root.real))
    spill = ctx.resolver.spill_root
    if spill and is_within(spill, root.real) and spill != root.real:
        out.add(os.path.relpath(spill, root.real))
    return sorted(out)


def _discovery(ctx: CallContext) -> list[str]:
    """rg's discovery flags: hidden files only where allowed, and the hide globs left out."""
    vis = ctx.resolver.visibility
    flags = list(_DISCOVERY) if vis.allow_hidden else [f for f in _DISCOVERY if f != "--hidden"]
    return flags


def _hide_globs(ctx: CallContext) -> list[str]:
    # After the pattern and include: with rg, a later glob wins, so these always leave names out.
    # An explicit --glob overrides rg's own hidden-file rule, so hidden names need one too.
    vis = ctx.resolver.visibility
    return ([] if vis.allow_hidden else ["--glob=!.*"]) + [f"--glob=!{g}" for g in vis.hide_globs]


def _unfenced(ctx: CallContext) -> bool:
    """Whether rg runs without Landlock, so what it reports must be checked again (recheck.py)."""
    return ctx.fence is None or ctx.fence.mode != "landlock"


def _exclusion_globs(rels: list[str]) -> list[str]:
    # Anchored to the search root; names with glob syntax are left to the output filter alone.
    return [f"--glob=!/{rel}" for rel in rels if not _GLOB_META.search(rel)]


def _drop_excluded(paths: list[str], rels: list[str]) -> list[str]:
    if not rels:
        return paths
    heads = tuple(rel + "/" for rel in rels)
    return [p for p in paths if not p.startswith(heads) and p not in rels]


def _run(ctx: CallContext, args: list[str], tool: str, root: _Root) -> RgOutcome:
    """Run rg from the search root's descriptor, fenced; map every way it can fail."""
    if ctx.rg is None:
        raise ToolError(Codes.SEARCH_FAILED, f"{tool} is unavailable: no ripgrep (rg) binary was found")
    if ctx.cancel.is_set():  # the caller left while this search waited for a slot
        raise ToolError(Codes.SEARCH_ABORTED, f"{tool} was cancelled before it finished")
    proc_path = proc_fd_path(root.fd)
    if root.is_dir:
        cwd, pass_fds = (proc_path or root.real), ()
    else:
        cwd, pass_fds = "/", (root.fd,)
    spawn = None
    if ctx.fence is not None:
        fence = ctx.fence

        def spawn(start):
            return fence.spawn(start, [(root.fd, root.is_dir)])

    try:
        outcome = run_rg(
            ctx.rg,
            args,
            cwd=cwd,
            timeout_s=ctx.settings.search_timeout_ms / 1000,
            max_stdout_bytes=ctx.settings.raw_output_max_bytes,
            cancel=ctx.cancel,
            pass_fds=pass_fds,
            spawn=spawn,
        )
    except RgMissing:
        raise ToolError(Codes.SEARCH_FAILED, f"{tool} failed: the ripgrep (rg) binary could not be started") from None
    except FenceError as exc:
        raise ToolError(Codes.SEARCH_FAILED, f"{tool} failed: ripgrep could not be confined: {exc}") from None
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
    code = outcome.returncode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        raise ToolError(Codes.SEARCH_FAILED, f"{tool} failed: ripgrep was killed ({name})")
    if code not in (0, 1, 2):
        raise ToolError(Codes.SEARCH_FAILED, f"{tool} failed: ripgrep exited with status {code}: "
                        f"{_diagnostic(outcome)}")
    if code == 2 and outcome.stderr_head.startswith(_PATTERN_ERRORS):
        raise ToolError(Codes.SEARCH_INVALID_PATTERN, f"invalid pattern: {_diagnostic(outcome)}")
    return outcome


# rg's own words for a pattern it cannot use: a regex, a glob (the glob tool's pattern or
# grep's include), a literal it refuses in a regex, a regex past its size limit.
_PATTERN_ERRORS = ("rg: regex parse error", "rg: error parsing glob", "rg: the literal", "rg: regex could not",
                   "regex parse error", "error parsing glob")
_GLOB_META = re.compile(r"[*?\[\]{}!\\]")


def _diagnostic(outcome: RgOutcome) -> str:
    """rg's stderr in one line, at most 1,000 characters: its start (what went wrong) and its end."""
    text = outcome.stderr_tail
    if outcome.stderr_head and not text.startswith(outcome.stderr_head[:64]):
        text = outcome.stderr_head + " ... " + text
    text = " ".join(text.split())
    return text if len(text) <= 1000 else text[:400] + " ... " + text[-595:]


# ---------------------------------------------------------------------------------------- glob


def execute_glob(ctx: CallContext, args: dict) -> dict:
    pattern: str = args["pattern"]
    if pattern.startswith("!"):
        raise ToolError(Codes.ARGUMENT_INVALID, 'pattern must not start with "!"; negated globs are not supported')
    with _search_root(ctx, args.get("path"), "glob", spills=False) as root:
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
        if _inside_vcs(ctx, root):
            return value
        excluded = _excluded(ctx, root)
        # The pattern comes before the exclusions: with rg, a later glob wins over an earlier one.
        # --null: a file name may hold a newline, so paths are NUL-separated on the wire.
        argv = ["--files", "--null", "--sort=modified", *_discovery(ctx), f"--glob={pattern}", *_VCS_EXCLUDES,
                *_hide_globs(ctx), *_exclusion_globs(excluded), "--", "."]
        outcome = _run(ctx, argv, "glob", root)
        if outcome.returncode == 2 and not outcome.stdout:
            raise ToolError(Codes.SEARCH_FAILED, f"glob failed: {_diagnostic(outcome)}")
        # One decode of the whole output; bytes that are not UTF-8 stay as surrogate escapes, so
        # a path that is shown (quoted, as \udcXX) can be named back.
        blob = outcome.stdout.decode("utf-8", "surrogateescape")
        unfenced = _unfenced(ctx)
        if excluded or unfenced or _has_vcs(outcome.stdout):
            rels = [p[2:] for p in blob.split("\0") if p]
            rels = [p for p in _drop_excluded(rels, excluded) if not _VCS_IN_PATH.search(p)]
            if unfenced:
                with Rechecker(root.fd) as check:
                    rels = [p for p in rels if check.is_file(p)]
    if excluded or unfenced or _has_vcs(outcome.stdout):
        paths = [root.prefix + p for p in rels] if root.prefix else rels
    else:
        # rg names every path "./…" from its working directory: one replace makes them display paths.
        paths = ("\0" + blob).replace("\0./", "\0" + root.prefix)[1:].split("\0")
        if paths and paths[-1] == "":
            paths.pop()
    return _shape_glob(ctx, value, paths, root.prefix)


def _has_vcs(stdout: bytes) -> bool:
    return any(name.encode() + b"/" in stdout for name in VCS_DIRS)


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
    with _search_root(ctx, args.get("path"), "grep", spills=True) as root:
        value = {
            "pattern": pattern, "matches": [], "totalMatches": 0, "files": 0, "filesTotal": 0,
            "sampled": False, "spill": None, "unreadable": 0,
        }
        if _inside_vcs(ctx, root):
            return value
        if not root.is_dir and b"\0" in os.pread(root.fd, BINARY_SNIFF_BYTES, 0):
            # rg would print a named binary file's lines with their control bytes; skip it, as rg
            # skips binary files it meets in a folder, and say so.
            value["binarySkipped"] = 1
            return value
        excluded = _excluded(ctx, root)
        argv = ["--json", *_discovery(ctx)]
        if include is not None:
            argv.append(f"--glob={include}")
        argv += [*_VCS_EXCLUDES, *_hide_globs(ctx), *_exclusion_globs(excluded), f"--regexp={pattern}", "--",
                 "." if root.is_dir else (proc_fd_path(root.fd) or root.real)]
        outcome = _run(ctx, argv, "grep", root)
        if outcome.returncode == 2 and not outcome.stdout:
            raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {_diagnostic(outcome)}")
        try:
            found, records = parse_match_records(outcome.stdout)
        except ValueError as exc:
            raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {exc}") from None
        if root.is_dir and _unfenced(ctx):
            with Rechecker(root.fd) as check:
                kept = check.confirm_matches(found, lambda m: m.path[2:] if m.path.startswith("./") else m.path)
            found, records = [found[i] for i in kept], [records[i] for i in kept]
    if outcome.returncode == 2:
        value["unreadable"] = sum(1 for line in outcome.stderr_tail.splitlines() if line.startswith("rg: "))
    if root.is_dir:
        strip, prefix = "./", root.prefix
    else:
        strip, prefix = None, root.target.display
    return _shape_grep(ctx, value, found, records, strip, prefix, [root.prefix + rel for rel in excluded],
                       root.prefix)


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


def _shape_grep(ctx: CallContext, value: dict, found, records: list[bytes], strip: str | None, prefix: str,
                excluded: list[str], root_prefix: str) -> dict:
    """Display paths, cut previews, path order; over the cap, a page spread across the tree.

    rg's paths start with ``strip`` (``./``), which becomes ``prefix``; with ``strip`` None
    (one file searched) every path is ``prefix``; ``root_prefix`` is what every path starts with
    below the search root (the samplers group by the next segment). The complete result stays a
    list of ``(path, line, text)`` tuples in path order: a broad grep can hold tens of thousands
    of matches, and only the spill needs them all. Dicts are built for the shown page only.
    """
    cut = len(strip) if strip else 0
    limit = ctx.settings.grep_max_line_bytes
    quick = limit // 4  # a text of at most this many characters cannot pass the byte cap
    rows = []
    append = rows.append
    for m in found:
        if strip is None:
            path = prefix
        else:
            path = prefix + m.path[cut:] if m.path.startswith(strip) else m.path
        text = m.text
        if len(text) <= quick and "\r" not in text:
            text = text[:-1] if text.endswith("\n") else text
        else:
            text = truncate_line(text, limit)
        append((path, m.line, text))
    paths = [r[0] for r in rows]
    files = set(paths)
    order = range(len(rows))
    if excluded or any(_VCS_IN_PATH.search(p) for p in files):
        keep = set(_drop_excluded([p for p in files if not _VCS_IN_PATH.search(p)], excluded))
        order = [i for i in order if paths[i] in keep]
    else:
        keep = files
    # rg searches files in parallel; a stable file order makes pages repeatable. The sort is
    # stable, so each file's matches stay in line order; it is kept as indices, so the shown rows
    # can find their raw records.
    order = sorted(order, key=paths.__getitem__)
    rows = [rows[i] for i in order]
    total = len(rows)
    cap = ctx.settings.grep_max_matches
    value["totalMatches"] = total
    value["filesTotal"] = len(keep)
    positions: range | list[int] = range(total)
    if total > cap:
        sample = sample_sorted_paths(rows, cap, prefix=root_prefix, key=_PATH_OF)
        value["sampled"] = not sample.flat
        if sample.flat:
            positions = range(cap)
        else:
            positions = [j for first, count in sample.spans for j in range(first, first + count)]
    value["matches"] = [_shown(rows[j], found[order[j]], records[order[j]], limit) for j in positions]
    value["files"] = len(keep) if total <= cap else len({rows[j][0] for j in positions})
    if total > cap:
        value["spill"] = _save(ctx, "grep", render_grep_spill(rows, total), value["pattern"])
    return value


def _save(ctx: CallContext, tool: str, text: str, pattern: str) -> str | None:
    """Save a complete result in this session's spill folder; None when it could not be."""
    if ctx.spills is None:
        return None
    return ctx.spills.save(ctx.session_key, ctx.call_id, tool, text, label=f"{tool} {pattern}", user=ctx.user,
                           quota=ctx.spill_quota)


def _shown(row: tuple, match, record: bytes, limit: int) -> dict:
    """One match of the shown page, with ``submatches``: character spans of the pattern in ``text``
    (for highlighting in the widgets; never in model text), read from its raw record."""
    path, line, text = row
    keep_chars = len(text) if text == _untruncated(match.text) else len(text) - len(_TRUNCATED.format(limit))
    try:
        spans = submatch_spans(record, keep_chars)
    except ValueError as exc:
        raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {exc}") from None
    return {"path": path, "line": line, "text": text, "submatches": spans}


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
            "path": {**PATH, "description": "Directory to search (default: working directory)."},
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
        "Matches are grouped by file with line numbers. A result within the cap is shown whole; a "
        "larger one is sampled across the top-level entries of path and their files, and the "
        "complete result is saved."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "pattern": {**_PATTERN, "description": "Regular expression to search for."},
            "path": {**PATH, "description": "File or directory to search."},
            "include": {
                "type": "string",
                "minLength": 1,
                "description": "One glob such as *.py or *.{py,md}; not a comma list (*.py,*.md), no leading !.",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
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
