"""glob (and grep's recheck) on trees deeper and wider than the descriptor limit: answered, never a crash.

Real trees on disk, real rg, each call in a child process whose descriptor limit is lowered
(``RLIMIT_NOFILE``) before anything is opened: a chain of folders deeper than that limit (made
through descriptors, removed the same way), 1,500 matched folders under a limit of 256, and, with
root's override of file modes dropped (``setpriv``), folders that may not be entered or read.
Both daters (compiled, and Python as without a C compiler) and both confinement modes.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from deeptrees import make_chain, remove_tree  # tests/deeptrees.py

from dsh_jupyter.core.result import Result

from .test_split import BASE_NS, build, rg_sorted

DATERS = pytest.mark.parametrize("dater", ["compiled", "python"])
MODES = pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "descriptors-only"])
UNPRIVILEGED = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all"]


def in_child(
    root: Path,
    state: Path,
    calls: list[tuple[str, dict]],
    dater: str,
    landlock: bool,
    limit: int,
    argv_prefix: tuple[str, ...] = (),
) -> list[tuple[str, dict]]:
    """``(text, value)`` of each call, made in a new process whose soft descriptor limit is ``limit``."""
    script = textwrap.dedent(
        f"""
        import contextlib, json, resource
        resource.setrlimit(resource.RLIMIT_NOFILE, ({limit}, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        from dsh_jupyter import Workspace
        from dsh_jupyter.core.fs import mtimes
        assert mtimes.available()
        ws = Workspace({str(root)!r}, state_path={str(state / "s.sqlite")!r}, spill_root={str(state / "spill")!r},
                       landlock={landlock!r}, glob_max_results=100_000, grep_max_matches=100_000)
        with mtimes.python_only() if {dater!r} == "python" else contextlib.nullcontext():
            for tool, args in {calls!r}:
                r = ws.run(tool, **args)
                print(json.dumps({{"text": r.text, "value": r.value}}))
        """
    )
    done = subprocess.run([*argv_prefix, sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return [(answer["text"], answer["value"]) for answer in map(json.loads, done.stdout.splitlines())]


@pytest.fixture(scope="module")
def chains(tmp_path_factory):
    """Chains of folders below their own roots, each with top.py at the top and bottom.py at the
    bottom (dated later): ``chains[(depth, name)]`` is (root, bottom path). Folders named "d" keep
    the bottom path (2 bytes a folder) within what rg can open; named "dir", 1,100 of them make a
    path of 4,400 bytes, longer than any path the system opens (4,096)."""
    top = tmp_path_factory.mktemp("chains")
    made = {}
    for depth, name in [(1100, "d"), (600, "d"), (1100, "dir")]:
        root = top / f"{name}{depth}"
        bottom = make_chain(root, depth, name, {0: "top.py", depth: "bottom.py"}, BASE_NS)
        made[(depth, name)] = (root, bottom + "/bottom.py")
    yield made
    for root, _ in made.values():
        remove_tree(root)
        assert not root.exists()


@DATERS
@MODES
@pytest.mark.parametrize("depth, limit", [(1100, 1024), (600, 512)])
def test_a_chain_deeper_than_the_descriptor_limit_is_answered_whole(chains, tmp_path, dater, landlock, depth, limit):
    """Both files, oldest first, from a chain deeper than the limit: glob, and grep (whose lines an
    unfenced rg reported are looked up again beneath the root)."""
    root, bottom = chains[(depth, "d")]
    assert bottom == "d/" * depth + "bottom.py"
    answers = in_child(
        root, tmp_path, [("glob", {"pattern": "*.py"}), ("grep", {"pattern": "x"})], dater, landlock, limit
    )
    (glob_text, glob_value), (grep_text, grep_value) = answers
    assert glob_text == f"top.py\n{bottom}"
    assert glob_value["paths"] == ["top.py", bottom] and "undated" not in glob_value
    assert "unreadable" not in glob_value
    assert grep_text == f"Found 2 matches\n\n{bottom}\nLine 1: x\n\ntop.py\nLine 1: x"
    assert grep_value["unreadable"] == 0


@DATERS
@MODES
def test_a_chain_too_long_for_rg_itself_says_the_folder_it_could_not_read(chains, tmp_path, dater, landlock):
    """rg cannot open a folder whose path is longer than the system takes (it says "File name too
    long (os error 36)" in one line of stderr longer than the part kept of it): glob shows what it
    found and says one folder was left out; with nothing found, that is the answer, not a failure."""
    root, bottom = chains[(1100, "dir")]
    assert len(bottom) > 4096
    answers = in_child(
        root, tmp_path, [("glob", {"pattern": "*.py"}), ("glob", {"pattern": "bottom.py"})], dater, landlock, 1024
    )
    assert answers[0][0] == "top.py\n\n(1 folder could not be read and was left out.)"
    assert answers[0][1]["paths"] == ["top.py"] and answers[0][1]["unreadable"] == 1
    assert answers[1][0] == "No files found\n\n(1 folder could not be read and was left out.)"
    assert answers[1][1]["totalPaths"] == 0 and "undated" not in answers[1][1]


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    """1,500 folders (30 of 50), one file in each, dated at random or folder by folder."""
    made = {}
    for times in ("random", "by-folder"):
        root = tmp_path_factory.mktemp("wide") / "root"
        if times == "random":
            order = list(random.Random(7).sample(range(15_000), 1500))
        else:
            order = [i * 1000 for i in range(1500)]
        build(root, [f"p{i:02d}/s{j:02d}" for i in range(30) for j in range(50)], 1, lambda n, order=order: order)
        made[times] = root
    return made


@DATERS
@MODES
@pytest.mark.parametrize("times", ["random", "by-folder"])
def test_1500_matched_folders_under_a_limit_of_256(wide, tmp_path, dater, landlock, times):
    """More folders than descriptors (the Python dater used to keep every folder it opened):
    glob answers rg's own sorted walk, grep every line, nothing said to be left out."""
    root = wide[times]
    answers = in_child(
        root, tmp_path, [("glob", {"pattern": "*.py"}), ("grep", {"pattern": "x"})], dater, landlock, 256
    )
    (glob_text, glob_value), (grep_text, grep_value) = answers
    assert glob_value["paths"] == rg_sorted(root, "*.py") and glob_value["totalPaths"] == 1500
    assert glob_text == "\n".join(glob_value["paths"])
    assert grep_value["totalMatches"] == 1500 and grep_text.startswith("Found 1500 matches\n\n")
    assert grep_value["unreadable"] == 0 and "undated" not in glob_value


@pytest.fixture
def guarded(tmp_path):
    """A tree with a folder that may be read but not entered (444: rg lists its file, which then
    cannot be looked up) and one that may not be read at all (000: rg cannot list it)."""
    root = tmp_path / "root"
    for rel, t in [("c.py", 1), ("open/a.py", 2), ("no_entry/b.py", 3), ("closed/d.py", 4), ("late.py", 5)]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
        os.utime(root / rel, ns=(BASE_NS + t, BASE_NS + t))
    (root / "no_entry").chmod(0o444)
    (root / "closed").chmod(0)
    yield root
    (root / "no_entry").chmod(0o755)
    (root / "closed").chmod(0o755)


@DATERS
@MODES
def test_files_in_folders_it_may_not_enter_are_counted_undated(guarded, tmp_path, dater, landlock):
    """File modes enforced (root's override dropped): the file rg listed below the folder that may
    not be entered is not dated, not shown, and counted; the folder rg could not read is said.
    Without the compiled dater under Landlock, glob takes rg's own sorted walk and dates nothing
    itself: the file rg listed is shown where rg sorted it, and nothing is counted undated."""
    prefix = UNPRIVILEGED if os.geteuid() == 0 else []
    ((text, value),) = in_child(
        guarded, tmp_path, [("glob", {"pattern": "*.py"})], dater, landlock, 1024, tuple(prefix)
    )
    if dater == "python" and landlock:
        assert "no_entry/b.py" in value["paths"] and "undated" not in value
        assert set(value["paths"]) == {"c.py", "open/a.py", "no_entry/b.py", "late.py"}
        assert text.endswith("\n\n(1 folder could not be read and was left out.)")
        return
    assert text == (
        "c.py\nopen/a.py\nlate.py\n\n(1 folder could not be read and was left out.)"
        "\n\n(1 file could not be dated and was left out.)"
    )
    assert value["paths"] == ["c.py", "open/a.py", "late.py"] and value["totalPaths"] == 3
    assert value["undated"] == 1 and value["unreadable"] == 1
    # surfaces that show the page as a table repeat the notes with it (the model's footer)
    assert Result("glob", text, value, is_error=False).footer() == (
        "(1 folder could not be read and was left out.)\n\n(1 file could not be dated and was left out.)"
    )
