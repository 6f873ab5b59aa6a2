"""Settings: defaults, refusal of invalid values naming the setting, unknown names."""

from __future__ import annotations

import json
import re

import pytest

from dsh_jupyter import Workspace
from dsh_jupyter.core.settings import (
    SETTINGS_ENV,
    Settings,
    SettingsError,
    resolve_settings,
    settings_from_env,
    settings_to_env,
)

DEFAULTS = {
    "list_max_entries": 200,
    "glob_max_results": 100,
    "find_max_results": 50,
    "replace_max_results": 100,
    "replace_max_files": 2000,
    "replace_max_occurrences": 20_000,
    "grep_max_matches": 250,
    "grep_max_line_bytes": 2000,
    "raw_output_max_bytes": 20_000_000,
    "search_timeout_ms": 30_000,
    "read_limit": 2000,
    "read_max_files": 20,
    "read_max_line_length": 2000,
    "read_max_bytes": 51_200,
    "read_stream_min_size": 10_485_760,
    "edit_max_bytes": 10_485_760,
    "list_dir_max_entries": 10_000,
    "list_cache_max_entries": 400_000,
    "read_index_max_files": 64,
    "index_min_files": 50_000,
    "index_max_file_bytes": 1_048_576,
    "index_max_bytes": 4_294_967_296,
    "index_max_build_seconds": 900,
    "index_max_watches": 100_000,
    "notebook_tree_max_folders": 50_000,
    "notebook_output_max_chars": 2000,
    "notebook_traceback_lines": 20,
    "notebook_max_bytes": 67_108_864,
    "read_image_max_bytes": 5_242_880,
    "notebook_page_max_images": 8,
    "notebook_page_max_image_bytes": 5_242_880,
    "glob_sample_over_cap": True,
    "spill_max_bytes_per_session": 134_217_728,
    "spill_max_bytes_total": 536_870_912,
    "spill_max_age_hours": 168,
    "spill_max_bytes_read_only": 16_777_216,
    "respect_ignore_files": False,
    "call_log_max_records_per_session": 10_000,
    "call_log_max_bytes": 67_108_864,
    "call_log_max_bytes_read_only": 8_388_608,
    "landlock": True,
    "openat2": True,
    "allow_hidden": True,
    "hide_globs": [],
    "protected_paths": [],
    "state_journal": "auto",
    "state_path": None,
    "spill_root": None,
    "rg_path": None,
}
CACHE_SIZES = [  # 0 turns the cache (or the workspace index) off
    "list_cache_max_entries",
    "read_index_max_files",
    "notebook_tree_max_folders",
    "index_min_files",
]
PAGE_IMAGE_BOUNDS = ["notebook_page_max_images", "notebook_page_max_image_bytes"]  # 0 attaches no image
INTS = [
    k
    for k, v in DEFAULTS.items()
    if isinstance(v, int) and not isinstance(v, bool) and k not in CACHE_SIZES + PAGE_IMAGE_BOUNDS
]


def test_defaults():
    assert Settings().as_dict() == DEFAULTS
    assert set(Settings.names()) == set(DEFAULTS)


def test_workspace_uses_the_defaults(make_ws):
    ws = make_ws()
    for name, value in DEFAULTS.items():
        if name != "state_path":
            assert ws.settings.as_dict()[name] == value, name


def test_workspace_takes_settings_by_name(make_ws):
    ws = make_ws(list_max_entries=7, read_limit=3, glob_sample_over_cap=False)
    assert ws.settings.list_max_entries == 7
    assert ws.settings.read_limit == 3
    assert ws.settings.glob_sample_over_cap is False


@pytest.mark.parametrize("name", INTS)
@pytest.mark.parametrize("bad", [0, -1])
def test_non_positive_ints_are_refused(make_ws, name, bad):
    with pytest.raises(SettingsError) as exc:
        make_ws(**{name: bad})
    assert str(exc.value) == f"setting {name} must be at least 1, got {bad}"


@pytest.mark.parametrize("name", CACHE_SIZES)
def test_cache_sizes_take_zero_to_turn_the_cache_off(make_ws, name):
    with pytest.raises(SettingsError) as exc:
        make_ws(**{name: -1})
    assert str(exc.value) == f"setting {name} must be at least 0, got -1"
    with pytest.raises(SettingsError, match=f"^setting {name} must be an integer, got True$"):
        make_ws(**{name: True})
    assert make_ws(**{name: 5}).settings.as_dict()[name] == 5
    ws = make_ws(**{name: 0})
    assert {
        "list_cache_max_entries": ws.folders,
        "read_index_max_files": ws.lines,
        "notebook_tree_max_folders": ws.notebooks,
        "index_min_files": ws.index,
    }[name] is None
    assert not ws.run("list").is_error


@pytest.mark.parametrize("name", PAGE_IMAGE_BOUNDS)
def test_page_image_bounds_take_zero(make_ws, name):
    with pytest.raises(SettingsError) as exc:
        make_ws(**{name: -1})
    assert str(exc.value) == f"setting {name} must be at least 0, got -1"
    assert make_ws(**{name: 0}).settings.as_dict()[name] == 0


def test_exact_message_for_list_max_entries(make_ws):
    with pytest.raises(SettingsError, match=r"^setting list_max_entries must be at least 1, got 0$"):
        make_ws(list_max_entries=0)
    with pytest.raises(ValueError):  # SettingsError is a ValueError
        Settings(list_max_entries=0)


@pytest.mark.parametrize(
    ("value", "shown"),
    [("5", "'5'"), (5.0, "5.0"), (True, "True"), (None, "None")],
)
def test_wrong_types_are_refused(value, shown):
    with pytest.raises(SettingsError) as exc:
        Settings(read_limit=value)
    assert str(exc.value) == f"setting read_limit must be an integer, got {shown}"


def test_boolean_setting():
    with pytest.raises(SettingsError) as exc:
        Settings(glob_sample_over_cap="false")
    assert str(exc.value) == "setting glob_sample_over_cap must be true or false, got 'false'"
    assert Settings(glob_sample_over_cap=False).glob_sample_over_cap is False


@pytest.mark.parametrize("name", ["state_path", "spill_root", "rg_path"])
@pytest.mark.parametrize(("value", "shown"), [("", "''"), ("a\0b", "'a\\x00b'"), (3, "3")])
def test_path_settings(name, value, shown):
    with pytest.raises(SettingsError) as exc:
        Settings(**{name: value})
    assert str(exc.value) == f"setting {name} must be a non-empty path, got {shown}"


def test_unknown_setting_is_refused(make_ws):
    with pytest.raises(SettingsError) as exc:
        make_ws(list_max_entry=5)
    message = str(exc.value)
    assert message.startswith("unknown setting 'list_max_entry'; known settings: ")
    assert "list_max_entries" in message
    with pytest.raises(SettingsError, match="unknown setting 'nope'"):
        Settings.from_mapping({"nope": 1})


def test_from_mapping_and_replace():
    s = Settings.from_mapping({"read_limit": 10})
    assert s.read_limit == 10
    assert s.replace(read_limit=20).read_limit == 20
    with pytest.raises(SettingsError):
        s.replace(read_limit=0)


def test_root_must_be_a_directory(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(SettingsError, match="is not a directory"):
        Workspace(tmp_path / "file", state_path=tmp_path / "s.sqlite")
    with pytest.raises(SettingsError, match="is not a directory"):
        Workspace(tmp_path / "missing", state_path=tmp_path / "s.sqlite")


def test_bad_surface_and_session(root, tmp_path):
    with pytest.raises(SettingsError, match="surface must be one of python, rest, magic, widget"):
        Workspace(root, state_path=tmp_path / "s.sqlite", surface="cli")
    from dsh_jupyter.core.errors import ToolError

    with pytest.raises(ToolError, match="session must be a non-empty string"):
        Workspace(root, session="", state_path=tmp_path / "s.sqlite")


def test_settings_round_trip_through_the_kernel_variable():
    s = Settings(glob_max_results=3, state_path="/srv/state.sqlite", glob_sample_over_cap=False)
    exported = settings_to_env(s)
    assert json.loads(exported) == {k: v for k, v in s.as_dict().items() if v is not None}
    assert "rg_path" not in json.loads(exported)  # an unset path is not exported
    assert Settings.from_mapping(settings_from_env({SETTINGS_ENV: exported})) == s
    assert settings_from_env({}) == {} and settings_from_env({SETTINGS_ENV: ""}) == {}


def test_exported_settings_of_a_newer_server_drop_unknown_names(caplog):
    assert settings_from_env({SETTINGS_ENV: '{"read_limit": 5, "future_cap": 1}'}) == {"read_limit": 5}
    assert "ignoring unknown settings future_cap" in caplog.text


@pytest.mark.parametrize("raw", ["read_limit=5", "[1, 2]", '"text"', "{"])
def test_exported_settings_must_be_a_json_object(raw):
    with pytest.raises(
        SettingsError, match="^" + re.escape(f"DSH_SETTINGS must be a JSON object of settings, got {raw!r}") + "$"
    ):
        settings_from_env({SETTINGS_ENV: raw})


def test_the_docs_table_is_the_one_made_from_the_declarations():
    """docs/settings.md holds exactly the table ``python -m dsh_jupyter.settings_traits`` prints."""
    from pathlib import Path

    from dsh_jupyter.settings_traits import settings_table

    page = (Path(__file__).resolve().parents[2] / "docs" / "settings.md").read_text()
    start = page.index("-->\n", page.index("<!-- settings table")) + len("-->\n")
    end = page.index("<!-- end of settings table -->")
    assert page[start:end] == settings_table()
    for name in Settings.names():
        assert f"| `{name}` |" in page


def test_every_setting_has_a_kind_a_doc_and_a_valid_default():
    from dsh_jupyter.core.settings import SETTING_DOCS

    for f in Settings.fields():
        assert f.metadata["kind"] in ("int", "bool", "strings", "path", "choice"), f.name
        assert f.metadata["doc"].endswith(".") and SETTING_DOCS[f.name] == f.metadata["doc"], f.name
        if f.metadata["kind"] == "int":
            assert f.metadata["minimum"] in (0, 1), f.name
    Settings()  # every default passes its own check


def test_every_surface_resolves_settings_in_one_order():
    """Given beats the server's DSH_SETTINGS, which beats a surface's fallback, which beats the
    core default; a name none of them has keeps its default."""
    environ = {SETTINGS_ENV: json.dumps({"glob_max_results": 20, "grep_max_matches": 30})}
    resolved = resolve_settings(
        {"glob_max_results": 10},
        fallback={"glob_max_results": 99, "grep_max_matches": 99, "list_max_entries": 40},
        environ=environ,
    )
    assert (resolved.glob_max_results, resolved.grep_max_matches, resolved.list_max_entries) == (10, 30, 40)
    assert resolved.read_limit == Settings().read_limit
    assert resolve_settings(environ={}) == Settings()
    with pytest.raises(SettingsError, match="glob_max_results"):
        resolve_settings({"glob_max_results": 0}, environ={})


def test_the_workspace_and_the_magic_take_the_same_resolution(tmp_path, monkeypatch):
    monkeypatch.setenv(SETTINGS_ENV, json.dumps({"glob_max_results": 20}))
    assert Workspace(tmp_path).settings.glob_max_results == 20
    assert Workspace(tmp_path, glob_max_results=7).settings.glob_max_results == 7
