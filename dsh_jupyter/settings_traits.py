"""The core settings as configurable traitlets, declared once for every Jupyter-side class.

The server's ``DshJupyter`` (``c.DshJupyter.glob_max_results = 50``) and the kernel's
``DshMagics`` (``%config DshMagics.glob_max_results = 50``) both inherit these, so a setting has
one name, one default and one help text everywhere. It lives outside ``core`` because traitlets
belongs to Jupyter; the values are still validated by ``core.settings.Settings``.
"""

from __future__ import annotations

from traitlets import Bool, HasTraits, Int, List, Unicode

from .core.settings import SETTING_DOCS, Settings

__all__ = ["SettingTraits"]

_DEFAULTS = Settings()


def _int(name: str) -> Int:
    return Int(getattr(_DEFAULTS, name), help=SETTING_DOCS[name]).tag(config=True)


def _bool(name: str) -> Bool:
    return Bool(getattr(_DEFAULTS, name), help=SETTING_DOCS[name]).tag(config=True)


def _path(name: str) -> Unicode:
    return Unicode(None, allow_none=True, help=SETTING_DOCS[name]).tag(config=True)


class SettingTraits(HasTraits):
    """Mixin: one configurable trait per core setting, under the core's snake_case name."""

    list_max_entries = _int("list_max_entries")
    glob_max_results = _int("glob_max_results")
    grep_max_matches = _int("grep_max_matches")
    grep_max_line_bytes = _int("grep_max_line_bytes")
    raw_output_max_bytes = _int("raw_output_max_bytes")
    search_timeout_ms = _int("search_timeout_ms")
    read_limit = _int("read_limit")
    read_max_line_length = _int("read_max_line_length")
    read_max_bytes = _int("read_max_bytes")
    read_stream_min_size = _int("read_stream_min_size")
    list_dir_max_entries = _int("list_dir_max_entries")
    list_cache_max_entries = _int("list_cache_max_entries")
    read_index_max_files = _int("read_index_max_files")
    notebook_tree_max_folders = _int("notebook_tree_max_folders")
    notebook_output_max_chars = _int("notebook_output_max_chars")
    notebook_traceback_lines = _int("notebook_traceback_lines")
    notebook_max_bytes = _int("notebook_max_bytes")
    glob_sample_over_cap = _bool("glob_sample_over_cap")
    spill_max_bytes_per_session = _int("spill_max_bytes_per_session")
    spill_max_bytes_total = _int("spill_max_bytes_total")
    spill_max_age_hours = _int("spill_max_age_hours")
    spill_max_bytes_read_only = _int("spill_max_bytes_read_only")
    landlock = _bool("landlock")
    openat2 = _bool("openat2")
    allow_hidden = _bool("allow_hidden")
    hide_globs = List(Unicode(), default_value=[], help=SETTING_DOCS["hide_globs"]).tag(config=True)
    protected_paths = List(Unicode(), default_value=[], help=SETTING_DOCS["protected_paths"]).tag(config=True)
    state_journal = Unicode(_DEFAULTS.state_journal, help=SETTING_DOCS["state_journal"]).tag(config=True)
    state_path = _path("state_path")
    spill_root = _path("spill_root")
    rg_path = _path("rg_path")

    def setting_values(self) -> dict:
        """The traits' values under their core names (None for an unset path)."""
        return {name: getattr(self, name) for name in Settings.names()}
