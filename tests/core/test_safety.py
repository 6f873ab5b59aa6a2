"""Safety rules beyond confinement: permissions, binary files, killed and stdin-reading rg, names.

Permissions run for real: one part as a non-root user through ``setpriv`` (so the kernel, not our
code, decides what may be written), one part as root, where every permission check passes and the
tools must still refuse files without write bits, as Jupyter's contents API does.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

SETPRIV = shutil.which("setpriv")
NOBODY = 65534


# -- permissions ---------------------------------------------------------------------------------


@pytest.fixture
def shared_tmp():
    """A folder that an unprivileged user can reach (pytest's tmp_path is private to root)."""
    folder = tempfile.mkdtemp(prefix="dsh-perm-", dir="/tmp")
    os.chmod(folder, 0o755)
    yield Path(folder)
    shutil.rmtree(folder, ignore_errors=True)


AS_NOBODY = """
import json, sys
from dsh_jupyter import Workspace
ws = Workspace(sys.argv[1], session="p", state_path=sys.argv[2])
out = []
for tool, args in json.loads(sys.argv[3]):
    r = ws.run(tool, **args)
    out.append(r.value if r.is_error else {"ok": r.text})
print(json.dumps(out))
"""


def run_as_nobody(root: Path, state: Path, calls: list) -> list:
    argv = [
        SETPRIV,
        f"--reuid={NOBODY}",
        f"--regid={NOBODY}",
        "--clear-groups",
        "--inh-caps=-all",
        sys.executable,
        "-c",
        AS_NOBODY,
        str(root),
        str(state),
        json.dumps(calls),
    ]
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(state.parent), "LANG": "C.UTF-8"}
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.skipif(SETPRIV is None or os.geteuid() != 0, reason="needs setpriv and root to drop to another user")
def test_permissions_are_the_kernels_for_a_non_root_user(shared_tmp):
    root = shared_tmp / "root"
    (root / "ro-folder").mkdir(parents=True)
    (root / "ro.txt").write_text("read only\n")
    (root / "ro-folder" / "inside.txt").write_text("x\n")
    (root / "secret.txt").write_text("hidden from nobody\n")
    state = shared_tmp / "state" / "s.sqlite"
    state.parent.mkdir()
    os.chown(state.parent, NOBODY, NOBODY)
    os.chmod(root, 0o777)  # nobody may create files here ...
    os.chmod(root / "ro.txt", 0o444)  # ... but not change this one (a rename over it would work)
    os.chmod(root / "ro-folder", 0o555)  # ... nor create anything in here
    os.chmod(root / "secret.txt", 0o000)
    before = {p: (p.read_bytes(), p.stat().st_ino) for p in (root / "ro.txt", root / "ro-folder" / "inside.txt")}
    out = run_as_nobody(
        root,
        state,
        [
            ["read", {"file_path": "ro.txt"}],
            ["write", {"file_path": "ro.txt", "content": "pwned\n"}],
            ["edit", {"file_path": "ro.txt", "old_string": "read", "new_string": "pwned"}],
            ["write", {"file_path": "ro-folder/new.txt", "content": "new\n"}],
            ["write", {"file_path": "ro-folder/deeper/new.txt", "content": "new\n"}],
            ["read", {"file_path": "secret.txt"}],
            ["list", {"path": "ro-folder"}],
            ["write", {"file_path": "fine.txt", "content": "fine\n"}],
        ],
    )
    assert out[0] == {
        "ok": "<path>ro.txt</path>\n<type>file</type>\n<content>\n1: read only\n\n(End of file - total 1 line)\n</content>"
    }
    denied = {"name": "FsError", "code": "FS_PERMISSION_DENIED"}
    assert out[1] == {**denied, "message": 'cannot write "ro.txt": permission denied'}
    assert out[2] == {**denied, "message": 'cannot edit "ro.txt": permission denied'}
    assert out[3] == {**denied, "message": 'cannot write "ro-folder/new.txt": permission denied'}
    assert out[4] == {**denied, "message": 'cannot write "ro-folder/deeper/new.txt": permission denied'}
    assert out[5] == {**denied, "message": 'cannot read "secret.txt": permission denied'}
    assert "ok" in out[6] and "inside.txt" in out[6]["ok"]
    assert out[7]["ok"].endswith("Created file\n</content>")
    for p, (data, ino) in before.items():
        assert (p.read_bytes(), p.stat().st_ino) == (data, ino)
    assert sorted(os.listdir(root / "ro-folder")) == ["inside.txt"]
    assert [n for n in os.listdir(root) if n.endswith(".dsh-tmp")] == []
    assert (root / "fine.txt").stat().st_uid == NOBODY


@pytest.mark.skipif(os.geteuid() != 0, reason="the root rule is for a server running as root")
def test_root_still_refuses_files_and_folders_without_write_bits(ws, root, expect_error):
    (root / "ro.txt").write_text("read only\n")
    (root / "ro-folder").mkdir()
    os.chmod(root / "ro.txt", 0o444)
    os.chmod(root / "ro-folder", 0o555)
    assert not ws.run("read", file_path="ro.txt").is_error
    expect_error(
        ws.run("write", file_path="ro.txt", content="x\n"),
        "FS_PERMISSION_DENIED",
        'cannot write "ro.txt": permission denied',
    )
    expect_error(
        ws.run("edit", file_path="ro.txt", old_string="read", new_string="x"),
        "FS_PERMISSION_DENIED",
        'cannot edit "ro.txt": permission denied',
    )
    expect_error(
        ws.run("write", file_path="ro-folder/n.txt", content="x\n"),
        "FS_PERMISSION_DENIED",
        'cannot write "ro-folder/n.txt": permission denied',
    )
    assert (root / "ro.txt").read_text() == "read only\n"
    assert os.listdir(root / "ro-folder") == []
    os.chmod(root / "ro.txt", 0o644)  # with a write bit (and a read of this new version) it is writable
    assert not ws.run("read", file_path="ro.txt").is_error
    assert ws.run("write", file_path="ro.txt", content="now\n").text.endswith("Updated file\n</content>")


def test_write_over_a_binary_file_says_so_before_read_it_first(ws, root, expect_error):
    (root / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    expect_error(
        ws.run("write", file_path="blob.bin", content="text\n"),
        "FS_NOT_TEXT",
        'cannot write "blob.bin": binary file; write replaces text files only',
    )
    assert (root / "blob.bin").read_bytes().startswith(b"\x89PNG")


# -- ripgrep: killed mid-search, a file named "-", invalid globs, long regexes, binary targets ----


def _rg_children(*, searches_only: bool = False) -> list[int]:
    """Our rg children; with searches_only, not the short `rg --files` notebook listing."""
    me = os.getpid()
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{entry}/comm", "rb") as fh:
                comm = fh.read().strip()
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        if int(fields[1]) == me and comm == b"rg" and not (searches_only and b"--files" in argv):
            out.append(int(entry))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "descriptors-only"])
def test_rg_killed_mid_search_is_a_search_failure_not_a_short_result(make_ws, root, landlock):
    # Random a/b text and a pattern that defeats rg's DFA: seconds of work, matches all along.
    import random

    rnd = random.Random(7)
    to_ab = bytes(b"ab"[n & 1] for n in range(256))
    for i in range(4):
        text = rnd.randbytes(200 * 60_000).translate(to_ab)
        (root / f"ab{i}.txt").write_bytes(b"\n".join(text[j : j + 200] for j in range(0, len(text), 200)))
    ws = make_ws(landlock=landlock, search_timeout_ms=120_000, raw_output_max_bytes=500_000_000)
    killed: list[int] = []

    def killer():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            for pid in _rg_children(searches_only=True):
                time.sleep(0.3)  # let it print some matches first
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue  # it ended in the meantime; the assertion below reports that
                killed.append(pid)
            time.sleep(0.01)

    t = threading.Thread(target=killer, daemon=True)
    t.start()
    r = ws.run("grep", pattern="(a|b)*a(a|b){16}b")
    t.join(70)
    assert killed, "rg finished before it could be killed; make the search slower"
    assert r.value == {
        "name": "SearchError",
        "code": "SEARCH_FAILED",
        "message": "grep failed: ripgrep was killed (SIGKILL)",
    }


@pytest.mark.parametrize("name", ["-", "-e", "--files", "-x-dir"])
def test_names_that_look_like_options_are_searched_as_paths(ws, root, name):
    if name.endswith("dir"):
        (root / name).mkdir()
        (root / name / "f.txt").write_text("needle\n")
        expected = f"Found 1 match\n\n{name}/f.txt\nLine 1: needle"
    else:
        (root / name).write_text("needle\n")
        expected = f"Found 1 match\n\n{name}\nLine 1: needle"
    r = ws.run("grep", pattern="needle", path=name)
    assert r.text == expected, r.text
    if name.endswith("dir"):
        assert ws.run("glob", pattern="*", path=name).text == f"{name}/f.txt"


@pytest.mark.parametrize(
    "tool, args, shown",
    [
        ("glob", {"pattern": "["}, "rg: error parsing glob '[': unclosed character class; missing ']'"),
        (
            "glob",
            {"pattern": "a{b"},
            "rg: error parsing glob 'a{b': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)",
        ),
        ("grep", {"pattern": "x", "include": "["}, "rg: error parsing glob '[': unclosed character class; missing ']'"),
    ],
)
def test_invalid_globs_are_invalid_patterns(ws, root, tool, args, shown, expect_error):
    (root / "a.txt").write_text("x\n")
    expect_error(ws.run(tool, **args), "SEARCH_INVALID_PATTERN", f"invalid pattern: {shown}")


def test_a_long_invalid_regex_is_still_an_invalid_pattern(ws, root):
    (root / "a.txt").write_text("x\n")
    r = ws.run("grep", pattern="a" * 1500 + "(")
    assert r.value["code"] == "SEARCH_INVALID_PATTERN", r.text
    message = r.value["message"]
    assert message.startswith("invalid pattern: rg: regex parse error: (?:aaaa") and message.endswith(
        "error: unclosed group"
    )
    assert len(message) <= 1100


def test_grep_on_a_named_binary_file_skips_it_and_says_so(ws, root):
    (root / "blob.bin").write_bytes(b"needle\0\x01\x02\x1b[31mneedle\n")
    r = ws.run("grep", pattern="needle", path="blob.bin")
    assert r.text == "No matches found\n\n(1 binary file was skipped: grep searches text files only.)"
    assert r.value["binarySkipped"] == 1
    assert not any(ord(c) < 0x20 and c != "\n" for c in r.text)


# -- names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, shown",
    [
        ("a\u2028b.txt", '"a\\u2028b.txt"'),
        ("a\u2029b.txt", '"a\\u2029b.txt"'),
        ("nel\u0085.txt", '"nel\\u0085.txt"'),
        ("evil\u202etxt.exe", '"evil\\u202etxt.exe"'),
        ("iso\u2066late\u2069.txt", '"iso\\u2066late\\u2069.txt"'),
    ],
)
def test_line_separators_and_bidi_controls_are_quoted_everywhere(ws, root, raw, shown):
    (root / raw).write_text("needle\n")
    listing = ws.run("list").text
    assert shown in listing and raw not in listing
    assert ws.run("glob", pattern="*.*").text == shown or ws.run("glob", pattern="*").text == shown
    assert ws.run("grep", pattern="needle").text == f"Found 1 match\n\n{shown}\nLine 1: needle"
    assert raw not in ws.run("list_dir", path=".").text
    assert json.loads(ws.run("list_dir", path=".").text) == {"entries": [raw]}
    r = ws.run("read", file_path=raw)
    assert r.text.startswith(f"<path>{shown}</path>")


def test_mixed_line_endings_edit_only_the_edited_region(ws, root):
    (root / "m.txt").write_bytes(b"one\r\ntwo\nthree\r\nfour\n")
    r = ws.run("read", file_path="m.txt")
    assert (
        r.text
        == "<path>m.txt</path>\n<type>file</type>\n<content>\n1: one\n2: two\n3: three\n4: four\n\n(End of file - total 4 lines)\n</content>"
    )
    # old_string as read showed it: LF between lines, though line 1 ends in CRLF
    assert not ws.run("edit", file_path="m.txt", old_string="one\ntwo", new_string="ONE\nTWO").is_error
    assert (root / "m.txt").read_bytes() == b"ONE\r\nTWO\nthree\r\nfour\n"
    assert not ws.run("edit", file_path="m.txt", old_string="three\nfour", new_string="3\n3b\n4").is_error
    assert (root / "m.txt").read_bytes() == b"ONE\r\nTWO\n3\r\n3b\r\n4\n"
    assert not ws.run("edit", file_path="m.txt", old_string="TWO", new_string="two\nand a half").is_error
    assert (root / "m.txt").read_bytes() == b"ONE\r\ntwo\nand a half\n3\r\n3b\r\n4\n"


def test_bom_is_not_shown_and_is_kept(ws, root):
    (root / "b.txt").write_bytes(b"\xef\xbb\xbffirst\nsecond\n")
    r = ws.run("read", file_path="b.txt")
    assert (
        r.text
        == "<path>b.txt</path>\n<type>file</type>\n<content>\n1: first\n2: second\n\n(End of file - total 2 lines)\n</content>"
    )
    assert not ws.run("edit", file_path="b.txt", old_string="first", new_string="1st").is_error
    assert (root / "b.txt").read_bytes() == b"\xef\xbb\xbf1st\nsecond\n"
    assert not ws.run("write", file_path="b.txt", content="whole\n").is_error
    assert (root / "b.txt").read_bytes() == b"\xef\xbb\xbfwhole\n"
    assert not ws.run("read", file_path="b.txt", offset=1).text.count("\ufeff")
