"""The widgets' front end as shipped: one ES module and one style sheet, bundled by the npm build
from labextension_shim/src/widget/ and src/common/ and loaded by every view; without them the
widgets fail and say how to build them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from servers import isolated_env

from dsh_jupyter.kernel.widgets import ListingView, frontend
from dsh_jupyter.kernel.widgets.base import DshView

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "labextension_shim" / "src"
SOURCES = sorted([*(SRC / "widget").iterdir(), *(SRC / "common").iterdir()])
HOW_TO_BUILD = (
    "run `pip install -e .` in the source checkout, whose build runs npm, or "
    "`npm install && npm run build:widget` in labextension_shim/."
)

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed (it is needed to build)")


def test_every_view_loads_the_built_module_and_style_sheet(make_ws, root):
    assert frontend.STATIC == REPO / "dsh_jupyter" / "kernel" / "widgets" / "static"
    esm = (frontend.STATIC / "widget.js").read_text(encoding="utf-8")
    css = (frontend.STATIC / "widget.css").read_text(encoding="utf-8")
    assert (esm, css) == (frontend.ESM, frontend.CSS)
    assert (DshView._esm, DshView._css) == (esm, css)
    assert "--jp-layout-color1" in css and "/* src/widget/dsh.css */" in css
    ws = make_ws()
    state = ListingView(ws, ws.session, path=".").get_state()
    assert (state["_esm"], state["_css"]) == (esm, css)  # what travels to the browser with the view


@needs_node
def test_the_module_is_one_self_contained_es_module_whose_default_export_renders(tmp_path):
    assert not re.findall(r"^\s*import\b", frontend.ESM, re.M)  # bundled: nothing left to fetch
    code = (
        f"const m = await import({json.dumps((frontend.STATIC / 'widget.js').as_uri())});"
        " console.log(JSON.stringify([Object.keys(m), Object.keys(m.default), typeof m.default.render]));"
    )
    out = subprocess.run(["node", "--input-type=module", "-e", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [["default"], ["render"], "function"]


def test_the_helpers_shared_with_the_sidebar_are_written_once():
    shared = re.compile(r"\bfunction (h|append|fill|humanSize)\b")
    for path in SRC.rglob("*"):
        if path.suffix in (".js", ".ts") and path.parent.name != "common":
            assert not shared.findall(path.read_text(encoding="utf-8")), path
    assert sorted(shared.findall((SRC / "common" / "dom.ts").read_text())) == ["append", "fill", "h"]
    assert shared.findall((SRC / "common" / "format.ts").read_text()) == ["humanSize"]
    # the widgets' bundle holds the one copy, and the sidebar imports the same files
    assert sorted(shared.findall(frontend.ESM)) == ["append", "h", "humanSize"]
    assert "from './common/dom'" in (SRC / "explorer.ts").read_text()
    assert "from './common/format'" in (SRC / "explorer.ts").read_text()


def test_the_built_front_end_is_newer_than_its_sources():
    """The browser tests run the built module: a source edited since the build would go untested."""
    built = min((frontend.STATIC / name).stat().st_mtime for name in frontend.FILES)
    stale = [p.name for p in SOURCES if p.stat().st_mtime > built]
    assert not stale, f"{stale} changed after the build; run `npm run build:widget` in labextension_shim/"


def test_modules_stay_small():
    assert {p.name for p in SOURCES} >= {"main.js", "dsh.css", "dom.ts", "format.ts"}
    for path in SOURCES:
        assert len(path.read_text().splitlines()) < 400, path.name


def test_a_missing_front_end_says_how_to_build_it(tmp_path):
    with pytest.raises(frontend.FrontEndNotBuilt) as caught:
        frontend.load(tmp_path)
    assert str(caught.value) == (
        f"The dsh widgets' front end is not built ({tmp_path / 'widget.js'} is missing): {HOW_TO_BUILD}"
    )
    (tmp_path / "widget.js").write_text("export default { render() {} };\n")
    with pytest.raises(frontend.FrontEndNotBuilt) as caught:
        frontend.load(tmp_path)
    assert str(caught.value) == (
        f"The dsh widgets' front end is not built ({tmp_path / 'widget.css'} is missing): {HOW_TO_BUILD}"
    )
    (tmp_path / "widget.css").write_text(".dsh {}\n")
    assert frontend.load(tmp_path) == ("export default { render() {} };\n", ".dsh {}\n")


def unbuilt_checkout(tmp_path) -> tuple[Path, dict]:
    """A copy of the package without its build, and an environment that imports it, on a workspace."""
    package = tmp_path / "checkout" / "dsh_jupyter"
    shutil.copytree(
        REPO / "dsh_jupyter", package, ignore=shutil.ignore_patterns("static", "labextension", "__pycache__")
    )
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("hello\n")
    env = isolated_env(tmp_path)
    env.update(
        PYTHONPATH=str(package.parent), DSH_ROOT=str(tmp_path / "ws"), DSH_STATE_PATH=str(tmp_path / "state.sqlite")
    )
    return package, env


def test_a_checkout_that_was_never_built_shows_the_text_and_fails_the_widget_saying_why(tmp_path):
    """%dsh still answers, and asking for a widget fails loudly."""
    package, env = unbuilt_checkout(tmp_path)
    code = "\n".join(
        [
            "import dsh_jupyter",
            "from IPython.core.interactiveshell import InteractiveShell",
            "shell = InteractiveShell.instance()",
            "shell.run_line_magic('load_ext', 'dsh_jupyter')",
            "result = shell.run_line_magic('dsh', 'list .')",
            "print(dsh_jupyter.__file__)",
            "print(result.text)",
            "result.widget()",
        ]
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert out.stdout.splitlines()[0] == str(package / "__init__.py")
    assert "notes.txt" in out.stdout
    missing = package / "kernel" / "widgets" / "static" / "widget.js"
    assert out.stderr.splitlines()[-1] == (
        "dsh_jupyter.kernel.widgets.frontend.FrontEndNotBuilt: "
        f"The dsh widgets' front end is not built ({missing} is missing): {HOW_TO_BUILD}"
    )


@pytest.mark.slow
def test_in_a_kernel_an_unbuilt_front_end_shows_the_text_and_says_how_to_build_under_the_cell(tmp_path):
    from jupyter_client.manager import start_new_kernel

    package, env = unbuilt_checkout(tmp_path)
    km, kc = start_new_kernel(env=env, cwd=str(tmp_path))
    shown, stderr = [], ""
    try:
        sent = kc.execute("%load_ext dsh_jupyter\n%dsh list .")
        while True:
            msg = kc.get_iopub_msg(timeout=120)
            if msg["parent_header"].get("msg_id") != sent:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream" and content["name"] == "stderr":
                stderr += content["text"]
            elif kind == "execute_result":
                shown.append(content["data"])
            elif kind == "status" and content["execution_state"] == "idle":
                break
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    (data,) = shown
    assert sorted(data) == ["text/html", "text/plain"] and "notes.txt" in data["text/plain"]
    missing = package / "kernel" / "widgets" / "static" / "widget.js"
    assert (
        "dsh_jupyter.kernel.widgets.frontend.FrontEndNotBuilt: "
        f"The dsh widgets' front end is not built ({missing} is missing): {HOW_TO_BUILD}\n"
    ) in stderr


def test_results_never_import_the_widgets():
    source = Path(sys.modules["dsh_jupyter.kernel.results"].__file__).read_text()
    assert "widgets" not in "".join(re.findall(r"^\s*(?:from|import) .*$", source, re.M))
    code = (
        "import sys, dsh_jupyter.kernel.results, dsh_jupyter.kernel.magic; "
        "print(sorted(m for m in sys.modules if m.startswith(('dsh_jupyter.kernel.widgets', 'anywidget', 'ipywidgets'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
