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
from dataclasses import dataclass
from typing import Any

__all__ = ["Settings", "SettingsError", "SETTING_DOCS", "SETTINGS_ENV", "settings_to_env", "settings_from_env"]

log = logging.getLogger(__name__)

# The server exports its settings to the kernels it starts in this one variable, a JSON object
# under the settings' own names, so `%dsh` pages exactly as REST does (see settings_from_env).
SETTINGS_ENV = "DSH_SETTINGS"


class SettingsError(ValueError):
    """A setting has a value the tools cannot work with."""


# name -> (why the cap exists); rendered into the README table and the server's traitlet help.
SETTING_DOCS: dict[str, str] = {
    "list_max_entries": "Entries one `list` page shows; the footer always states the complete count.",
    "glob_max_results": "Paths one `glob` page shows; a larger result is sampled across top-level "
    "entries and saved whole to the spill store.",
    "grep_max_matches": "Matches one `grep` page shows; a larger result is saved whole to the spill store.",
    "grep_max_line_bytes": "Bytes kept of each matching line's preview (cut at a UTF-8 boundary).",
    "raw_output_max_bytes": "Raw ripgrep stdout read before a search is stopped as too broad.",
    "search_timeout_ms": "Milliseconds a search may run before ripgrep's process group is killed.",
    "read_limit": "Default and largest number of lines one `read` returns.",
    "read_max_line_length": "Characters kept of one line in a `read` window.",
    "read_max_bytes": "Bytes of text one `read` window may hold before it stops early.",
    "read_stream_min_size": "Files this size or larger are streamed, never loaded whole.",
    "list_dir_max_entries": "Entries a recursive `list_dir` collects before it stops.",
    "list_cache_max_entries": "Names of recently listed folders kept in memory (their sorted scans and the "
    "views made from them), so the next page of a big folder costs the page; a folder is scanned again "
    "whenever its change stamp cannot prove the kept scan current. 0 turns the cache off.",
    "read_index_max_files": "File versions whose line offsets `read` keeps in memory, so the next window of a "
    "big file seeks instead of counting from the start; any change to a file makes it a new version. "
    "0 turns the index off.",
    "notebook_tree_max_folders": "Folders whose subfolder and notebook names grep keeps in memory, so a grep "
    "over a big tree finds its notebooks by looking at each folder's change stamp instead of walking it "
    "again with rg. 0 turns this off (every grep lists notebooks with rg).",
    "notebook_output_max_chars": "Characters kept of one cell output's text when `read` shows a notebook "
    "(the rest is counted, never shown).",
    "notebook_traceback_lines": "Lines kept of an error output's traceback when `read` shows a notebook "
    "(its first and last lines).",
    "notebook_max_bytes": "Notebooks larger than this are read as text, not parsed into cells (parsing "
    "needs the whole file in memory).",
    "glob_sample_over_cap": "Sample an over-cap glob page across top-level entries (false keeps "
    "the oldest-first head, the old behaviour, for comparison).",
    "state_path": "SQLite state file shared by the server and its kernels (default: DSH_STATE_PATH, "
    "else a per-user file).",
    "spill_root": "Folder for saved full search results (default: beside the state file, outside "
    "the workspace).",
    "rg_path": "The ripgrep binary (default: the one installed with the package, else PATH).",
    "spill_max_bytes_per_session": "Bytes the saved full results of one session may hold; the oldest are "
    "removed first.",
    "spill_max_bytes_total": "Bytes all saved full results in the spill root may hold together; the oldest "
    "are removed first.",
    "spill_max_age_hours": "Hours a saved full result is kept.",
    "landlock": "Run ripgrep under a Landlock ruleset that lets it read only beneath its search root, where "
    "the kernel has Landlock (false: descriptors only).",
    "openat2": "Resolve paths with openat2(RESOLVE_BENEATH) where the kernel has it (false: the "
    "component-by-component O_NOFOLLOW walk everywhere; both are race-free).",
    "allow_hidden": "Show, search, read and write hidden files (a path component starting with '.'). "
    "On a Jupyter server this follows ContentsManager.allow_hidden (default false).",
    "hide_globs": "Names left out of listings and searches (on a Jupyter server: ContentsManager.hide_globs).",
    "protected_paths": "Folders that are never shown, searched, read or written, besides Jupyter's own "
    "runtime, data and config folders, IPython's folder, the state folder and the spill root.",
    "spill_max_bytes_read_only": "Bytes the saved results of one caller without write permission may hold.",
    "state_journal": "SQLite journal of the state file: auto (WAL, or a rollback journal when the state "
    "file is on a network or FUSE filesystem), wal or delete.",
}

_POSITIVE_INTS = (
    "list_max_entries",
    "glob_max_results",
    "grep_max_matches",
    "grep_max_line_bytes",
    "raw_output_max_bytes",
    "search_timeout_ms",
    "read_limit",
    "read_max_line_length",
    "read_max_bytes",
    "read_stream_min_size",
    "list_dir_max_entries",
    "notebook_output_max_chars",
    "notebook_traceback_lines",
    "notebook_max_bytes",
    "spill_max_bytes_per_session",
    "spill_max_bytes_total",
    "spill_max_age_hours",
    "spill_max_bytes_read_only",
)
_NON_NEGATIVE_INTS = ("list_cache_max_entries", "read_index_max_files", "notebook_tree_max_folders")  # 0 turns a cache off
_BOOLS = ("glob_sample_over_cap", "landlock", "openat2", "allow_hidden")
_STRING_LISTS = ("hide_globs", "protected_paths")
_OPTIONAL_PATHS = ("state_path", "spill_root", "rg_path")


@dataclass(frozen=True)
class Settings:
    """The validated settings; build with ``Settings(**kwargs)`` or ``Settings.from_mapping``."""

    list_max_entries: int = 200
    glob_max_results: int = 100
    grep_max_matches: int = 250
    grep_max_line_bytes: int = 2000
    raw_output_max_bytes: int = 20_000_000
    search_timeout_ms: int = 30_000
    read_limit: int = 2000
    read_max_line_length: int = 2000
    read_max_bytes: int = 51_200
    read_stream_min_size: int = 10_485_760
    list_dir_max_entries: int = 10_000
    list_cache_max_entries: int = 400_000
    read_index_max_files: int = 64
    notebook_tree_max_folders: int = 50_000
    notebook_output_max_chars: int = 2000
    notebook_traceback_lines: int = 20
    notebook_max_bytes: int = 64 * 1024 * 1024
    glob_sample_over_cap: bool = True
    spill_max_bytes_per_session: int = 128 * 1024 * 1024
    spill_max_bytes_total: int = 512 * 1024 * 1024
    spill_max_age_hours: int = 168
    spill_max_bytes_read_only: int = 16 * 1024 * 1024
    landlock: bool = True
    openat2: bool = True
    allow_hidden: bool = True
    hide_globs: tuple[str, ...] = ()
    protected_paths: tuple[str, ...] = ()
    state_journal: str = "auto"
    state_path: str | None = None
    spill_root: str | None = None
    rg_path: str | None = None

    def __post_init__(self) -> None:
        for name in _POSITIVE_INTS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise SettingsError(f"setting {name} must be an integer, got {value!r}")
            if value < 1:
                raise SettingsError(f"setting {name} must be at least 1, got {value}")
        for name in _NON_NEGATIVE_INTS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise SettingsError(f"setting {name} must be an integer, got {value!r}")
            if value < 0:
                raise SettingsError(f"setting {name} must be at least 0, got {value}")
        for name in _BOOLS:
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise SettingsError(f"setting {name} must be true or false, got {value!r}")
        if self.state_journal not in ("auto", "wal", "delete"):
            raise SettingsError(f"setting state_journal must be auto, wal or delete, got {self.state_journal!r}")
        for name in _STRING_LISTS:
            value = getattr(self, name)
            if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(
                isinstance(v, str) and v and "\0" not in v for v in value
            ):
                raise SettingsError(f"setting {name} must be a list of non-empty strings, got {value!r}")
            object.__setattr__(self, name, tuple(value))
        for name in _OPTIONAL_PATHS:
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value or "\0" in value):
                raise SettingsError(f"setting {name} must be a non-empty path, got {value!r}")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> "Settings":
        """Build from keyword values, refusing unknown names (a typo must not pass silently)."""
        known = set(cls.names())
        unknown = sorted(k for k in values if k not in known)
        if unknown:
            raise SettingsError(f"unknown setting {unknown[0]!r}; known settings: {', '.join(sorted(known))}")
        return cls(**values)

    def replace(self, **changes: Any) -> "Settings":
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """Every setting by name; list settings as lists (so the dict is plain JSON)."""
        return {name: list(v) if isinstance(v := getattr(self, name), tuple) else v for name in self.names()}


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
