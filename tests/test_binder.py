"""binder/ installs a working environment: the same steps repo2docker runs, in a fresh venv.

repo2docker copies the repository into the image, runs ``pip install -r binder/requirements.txt``
from the repository root, then ``binder/postBuild``. This test does the same on a copy of the tree
without any build output (no ``node_modules``, no built labextension), so the npm build of the
JupyterLab extension runs as it does on Binder. pip's and npm's caches are reused (repo2docker
passes ``--no-cache-dir``; that only changes speed). Then, in that venv: both extensions are listed
as enabled and OK, and every notebook in notebooks/ runs top to bottom headless (01 and 02 with
nbclient, 03 through a kernel started by that venv's ``jupyter lab``, as on Binder).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import venv
from pathlib import Path

import nbformat
import pytest
from notebook_runs import execute_in_server_kernel, stream_text
from servers import ANSI, JupyterProcess, isolated_env

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK_RUNS = Path(__file__).resolve().parent / "notebook_runs.py"  # run as a script in the Binder venv
SKIP_NAMES = {
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
SKIP_PATHS = {
    ("dsh_jupyter", "labextension"),
    ("dsh_jupyter", "kernel", "widgets", "static"),
    ("labextension_shim", "lib"),
}

pytestmark = pytest.mark.slow


def copy_tree(dest: Path) -> Path:
    """The repository as Binder gets it: sources only, no venvs, no npm installs, no build output."""

    def ignore(folder: str, names: list[str]) -> set[str]:
        rel = Path(folder).relative_to(REPO).parts
        return {
            n for n in names if n in SKIP_NAMES or n.endswith((".egg-info", ".tsbuildinfo")) or (*rel, n) in SKIP_PATHS
        }

    shutil.copytree(REPO, dest, ignore=ignore, symlinks=True)
    return dest


def run(argv, cwd: Path, env: dict, timeout: float) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    out = ANSI.sub("", proc.stdout + proc.stderr)
    assert proc.returncode == 0, f"{' '.join(map(str, argv))} failed ({proc.returncode}):\n{out[-6000:]}"
    return out


@pytest.fixture(scope="module")
def binder_env(tmp_path_factory):
    """A copy of the repository and a venv built from it by binder/'s steps."""
    tmp = tmp_path_factory.mktemp("binder")
    repo = copy_tree(tmp / "repo")
    assert not (repo / "dsh_jupyter" / "labextension").exists()
    assert not (repo / "dsh_jupyter" / "kernel" / "widgets" / "static").exists()
    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / "bin"
    base = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    base["PATH"] = f"{bin_dir}{os.pathsep}{base.get('PATH', '')}"  # repo2docker puts the env first too
    env = isolated_env(tmp / "home", base)
    run(
        [
            bin_dir / "python",
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--quiet",
            "-r",
            "binder/requirements.txt",
        ],
        repo,
        env,
        timeout=1500,
    )
    post = repo / "binder" / "postBuild"
    postbuild_out = run([post], repo, env, timeout=300) if post.exists() else ""
    return {"repo": repo, "bin": bin_dir, "env": env, "tmp": tmp, "postBuild": postbuild_out}


def test_binder_folder_is_what_repo2docker_reads():
    files = sorted(p.name for p in (REPO / "binder").iterdir())
    assert "requirements.txt" in files
    lines = [ln.split("#", 1)[0].strip() for ln in (REPO / "binder" / "requirements.txt").read_text().splitlines()]
    # a local path: repo2docker installs it after copying the whole repository
    assert any(ln.startswith(".") for ln in lines)
    post = REPO / "binder" / "postBuild"
    if post.exists():
        assert os.access(post, os.X_OK), "repo2docker runs postBuild only when it is executable"


def test_postbuild_checked_both_extensions(binder_env):
    assert "enabled and OK" in binder_env["postBuild"]


def test_server_extension_enabled_and_ok(binder_env):
    out = run(
        [binder_env["bin"] / "jupyter", "server", "extension", "list"],
        binder_env["repo"],
        binder_env["env"],
        timeout=120,
    )
    assert re.search(r"dsh_jupyter\s+enabled", out), out
    assert re.search(r"dsh_jupyter 0\.\d+\.\d+\S*\s+OK", out), out


def test_labextension_enabled_and_ok(binder_env):
    out = run(
        [binder_env["bin"] / "jupyter", "labextension", "list"], binder_env["repo"], binder_env["env"], timeout=120
    )
    line = next((ln for ln in out.splitlines() if "dsh-jupyter-shim" in ln), "")
    assert re.search(r"enabled\s+OK", line), out
    assert str(binder_env["bin"].parent) in out  # installed in the venv, not found elsewhere


def test_the_package_comes_from_the_copy(binder_env):
    out = run(
        [binder_env["bin"] / "python", "-c", "import dsh_jupyter, sys; print(dsh_jupyter.__file__)"],
        binder_env["tmp"],
        binder_env["env"],
        timeout=60,
    )
    assert str(binder_env["bin"].parent) in out or str(binder_env["repo"]) in out, out
    assert str(REPO / "dsh_jupyter") not in out, out


def test_the_same_build_made_the_widgets_module(binder_env):
    """The npm build that made the JupyterLab extension also bundled the widgets' front end."""
    code = (
        "from dsh_jupyter.kernel.widgets import frontend; from dsh_jupyter.kernel.widgets.base import DshView; "
        "print(frontend.STATIC); print(DshView._esm == (frontend.STATIC / 'widget.js').read_text() != '')"
    )
    out = run([binder_env["bin"] / "python", "-c", code], binder_env["tmp"], binder_env["env"], timeout=120)
    static, same = out.strip().splitlines()[-2:]
    assert same == "True"
    assert str(REPO) not in static, static


@pytest.mark.parametrize("name", ["01-seed-failure.ipynb", "02-explore-a-source-tree.ipynb"])
def test_notebook_runs_headless_in_the_binder_env(binder_env, name, tmp_path):
    env = dict(binder_env["env"])
    env["DSH_STATE_PATH"] = str(tmp_path / "state.sqlite")
    work = tmp_path / "cwd"
    work.mkdir()
    out = run(
        [binder_env["bin"] / "python", NOTEBOOK_RUNS, binder_env["repo"] / "notebooks" / name, work],
        work,
        env,
        timeout=600,
    )
    assert out.strip(), "the notebook printed nothing"


def test_agent_notebook_runs_in_a_kernel_of_the_binder_lab(binder_env, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    lab = JupyterProcess.start(
        tmp_path / "lab", root, app="lab", python=str(binder_env["bin"] / "python"), env=binder_env["env"]
    )
    probe = tmp_path / "probe.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import sys; print(sys.prefix)")]), probe)
    try:
        nb = execute_in_server_kernel(lab, binder_env["repo"] / "notebooks" / "03-agent-and-person.ipynb")
        prefix = stream_text(execute_in_server_kernel(lab, probe)).strip()
    finally:
        lab.stop()
    assert "(found by parent process)" in stream_text(nb)
    assert prefix == str(binder_env["bin"].parent)  # the kernel ran in the Binder venv
