"""What the extension exports for the kernels it starts: the state, the root and every setting."""

from __future__ import annotations

import json
import os

import pytest

from dsh_jupyter.core.settings import Settings, settings_from_env


@pytest.mark.dsh_settings(glob_max_results=7, read_limit=50, glob_sample_over_cap=False)
async def test_every_setting_is_exported_as_one_json_variable(jp_serverapp, state_path, spill_root):
    ext = jp_serverapp.extension_manager.extension_points["dsh_jupyter"].app
    exported = json.loads(os.environ["DSH_SETTINGS"])
    expected = ext.workspace.settings.replace(
        state_path=str(state_path), spill_root=os.path.realpath(spill_root)
    ).as_dict()
    assert exported == {k: v for k, v in expected.items() if v is not None}
    assert (exported["glob_max_results"], exported["read_limit"], exported["glob_sample_over_cap"]) == (7, 50, False)
    # what a kernel builds from it is the server's own settings
    assert Settings.from_mapping(settings_from_env()).glob_max_results == 7
