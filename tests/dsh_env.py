"""Isolation from the DSH_* variables a server extension exports into its own process.

The in-process Jupyter servers of the server and kernel tests set DSH_STATE_PATH, DSH_ROOT,
DSH_SPILL_ROOT and DSH_SETTINGS in the test process itself (as the extension does in a real
server); each test must start without them and leave the caller's values as they were.
"""

from __future__ import annotations

import os

import pytest

DSH_ENV = ("DSH_STATE_PATH", "DSH_ROOT", "DSH_SPILL_ROOT", "DSH_SETTINGS")


@pytest.fixture(autouse=True)
def _isolated_dsh_env():
    """Start every test without DSH_* and put the caller's values back afterwards."""
    saved = {k: os.environ.pop(k, None) for k in DSH_ENV}
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
