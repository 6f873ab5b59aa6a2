"""The JupyterLab extension dsh-jupyter-shim, as the installed environment sees it.

``pip install -e ".[test]"`` (what ./dev test runs) builds labextension_shim/ with npm and
installs the result under ``<prefix>/share/jupyter/labextensions/dsh-jupyter-shim``. These
tests look at that installed copy, never at the source tree's build folder, so a packaging
mistake (a missing shared-data entry, a build that was skipped) shows up here.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXT_NAME = "dsh-jupyter-shim"
COMMAND_ID = "dsh-jupyter:open-explorer"
REPO = Path(__file__).resolve().parents[1]
SHIM = REPO / "labextension_shim"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _labextension_list() -> str:
    """``python -m jupyter labextension list`` in this interpreter's environment, without colours."""
    proc = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = ANSI.sub("", proc.stdout + proc.stderr)
    assert proc.returncode == 0, f"jupyter labextension list failed ({proc.returncode}):\n{out}"
    return out


def _installed_dir() -> Path:
    from jupyter_core.paths import jupyter_path

    for base in jupyter_path("labextensions"):
        candidate = Path(base) / EXT_NAME
        if (candidate / "package.json").is_file():
            return candidate
    pytest.fail(
        f"{EXT_NAME} is not installed in any of {jupyter_path('labextensions')}; "
        'run pip install -e ".[test]" (it builds labextension_shim/ with npm)'
    )


@pytest.fixture(scope="module")
def installed() -> Path:
    if importlib.util.find_spec("jupyterlab") is None:
        pytest.fail('jupyterlab is missing; it is in the test extra: pip install -e ".[test]"')
    return _installed_dir()


@pytest.mark.slow
def test_listed_enabled_and_ok(installed: Path) -> None:
    out = _labextension_list()
    lines = [line.strip() for line in out.splitlines() if line.strip().startswith(EXT_NAME + " ")]
    assert lines, f"{EXT_NAME} missing from jupyter labextension list:\n{out}"
    line = lines[0]
    assert re.search(r"\benabled\b", line) and re.search(r"\bOK\b", line), line
    assert "(python, dsh-jupyter)" in line, line  # install.json says who installed it
    assert "disabled" not in line and "X" not in line.split(), line


def test_built_package_json_names_the_command(installed: Path) -> None:
    data = json.loads((installed / "package.json").read_text())
    assert data["name"] == EXT_NAME
    assert data["dsh-jupyter"]["commands"]["openExplorer"] == COMMAND_ID
    build = data["jupyterlab"]["_build"]  # written by the builder, absent from the source
    remote_entry = installed / build["load"]
    assert remote_entry.is_file(), remote_entry
    assert (installed / "static" / "style.js").is_file()
    # The id in the metadata is the one the bundle registers.
    bundles = "".join(p.read_text(errors="replace") for p in (installed / "static").glob("*.js"))
    assert COMMAND_ID in bundles
    assert "dsh/api/tools" in bundles
    # the open-tabs plugin and the route it reports to
    assert data["dsh-jupyter"]["tabsPlugin"] in bundles and data["dsh-jupyter"]["tabsRoute"] in bundles
    # the saved-outputs plugin, the bundle key it draws, and ipywidgets' module shared, not bundled
    assert data["dsh-jupyter"]["savedOutputsPlugin"] in bundles and data["dsh-jupyter"]["savedOutputMime"] in bundles
    assert data["jupyterlab"]["sharedPackages"]["@jupyter-widgets/jupyterlab-manager"] == {
        "bundled": False,
        "singleton": True,
    }
    assert "Error displaying widget" not in bundles  # ipywidgets' renderer is not in our bundle
    # Go to File's key is in the sidebar plugin's settings schema, installed beside the bundle
    schema = json.loads((installed / "schemas" / EXT_NAME / "sidebar.json").read_text())
    assert schema["jupyter.lab.shortcuts"] == [
        {"command": data["dsh-jupyter"]["commands"]["goToFile"], "keys": ["Accel Alt P"], "selector": "body"}
    ]


def test_install_json(installed: Path) -> None:
    data = json.loads((installed / "install.json").read_text())
    assert data["packageManager"] == "python"
    assert data["packageName"] == "dsh-jupyter"
    assert "uninstall" in data["uninstallInstructions"]


def test_source_declares_the_same_command_id() -> None:
    """Needs no build: the id in package.json and the one in src/index.ts must not drift."""
    data = json.loads((SHIM / "package.json").read_text())
    assert data["dsh-jupyter"]["commands"]["openExplorer"] == COMMAND_ID
    source = (SHIM / "src" / "index.ts").read_text()
    assert f"'{COMMAND_ID}'" in source
    assert "'%load_ext dsh_jupyter\\n%dsh session'" in source
    # the command the widgets reach through page events, and the events themselves
    assert f"'{data['dsh-jupyter']['commands']['openInEditor']}'" in source
    assert "'dsh-jupyter:probe'" in source and "'dsh-jupyter:open-in-editor'" in source
    front = (SHIM / "src" / "widget" / "window.js").read_text()
    assert '"dsh-jupyter:probe"' in front and '"dsh-jupyter:open-in-editor"' in front
    assert f"'{data['dsh-jupyter']['explorerSessionName']}'" in source
    # the open-tabs plugin: registered from index.ts, its id and route as package.json says
    assert "tabsPlugin" in source and "export default [plugin, sidebarPlugin, tabsPlugin, savedOutputsPlugin]" in source
    assert f"id: '{data['dsh-jupyter']['tabsPlugin']}'" in (SHIM / "src" / "tabs.ts").read_text()
    assert f"const ROUTE = '{data['dsh-jupyter']['tabsRoute']}'" in (SHIM / "src" / "tablink.ts").read_text()
    # the panel's command, which notebook 01 links to
    panel = data["dsh-jupyter"]["commands"]["openPanel"]
    assert f"export const OPEN_PANEL = '{panel}';" in (SHIM / "src" / "sidebar.ts").read_text()
    go = data["dsh-jupyter"]["commands"]["goToFile"]
    assert f"export const GO_TO_FILE = '{go}';" in (SHIM / "src" / "gotofile.ts").read_text()
    schema = json.loads((SHIM / "schema" / "sidebar.json").read_text())
    assert [s["command"] for s in schema["jupyter.lab.shortcuts"]] == [go]
    assert f'data-commandlinker-command=\\"{panel}\\"' in (REPO / "notebooks" / "01-seed-failure.ipynb").read_text()
    # the saved-outputs plugin draws the key the kernel puts beside a widget view
    from dsh_jupyter.kernel.display import DSH_VIEW_MIME

    saved = (SHIM / "src" / "savedoutput.ts").read_text()
    assert f"id: '{data['dsh-jupyter']['savedOutputsPlugin']}'" in saved
    assert data["dsh-jupyter"]["savedOutputMime"] == DSH_VIEW_MIME
    assert f"export const DSH_VIEW_MIME = '{DSH_VIEW_MIME}';" in saved


def test_the_same_build_made_the_widgets_module_in_the_installed_package() -> None:
    """One npm build, two outputs: the widgets' ES module and style sheet sit in the package as
    installed (the editable install reads the source tree), and the widgets load them."""
    from importlib.resources import files

    from dsh_jupyter.kernel.widgets.base import DshView

    static = files("dsh_jupyter.kernel.widgets") / "static"
    esm, css = (static / "widget.js").read_text(encoding="utf-8"), (static / "widget.css").read_text(encoding="utf-8")
    assert (DshView._esm, DshView._css) == (esm, css)
    assert esm.rstrip().endswith("export {\n  main_default as default\n};")  # esbuild's ES module
    assert "// src/common/dom.ts" in esm and "// src/widget/main.js" in esm
    # the build step names both outputs: a wheel build fails if either is missing
    pyproject = (REPO / "pyproject.toml").read_text()
    for target in (
        "dsh_jupyter/labextension/static/style.js",
        "dsh_jupyter/kernel/widgets/static/widget.js",
        "dsh_jupyter/kernel/widgets/static/widget.css",
    ):
        assert f'    "{target}",\n' in pyproject.split("ensured-targets = [", 1)[1].split("]", 1)[0]
    scripts = json.loads((SHIM / "package.json").read_text())["scripts"]
    assert scripts["build:prod"].endswith("npm run build:labextension && npm run build:widget")
    assert scripts["build:widget"].startswith("esbuild src/widget/main.js --bundle --format=esm ")


def test_python_package_points_develop_at_the_build_folder() -> None:
    import dsh_jupyter

    (entry,) = dsh_jupyter._jupyter_labextension_paths()
    assert entry["dest"] == EXT_NAME
    assert entry["src"] == "labextension"
    data = json.loads((SHIM / "package.json").read_text())
    out = (SHIM / data["jupyterlab"]["outputDir"]).resolve()
    assert out == (Path(dsh_jupyter.__file__).parent / entry["src"]).resolve()
