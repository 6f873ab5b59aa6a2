"""A call's progress is kept for the caller who started it (core/progress.py, ``Caller.identity``).

The server tests run it through two users on a real server (tests/server/test_progress_callers.py);
here each rule is checked where it is decided, and a real search reports into its own entry.
"""

from __future__ import annotations

import os
import re

import pytest

from dsh_jupyter.core.policy import Caller, CallRefused
from dsh_jupyter.core.progress import ProgressBoard
from dsh_jupyter.core.tools.grep import tool as grep_tool

ALICE = Caller("rest", "alice")
BOB = Caller("rest", "bob", may_write=False)


def test_who_a_caller_is_across_requests():
    assert ALICE.identity == "user:alice" and BOB.identity == "user:bob"
    assert Caller("python").identity == "user:"  # the OS user's own process
    token = Caller("rest", "Anonymous Io", may_write=False, anonymous=True, credential="ab12")
    assert token.identity == "token:ab12"
    assert Caller("rest", "Anonymous Europa", anonymous=True, credential="ab12").identity == token.identity
    assert Caller("rest", "Anonymous Io", anonymous=True, credential="cd34").identity != token.identity
    assert Caller("rest", "Anonymous Io", anonymous=True).identity is None  # nothing tells it apart


def test_a_caller_sees_only_their_own_call_under_an_id():
    board = ProgressBoard()
    alices = board.start(ALICE.identity, "p")
    assert alices is not None
    alices.report("12 matches in 3 files so far")
    assert board.get(ALICE.identity, "p") == (True, "12 matches in 3 files so far")
    assert board.get(BOB.identity, "p") == (False, None)
    bobs = board.start(BOB.identity, "p")  # bob's own call, same id: an entry of his own
    assert bobs is not None
    bobs.report("bob's text")
    assert board.get(ALICE.identity, "p") == (True, "12 matches in 3 files so far")
    bobs.end()
    assert board.get(BOB.identity, "p") == (False, None)
    assert board.get(ALICE.identity, "p") == (True, "12 matches in 3 files so far")
    alices.end()
    assert len(board) == 0 and board.get(ALICE.identity, "p") == (False, None)


def test_a_newer_call_under_the_same_id_is_not_ended_by_the_older():
    board = ProgressBoard()
    older = board.start(ALICE.identity, "p")
    newer = board.start(ALICE.identity, "p")
    assert older is not None and newer is not None
    assert board.get(ALICE.identity, "p") == (True, None)
    older.report("the older call's text")  # reports into its own entry, which nobody reads now
    assert board.get(ALICE.identity, "p") == (True, None)
    older.end()
    assert board.get(ALICE.identity, "p") == (True, None)
    newer.end()
    newer.end()  # twice is harmless
    assert len(board) == 0


def test_nothing_is_kept_for_a_caller_nothing_identifies():
    board = ProgressBoard()
    assert board.start(None, "p") is None
    assert board.get(None, "p") == (False, None) and len(board) == 0


def test_a_search_reports_into_its_callers_entry_and_forgets_it_when_it_answers(make_ws, root, tree, monkeypatch):
    monkeypatch.setattr(grep_tool, "PROGRESS_EVERY_S", 0.0)  # tell at every piece rg writes
    tree(root, {f"d{d}": {f"f{i:03d}.txt": "needle\n" * 3 for i in range(200)} for d in range(10)})
    ws = make_ws()
    admission = ws.admit("grep", "default", BOB, progress_id="p")
    assert ws.call_progress("p", BOB) == {"running": True, "progress": None}  # admitted: its wait counts
    assert ws.call_progress("p", ALICE) == {"running": False, "progress": None}
    result = ws.call("grep", {"pattern": "needle"}, admission=admission)
    assert not result.is_error and result.value["totalMatches"] == 6000
    assert admission.progress is not None
    assert re.fullmatch(r"[\d,]+ match(es)? in [\d,]+ files? so far", admission.progress.text), admission.progress.text
    assert ws.call_progress("p", BOB) == {"running": False, "progress": None}
    assert len(ws.progress) == 0


def test_a_refused_call_keeps_no_progress(make_ws):
    ws = make_ws()
    admission = ws.admit("list", "brand-new", BOB, progress_id="p")
    with pytest.raises(CallRefused):  # bob may not create sessions
        ws.call("list", {}, admission=admission)
    assert len(ws.progress) == 0 and ws.session_info("brand-new") is None


def _recording(admission) -> list:
    """The rows a call's first-matches reports carried, in order (each report's whole list)."""
    seen: list = []
    assert admission.progress is not None
    real = admission.progress.preview

    def record(rows):
        seen.append(rows)
        real(rows)

    admission.progress.preview = record
    return seen


def test_a_search_reports_its_first_matches_while_it_runs(make_ws, root, tree, monkeypatch):
    monkeypatch.setattr(grep_tool, "PROGRESS_EVERY_S", 0.0)  # tell at every piece rg writes
    tree(root, {f"d{d}": {f"f{i:03d}.txt": "x\nneedle here\n" * 3 for i in range(200)} for d in range(10)})
    ws = make_ws()
    admission = ws.admit("grep", "default", BOB, progress_id="p")
    seen = _recording(admission)
    result = ws.call("grep", {"pattern": "needle"}, admission=admission)
    assert result.value["totalMatches"] == 6000
    assert seen, "no early rows were reported"
    first = seen[0]
    assert 0 < len(first) <= 100
    assert all(set(row) == {"path", "line", "text"} for row in first)
    assert all(row["text"] == "needle here" and row["line"] in (2, 4, 6) for row in first)
    assert all(re.fullmatch(r"d\d/f\d{3}\.txt", row["path"]) for row in first)
    assert max(len(rows) for rows in seen) <= 100
    assert ws.call_progress("p", BOB) == {"running": False, "progress": None}  # forgotten, rows too


def test_early_rows_leave_out_what_the_answer_leaves_out(make_ws, root, tree, tmp_path, monkeypatch):
    """A protected file linked into the workspace, a VCS folder and a folder holding glob syntax
    that is protected: none of their lines is shown early, as none is in the answer."""
    monkeypatch.setattr(grep_tool, "PROGRESS_EVERY_S", 0.0)
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    token_file = runtime / "jpserver-77.json"
    token_file.write_text('{"token": "needle secret"}\n')
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    tree(root, {f"f{i:03d}.txt": "needle\n" for i in range(50)})  # every file's rows fit in the early ones
    tree(root, {".git/config": "needle in git\n", "a/b": {}})
    os.link(token_file, root / "a" / "innocent.json")
    ws = make_ws(allow_hidden=True)
    admission = ws.admit("grep", "default", BOB, progress_id="p")
    seen = _recording(admission)
    result = ws.call("grep", {"pattern": "needle"}, admission=admission)
    assert result.value["filesTotal"] == 50
    shown = {row["path"] for rows in seen for row in rows}
    # every file but the one rg wrote last (whole only when rg ends): the linked file is not there
    assert len(shown) >= 49 and shown <= {f"f{i:03d}.txt" for i in range(50)}, shown
