"""The whole-output scans (glob, grep) that decide whether rg's answer must be filtered path by path.

rg is told to leave VCS folders and protected folders out; glob checks its answer again, but
only path by path where one scan of the whole output finds such a name. A scan may say yes
where no path is one (the paths are then checked one by one), never no where one is.
"""

from __future__ import annotations

import pytest

from dsh_jupyter.core.tools.search.flags import VCS_DIRS, VCS_IN_PATH
from dsh_jupyter.core.tools.search.scans import lines_have_vcs as _lines_have_vcs
from dsh_jupyter.core.tools.search.scans import lines_name_any as _lines_name_any
from dsh_jupyter.core.tools.search.scans import output_has_vcs as _has_vcs
from dsh_jupyter.core.tools.search.scans import output_names_any as _names_any


def as_output(paths: list[str]) -> bytes:
    return b"".join(b"./" + p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)


VCS_CASES = [
    (["a.py", "b/c.py"], False),
    ([".gitignore", ".github/workflows/ci.yml", "x.git", "a/b.hg/c", "a.jj", "sl/.slx"], False),
    ([".git/config"], True),
    (["src/a.py", "sub/.git/HEAD"], True),
    (["sub/.git"], True),  # a .git file (a worktree's), as the last path
    (["sub/.git", "z.py"], True),
    ([".jj/repo/store"], True),
    (["deep/er/.sl/x", "a"], True),
    (["a/.svn/entries"], True),
    (["p/.bzr/x"], True),
    (["x/.hg"], True),
]


@pytest.mark.parametrize("paths, found", VCS_CASES)
def test_the_vcs_scans_agree_with_the_per_path_rule(paths, found):
    assert any(VCS_IN_PATH.search(p) for p in paths) is found  # the rule the filter applies
    assert _has_vcs(as_output(paths)) is found
    assert _lines_have_vcs("\n".join(paths)) is found
    assert _lines_have_vcs("/".join(paths)) is found  # grep joins its file names by "/"


def test_every_vcs_name_is_found_at_the_top_and_below():
    for name in VCS_DIRS:
        for paths in ([f"{name}/x"], [f"a/{name}/x"], [f"a/{name}"], [f"{name}"]):
            assert _has_vcs(as_output(paths)) and _lines_have_vcs("\n".join(paths)), paths


def test_a_name_holding_a_newline_can_only_make_the_line_scan_say_yes():
    assert _lines_have_vcs("\n".join(["odd\n.git/x"])) is True  # a yes; the per-path rule then keeps it
    assert not VCS_IN_PATH.search("odd\n.git/x")


PROTECTED = [".venv/share/jupyter", ".venv/etc/jupyter"]


@pytest.mark.parametrize(
    "paths, found",
    [
        (["a.py", ".venv/lib/x.py"], False),
        ([".venv/share/jupyterlab/x.json", ".venv/share/jupyter-other"], False),  # a longer name is not below
        ([".venv/share/jupyter/runtime/x.json"], True),
        (["a.py", ".venv/etc/jupyter/jupyter_server_config.d/x.json"], True),
        ([".venv/etc/jupyter"], True),  # the folder's own name, as a path
        (["a", ".venv/etc/jupyter"], True),
        ([], False),
    ],
)
def test_the_protected_folder_scans_agree_with_the_per_path_rule(paths, found):
    heads = tuple(rel + "/" for rel in PROTECTED)
    assert any(p.startswith(heads) or p in PROTECTED for p in paths) is found
    assert _names_any(as_output(paths), PROTECTED) is found
    assert _lines_name_any("\n".join(paths), PROTECTED) is found
    assert _names_any(as_output(paths), []) is False and _lines_name_any("\n".join(paths), []) is False


def test_undecodable_names_are_scanned_as_rg_printed_them():
    rel = "prot\udcffected"
    paths = [rel + "/x"]
    assert _names_any(as_output(paths), [rel]) and _lines_name_any("\n".join(paths), [rel])
