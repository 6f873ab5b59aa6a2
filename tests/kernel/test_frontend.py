"""The widgets' front end as shipped: one ES module joined from front/*.js, and the layering around it."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_jupyter.kernel.widgets import frontend
from dsh_jupyter.kernel.widgets.base import DshView

FRONT = Path(frontend.__file__).with_name("front")


def test_every_module_is_joined_in_dependency_order():
    on_disk = {p.name for p in FRONT.glob("*.js")}
    assert set(frontend.MODULES) == on_disk
    seen: set[str] = set()
    for name in frontend.MODULES:
        text = (FRONT / name).read_text()
        for dep in re.findall(r'^import \{[^}]*\} from "\./([\w.-]+)";', text, re.M):
            assert dep in seen, f"{name} imports {dep}, which is joined after it"
        seen.add(name)


def test_the_joined_module_has_no_relative_imports_and_one_default_export():
    lines = frontend.ESM.splitlines()
    assert not [line for line in lines if line.startswith("import ")]
    assert [line for line in lines if line.startswith("export ")] == ["export default { render };"]
    assert DshView._esm == frontend.ESM and "--jp-layout-color1" in frontend.CSS


def test_modules_stay_small():
    for path in [*FRONT.glob("*.js"), FRONT / "dsh.css"]:
        assert len(path.read_text().splitlines()) < 400, path.name


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed (it is needed to build the shim)")
def test_the_joined_module_and_each_part_parse_as_es_modules(tmp_path):
    sources = {"joined.mjs": frontend.ESM, **{p.stem + ".mjs": p.read_text() for p in FRONT.glob("*.js")}}
    for name, text in sources.items():
        (tmp_path / name).write_text(text)
        proc = subprocess.run(["node", "--check", str(tmp_path / name)], capture_output=True, text=True)
        assert proc.returncode == 0, (name, proc.stderr)


def test_results_never_import_the_widgets():
    source = Path(sys.modules["dsh_jupyter.kernel.results"].__file__).read_text()
    assert "widgets" not in "".join(re.findall(r"^\s*(?:from|import) .*$", source, re.M))
    code = (
        "import sys, dsh_jupyter.kernel.results, dsh_jupyter.kernel.magic; "
        "print(sorted(m for m in sys.modules if m.startswith(('dsh_jupyter.kernel.widgets', 'anywidget', 'ipywidgets'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
