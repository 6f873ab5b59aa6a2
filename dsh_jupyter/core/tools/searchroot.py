"""What glob and grep share: their root opened beneath the workspace, rg's flags, running rg fenced.

Every model-controlled value reaches ripgrep as one argv element that cannot be read as an
option: the glob as ``--glob=<pattern>``, the regex as ``--regexp=<pattern>``, the target after
``--``. rg starts in the search root's folder descriptor (``/proc/self/fd/N``) and searches ``.``,
or reads one file given as ``/proc/self/fd/N``, under Landlock where the kernel has it. Discovery
is the same for both tools: hidden files only where allowed, ignore files not honoured, symlinks
not followed, VCS folders excluded at any depth (and filtered out of the output too, so a search
rooted inside ``.git`` still shows none of its internals), protected folders and the spill root
left out.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
from dataclasses import dataclass

from ..errors import Codes, ToolError
from ..fs.resolver import Target, is_within
from ..fs.tree import proc_fd_path
from ..rg.fence import FenceError
from ..rg.runner import STDERR_HEAD, STDERR_TAIL, RgMissing, RgOutcome, run_rg
from .context import CallContext

__all__ = [
    "DISCOVERY",
    "VCS_DIRS",
    "VCS_EXCLUDES",
    "VCS_IN_PATH",
    "SearchRoot",
    "diagnostic",
    "discovery_flags",
    "drop_excluded",
    "excluded_below",
    "exclusion_flags",
    "hide_flags",
    "inside_vcs",
    "lines_have_vcs",
    "lines_name_any",
    "open_search_root",
    "output_has_vcs",
    "output_names_any",
    "overflow_error",
    "run_search",
    "start_spill",
    "unfenced",
    "user_excludes",
    "user_exclusion_flags",
]

VCS_DIRS = (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")
VCS_EXCLUDES = [f"--glob=!{name}" for name in VCS_DIRS]
VCS_IN_PATH = re.compile("(?:^|/)(?:" + "|".join(re.escape(v) for v in VCS_DIRS) + ")(?:/|$)")
DISCOVERY = ["--no-config", "--no-ignore", "--hidden", "--no-follow"]


@dataclass
class SearchRoot:
    """An opened search root: the target, a descriptor rg starts from, how rg names it."""

    target: Target
    fd: int  # a folder descriptor (rg's working directory) or a file descriptor (rg's one input)
    is_dir: bool
    prefix: str  # what rg's paths are prefixed with in display ("" or "DISPLAY/")
    real: str  # the physical path of the search root


@contextlib.contextmanager
def open_search_root(ctx: CallContext, path: str | None, verb: str, spills: bool):
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
            yield SearchRoot(target, fd, is_dir, prefix, target.real)
        finally:
            os.close(fd)


def inside_vcs(ctx: CallContext, root: SearchRoot) -> bool:
    if root.target.in_spill:
        return False
    rel = ctx.resolver.tree.relative(root.real)
    return bool(rel and VCS_IN_PATH.search(rel))


def excluded_below(ctx: CallContext, root: SearchRoot) -> list[str]:
    """Folders below the search root that are never shown, relative to it (protected folders)."""
    if root.target.in_spill:
        return []
    out = set(ctx.resolver.visibility.protected_below(root.real))
    spill = ctx.resolver.spill_root
    if spill and is_within(spill, root.real) and spill != root.real:
        out.add(os.path.relpath(spill, root.real))
    return sorted(out)


def discovery_flags(ctx: CallContext) -> list[str]:
    """rg's discovery flags: hidden files only where allowed, and the hide globs left out."""
    vis = ctx.resolver.visibility
    flags = list(DISCOVERY) if vis.allow_hidden else [f for f in DISCOVERY if f != "--hidden"]
    if ctx.settings.respect_ignore_files:
        # The workspace's own .gitignore and .ignore files, in a git checkout or not; never the
        # user's global ignore file nor one above the search root.
        flags.remove("--no-ignore")
        flags += ["--no-require-git", "--no-ignore-parent", "--no-ignore-global"]
    return flags


def hide_flags(ctx: CallContext) -> list[str]:
    # After the pattern and include: with rg, a later glob wins, so these always leave names out.
    # An explicit --glob overrides rg's own hidden-file rule, so hidden names need one too.
    vis = ctx.resolver.visibility
    return ([] if vis.allow_hidden else ["--glob=!.*"]) + [f"--glob=!{g}" for g in vis.hide_globs]


def unfenced(ctx: CallContext) -> bool:
    """Whether rg runs without Landlock, so what it reports must be checked again (recheck.py)."""
    return ctx.fence is None or ctx.fence.mode != "landlock"


def exclusion_flags(rels: list[str]) -> list[str]:
    # Anchored to the search root; names with glob syntax are left to the output filter alone.
    return [f"--glob=!/{rel}" for rel in rels if not _GLOB_META.search(rel)]


EXCLUDE_NEGATED = "exclude holds globs to leave out, such as node_modules/** or *.min.js; a leading ! is not supported"


def user_excludes(value: str | list[str] | None) -> list[str]:
    """The ``exclude`` argument as a list of globs (gitignore style, relative to the search root)."""
    globs = [] if value is None else [value] if isinstance(value, str) else list(value)
    if any(g.startswith("!") for g in globs):
        raise ToolError(Codes.ARGUMENT_INVALID, EXCLUDE_NEGATED)
    return globs


def user_exclusion_flags(globs: list[str]) -> list[str]:
    # After the pattern and include: with rg, a later glob wins, so these always leave names out.
    return [f"--glob=!{g}" for g in globs]


# A VCS folder (or file) anywhere in a path: rg names every path "./…", so such a name always
# follows a "/" and ends at a "/" or the path's NUL.
_VCS_IN_OUTPUT = re.compile(rb"/(?:" + "|".join(re.escape(v) for v in VCS_DIRS).encode() + rb")(?:[/\0]|$)")
# In joined paths (no "./"), a candidate starts a line or follows a "/": checked after.
_VCS_NAME_END = re.compile("(?:" + "|".join(re.escape(v) for v in VCS_DIRS) + ")(?:/|$)", re.MULTILINE)


def output_has_vcs(stdout: bytes) -> bool:
    """Whether rg's NUL-ended output names a path in or of a VCS folder (one scan)."""
    return b"/." in stdout and _VCS_IN_OUTPUT.search(stdout) is not None


def lines_have_vcs(joined: str) -> bool:
    """``output_has_vcs`` for paths joined by newlines (or by "/": a match across a join is then a
    path that starts or ends with a VCS name). A name holding the joining character can only make
    it say yes where no path is a VCS path (the paths are then checked one by one), never the
    reverse. One search for the names themselves, each found one looked at: a regular expression
    that starts with "^ or /" tries every position of megabytes of paths."""
    for match in _VCS_NAME_END.finditer(joined):
        at = match.start()
        if at == 0 or joined[at - 1] in "/\n":
            return True
    return False


def output_names_any(stdout: bytes, rels: list[str]) -> bool:
    """Whether rg's NUL-ended output names one of the folders ``rels`` or a path below one."""
    if not rels:
        return False
    text = b"\0" + stdout  # one copy of the output, not one per folder
    return any(_named(text, b"\0./" + rel.encode("utf-8", "surrogateescape"), b"/\0") for rel in rels)


def lines_name_any(joined: str, rels: list[str]) -> bool:
    """``output_names_any`` for paths joined by newlines (a name holding one can only add a yes)."""
    if not rels:
        return False
    text = "\n" + joined  # one copy of the paths, not one per folder
    return any(_named(text, "\n" + rel, "/\n") for rel in rels)


def _named(text, start, ends) -> bool:
    """Whether ``start`` occurs in ``text`` followed by one of ``ends`` or by nothing. The search
    is for ``start`` alone: a needle ending in "/" crawls, as "/" is in every path."""
    at = text.find(start)
    while at >= 0:
        end = at + len(start)
        if end == len(text) or text[end : end + 1] in (ends[0:1], ends[1:2]):
            return True
        at = text.find(start, end)
    return False


def drop_excluded(paths: list[str], rels: list[str]) -> list[str]:
    if not rels:
        return paths
    heads = tuple(rel + "/" for rel in rels)
    return [p for p in paths if not p.startswith(heads) and p not in rels]


def run_search(
    ctx: CallContext,
    args: list[str],
    tool: str,
    root: SearchRoot,
    consume=None,
    stdin: int | None = None,
    keep_stdout: bool = True,
    cut_ok: bool = False,
) -> RgOutcome:
    """Run rg from the search root's descriptor, fenced; map every way it can fail.

    ``consume`` gets each piece of rg's stdout as it arrives, ``stdin`` is a descriptor rg reads
    as its standard input, ``keep_stdout`` False leaves the outcome's stdout empty (all three:
    ``rg.run_rg``). ``cut_ok``: output stopped at the raw-output guard is returned (its outcome
    says ``overflow``) for the caller to use what came before, instead of raising."""
    if ctx.rg is None:
        raise ToolError(Codes.SEARCH_FAILED, f"{tool} is unavailable: no ripgrep (rg) binary was found")
    if ctx.cancel.is_set():  # the caller left while this search waited for a slot
        raise ToolError(Codes.SEARCH_ABORTED, f"{tool} was cancelled before it finished")
    proc_path = proc_fd_path(root.fd)
    pass_fds: tuple[int, ...] = () if root.is_dir else (root.fd,)
    cwd = (proc_path or root.real) if root.is_dir else "/"
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
            consume=consume,
            stdin=stdin,
            keep_stdout=keep_stdout,
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
        if cut_ok:
            return outcome  # rg was killed: its status says nothing about what it wrote before
        raise overflow_error(ctx, tool)
    code = outcome.returncode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        raise ToolError(Codes.SEARCH_FAILED, f"{tool} failed: ripgrep was killed ({name})")
    if code not in (0, 1, 2):
        raise ToolError(Codes.SEARCH_FAILED, f"{tool} failed: ripgrep exited with status {code}: {diagnostic(outcome)}")
    if code == 2 and outcome.stderr_head.startswith(PATTERN_ERRORS):
        raise ToolError(Codes.SEARCH_INVALID_PATTERN, f"invalid pattern: {diagnostic(outcome)}")
    return outcome


def overflow_error(ctx: CallContext, tool: str) -> ToolError:
    return ToolError(
        Codes.SEARCH_RAW_OUTPUT_OVERFLOW,
        f"{tool} produced more than {ctx.settings.raw_output_max_bytes} bytes of raw output and was "
        "stopped; narrow the pattern, path or include",
    )


# rg's own words for a pattern it cannot use: a regex, a glob (the glob tool's pattern or
# grep's include), a literal it refuses in a regex, a regex past its size limit.
PATTERN_ERRORS = (
    "rg: regex parse error",
    "rg: error parsing glob",
    "rg: the literal",
    "rg: regex could not",
    "rg: compiled regex exceeds size limit",
    "rg: dfa",
    "regex parse error",
    "error parsing glob",
)
# One file or folder rg could not read: "rg: ./PATH: Permission denied (os error 13)".
_FILE_ERROR = re.compile(r"rg: .+: .+ \(os error \d+\)")
_FILE_ERROR_END = re.compile(r".*: .+ \(os error \d+\)")  # the end of one, cut at its start


def file_errors(outcome: RgOutcome) -> int:
    """How many files or folders rg could not read, when that is all its status 2 means (else 0).

    rg exits with 2 both when it could not search at all and when it searched everything it
    could read but met files it could not; only the second is a result (with a note), never a
    failure. The count comes from the lines rg kept of stderr (its head and tail): at least
    that many were met.
    """
    if outcome.returncode != 2:
        return 0
    head = outcome.stderr_head.split("\n")
    tail = outcome.stderr_tail.split("\n")
    # A line cut by the head's or the tail's bound is judged by the end of it that is seen, and
    # the two cut ends count as one line at most: a folder deeper than a path can name makes
    # one line of rg's longer than both (rg: ./d/d/…/d: File name too long (os error 36)).
    head_cut = tail_cut = ""
    if len(outcome.stderr_head.encode("utf-8", "replace")) >= STDERR_HEAD:
        head_cut = head.pop()
    if len(outcome.stderr_tail.encode("utf-8", "replace")) >= STDERR_TAIL:
        tail_cut = tail.pop(0)
    lines = {line for line in (*head, *tail) if line}
    if not all(_FILE_ERROR.fullmatch(line) for line in lines):
        return 0
    cut = (
        head_cut.startswith("rg: ")
        and not head_cut.startswith(PATTERN_ERRORS)
        and not any(line.startswith(head_cut) for line in lines)
    ) or (_FILE_ERROR_END.fullmatch(tail_cut) is not None and not any(line.endswith(tail_cut) for line in lines))
    return len(lines) + cut


_GLOB_META = re.compile(r"[*?\[\]{}!\\]")


def diagnostic(outcome: RgOutcome) -> str:
    """rg's stderr in one line, at most 1,000 characters: its start (what went wrong) and its end."""
    text = outcome.stderr_tail
    if outcome.stderr_head and not text.startswith(outcome.stderr_head[:64]):
        text = outcome.stderr_head + " ... " + text
    text = " ".join(text.split())
    return text if len(text) <= 1000 else text[:400] + " ... " + text[-595:]


def save_spill(ctx: CallContext, tool: str, text: str | bytes, pattern: str) -> str | None:
    """Save a complete result in this session's spill folder; its locator as shown (``spill_display``),
    or None when it could not be saved."""
    return start_spill(ctx, tool, text, pattern, background=False)()


def start_spill(ctx: CallContext, tool: str, text: str | bytes, pattern: str, background: bool = True):
    """``save_spill`` with a big file written on a thread while the caller builds its page: a
    function that waits for it and returns what ``save_spill`` would. Call it in every case (in
    a ``finally``), so the writer is always waited for."""
    if ctx.spills is None:
        return lambda: None
    pending = ctx.spills.start_save(
        ctx.session_key,
        ctx.call_id,
        tool,
        text,
        label=f"{tool} {pattern}",
        user=ctx.spill_owner or ctx.user,
        quota=ctx.spill_quota,
        visibility=ctx.resolver.visibility.stamp(),
        background=background,
    )

    def finish() -> str | None:
        locator = pending.finish()
        return None if locator is None else ctx.resolver.spill_display(locator, ctx.cwd)

    return finish
