"""``glob``: files by name under a folder, oldest first; an over-cap page sampled across top-level entries.

Opening the search root, rg's flags and running rg under the fence live in ``tools/search``; this
module decides what to ask rg and how the complete, time-ordered list becomes a page, a value and
a spill. With the compiled dater (``fs/mtimes``), always rg's unsorted walks, dated as they come
(``dating``): one per part of ``split``'s cut at once, or one where the tree is not cut.
Without it: two sorted walks merged (``split``) where times follow folders, a dated walk
with a helper process where they do not, rg's one sorted walk where the tree is not cut.
Whichever way, folders rg could not read and paths that could not be dated are counted
(``LeftOut``) and said in the answer: a page that left something out never reads as the whole.
"""

from __future__ import annotations

from itertools import compress, repeat
from operator import itemgetter

from ...errors import Codes, ToolError
from ...fs import mtimes as compiled
from ...index.globs import compile_glob, select
from ...render.search import glob_page_footer, render_glob, render_glob_spill
from ...rg.recheck import Rechecker
from ...text.quoting import in_message
from ..context import CallContext
from ..indexing.ask import indexed_files, say_rg
from ..search.flags import (
    VCS_EXCLUDES,
    VCS_IN_PATH,
    discovery_flags,
    exclusion_flags,
    hide_flags,
    user_excludes,
    user_exclusion_flags,
)
from ..search.root import excluded_below, inside_vcs, open_search_root
from ..search.run import diagnostic, file_errors, overflow_error, run_search, unfenced
from ..search.sampling import sample_across_groups
from ..search.scans import drop_excluded, lines_have_vcs, lines_name_any, output_has_vcs, output_names_any
from ..search.spill import start_spill
from ..spec import (
    BOOLEAN,
    EXCLUDE,
    INDEX_FIELDS,
    INTEGER,
    NAME,
    PATH,
    STRING,
    Rows,
    ToolSpec,
    nullable,
    object_schema,
    value_schema,
)
from .dating import Dating, finish_together, in_order, times_follow_folders
from .indexed import IndexedGlob, indexed_glob, sampled_page
from .split import Background, Stamper, merge_by_mtime, plan_split

__all__ = ["GLOB", "execute_glob"]


def execute_glob(ctx: CallContext, args: dict) -> dict:
    pattern: str = args["pattern"]
    if pattern.startswith("!"):
        raise ToolError(Codes.ARGUMENT_INVALID, 'pattern must not start with "!"; negated globs are not supported')
    excludes = user_excludes(args.get("exclude"))
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
        if excludes:
            value["exclude"] = excludes
        if ctx.settings.respect_ignore_files:
            value["ignoreFiles"] = True
        if inside_vcs(ctx, root):
            return value
        excluded = excluded_below(ctx, root)
        test = compile_glob(pattern)
        ends = test.ends if test is not None and not test.dirs_only else None
        # the index kept exactly the paths with an ASCII ending (bytes and text agree on it):
        # for a glob that is its endings alone (**/*.py) and no exclude, that is the answer
        exact = (
            test is not None
            and ends is not None
            and test.ends_only
            and not test.lead
            and not excludes
            and all(e.isascii() for e in ends)
        )
        if exact:
            assert ends is not None
            found = indexed_glob(ctx, root, value, ends)  # the list, counts and spill made at once
            if found is not None:
                return _shape_indexed(ctx, value, found, root.prefix)
        # (asked again only where the index answered but could not order the list itself)
        got = indexed_files(ctx, root, value, ends, by_time=True) if value.get("source") != "rg" else None
        if got is not None:
            chosen = got[0] if exact and got[1] is None else _from_index(*got, pattern, excludes)
            if chosen is not None:
                paths = [root.prefix + p for p in chosen] if root.prefix else chosen
                return _shape_glob(ctx, value, paths, root.prefix, None)
            say_rg(value, "the glob is not one the index decides as rg does")
        # The pattern comes before the exclusions: with rg, a later glob wins over an earlier one.
        # --null: a file name may hold a newline, so paths are NUL-separated on the wire.
        argv = [
            "--files",
            "--null",
            "--sort=modified",
            *discovery_flags(ctx),
            f"--glob={pattern}",
            *VCS_EXCLUDES,
            *hide_flags(ctx),
            *exclusion_flags(excluded),
            *user_exclusion_flags(excludes),
        ]
        split = plan_split(root.fd, _not_for_part_b(excluded))
        recheck = unfenced(ctx)
        left = LeftOut()  # what could not be read or dated: said, never passed off as the whole
        dated: list[str] | None = None  # the dated walk's paths, and their join
        joined = ""
        native = compiled.available()  # the compiled dater keeps pace with any walk: always dated walks
        if not native and split is not None and times_follow_folders(root.fd, split.b_dirs):
            rels, stdout = _two_walks(ctx, root, argv, split, left)  # two sorted walks at once, merged (split.py)
            vcs, hidden = output_has_vcs(stdout), output_names_any(stdout, excluded)
        elif native or split is not None:
            # rg's unsorted walks, each path dated beneath the root as it comes (dating.py):
            # that dating is the recheck; its paths are scanned as one newline-joined text
            rels = dated = _dated_walk(ctx, root, argv, split if native else None, left)
            joined = "\n".join(rels)
            vcs, hidden, recheck = lines_have_vcs(joined), lines_name_any(joined, excluded), False
        else:
            outcome = run_search(ctx, [*argv, "--", "."], "glob", root)
            if outcome.returncode == 2 and not outcome.stdout and not file_errors(outcome):
                raise ToolError(Codes.SEARCH_FAILED, f"glob failed: {diagnostic(outcome)}")
            left.unreadable += file_errors(outcome)
            stdout, rels = outcome.stdout, None
            vcs, hidden = output_has_vcs(stdout), output_names_any(stdout, excluded)
        # rg was told to leave VCS and protected folders out; what it printed is checked again,
        # path by path only where one scan of the whole output finds such a name at all
        if rels is not None or hidden or recheck or vcs:
            if rels is None:
                # One decode of the whole output; bytes that are not UTF-8 stay as surrogate
                # escapes, so a path that is shown (quoted, as \udcXX) can be named back.
                rels = [p[2:] for p in stdout.decode("utf-8", "surrogateescape").split("\0") if p]
            if hidden:
                rels = drop_excluded(rels, excluded)
            if vcs:
                rels = [p for p in rels if not VCS_IN_PATH.search(p)]
            if recheck:
                with Rechecker(root.fd) as check:
                    rels = [p for p in rels if check.is_file(p)]
                    left.undated += check.undated
        left.say(value)
    blob = None  # the paths joined by newlines, when that string is already made
    if rels is not None:  # filtered above
        paths = [root.prefix + p for p in rels] if root.prefix else rels
        if dated is not None and rels is dated and not root.prefix:
            blob = joined
    else:
        # rg names every path "./…" from its working directory: one replace makes them display paths.
        text = stdout.decode("utf-8", "surrogateescape")
        paths = ("\0" + text).replace("\0./", "\0" + root.prefix)[1:].split("\0")
        if paths and paths[-1] == "":
            paths.pop()
    return _shape_glob(ctx, value, paths, root.prefix, blob)


def _from_index(paths: list[str], times: list[int] | None, pattern: str, excludes: list[str]) -> list[str] | None:
    """The index's files that rg lists for ``pattern`` and ``excludes`` (``index.globs``), oldest
    first, equal times by path, as the dated walks order them (``times``: the paths are not in
    that order yet); None: a glob it does not decide."""
    chosen = select(paths, pattern, excludes)
    if chosen is None or times is None:
        return chosen
    import numpy as np

    if len(chosen) != len(paths):
        kept = set(chosen)
        times = list(compress(times, map(kept.__contains__, paths)))
    return in_order(chosen, np.array(times, dtype=np.int64))


def _not_for_part_b(excluded: list[str]):
    """Which folders the cut must leave in part A: dot folders (hidden, or VCS), protected ones
    and those above a protected one (their exclusion globs are anchored at the root)."""

    def skip(rel: str) -> bool:
        name = rel.rpartition("/")[2]
        return name.startswith(".") or any(e == rel or e.startswith(rel + "/") for e in excluded)

    return skip


class LeftOut:
    """What a glob left out and says so (``render_glob``'s notes): folders rg could not read
    (``unreadable``), and paths rg listed that could not be dated beneath the root (``undated``:
    a folder on the way that may not be entered, no descriptor left)."""

    def __init__(self) -> None:
        self.unreadable = 0
        self.undated = 0

    def say(self, value: dict) -> None:
        """Put the counts in the value, each only when it is not zero."""
        if self.unreadable:
            value["unreadable"] = self.unreadable
        if self.undated:
            value["undated"] = self.undated


def _dated_walk(ctx: CallContext, root, argv: list[str], split, left: LeftOut) -> list[str]:
    """rg's unsorted walk on one thread, each path dated beneath the root as it arrives: the paths
    (without "./"), oldest first, equal times by path. Given a ``split`` (only with the compiled
    dater: two walks dating in Python would share one interpreter), one such walk per part at
    once (B's on a thread), each dating its own paths, so the walks and their dating share both
    cores. Otherwise one walk; dating in Python, it gets a dating process beside this one."""
    unsorted = ["-j1", *(flag for flag in argv if flag != "--sort=modified")]

    def walk(dating: Dating, flags: list[str]) -> int:
        """One walk, dated; how many folders rg could not read."""
        outcome = run_search(ctx, [*unsorted, *flags, "--", "."], "glob", root, consume=dating.feed, keep_stdout=False)
        unreadable = file_errors(outcome)
        if outcome.returncode == 2 and not dating.fed and not unreadable:
            raise ToolError(Codes.SEARCH_FAILED, f"glob failed: {diagnostic(outcome)}")
        return unreadable

    if split is None:
        with Dating(root.fd) as dating:
            left.unreadable += walk(dating, [])
            paths = dating.finish()
            left.undated += dating.undated
            return paths
    with Dating(root.fd) as dating_a, Dating(root.fd) as dating_b:
        part_b = Background(lambda: walk(dating_b, split.b_flags))
        try:
            left.unreadable += walk(dating_a, split.a_flags)
        except BaseException:
            part_b.wait()  # before the root's descriptor can close: B's rg runs in that folder
            raise
        left.unreadable += part_b.result()
        if dating_a.fed + dating_b.fed > ctx.settings.raw_output_max_bytes:  # the cap holds for the two together
            raise overflow_error(ctx, "glob")
        paths = finish_together(dating_a, dating_b, split.b_heads)
        left.undated += dating_a.undated + dating_b.undated
        return paths


def _two_walks(ctx: CallContext, root, argv: list[str], split, left: LeftOut) -> tuple[list[str], bytes]:
    """Both parts' sorted walks at once (B on a thread), merged: ``(paths without "./", raw output)``."""

    def walk(flags: list[str]) -> tuple[bytes, int]:
        outcome = run_search(ctx, [*argv, *flags, "--", "."], "glob", root)
        unreadable = file_errors(outcome)
        if outcome.returncode == 2 and not outcome.stdout and not unreadable:
            raise ToolError(Codes.SEARCH_FAILED, f"glob failed: {diagnostic(outcome)}")
        return outcome.stdout, unreadable

    part_b = Background(lambda: walk(split.b_flags))
    try:
        out_a, unreadable_a = walk(split.a_flags)
    except BaseException:
        part_b.wait()  # before the root's descriptor can close: B's rg runs in that folder
        raise
    out_b, unreadable_b = part_b.result()
    left.unreadable += unreadable_a + unreadable_b
    if len(out_a) + len(out_b) > ctx.settings.raw_output_max_bytes:  # the cap holds for the two together
        raise overflow_error(ctx, "glob")
    a = [p[2:] for p in out_a.decode("utf-8", "surrogateescape").split("\0") if p]
    b = [p[2:] for p in out_b.decode("utf-8", "surrogateescape").split("\0") if p]
    b = split.only_b(b)  # an entry made after the cut was planned is A's
    stamp = Stamper(root.fd)
    try:
        return merge_by_mtime(a, b, stamp), out_a + b"\0" + out_b
    finally:
        stamp.close()


def _shape_glob(ctx: CallContext, value: dict, paths: list[str], root_prefix: str, joined: str | None) -> dict:
    """The page: all paths within the cap, else a sample across top-level entries (``root_prefix``
    is what every path starts with below the search root; ``joined``: the paths joined by
    newlines, if that string is made already)."""
    cap = ctx.settings.glob_max_results
    total = len(paths)
    value["totalPaths"] = total
    if total <= cap:
        value["paths"] = paths
        return value
    # The spill is written on a thread while the page is sampled (a file of megabytes is mostly
    # the kernel's work); ``spilled()`` waits for it.
    spilled = start_spill(ctx, "glob", render_glob_spill(paths, joined), value["pattern"])
    try:
        _sample(ctx, value, paths, root_prefix)
    finally:
        value["spill"] = spilled()
    return value


def _sample(ctx: CallContext, value: dict, paths: list[str], root_prefix: str) -> None:
    """An over-cap page: sampled across top-level entries, or the head where that is the same."""
    cap = ctx.settings.glob_max_results
    cut = len(root_prefix)
    # each path's first name below the search root, split off in C (no Python call per path)
    below = map(itemgetter(slice(cut, None)), paths) if cut else paths
    keys = [key for key, _, _ in map(str.partition, below, repeat("/"))]
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


def _shape_indexed(ctx: CallContext, value: dict, found: IndexedGlob, root_prefix: str) -> dict:
    """``_shape_glob`` of what the index made (``indexed.py``): the count, list and spill are
    made already, and the page is picked from the head of the list."""
    cap = ctx.settings.glob_max_results
    value["totalPaths"] = found.total
    if found.total <= cap:
        value["paths"] = found.joined.split("\n") if found.total else []
        return value
    spilled = start_spill(ctx, "glob", found.spill, value["pattern"])
    try:
        cut = len(root_prefix)
        page = sampled_page(found.joined, found.groups, cap, cut) if found.groups is not None else None
        if page is None or found.groups is None:  # entries too many to count one by one
            _sample(ctx, value, found.joined.split("\n"), root_prefix)
        else:
            value["groupsTotal"] = len(found.groups)
            if ctx.settings.glob_sample_over_cap and not page.flat:
                value["paths"], value["sampled"], value["groupsShown"] = page.paths, True, page.groups_shown
            else:
                head = found.joined.split("\n", cap)[:cap]
                value["paths"] = head
                value["groupsShown"] = len({path[cut:].partition("/")[0] for path in head})
            value["capped"] = True
    finally:
        value["spill"] = spilled()
    return value


GLOB_OUTPUT = value_schema(
    {
        "pattern": STRING,
        "root": STRING,
        "paths": {"type": "array", "items": STRING},
        "totalPaths": INTEGER,
        "sampled": BOOLEAN,
        "groupsShown": INTEGER,
        "groupsTotal": INTEGER,
        "spill": nullable(STRING),
        "capped": BOOLEAN,
        "exclude": {"type": "array", "items": STRING},
        "ignoreFiles": BOOLEAN,
        "unreadable": INTEGER,
        "undated": INTEGER,
        **INDEX_FIELDS,
    },
    ("pattern", "root", "paths", "totalPaths", "sampled", "spill"),
)


GLOB = ToolSpec(
    name="glob",
    title="Find files",
    description=(
        "Find files by glob pattern (ripgrep glob syntax). A pattern without / matches file names at "
        "any depth, so * means every file below path, not just the top level. Results are files, "
        "never directories. A result within the cap is shown whole, oldest first; a larger one is "
        "sampled across the top-level entries of path and the complete sorted list is saved."
    ),
    input_schema=object_schema(
        {
            "pattern": {**NAME, "description": "Glob such as **/*.py or src/**/test_*.py."},
            "path": {**PATH, "description": "Directory to search (default: working directory)."},
            "exclude": EXCLUDE,
        },
        ("pattern",),
    ),
    output_schema=GLOB_OUTPUT,
    guidance=(
        "Use glob to find files by name. Remember that a pattern without / matches at any depth and "
        "that only files are returned: to see what a directory holds, use list. When the footer "
        "says the page was sampled, the page shows breadth, not the first files; read the saved "
        "full result for the rest."
    ),
    execute=execute_glob,
    render=render_glob,
    searches=True,
    rows=(Rows("paths", ("path",)),),
    footer=glob_page_footer,
)
