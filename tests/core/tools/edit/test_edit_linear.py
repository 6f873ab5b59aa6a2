"""``edit`` in linear time: the same bytes as the rules always gave, and a result bounded by
``edit_max_bytes`` (a single edit, a batch step by step, notebook cell sources).

The reference below is ``edit``'s replacement as it was written first (one scan per match): its
results are the contract the one-pass version must keep, byte for byte.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import textwrap

import nbformat
import pytest
from conftest import assert_error
from nbformat import v4

from dsh_jupyter.core.errors import ToolError
from dsh_jupyter.core.tools.edit.steps import Step
from dsh_jupyter.core.tools.edit.text import apply_steps, byte_size

# -- the reference: edit's replacement as first written ------------------------------------


def _ref_matcher(old: str) -> re.Pattern:
    return re.compile(r"\r?\n".join(re.escape(part) for part in old.replace("\r\n", "\n").split("\n")))


def _ref_line_ending(text: str, start: int, end: int) -> str:
    region = text[start:end]
    if "\n" in region:
        return "\r\n" if "\r\n" in region else "\n"
    nl = text.find("\n", end)
    if nl >= 0:
        return "\r\n" if nl > 0 and text[nl - 1] == "\r" else "\n"
    return "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"


def reference(text: str, old: str, new: str, replace_all: bool) -> tuple[str, int] | str:
    """The new text and the number of replacements, or "not found" / "ambiguous"."""
    spans = [m.span() for m in _ref_matcher(old).finditer(text)]
    if not spans:
        return "not found"
    if len(spans) > 1 and not replace_all:
        return "ambiguous"
    new = new.replace("\r\n", "\n")
    out, pos = [], 0
    for start, end in spans:
        ending = _ref_line_ending(text, start, end)
        out.append(text[pos:start])
        out.append(new.replace("\n", ending) if ending != "\n" else new)
        pos = end
    out.append(text[pos:])
    return "".join(out), len(spans)


def applied(text: str, old: str, new: str, replace_all: bool) -> tuple[str, int] | str:
    size = byte_size(text)
    try:
        result, found, new_size = apply_steps(text, size, 0, 1 << 40, [Step(old, new, replace_all)], False, "f")
    except ToolError as exc:
        return {"EDIT_NOT_FOUND": "not found", "EDIT_AMBIGUOUS": "ambiguous"}[exc.code]
    assert new_size == byte_size(result)  # the size counted before building is the size built
    return result, found


def read_ok(ws, path="f.txt"):
    r = ws.run("read", file_path=path, limit=1)
    assert not r.is_error, r.text
    return r


# -- the same bytes as the rules always gave -------------------------------------------------

ENDINGS = [
    # (file, old_string, new_string, replace_all): where the match sits decides the new line breaks
    ("a\r\nfoo bar\r\nb\r\n", "foo", "x\ny", False),  # on a CRLF line
    ("a\r\nfoo bar\nb\r\n", "foo", "x\ny", False),  # on an LF line of a CRLF file
    ("a\r\nb\r\nfoo", "foo", "x\ny", False),  # the last line, no newline: most lines end CRLF
    ("a\nb\nc\r\nfoo", "foo", "x\ny", False),  # the last line, no newline: most lines end LF
    ("a\r\nb\nfoo", "foo", "x\ny", False),  # a tie: LF
    ("one\r\ntwo\nthree\r\nfour\n", "o", "0\n", True),  # a mixed file, every line
    ("x\r\ny\nx\ny\r\n", "x\ny", "p\nq\nr", True),  # a line break in old_string: as matched
    ("ab\r\nab\n", "b\r", "c\n", True),  # a match that ends in the line's CR
    ("a\r\nb", "\n", "\n\n", True),  # old_string a bare line break
    ("k\r\nk\r\n", "k", "m\r\nn", True),  # new_string given with CRLF
    ("a\r\r\nb\r\n", "a\r\r\nb", "z", False),  # old_string holding a CR before its CRLF
    ("\ufeffé\r\n\udcffé\n", "é", "è\nê", True),  # not ASCII, a byte that is not UTF-8
]


@pytest.mark.parametrize("content, old, new, replace_all", ENDINGS)
def test_line_endings_are_as_the_rules_always_made_them(ws, root, content, old, new, replace_all):
    data = content.encode("utf-8", "surrogateescape")
    (root / "f.txt").write_bytes(data)
    read_ok(ws)
    r = ws.run("edit", file_path="f.txt", old_string=old, new_string=new, replace_all=replace_all)
    assert not r.is_error, r.text
    bom = data.startswith(b"\xef\xbb\xbf")
    text = data[3 if bom else 0 :].decode("utf-8", "surrogateescape")
    expected, count = reference(text, old, new, replace_all)
    assert (root / "f.txt").read_bytes() == data[: 3 if bom else 0] + expected.encode("utf-8", "surrogateescape")
    assert r.value["replacements"] == count


def test_random_texts_replace_as_the_reference_does():
    rnd = random.Random(7)
    pieces = ["a", "b", "\n", "\r\n", "\r", "é"]
    for _ in range(4000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 30)))
        old = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 3)))
        new = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 3)))
        replace_all = rnd.random() < 0.7
        assert applied(text, old, new, replace_all) == reference(text, old, new, replace_all), (text, old, new)


def test_a_4_mib_one_line_replace_all_gives_str_replace(ws, root):
    text = "a," * (2 * 2**20)
    (root / "f.txt").write_text(text)
    read_ok(ws)
    r = ws.run("edit", file_path="f.txt", old_string=",", new_string=";", replace_all=True)
    assert r.value["replacements"] == 2 * 2**20
    assert (root / "f.txt").read_bytes() == text.replace(",", ";").encode()
    assert r.value["diffLines"] == 5
    head = "-" + ("a," * 200)[:399] + "... (line cut)"
    assert r.value["diff"] == f"--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n{head}\n+{head[1:].replace(',', ';')}"


def test_a_4_mib_crlf_line_split_at_every_comma_gives_the_reference(ws, root):
    text = "a," * (2 * 2**20) + "\r\n"
    (root / "f.txt").write_bytes(text.encode())
    read_ok(ws)
    r = ws.run("edit", file_path="f.txt", old_string=",", new_string=",\n", replace_all=True, dry_run=True)
    assert r.value["replacements"] == 2 * 2**20 and r.value["diffLines"] == 3 + 1 + 2 * 2**20 + 1
    r = ws.run("edit", file_path="f.txt", old_string=",", new_string=",\n", replace_all=True)
    assert not r.is_error, r.text[:300]
    assert (root / "f.txt").read_bytes() == text.replace(",", ",\r\n").encode()


# -- the result is bounded by edit_max_bytes -------------------------------------------------


def test_an_edit_whose_result_would_pass_edit_max_bytes_is_refused(make_ws, root):
    f = root / "f.txt"
    f.write_bytes(b"a" * 1000)
    before = os.stat(f)
    ws = make_ws(edit_max_bytes=1500)
    read_ok(ws)
    for dry_run in (True, False):
        r = ws.run("edit", file_path="f.txt", old_string="a", new_string="aa", replace_all=True, dry_run=dry_run)
        assert_error(
            r,
            "FS_TOO_LARGE",
            'cannot edit "f.txt": the result would be 2000 bytes, more than the 1500 an edit may write '
            "(setting edit_max_bytes)",
        )
    after = os.stat(f)
    assert f.read_bytes() == b"a" * 1000 and (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    # exactly the limit is allowed
    assert not ws.run("edit", file_path="f.txt", old_string="a" * 1000, new_string="a" * 1500).is_error
    assert f.read_bytes() == b"a" * 1500


DOUBLING = [{"old_string": "a", "new_string": "aa", "replace_all": True}] * 24


@pytest.mark.parametrize("bom, step, size", [(b"", 12, 4097), (b"\xef\xbb\xbf", 12, 4100)])
def test_a_doubling_batch_is_refused_at_the_step_that_passes_the_limit(make_ws, root, bom, step, size):
    f = root / "f.txt"
    f.write_bytes(bom + b"a\n")
    ws = make_ws(edit_max_bytes=4096)
    read_ok(ws)
    for dry_run in (True, False):
        r = ws.run("edit", file_path="f.txt", edits=DOUBLING, dry_run=dry_run)
        assert_error(
            r,
            "FS_TOO_LARGE",
            f"edit {step} of 24: the result would be {size} bytes, more than the 4096 an edit may write "
            "(setting edit_max_bytes); nothing was changed",
        )
    assert f.read_bytes() == bom + b"a\n"
    assert sorted(os.listdir(root)) == ["f.txt"]
    # eleven steps fit: 2**11 + 1 bytes of text
    r = ws.run("edit", file_path="f.txt", edits=DOUBLING[:11])
    assert r.text.split("\n")[0] == "The file f.txt has been updated successfully: 11 edits, 2047 replacements."
    assert f.read_bytes() == bom + b"a" * 2048 + b"\n"


def test_a_doubling_batch_under_the_default_limit_never_holds_more_than_it(tmp_path):
    """24 doublings of one letter: refused at step 24, the process never grows towards 16 MiB copies."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "f.txt").write_bytes(b"a\n")
    code = textwrap.dedent(f"""
        from dsh_jupyter import Workspace
        ws = Workspace({str(root)!r}, state_path={str(tmp_path / "st" / "s.sqlite")!r})
        assert not ws.run("read", file_path="f.txt").is_error
        before = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])
        r = ws.run("edit", file_path="f.txt", edits=[dict(old_string="a", new_string="aa", replace_all=True)] * 24)
        grew = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) - before
        print(r.text)
        print(grew // 1024)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    text, grew_mib = proc.stdout.splitlines()
    assert text == (
        "Error: edit 24 of 24: the result would be 16777217 bytes, more than the 10485760 an edit may write "
        "(setting edit_max_bytes); nothing was changed"
    )
    # the largest text made is 2**23 letters; the batch of 22 steps took 363 MiB before it was bounded
    assert int(grew_mib) < 120, f"the batch grew the process by {grew_mib} MiB"
    assert (root / "f.txt").read_bytes() == b"a\n"


def _notebook(root, source: str, name: str = "nb.ipynb"):
    nbformat.write(v4.new_notebook(cells=[v4.new_code_cell(source, id="c1")]), str(root / name))
    return root / name


def test_a_doubling_batch_in_notebook_cells_is_refused_by_the_size_of_the_sources(make_ws, root):
    nb = _notebook(root, "a")
    before = nb.read_bytes()
    ws = make_ws(edit_max_bytes=2000)
    read_ok(ws, "nb.ipynb")
    r = ws.run("edit", file_path="nb.ipynb", edits=DOUBLING)
    assert_error(
        r,
        "FS_TOO_LARGE",
        "edit 11 of 24: the cell sources would be 2048 bytes, more than the 2000 an edit may write "
        "(setting edit_max_bytes); nothing was changed",
    )
    r = ws.run("edit", file_path="nb.ipynb", old_string="a", new_string="b" * 3000)
    assert_error(
        r,
        "FS_TOO_LARGE",
        'cannot edit "nb.ipynb": the cell sources would be 3000 bytes, more than the 2000 an edit may write '
        "(setting edit_max_bytes)",
    )
    assert nb.read_bytes() == before


def test_a_notebook_whose_sources_fit_but_whose_file_would_not_is_refused(make_ws, root, tmp_path):
    nb = _notebook(root, "a")
    before = nb.read_bytes()
    # the size the edited notebook has, made where the limit is out of the way
    other = tmp_path / "other"
    other.mkdir()
    big = make_ws(root_dir=other, session="sizer")
    _notebook(other, "a")
    read_ok(big, "nb.ipynb")
    assert not big.run("edit", file_path="nb.ipynb", old_string="a", new_string="b" * 300).is_error
    size = (other / "nb.ipynb").stat().st_size
    ws = make_ws(edit_max_bytes=size - 1)
    read_ok(ws, "nb.ipynb")
    r = ws.run("edit", file_path="nb.ipynb", old_string="a", new_string="b" * 300)
    assert_error(
        r,
        "FS_TOO_LARGE",
        f'cannot edit "nb.ipynb": the result would be {size} bytes, more than the {size - 1} an edit may write '
        "(setting edit_max_bytes)",
    )
    assert nb.read_bytes() == before
