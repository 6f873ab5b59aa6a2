"""Every cap and location the tools use, in one place.

The server's traitlets, the kernel magic and ``Workspace(**settings)`` all take these names, so a
cap means the same thing on every surface. Values are validated once, when a ``Settings`` is
built; an invalid value is refused with a message that names the setting, never later in the
middle of a tool call.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ROOT_ENV",
    "SETTINGS_ENV",
    "SETTING_DOCS",
    "SPILL_ROOT_ENV",
    "STATE_PATH_ENV",
    "Settings",
    "SettingsError",
    "resolve_settings",
    "settings_from_env",
    "settings_to_env",
]

log = logging.getLogger(__name__)

# The server exports its settings to the kernels it starts in this one variable, a JSON object
# under the settings' own names, so `%dsh` pages exactly as REST does (see settings_from_env).
SETTINGS_ENV = "DSH_SETTINGS"
# ... and where the workspace is: its root, its state file and its saved results (server/app.py
# exports them; Workspace, locations.default_state_path and the widgets read them back).
ROOT_ENV = "DSH_ROOT"
STATE_PATH_ENV = "DSH_STATE_PATH"
SPILL_ROOT_ENV = "DSH_SPILL_ROOT"


class SettingsError(ValueError):
    """A setting has a value the tools cannot work with."""


def setting(
    default: Any,
    kind: str,
    doc: str,
    *,
    minimum: int | None = None,
    choices: tuple[str, ...] = (),
    default_text: str | None = None,
) -> Any:
    """One setting's default and metadata: its ``kind`` (``int``, ``bool``, ``strings``, ``path``,
    ``choice``), why it exists (``doc``: the traitlet help, the CLI help and the docs table), the
    smallest value an ``int`` may take, the values a ``choice`` may take, and how the docs show a
    default computed at run time (``default_text``)."""
    meta = {"kind": kind, "doc": doc, "minimum": minimum, "choices": choices, "default_text": default_text}
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class Settings:
    """The validated settings; build with ``Settings(**kwargs)`` or ``Settings.from_mapping``.

    Each field is declared once with ``setting(...)``; the validation below, the traitlets of the
    server and the kernel (``settings_traits``), the stdio server's options and the docs table
    (``docs/settings.md``) are all made from these declarations.
    """

    list_max_entries: int = setting(
        200, "int", "Entries one `list` page shows; the footer always states the complete count.", minimum=1
    )
    glob_max_results: int = setting(
        100,
        "int",
        "Paths one `glob` page shows; a larger result is sampled across top-level entries and saved "
        "whole to the spill store.",
        minimum=1,
    )
    find_max_results: int = setting(
        50,
        "int",
        "Paths one `find` page shows, best first; the footer names the total and the offset of the next page.",
        minimum=1,
    )
    replace_max_results: int = setting(
        100,
        "int",
        "Occurrences one `replace` preview page shows; a larger preview is saved whole to the spill store.",
        minimum=1,
    )
    replace_max_files: int = setting(
        2000, "int", "Files one `replace` call may change; a larger change is refused, naming the setting.", minimum=1
    )
    replace_max_occurrences: int = setting(
        20_000,
        "int",
        "Occurrences one `replace` call may change; a larger change is refused, naming the setting.",
        minimum=1,
    )
    grep_max_matches: int = setting(
        250, "int", "Matches one `grep` page shows; a larger result is saved whole to the spill store.", minimum=1
    )
    grep_max_line_bytes: int = setting(
        2000, "int", "Bytes kept of each matching line's preview (cut at a UTF-8 boundary).", minimum=1
    )
    raw_output_max_bytes: int = setting(
        20_000_000, "int", "Raw ripgrep stdout read before a search is stopped as too broad.", minimum=1
    )
    search_timeout_ms: int = setting(
        30_000, "int", "Milliseconds a search may run before ripgrep's process group is killed.", minimum=1
    )
    read_limit: int = setting(2000, "int", "Default and largest number of lines one `read` returns.", minimum=1)
    read_max_files: int = setting(20, "int", "Files one `read` with `file_paths` takes.", minimum=1)
    read_max_line_length: int = setting(2000, "int", "Characters kept of one line in a `read` window.", minimum=1)
    read_max_bytes: int = setting(
        51_200, "int", "Bytes of text one `read` window may hold before it stops early.", minimum=1
    )
    read_stream_min_size: int = setting(
        10_485_760, "int", "Files this size or larger are streamed, never loaded whole.", minimum=1
    )
    edit_max_bytes: int = setting(
        10 * 1024 * 1024,
        "int",
        "Largest file `edit` loads to change it, and largest result it writes (`read` streams files of any size; "
        "`write` replaces them whole).",
        minimum=1,
    )
    list_dir_max_entries: int = setting(
        10_000, "int", "Entries a recursive `list_dir` collects before it stops.", minimum=1
    )
    list_cache_max_entries: int = setting(
        400_000,
        "int",
        "Names of recently listed folders kept in memory (their sorted scans and the views made "
        "from them), so the next page of a big folder costs the page; a folder is scanned again whenever its "
        "change stamp cannot prove the kept scan current. 0 turns the cache off.",
        minimum=0,
    )
    read_index_max_files: int = setting(
        64,
        "int",
        "File versions whose line offsets `read` keeps in memory, so the next window of a big file "
        "seeks instead of counting from the start; any change to a file makes it a new version. 0 turns the "
        "index off.",
        minimum=0,
    )
    index_min_files: int = setting(
        50_000,
        "int",
        "Files a workspace must hold before grep, glob and find are served from a workspace index "
        "(built in the background into the state folder, kept fresh by file events, every answer still "
        "rg's). 0 turns the index off.",
        minimum=0,
    )
    index_max_file_bytes: int = setting(
        1_048_576,
        "int",
        "Bytes of a file whose text the index holds; a bigger file is always searched by rg.",
        minimum=1,
    )
    index_max_bytes: int = setting(
        4_294_967_296,
        "int",
        "Bytes the index file may take on disk; a build that would pass it stops, and searches use rg.",
        minimum=1,
    )
    index_max_build_seconds: int = setting(
        900,
        "int",
        "Seconds an index build may take; a build that takes longer stops, and searches use rg.",
        minimum=1,
    )
    index_max_watches: int = setting(
        100_000,
        "int",
        "Folders the index watches for file events at most; a bigger tree is searched by rg.",
        minimum=1,
    )
    notebook_tree_max_folders: int = setting(
        50_000,
        "int",
        "Folders whose subfolder and notebook names grep keeps in memory, so a grep over a big "
        "tree finds its notebooks by looking at each folder's change stamp instead of walking it again with rg. "
        "0 turns this off (every grep lists notebooks with rg).",
        minimum=0,
    )
    notebook_output_max_chars: int = setting(
        2000,
        "int",
        "Characters kept of one cell output's text when `read` shows a notebook's cells (the rest is counted; "
        "`read` with `cell_id` and `output` shows it whole).",
        minimum=1,
    )
    notebook_traceback_lines: int = setting(
        20,
        "int",
        "Lines kept of an error output's traceback when `read` shows a notebook's cells (its first and last "
        "lines; `read` with `cell_id` and `output` shows it whole).",
        minimum=1,
    )
    notebook_max_bytes: int = setting(
        64 * 1024 * 1024,
        "int",
        "Notebooks larger than this are read as text, not parsed into cells (parsing needs the whole file in memory).",
        minimum=1,
    )
    read_image_max_bytes: int = setting(
        5 * 1024 * 1024,
        "int",
        "Largest image file (PNG, JPEG, GIF, WebP) `read` shows; its bytes go to MCP clients as an image "
        "block. A larger one is refused (IMAGE_TOO_LARGE).",
        minimum=1,
    )
    notebook_page_max_images: int = setting(
        8,
        "int",
        "Images of cell outputs (PNG, JPEG, GIF, WebP) one page of a notebook's cells attaches for MCP "
        "clients, in page order; the text says which output each attached image is and why any other is not.",
        minimum=0,
    )
    notebook_page_max_image_bytes: int = setting(
        5 * 1024 * 1024,
        "int",
        "Bytes of images one page of a notebook's cells attaches together (an image that would pass it "
        "is left out, a smaller one after it may still fit).",
        minimum=0,
    )
    respect_ignore_files: bool = setting(
        False,
        "bool",
        "Leave out of glob and grep what the workspace's .gitignore and .ignore files name (off: "
        "everything in the workspace is searched). When on, every answer of a search over a folder says so.",
    )
    glob_sample_over_cap: bool = setting(
        True,
        "bool",
        "Sample an over-cap glob page across top-level entries (false keeps the oldest-first head, for comparison).",
    )
    spill_max_bytes_per_session: int = setting(
        128 * 1024 * 1024,
        "int",
        "Bytes the saved full results of one session may hold; the oldest are removed first.",
        minimum=1,
    )
    spill_max_bytes_total: int = setting(
        512 * 1024 * 1024,
        "int",
        "Bytes all saved full results in the spill root may hold together; the oldest are removed first.",
        minimum=1,
    )
    spill_max_age_hours: int = setting(168, "int", "Hours a saved full result is kept.", minimum=1)
    spill_max_bytes_read_only: int = setting(
        16 * 1024 * 1024, "int", "Bytes the saved results of one caller without write permission may hold.", minimum=1
    )
    call_log_max_records_per_session: int = setting(
        10_000,
        "int",
        "Calls one session's log keeps; the oldest are dropped first, and the log says how many were dropped.",
        minimum=1,
    )
    call_log_max_bytes: int = setting(
        64 * 1024 * 1024,
        "int",
        "Bytes (arguments and text) the call log of all sessions keeps for callers "
        "who may write; the oldest are dropped first.",
        minimum=1,
    )
    call_log_max_bytes_read_only: int = setting(
        8 * 1024 * 1024,
        "int",
        "Bytes the call log keeps of calls by callers without write permission, on "
        "their own: they can never push out an owner's records.",
        minimum=1,
    )
    landlock: bool = setting(
        True,
        "bool",
        "Run ripgrep under a Landlock ruleset that lets it read only beneath its search root, where "
        "the kernel has Landlock (false: descriptors only).",
    )
    openat2: bool = setting(
        True,
        "bool",
        "Resolve paths with openat2(RESOLVE_BENEATH) where the kernel has it (false: the "
        "component-by-component O_NOFOLLOW walk everywhere; both are race-free).",
    )
    allow_hidden: bool = setting(
        True,
        "bool",
        "Show, search, read and write hidden files (a path component starting with '.'). On a "
        "Jupyter server this follows ContentsManager.allow_hidden (default false).",
        default_text="true (on a Jupyter server: `ContentsManager.allow_hidden`, false)",
    )
    hide_globs: tuple[str, ...] = setting(
        (),
        "strings",
        "Names left out of listings and searches (on a Jupyter server: ContentsManager.hide_globs).",
        default_text="none (on a Jupyter server: `ContentsManager.hide_globs`)",
    )
    protected_paths: tuple[str, ...] = setting(
        (),
        "strings",
        "Folders that are never shown, searched, read or written, besides Jupyter's own runtime, "
        "data and config folders, IPython's folder, the state folder and the spill root.",
        default_text="none",
    )
    state_journal: str = setting(
        "auto",
        "choice",
        "SQLite journal of the state file: auto (WAL, or a rollback journal when the state file "
        "is on a network or FUSE filesystem), wal or delete.",
        choices=("auto", "wal", "delete"),
    )
    state_path: str | None = setting(
        None,
        "path",
        "SQLite state file shared by the server and its kernels (default: DSH_STATE_PATH, else a per-user file).",
        default_text="`DSH_STATE_PATH`, else `<jupyter data dir>/dsh_jupyter/state.sqlite`",
    )
    spill_root: str | None = setting(
        None,
        "path",
        "Folder for saved full search results (default: beside the state file, outside the workspace).",
        default_text="`DSH_SPILL_ROOT`, else `spills/` beside the state file (on a Jupyter "
        "server: `<jupyter runtime dir>/dsh-spills`)",
    )
    rg_path: str | None = setting(
        None,
        "path",
        "The ripgrep binary (default: the one installed with the package, else PATH).",
        default_text="the `rg` installed with the package, else `PATH`",
    )

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            check = _CHECKS[f.metadata["kind"]]
            value = check(f.name, getattr(self, f.name), f.metadata)
            if value is not getattr(self, f.name):
                object.__setattr__(self, f.name, value)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def fields(cls) -> tuple[dataclasses.Field, ...]:
        """The declarations, with their metadata (``kind``, ``doc``, ``minimum``, ``choices``, ``default_text``)."""
        return dataclasses.fields(cls)

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> Settings:
        """Build from keyword values, refusing unknown names (a typo must not pass silently)."""
        known = set(cls.names())
        unknown = sorted(k for k in values if k not in known)
        if unknown:
            raise SettingsError(f"unknown setting {unknown[0]!r}; known settings: {', '.join(sorted(known))}")
        return cls(**values)

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """Every setting by name; list settings as lists (so the dict is plain JSON)."""
        return {name: list(v) if isinstance(v := getattr(self, name), tuple) else v for name in self.names()}


def _check_int(name: str, value: Any, meta: Mapping) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SettingsError(f"setting {name} must be an integer, got {value!r}")
    if value < meta["minimum"]:
        raise SettingsError(f"setting {name} must be at least {meta['minimum']}, got {value}")
    return value


def _check_bool(name: str, value: Any, meta: Mapping) -> bool:
    if not isinstance(value, bool):
        raise SettingsError(f"setting {name} must be true or false, got {value!r}")
    return value


def _check_strings(name: str, value: Any, meta: Mapping) -> tuple[str, ...]:
    if (
        isinstance(value, str)
        or not isinstance(value, (list, tuple))
        or not all(isinstance(v, str) and v and "\0" not in v for v in value)
    ):
        raise SettingsError(f"setting {name} must be a list of non-empty strings, got {value!r}")
    return value if isinstance(value, tuple) else tuple(value)


def _check_path(name: str, value: Any, meta: Mapping) -> str | None:
    if value is not None and (not isinstance(value, str) or not value or "\0" in value):
        raise SettingsError(f"setting {name} must be a non-empty path, got {value!r}")
    return value


def _check_choice(name: str, value: Any, meta: Mapping) -> str:
    choices = meta["choices"]
    if value not in choices:
        listed = ", ".join(choices[:-1]) + f" or {choices[-1]}"
        raise SettingsError(f"setting {name} must be {listed}, got {value!r}")
    return value


_CHECKS = {
    "int": _check_int,
    "bool": _check_bool,
    "strings": _check_strings,
    "path": _check_path,
    "choice": _check_choice,
}

# name -> why the setting exists (the traitlet help, the stdio server's option help, the docs table)
SETTING_DOCS: dict[str, str] = {f.name: f.metadata["doc"] for f in dataclasses.fields(Settings)}


def settings_to_env(settings: Settings) -> str:
    """The value of ``DSH_SETTINGS`` for ``settings``: a JSON object of every set value."""
    return json.dumps({k: v for k, v in settings.as_dict().items() if v is not None}, sort_keys=True)


def settings_from_env(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings a server exported in ``DSH_SETTINGS`` ({} when there are none).

    The values are validated when a ``Settings`` is built from them, like any other. A name this
    version does not know (a server running a newer release) is left out with a warning rather
    than refusing every call; a value that is not a JSON object is refused, naming the variable.
    """
    raw = (os.environ if environ is None else environ).get(SETTINGS_ENV)
    if not raw:
        return {}
    try:
        values = json.loads(raw)
    except ValueError:
        values = None
    if not isinstance(values, dict):
        raise SettingsError(f"{SETTINGS_ENV} must be a JSON object of settings, got {raw[:200]!r}")
    known = set(Settings.names())
    unknown = sorted(k for k in values if k not in known)
    if unknown:
        log.warning("%s: ignoring unknown settings %s", SETTINGS_ENV, ", ".join(unknown))
    return {k: v for k, v in values.items() if k in known}


def resolve_settings(
    given: Mapping[str, Any] | None = None,
    *,
    fallback: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """The settings a surface runs with: each from the first place that has it.

    1. ``given``: what was set for this surface (``Workspace(**settings)``, ``%config
       DshMagics.x``, the server's ``c.DshJupyter.x``, the stdio server's ``--x=``);
    2. ``DSH_SETTINGS`` in ``environ``: what the server that started this process runs with, so a
       kernel's ``%dsh`` pages exactly as REST does;
    3. ``fallback``: a surface's own defaults (the magic's traits that nobody set);
    4. the core defaults.

    Every surface builds its ``Settings`` here (``Workspace.__init__`` for the Python API, the
    server and the stdio server; the magic for its traits), so the order cannot differ between
    them. Every value is validated once, by ``Settings.from_mapping``.
    """
    values = {**(fallback or {}), **settings_from_env(environ), **(given or {})}
    return Settings.from_mapping(values)
