"""rg's flags for glob and grep: discovery, hidden names, VCS folders and what is left out.

Every model-controlled value reaches ripgrep as one argv element that cannot be read as an
option: the glob as ``--glob=<pattern>``, the regex as ``--regexp=<pattern>``, the target after
``--``. Discovery is the same for both tools: hidden files only where allowed, ignore files not
honoured (unless the settings say so), symlinks not followed, VCS folders excluded at any depth
(and filtered out of the output too, ``search.scans``), protected folders and the spill root left
out.

What it must never do: let a later flag bring back a name the hide globs leave out (they come
after the pattern and the include: with rg, a later glob wins), or write a folder name holding
glob syntax into a glob (those are left to the output filter alone).
"""

from __future__ import annotations

import re

from ...errors import Codes, ToolError
from ..context import CallContext

__all__ = [
    "DISCOVERY",
    "EXCLUDE_NEGATED",
    "VCS_DIRS",
    "VCS_EXCLUDES",
    "VCS_IN_PATH",
    "discovery_flags",
    "exclusion_flags",
    "hide_flags",
    "user_excludes",
    "user_exclusion_flags",
]

VCS_DIRS = (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")
VCS_EXCLUDES = [f"--glob=!{name}" for name in VCS_DIRS]
VCS_IN_PATH = re.compile("(?:^|/)(?:" + "|".join(re.escape(v) for v in VCS_DIRS) + ")(?:/|$)")
DISCOVERY = ["--no-config", "--no-ignore", "--hidden", "--no-follow"]


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


_GLOB_META = re.compile(r"[*?\[\]{}!\\]")
