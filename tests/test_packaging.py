"""The wheel a user installs: built from the sources, it carries the MIT license.

The build runs ``pip wheel --no-deps`` on a copy of the repository (no venvs, no caches), with the
JupyterLab extension already built (``SKIP_JUPYTER_BUILDER=1``: npm's part is tested by the Binder
and labextension tests), so this test is about what the wheel holds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SKIP = {".git", ".venv", ".venv-ci", "venv", "node_modules", "__pycache__", ".pytest_cache", "build", "dist",
        ".ipynb_checkpoints"}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"

    def ignore(folder: str, names: list[str]) -> set[str]:
        shim_build = Path(folder) == REPO / "labextension_shim"
        return {n for n in names
                if n in SKIP or n.endswith((".egg-info", ".tsbuildinfo")) or (shim_build and n == "lib")}

    shutil.copytree(REPO, src, ignore=ignore)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    env["SKIP_JUPYTER_BUILDER"] = "1"
    out = tmp / "dist"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "--quiet",
         "--wheel-dir", str(out), str(src)],
        capture_output=True, text=True, env=env, timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (built,) = out.glob("dsh_jupyter-*.whl")
    return built


def test_the_license_file_is_in_the_wheel(wheel):
    license_text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License\n\nCopyright (c) ")
    assert "dsh-jupyter contributors" in license_text.splitlines()[2]
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        licenses = [n for n in names if ".dist-info/" in n and n.endswith("/LICENSE")]
        assert len(licenses) == 1, names
        assert whl.read(licenses[0]).decode("utf-8") == license_text
        metadata = whl.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode("utf-8")
    assert "License-Expression: MIT" in metadata.splitlines()
    assert "License-File: LICENSE" in metadata.splitlines()


def test_the_wheel_ships_the_lab_extra_and_the_extensions(wheel):
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        metadata = whl.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode("utf-8")
    assert "Provides-Extra: lab" in metadata.splitlines()
    assert any(n.endswith("etc/jupyter/jupyter_server_config.d/dsh_jupyter.json") for n in names)
    assert any(n.endswith("share/jupyter/labextensions/dsh-jupyter-shim/package.json") for n in names)


def test_the_version_has_one_source():
    """labextension_shim/package.json holds the version; the package and its metadata take it from there."""
    import json
    from importlib.metadata import version

    import dsh_jupyter

    repo = Path(__file__).resolve().parents[1]
    shim = json.loads((repo / "labextension_shim" / "package.json").read_text())["version"]
    assert dsh_jupyter.__version__ == shim == version("dsh-jupyter")
    pyproject = (repo / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and "\nversion =" not in pyproject
    assert "__version__ =" not in (repo / "dsh_jupyter" / "__init__.py").read_text()
