"""replace searches the index's candidate files, as grep does, and answers exactly as without it.

A workspace with the index (``index_min_files=1``) and one without it, over the same tree, are
asked the same previews — regex, literal, ignore-case, include and exclude, a pattern with no
trigram, one no file holds, a file holding a NUL byte beside candidates — and must answer the
same text and value but for ``source``/``index_note``; then an apply through the index changes
the files as the preview said and the index holds the new text before the call answers.
"""

from __future__ import annotations

import time

import pytest

from dsh_jupyter import Workspace


@pytest.fixture
def pair(tmp_path):
    root = tmp_path / "root"
    for i in range(30):
        folder = root / f"pkg{i % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i}.py").write_text(f"def old_name_{i % 4}():\n    return OldValue + {i}\n")
        (folder / f"notes{i}.txt").write_text(f"old_name in notes {i}\nnothing else\n")
    (root / "pkg0" / "blob.bin").write_bytes(b"old_name_1\0binary old_name_1\n")
    indexed = Workspace(root, state_path=tmp_path / "a" / "s.sqlite", session="s", index_min_files=1)
    plain = Workspace(root, state_path=tmp_path / "b" / "s.sqlite", session="s", index_min_files=0)
    indexed.run("grep", pattern="start")  # the first search starts the build
    deadline = time.monotonic() + 60
    while indexed.index.status()["state"] != "ready":
        assert time.monotonic() < deadline, indexed.index.status()
        time.sleep(0.02)
    yield root, indexed, plain
    indexed.close()
    plain.close()


PREVIEWS = [
    ({"pattern": "old_name_1", "replacement": "new_name_1"}, "index"),
    ({"pattern": r"old_name_(\d)", "replacement": "fresh_$1"}, "index"),
    ({"pattern": "oldvalue", "replacement": "NewValue", "ignore_case": True}, "index"),
    ({"pattern": "OldValue + 1", "replacement": "X", "literal": True}, "index"),
    ({"pattern": "old_name", "replacement": "n", "include": "*.txt"}, "index"),
    ({"pattern": "old_name", "replacement": "n", "exclude": ["pkg1/**"]}, "index"),
    ({"pattern": "zz_no_file_holds_this", "replacement": "y"}, "index"),
    ({"pattern": r"\d+", "replacement": "N"}, "rg"),
]


@pytest.mark.parametrize(("args", "source"), PREVIEWS, ids=[a["pattern"] for a, _ in PREVIEWS])
def test_a_preview_from_the_index_is_the_preview_without_it(pair, args, source):
    _, indexed, plain = pair
    got, want = indexed.run("replace", **args), plain.run("replace", **args)
    assert got.text == want.text
    assert got.value["source"] == source
    assert ("index_note" in got.value) is (source == "rg")
    trimmed = {k: v for k, v in got.value.items() if k not in ("source", "index_note")}
    assert trimmed == {k: v for k, v in want.value.items() if k != "spill"} | (
        {"spill": got.value["spill"]} if "spill" in want.value else {}
    )


def test_an_apply_through_the_index_changes_what_the_preview_showed(pair):
    root, indexed, plain = pair
    args = {"pattern": "old_name_2", "replacement": "renamed_2"}
    preview = indexed.run("replace", **args)
    total = preview.value["totalOccurrences"]
    assert total == plain.run("replace", **args).value["totalOccurrences"] > 0
    done = indexed.run("replace", **args, occurrences="all", expected_count=total)
    assert not done.is_error, done.text
    assert done.value["source"] == "index" and done.value["replacements"] == total
    assert "renamed_2" in (root / "pkg2" / "mod2.py").read_text()
    # the index took in the change before the call answered: the new text is found from it
    after = indexed.run("grep", pattern="renamed_2", output_mode="files_with_matches")
    assert after.value["source"] == "index"
    assert after.text == plain.run("grep", pattern="renamed_2", output_mode="files_with_matches").text
    assert indexed.run("replace", **args).value["totalOccurrences"] == 0
