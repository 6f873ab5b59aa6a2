"""rg run for glob and grep: fenced, in the search root's descriptor, every way it can fail mapped.

rg starts in the search root's folder descriptor (``/proc/self/fd/N``) and searches ``.``, or
reads one file given as ``/proc/self/fd/N``, under Landlock where the kernel has it. A timeout,
a cancel, output past ``raw_output_max_bytes``, a signal, an unusable pattern: each is a
``ToolError`` with its own code. rg's exit status 2 when all it means is files it could not
read is a result with a count (``file_errors``), never a failure.

What it must never do: start rg without the fence where there is one, hand rg a path string, or
report a search rg did not finish as a complete result.
"""

from __future__ import annotations

import re
import signal

from ...errors import Codes, ToolError
from ...fs.tree import proc_fd_path
from ...rg.fence import FenceError
from ...rg.regexerror import regex_parse_error
from ...rg.runner import STDERR_HEAD, STDERR_TAIL, RgMissing, RgOutcome, run_rg
from ..context import CallContext
from .root import SearchRoot

__all__ = ["PATTERN_ERRORS", "diagnostic", "file_errors", "overflow_error", "run_search", "unfenced"]


def unfenced(ctx: CallContext) -> bool:
    """Whether rg runs without Landlock, so what it reports must be checked again (recheck.py)."""
    return ctx.fence is None or ctx.fence.mode != "landlock"


def run_search(
    ctx: CallContext,
    args: list[str],
    tool: str,
    root: SearchRoot,
    consume=None,
    stdin: int | None = None,
    keep_stdout: bool = True,
    cut_ok: bool = False,
    stdout: int | None = None,
) -> RgOutcome:
    """Run rg from the search root's descriptor, fenced; map every way it can fail.

    ``consume`` gets each piece of rg's stdout as it arrives, ``stdin`` is a descriptor rg reads
    as its standard input, ``keep_stdout`` False leaves the outcome's stdout empty, ``stdout`` is
    a descriptor rg writes to instead (all four: ``rg.run_rg``). ``cut_ok``: output stopped at
    the raw-output guard is returned (its outcome says ``overflow``) for the caller to use what
    came before, instead of raising."""
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
            stdout=stdout,
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
        whole = outcome.stderr_head if len(outcome.stderr_head.encode("utf-8", "replace")) < STDERR_HEAD else ""
        shown = regex_parse_error(whole) if whole and len(whole) <= 1000 else None  # the pattern as written
        raise ToolError(Codes.SEARCH_INVALID_PATTERN, f"invalid pattern: {shown or diagnostic(outcome)}")
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


def diagnostic(outcome: RgOutcome) -> str:
    """rg's stderr in one line, at most 1,000 characters: its start (what went wrong) and its end."""
    text = outcome.stderr_tail
    if outcome.stderr_head and not text.startswith(outcome.stderr_head[:64]):
        text = outcome.stderr_head + " ... " + text
    text = " ".join(text.split())
    return text if len(text) <= 1000 else text[:400] + " ... " + text[-595:]
