"""The wheel a user installs: built from the sources, it carries the MIT license, glob's compiled
dater and the index's compiled trigram reader (built by hatch_build.py from
dsh_jupyter/core/fs/mtimes.c and dsh_jupyter/core/index/grams.c).

The build runs ``pip wheel --no-deps`` on a copy of the repository (no venvs, no caches), with the
front end already built (``SKIP_JUPYTER_BUILDER=1``: npm's part is tested by the Binder and
labextension tests), so this test is about what the wheel holds.
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
SKIP = {
    ".git",
    ".venv",
    ".venv-ci",
    "venv",
    "node_modules",
    "__pycache__",
    ".pytest_cache",
    "build",
    "dist",
    ".ipynb_checkpoints",
}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"

    def ignore(folder: str, names: list[str]) -> set[str]:
        shim_build = Path(folder) == REPO / "labextension_shim"
        # the libraries built for the editable install are left behind too: the wheel's build makes its own
        return {
            n
            for n in names
            if n in SKIP
            or n.endswith((".egg-info", ".tsbuildinfo"))
            or (shim_build and n == "lib")
            or n.startswith(("libmtimes.so.", "libgrams.so."))
        }

    shutil.copytree(REPO, src, ignore=ignore)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    env["SKIP_JUPYTER_BUILDER"] = "1"
    out = tmp / "dist"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--disable-pip-version-check",
            "--quiet",
            "--wheel-dir",
            str(out),
            str(src),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
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
    # JupyterLab comes with real-time collaboration (docs/server.md, "Collaboration is on")
    lab = sorted(
        line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra == 'lab'" in line
    )
    assert lab == [
        "Requires-Dist: jupyter-collaboration<6,>=5; extra == 'lab'",
        "Requires-Dist: jupyterlab<5,>=4.2; extra == 'lab'",
        # a write of a file open with collaboration is merged (server/merging.py)
        "Requires-Dist: merge3>=0.0.15; extra == 'lab'",
        "Requires-Dist: nbdime<5,>=4; extra == 'lab'",
    ], lab
    assert any(n.endswith("etc/jupyter/jupyter_server_config.d/dsh_jupyter.json") for n in names)
    assert any(n.endswith("share/jupyter/labextensions/dsh-jupyter-shim/package.json") for n in names)
    # the sidebar plugin's settings schema, which holds Go to File's key
    assert any(n.endswith("labextensions/dsh-jupyter-shim/schemas/dsh-jupyter-shim/sidebar.json") for n in names)


def test_the_wheel_carries_the_widgets_front_end_and_the_widgets_load_it(wheel, tmp_path):
    """The bundle is generated (gitignored) yet shipped; its sources stay out of the package."""
    static = REPO / "dsh_jupyter" / "kernel" / "widgets" / "static"
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        for name in ("widget.js", "widget.css"):
            assert whl.read(f"dsh_jupyter/kernel/widgets/static/{name}") == (static / name).read_bytes()
        assert not [n for n in names if n.startswith("dsh_jupyter/kernel/widgets/front/") or "labextension_shim" in n]
        whl.extractall(tmp_path / "site", [n for n in names if n.startswith("dsh_jupyter/")])
    code = (
        "from dsh_jupyter.kernel.widgets.base import DshView; import dsh_jupyter; "
        "print(dsh_jupyter.__file__); print(len(DshView._esm), len(DshView._css))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(tmp_path / "site")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )
    assert out.returncode == 0, out.stderr
    where, sizes = out.stdout.splitlines()
    assert where == str(tmp_path / "site" / "dsh_jupyter" / "__init__.py")
    assert sizes == f"{len((static / 'widget.js').read_text())} {len((static / 'widget.css').read_text())}"


def test_the_wheel_carries_the_compiled_dater_and_trigram_reader_and_is_tagged_for_this_platform(wheel, tmp_path):
    import ctypes

    from packaging.tags import sys_tags

    from dsh_jupyter.core.fs.mtimes import ABI

    platform = next(t.platform for t in sys_tags() if "manylinux" not in t.platform and "musllinux" not in t.platform)
    assert wheel.name.endswith(f"-py3-none-{platform}.whl"), wheel.name
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        info = whl.read(next(n for n in names if n.endswith(".dist-info/WHEEL"))).decode("utf-8")
        assert "dsh_jupyter/core/fs/mtimes.py" in names and "dsh_jupyter/core/fs/mtimes.c" in names
        library = tmp_path / "libmtimes.so"
        library.write_bytes(whl.read(f"dsh_jupyter/core/fs/libmtimes.so.{ABI}"))
    assert "Root-Is-Purelib: false" in info.splitlines()
    assert f"Tag: py3-none-{platform}" in info.splitlines()
    assert ctypes.CDLL(str(library)).dsh_mtimes_abi() == ABI
    from dsh_jupyter.core.index import native

    with zipfile.ZipFile(wheel) as whl:
        assert "dsh_jupyter/core/index/grams.c" in whl.namelist()
        grams = tmp_path / "libgrams.so"
        grams.write_bytes(whl.read(f"dsh_jupyter/core/index/libgrams.so.{native.ABI}"))
    assert ctypes.CDLL(str(grams)).dsh_grams_abi() == native.ABI


def test_the_build_step_says_why_it_built_no_dater_and_leaves_no_half_written_library(tmp_path):
    sys.path.insert(0, str(REPO))
    try:
        import hatch_build
    finally:
        sys.path.remove(str(REPO))
    folder = tmp_path / "dsh_jupyter" / "core" / "fs"
    folder.mkdir(parents=True)
    shutil.copy(REPO / hatch_build.SOURCE, folder / "mtimes.c")
    assert hatch_build.compile_dater(str(tmp_path), cc="no-such-cc") == "no C compiler ('no-such-cc' was not found)"
    from dsh_jupyter.core.fs.mtimes import ABI

    library = folder / f"libmtimes.so.{ABI}"
    assert hatch_build.library_path(str(tmp_path)) == str(library.relative_to(tmp_path))
    library.write_bytes(b"the library of an earlier build")
    why = hatch_build.compile_dater(str(tmp_path), cc="false")
    assert why is not None and why.startswith("false failed")
    assert sorted(p.name for p in folder.iterdir()) == [library.name, "mtimes.c"]  # no scratch file left
    assert library.read_bytes() == b"the library of an earlier build"
    assert hatch_build.compile_dater(str(tmp_path)) is None
    assert sorted(p.name for p in folder.iterdir()) == [library.name, "mtimes.c"]
    import ctypes

    assert ctypes.CDLL(str(library)).dsh_mtimes_abi() == ABI


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
