"""``read``, ``write`` and ``edit`` model text from values, on exact strings."""

from __future__ import annotations

import pytest

from dsh_jupyter.core.render.reading import read_footer, render_read
from dsh_jupyter.core.render.writing import render_edit, render_write


@pytest.mark.parametrize(
    ("first", "last", "total", "capped", "footer"),
    [
        (1, 3, 3, False, "(End of file - total 3 lines)"),
        (1, 1, 1, False, "(End of file - total 1 line)"),
        (1, 0, 0, False, "(End of file - total 0 lines)"),
        (2, 3, 3, False, "(End of file - total 3 lines)"),
        (1, 2, 5, False, "(Showing lines 1-2 of 5. Use offset=3 to continue.)"),
        (4, 4, 5, False, "(Showing lines 4-4 of 5. Use offset=5 to continue.)"),
        (1, 2, None, False, "(Showing lines 1-2. Use offset=3 to continue.)"),
        (1, 7, 100, True, "(Output capped. Showing lines 1-7. Use offset=8 to continue.)"),
        (1, 7, None, True, "(Output capped. Showing lines 1-7. Use offset=8 to continue.)"),
    ],
)
def test_read_footers(first, last, total, capped, footer):
    assert read_footer(first, last, total, capped) == footer


def test_render_read_full_envelope():
    v = {
        "path": "src/a.py",
        "offset": 1,
        "lines": [{"number": 1, "text": "x = 1"}, {"number": 2, "text": ""}, {"number": 3, "text": "y"}],
        "totalLines": 3,
        "capped": False,
    }
    assert render_read(v) == (
        "<path>src/a.py</path>\n<type>file</type>\n<content>\n"
        "1: x = 1\n2: \n3: y\n\n(End of file - total 3 lines)\n</content>"
    )


def test_render_read_window_and_empty():
    v = {"path": "f", "offset": 5, "lines": [{"number": 5, "text": "e"}], "totalLines": 9, "capped": False}
    assert render_read(v) == (
        "<path>f</path>\n<type>file</type>\n<content>\n5: e\n\n"
        "(Showing lines 5-5 of 9. Use offset=6 to continue.)\n</content>"
    )
    empty = {"path": "e", "offset": 1, "lines": [], "totalLines": 0, "capped": False}
    assert render_read(empty) == (
        "<path>e</path>\n<type>file</type>\n<content>\n(End of file - total 0 lines)\n</content>"
    )


def test_render_read_quotes_the_path():
    v = {"path": "a\nb", "offset": 1, "lines": [], "totalLines": 0, "capped": False}
    assert render_read(v).startswith('<path>"a\\u000ab"</path>\n')


def test_render_write_exact():
    assert render_write({"path": "d/f.txt", "operation": "create", "bytes": 3}) == (
        "<path>d/f.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>"
    )
    assert render_write({"path": "f.txt", "operation": "update", "bytes": 3}) == (
        "<path>f.txt</path>\n<type>file</type>\n<content>\nUpdated file\n</content>"
    )


def test_render_edit_exact():
    diff = {"diff": "--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-a\n+b", "diffLines": 5}
    assert render_edit({"path": "f.txt", "replaceAll": False, "replacements": 1, **diff}) == (
        "The file f.txt has been updated successfully.\n--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-a\n+b"
    )
    assert render_edit({"path": "f.txt", "replaceAll": True, "replacements": 3, **diff}).split("\n")[0] == (
        "The file f.txt has been updated. All occurrences were successfully replaced."
    )
    assert render_edit({"path": "x@", "replaceAll": False, "replacements": 1, **diff}).split("\n")[0] == (
        'The file "x@" has been updated successfully.'
    )
    assert render_edit({"path": "f.txt", "replaceAll": False, "replacements": 1, **diff, "diffLines": 9}) == (
        "The file f.txt has been updated successfully.\n--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-a\n+b\n"
        "(Showing 5 of 9 diff lines.)"
    )
    assert (
        render_edit({"path": "f.txt", "replaceAll": False, "replacements": 1, **diff, "dryRun": True}).split("\n")[0]
        == "Dry run: f.txt was not changed. The edit would make 1 replacement:"
    )
