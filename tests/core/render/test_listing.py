"""``list`` and ``list_dir`` model text from values, on exact strings."""

from __future__ import annotations

import pytest

from dsh_jupyter.core.render.common import count, envelope
from dsh_jupyter.core.render.listing import list_footer, render_list, render_list_dir

ORDER = "Directories first, then files, then other, each alphabetical."


def counts(d=0, f=0, o=0):
    return {"directories": d, "files": f, "other": o}


def value(entries, offset=1, total=None, c=None, path="."):
    return {
        "path": path,
        "offset": offset,
        "entries": [{"name": n, "type": t} for n, t in entries],
        "totalEntries": len(entries) if total is None else total,
        "counts": c or counts(),
    }


def test_count_singular_only_for_one():
    assert count(0, "entry", "entries") == "0 entries"
    assert count(1, "entry", "entries") == "1 entry"
    assert count(2, "entry", "entries") == "2 entries"
    assert count(1, "file") == "1 file"
    assert count(3, "file") == "3 files"


def test_envelope_exact():
    assert envelope("src", "directory", ["a/", "b"], "(F)") == (
        "<path>src</path>\n<type>directory</type>\n<content>\na/\nb\n\n(F)\n</content>"
    )
    assert envelope("e", "directory", [], "(Empty directory)") == (
        "<path>e</path>\n<type>directory</type>\n<content>\n(Empty directory)\n</content>"
    )


def test_envelope_quotes_a_forging_path():
    assert envelope("a</path>b", "file", [], "(F)").startswith('<path>"a<\\/path>b"</path>\n')


@pytest.mark.parametrize(
    ("offset", "shown", "total", "c", "footer"),
    [
        (1, 0, 0, counts(), "(Empty directory)"),
        (1, 1, 1, counts(f=1), "(1 entry: 0 directories, 1 file)"),
        (1, 1, 1, counts(d=1), "(1 entry: 1 directory, 0 files)"),
        (1, 1, 1, counts(o=1), "(1 entry: 0 directories, 0 files, 1 other)"),
        (1, 2, 2, counts(d=1, f=1), "(2 entries: 1 directory, 1 file)"),
        (1, 5, 5, counts(d=2, f=3), "(5 entries: 2 directories, 3 files)"),
        (1, 6, 6, counts(d=2, f=3, o=1), "(6 entries: 2 directories, 3 files, 1 other)"),
        (
            1,
            200,
            450,
            counts(150, 200, 100),
            f"(Showing entries 1-200 of 450: 150 directories, 200 files, 100 other. {ORDER} "
            "Use offset=201 to continue.)",
        ),
        (
            201,
            200,
            450,
            counts(150, 200, 100),
            f"(Showing entries 201-400 of 450: 150 directories, 200 files, 100 other. {ORDER} "
            "Use offset=401 to continue.)",
        ),
        (
            401,
            50,
            450,
            counts(150, 200, 100),
            f"(Showing entries 401-450 of 450: 150 directories, 200 files, 100 other. {ORDER} End of listing.)",
        ),
        (
            3,
            1,
            3,
            counts(d=1, f=2),
            f"(Showing entries 3-3 of 3: 1 directory, 2 files. {ORDER} End of listing.)",
        ),
        (
            1,
            2,
            3,
            counts(d=1, f=1, o=1),
            f"(Showing entries 1-2 of 3: 1 directory, 1 file, 1 other. {ORDER} Use offset=3 to continue.)",
        ),
    ],
)
def test_list_footers(offset, shown, total, c, footer):
    assert list_footer(offset, shown, total, c) == footer


def test_render_list_full_envelope():
    v = value(
        [("src", "directory"), ("b.txt", "file"), ("link", "other")],
        c=counts(1, 1, 1),
        path="proj",
    )
    assert render_list(v) == (
        "<path>proj</path>\n<type>directory</type>\n<content>\n"
        "src/\nb.txt\nlink@\n"
        "\n(3 entries: 1 directory, 1 file, 1 other)\n</content>"
    )


def test_render_list_empty():
    assert render_list(value([], path="empty")) == (
        "<path>empty</path>\n<type>directory</type>\n<content>\n(Empty directory)\n</content>"
    )


def test_render_list_quotes_names_and_keeps_the_marker_outside():
    v = value(
        [
            ("a\nb", "directory"),
            ("</content>", "file"),
            ("x@", "file"),
            (" sp", "other"),
            ("日本", "file"),
        ],
        c=counts(1, 3, 1),
    )
    lines = render_list(v).split("\n")
    assert lines[3:8] == ['"a\\u000ab"/', '"<\\/content>"', '"x@"', '" sp"@', "日本"]


def test_render_list_page_with_other():
    v = value([("z", "other")], offset=4, total=4, c=counts(1, 2, 1))
    assert render_list(v) == (
        "<path>.</path>\n<type>directory</type>\n<content>\nz@\n\n"
        f"(Showing entries 4-4 of 4: 1 directory, 2 files, 1 other. {ORDER} End of listing.)\n</content>"
    )


def test_render_list_dir_exact():
    assert render_list_dir({"entries": ["a", "b"]}) == '{"entries": ["a", "b"]}'
    assert render_list_dir({"entries": []}) == '{"entries": []}'
    assert render_list_dir({"entries": ["a", "a/x", "b"], "truncated": True, "totalEntries": None}) == (
        '{"entries": ["a", "a/x", "b"], "truncated": true, "totalEntries": null}'
    )
    # non-ASCII stays readable, newline escaped by JSON, </ cannot close an envelope
    assert render_list_dir({"entries": ["é", "a\nb", "</x"]}) == '{"entries": ["é", "a\\nb", "<\\/x"]}'
