"""Protection decided by what a change does (``core/fs/effects.py``), on real trees in a real home.

The attack: the workspace is someone's home (the JupyterHub layout), Jupyter finds its folders
with ``JUPYTER_PLATFORM_DIRS=1`` (config in ``~/.config/jupyter``) and ``~/.config`` does not
exist yet. A folder ``payload`` that holds ``jupyter/jupyter_server_config.py`` is written where
writing is allowed, then moved to ``.config``: the next Jupyter server would run that file. Every
change that would create, replace or remove a protected path, a path inside one or a folder above
one is refused, whether or not the protected path exists yet, and nothing on disk moves.
"""

from __future__ import annotations

import hashlib
import os
import random

import pytest
from conftest import assert_error

from dsh_jupyter import Workspace

PROTECTED = "Jupyter's own folders (runtime, data, config) and this tool's state are never shown"
KINDS = "a protected folder (Jupyter's runtime, data or config folder, or this tool's state)"
CONFIG_PY = "c.ServerApp.open_browser = False  # planted\n"


@pytest.fixture
def home(root, tmp_path, monkeypatch):
    """``root`` as the home folder, Jupyter's folders where ``JUPYTER_PLATFORM_DIRS=1`` puts them,
    none of them made yet; a config-path and a data-path entry inside the home (one missing, one
    there), IPython's folder there, and a payload ready to be planted."""
    monkeypatch.setenv("HOME", str(root))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    for name in (
        "JUPYTER_CONFIG_DIR",
        "JUPYTER_DATA_DIR",
        "JUPYTER_RUNTIME_DIR",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_RUNTIME_DIR",
        "JUPYTER_PREFER_ENV_PATH",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(root / "envcfg" / "jupyter"))  # missing
    monkeypatch.setenv("JUPYTER_PATH", str(root / "shared" / "jupyter"))  # there
    monkeypatch.setenv("IPYTHONDIR", str(root / ".ipython"))
    (root / "shared" / "jupyter" / "kernels").mkdir(parents=True)
    (root / "shared" / "jupyter" / "kernels" / "k.json").write_text("{}\n")
    (root / ".ipython" / "profile_default" / "startup").mkdir(parents=True)
    (root / ".ipython" / "profile_default" / "startup" / "00.py").write_text("print('hi')\n")
    (root / "payload" / "jupyter").mkdir(parents=True)
    (root / "payload" / "jupyter" / "jupyter_server_config.py").write_text(CONFIG_PY)
    (root / "notes.txt").write_text("hello\n")
    return root


@pytest.fixture(params=[True, False], ids=["openat2", "walk"])
def hws(request, home, tmp_path):
    """A workspace on the home, hidden files shown (the stdio server's default), its state outside."""
    ws = Workspace(
        home,
        session="s1",
        state_path=tmp_path / "state" / "state.sqlite",
        openat2=request.param,
        protected_paths=[str(home / "vault" / "inner")],
    )
    yield ws
    ws.close()


def snapshot(top) -> dict:
    """Every entry below ``top``: its kind and, for a file, its content's hash (lstat, no symlink followed)."""
    out = {}
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, top)
            if os.path.islink(path):
                out[rel] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                out[rel] = ("dir",)
            else:
                with open(path, "rb") as fh:
                    out[rel] = ("file", hashlib.sha256(fh.read()).hexdigest())
    return out


# -- the attack, step by step -------------------------------------------------------------------------


def test_a_payload_moved_to_the_missing_config_folder_is_refused(hws, home):
    assert not (home / ".config").exists()
    before = snapshot(home)
    r = hws.run("move", source="payload", destination=".config")
    assert_error(r, "FS_PROTECTED", f'cannot move to ".config": {KINDS} belongs inside it, and no tool makes one')
    assert snapshot(home) == before
    assert not (home / ".config").exists()


def test_every_missing_protected_place_is_refused_as_a_destination(hws, home):
    before = snapshot(home)
    for dest in (
        ".config/jupyter",
        ".local",
        ".local/share",
        ".local/share/jupyter",
        "envcfg",
        "envcfg/jupyter",
        "vault",
        "vault/inner",
    ):
        r = hws.run("move", source="payload", destination=dest)
        assert r.value["code"] == "FS_PROTECTED", (dest, r.text)
    assert snapshot(home) == before
    for missing in (".config", ".local", "envcfg", "vault"):
        assert not (home / missing).exists()


def test_a_missing_parent_is_never_made_where_a_protected_folder_belongs(hws, home):
    before = snapshot(home)
    r = hws.run("move", source="payload", destination=".local/share/stuff")
    assert_error(
        r,
        "FS_PROTECTED",
        f'cannot move to ".local/share/stuff": {KINDS} belongs inside ".local", and no tool makes one',
    )
    r = hws.run("write", file_path=".config/notes.txt", content="x\n")
    assert_error(
        r, "FS_PROTECTED", f'cannot write ".config/notes.txt": {KINDS} belongs inside ".config", and no tool makes one'
    )
    r = hws.run("write", file_path="vault/x.txt", content="x\n")
    assert_error(
        r, "FS_PROTECTED", f'cannot write "vault/x.txt": {KINDS} belongs inside "vault", and no tool makes one'
    )
    assert snapshot(home) == before


def test_a_file_where_a_protected_folder_belongs_is_refused_too(hws, home):
    r = hws.run("write", file_path=".config", content="x\n")
    assert_error(r, "FS_PROTECTED", f'cannot write ".config": {KINDS} belongs inside it, and no tool makes one')
    r = hws.run("move", source="notes.txt", destination="envcfg")
    assert_error(r, "FS_PROTECTED", f'cannot move to "envcfg": {KINDS} belongs inside it, and no tool makes one')
    assert not (home / ".config").exists() and not (home / "envcfg").exists()


def test_a_folder_above_a_protected_one_never_moves_away(hws, home):
    (home / ".config").mkdir()  # now there, but Jupyter's folder inside it is not
    before = snapshot(home)
    r = hws.run("move", source=".config", destination="cfg")
    assert_error(r, "FS_PROTECTED", f'cannot move ".config": {KINDS} belongs inside it, and those never move')
    r = hws.run("move", source="shared", destination="elsewhere")  # JUPYTER_PATH's entry is there
    assert_error(r, "FS_PROTECTED", f'cannot move "shared": it holds {KINDS}, and those never move')
    assert snapshot(home) == before


def test_a_symlink_never_takes_the_place_of_a_protected_folder(hws, home):
    os.symlink("payload", home / "plink")
    before = snapshot(home)
    r = hws.run("move", source="plink", destination=".config")
    assert_error(r, "FS_PROTECTED", f'cannot move to ".config": {KINDS} belongs inside it, and no tool makes one')
    assert snapshot(home) == before


def test_a_symlink_made_since_start_moves_where_protection_lands(hws, home):
    """``~/.config`` made a symlink to ``cfg`` after the workspace started: Jupyter now reads its
    config from ``cfg/jupyter``, so that is where nothing may be made."""
    (home / "cfg").mkdir()
    os.symlink("cfg", home / ".config")
    r = hws.run("move", source="payload/jupyter", destination="cfg/jupyter")
    assert_error(r, "FS_PROTECTED", f'cannot move to "cfg/jupyter": {PROTECTED}')
    r = hws.run("move", source="payload", destination="cfg/x")
    assert r.is_error is False, r.text  # beside it is fine
    assert not (home / "cfg" / "jupyter").exists()


def test_changes_away_from_protected_places_still_work(hws, home):
    assert hws.run("move", source="payload", destination="safe/payload").is_error is False
    assert (home / "safe" / "payload" / "jupyter" / "jupyter_server_config.py").read_text() == CONFIG_PY
    assert hws.run("write", file_path=".configs/x.txt", content="x\n").is_error is False
    assert hws.run("write", file_path="local/share/jupyter/x.txt", content="x\n").is_error is False


def test_write_makes_a_hundred_missing_parents(hws, home):
    deep = "/".join(f"p{i}" for i in range(100)) + "/f.txt"
    r = hws.run("write", file_path=deep, content="deep\n")
    assert r.text.startswith(f"<path>{deep}</path>"), r.text
    assert (home / deep).read_text() == "deep\n"
    r = hws.run("move", source="notes.txt", destination="/".join(f"q{i}" for i in range(100)) + "/n.txt")
    assert r.is_error is False, r.text


# -- the property: random changes against every kind of protected place ---------------------------------

# Names an operation may use: protected places present and missing, their parents and children,
# the payload and ordinary files.
PATHS = [
    ".config",
    ".config/jupyter",
    ".config/jupyter/jupyter_server_config.py",
    ".local",
    ".local/share",
    ".local/share/jupyter",
    ".local/share/jupyter/runtime",
    ".local/share/jupyter/runtime/jpserver-1.json",
    "envcfg",
    "envcfg/jupyter",
    "envcfg/jupyter/jupyter_server_config.py",
    "shared",
    "shared/jupyter",
    "shared/jupyter/kernels/k.json",
    ".ipython",
    ".ipython/profile_default/startup/00.py",
    ".ipython/profile_default/startup/01.py",
    "vault",
    "vault/inner",
    "vault/inner/x",
    "payload",
    "payload/jupyter",
    "payload/jupyter/jupyter_server_config.py",
    "notes.txt",
    "work",
    "work/a.txt",
    "plink",
]


def _operation(rng: random.Random) -> tuple[str, dict]:
    kind = rng.choice(["move", "move", "move", "write", "edit", "read"])
    a, b = rng.choice(PATHS), rng.choice(PATHS)
    if kind == "move":
        return kind, {"source": a, "destination": b, "overwrite": rng.random() < 0.3}
    if kind == "write":
        return kind, {"file_path": a, "content": CONFIG_PY}
    if kind == "edit":
        return kind, {"file_path": a, "old_string": "False", "new_string": "True"}
    return kind, {"file_path": a}


@pytest.mark.parametrize("seed", range(6))
def test_no_sequence_of_changes_touches_a_protected_place(home, tmp_path, seed):
    (home / "work").mkdir()
    (home / "work" / "a.txt").write_text("False\n")
    os.symlink("payload", home / "plink")
    protected = [
        ".config/jupyter",
        ".local/share/jupyter",
        "envcfg/jupyter",
        "shared/jupyter",
        ".ipython",
        "vault/inner",
    ]
    missing_above = [".config", ".local", "envcfg", "vault"]  # not there: nothing may make them
    before = {p: snapshot(home / p) if (home / p).exists() else None for p in protected}
    rng = random.Random(seed)
    ws = Workspace(
        home,
        session="s1",
        state_path=tmp_path / "state" / "state.sqlite",
        openat2=seed % 2 == 0,
        protected_paths=[str(home / "vault" / "inner")],
    )
    try:
        refused = 0
        for _ in range(150):
            tool, args = _operation(rng)
            r = ws.run(tool, **args)
            refused += r.is_error and r.value["code"] == "FS_PROTECTED"
            for p in protected:
                now = snapshot(home / p) if os.path.lexists(home / p) else None
                assert now == before[p], (tool, args, r.text)
            for p in missing_above:
                assert not os.path.lexists(home / p), (tool, args, r.text)
        assert refused > 10  # the run did try the protected places
    finally:
        ws.close()
