"""The call policy (core/policy.py, ``Workspace.admit``), the call log's bounds and what travels with
records: every rule on real workspaces sharing a real state file.

The surfaces' own tests (tests/server/test_policy_surfaces.py) run the same rules through a real
server, its MCP endpoint and the stdio server; here each rule is checked where it is decided.
"""

from __future__ import annotations

import json
import time

import pytest

from dsh_jupyter import Workspace
from dsh_jupyter.core.policy import ANONYMOUS, Admission, Caller, CallRefused, admit_page

READER = Caller("rest", "reader", may_write=False)
TOKEN = Caller("rest", "Anonymous Io", may_write=False, anonymous=True)
OWNER = Caller("rest", "owner")


@pytest.fixture
def shared(root, tree, tmp_path):
    """Two workspaces on one root and one state file: what a server hides (``.env``), and what
    a stdio server or a plain Python process shows."""
    tree(
        root,
        {
            ".env": "SECRET_KEY=hunter2\n",
            "src": {"app.py": "SECRET_KEY = env('SECRET_KEY')\n"},
            "many": {f"f{i:02}.txt": f"hello {i}\n" for i in range(40)},
        },
    )
    state = tmp_path / "state" / "s.sqlite"
    server = Workspace(
        root,
        state_path=state,
        allow_hidden=False,
        surface="rest",
        grep_max_matches=5,
        glob_max_results=5,
        spill_max_bytes_read_only=600,
    )
    local = Workspace(root, state_path=state, surface="mcp", grep_max_matches=5, glob_max_results=5)
    return server, local


# -- who may do what ------------------------------------------------------------------------------

RULES = [
    # (caller, tool, args, session, refused with)
    (
        READER,
        "write",
        {"file_path": "x.txt", "content": "x"},
        "default",
        "User is not authorized to write on resource: contents.",
    ),
    (
        READER,
        "edit",
        {"file_path": "src/app.py", "old_string": "a", "new_string": "b"},
        "default",
        "User is not authorized to write on resource: contents.",
    ),
    (
        READER,
        "move",
        {"source": "src/app.py", "destination": "app.py"},
        "default",
        "User is not authorized to write on resource: contents.",
    ),
    (
        READER,
        "list",
        {},
        "brand-new",
        "a caller without contents:write cannot create sessions; use an existing session or default",
    ),
    (
        TOKEN,
        "grep",
        {"pattern": "x"},
        "brand-new",
        "a caller without contents:write cannot create sessions; use an existing session or default",
    ),
    (READER, "list", {}, "default", None),
    (READER, "read", {"file_path": "src/app.py"}, "existing", None),
    (OWNER, "write", {"file_path": "x.txt", "content": "x"}, "brand-new", None),
    (Caller("magic"), "write", {"file_path": "y.txt", "content": "y"}, "other", None),
]


@pytest.mark.parametrize(
    "caller, tool, args, session, refused",
    RULES,
    ids=[f"{c.surface}-{'ro' if not c.may_write else 'rw'}-{t}-{s}" for c, t, _, s, _ in RULES],
)
def test_every_rule_of_the_policy(shared, root, caller, tool, args, session, refused):
    server, _ = shared
    server.create_session("existing")
    before = sorted(p.name for p in root.iterdir())
    try:
        result = server.call(tool, args, session=session, caller=caller)
    except CallRefused as exc:
        assert exc.message == refused and exc.code == "FORBIDDEN"
        assert sorted(p.name for p in root.iterdir()) == before  # nothing ran
        if session == "brand-new":
            assert server.session_info("brand-new") is None  # and no session was made
        return
    assert refused is None, f"{tool} by {caller} ran: {result.text}"
    assert not result.is_error, result.text


SESSION_REFUSED = "a caller without contents:write cannot create sessions; use an existing session or default"


def rows(state) -> dict[str, list]:
    """Every row of every table of the state file (how the tests compare it before and after)."""
    import sqlite3

    db = sqlite3.connect(state)
    try:
        names = [
            r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        ]
        return {n: sorted(map(repr, db.execute(f"SELECT * FROM {n}"))) for n in names}
    finally:
        db.close()


# (view, what a reader naming a session that does not exist gets, what a writer gets)
VIEWS = [
    ("browse", "refused", "the root's listing"),
    ("spill_page", "refused", "FS_NOT_FOUND"),
    ("session_info", None, None),
    ("calls", None, None),
    ("spill_list", None, None),
]


def view(ws, name: str, session: str, caller: Caller, locator: str = "~/nothing"):
    if name == "browse":
        return ws.browse(session=session, caller=caller)
    if name == "spill_page":
        return ws.spill_page(locator, session, caller=caller)
    if name == "calls":
        return ws.calls(session, 0, 100, None, caller)
    if name == "spill_list":
        return ws.spill_list(session, None, caller)
    return ws.session_info(session, caller)


@pytest.mark.parametrize("name, reader_gets, writer_gets", VIEWS, ids=[v[0] for v in VIEWS])
def test_a_view_of_a_session_that_does_not_exist_creates_nothing(shared, name, reader_gets, writer_gets):
    server, _ = shared
    server.run("list")  # the state holds something to compare
    before = rows(server.state_path)
    if reader_gets == "refused":  # it would use the session: the rule of tool calls
        with pytest.raises(CallRefused) as refused:
            view(server, name, "brand-new", READER)
        assert refused.value.message == SESSION_REFUSED
        with pytest.raises(CallRefused):
            view(server, name, "brand-new", TOKEN)
    else:  # it asks about the session's records: no such session, for every caller alike
        assert view(server, name, "brand-new", READER) is None
    got = view(server, name, "brand-new", OWNER)
    if writer_gets == "the root's listing":
        assert [e["name"] for e in got["entries"]] == ["many", "src"]
    elif writer_gets == "FS_NOT_FOUND":
        assert got.is_error and got.value["code"] == "FS_NOT_FOUND"
    else:
        assert got is None
    assert rows(server.state_path) == before  # no session, no call, no observation
    assert server.session_info("brand-new") is None


def test_a_view_of_an_existing_session_changes_nothing(shared):
    server, _ = shared
    server.call("grep", {"pattern": "hello"}, session="existing", caller=OWNER)
    locator = server.spill_list("existing")[0]["locator"]
    server.call("read", {"file_path": "src/app.py"}, session="existing", caller=OWNER)
    before = rows(server.state_path)
    for caller in (READER, TOKEN, OWNER):
        assert [e["name"] for e in server.browse(session="existing", caller=caller)["entries"]] == ["many", "src"]
        page = server.spill_page(locator, "existing", 1, 3, caller=caller)
        assert not page.is_error and page.text.startswith("<path>"), page.text
        assert server.session_info("existing", caller)["calls"] == 2
        assert server.calls("existing", 0, 100, None, caller)["total"] == 2
        assert [s["locator"] for s in server.spill_list("existing", None, caller)] == [locator]
        assert server.status(caller)["tools"] == list(server.registry)
    assert rows(server.state_path) == before  # a spill page is not a call: not logged, not observed


def test_a_spill_page_reads_saved_results_only(shared, root):
    server, _ = shared
    server.create_session("existing")
    before = rows(server.state_path)
    for locator in ("src/app.py", str(root / "src" / "app.py"), "../outside.txt"):
        page = server.spill_page(locator, "existing", caller=READER)
        assert page.is_error and page.value["code"] == "FS_NOT_FOUND"
        assert page.text == f"Error: cannot read {json.dumps(locator)}: not found"
    assert rows(server.state_path) == before  # the file was neither read into the log nor observed


def test_only_a_caller_who_may_write_creates_moves_or_deletes_sessions(shared, root):
    server, _ = shared
    server.create_session("existing", caller=OWNER)
    assert server.session_info("existing")["user"] == "owner"  # recorded as the caller
    before = rows(server.state_path)
    with pytest.raises(CallRefused) as refused:
        server.create_session("made-by-reader", caller=READER)
    assert refused.value.message == SESSION_REFUSED
    for act in (
        lambda: server.move_session("existing", "src", caller=READER),
        lambda: server.delete_session("existing", caller=READER),
    ):
        with pytest.raises(CallRefused) as refused:
            act()
        assert refused.value.message == "User is not authorized to write on resource: contents."
    assert rows(server.state_path) == before


def test_a_writers_call_records_its_new_session_as_the_caller(shared):
    server, _ = shared
    assert not server.call("list", {}, session="new-one", caller=Caller("rest", "alice")).is_error
    assert server.session_info("new-one")["user"] == "alice"


def test_a_page_is_bound_to_who_reported_it_and_only_a_writer_answers_for_it():
    assert admit_page(OWNER) == admit_page(OWNER, answers=True) == "user:owner"
    assert admit_page(READER) == "user:reader"
    with pytest.raises(CallRefused, match=r"^User is not authorized to write on resource: contents.$"):
        admit_page(READER, answers=True)
    token = Caller("rest", "Anonymous Io", anonymous=True, credential="d1")
    assert admit_page(token) == "token:d1"
    with pytest.raises(CallRefused) as refused:
        admit_page(Caller("rest", "Anonymous Io", anonymous=True))  # nothing tells this caller apart
    assert refused.value.message == "a caller that nothing identifies across requests cannot report a page's tabs"


def test_a_reader_learns_the_modes_not_where_the_state_is(shared):
    server, _ = shared
    assert "path" not in server.status(READER)["state"] and "path" not in server.status(TOKEN)["state"]
    assert server.status(OWNER)["state"]["path"] == server.state_path == server.status()["state"]["path"]


def test_each_spec_says_whether_it_writes_or_searches(shared):
    server, _ = shared
    assert {n for n, s in server.registry.items() if s.writes} == {"write", "edit", "edit_cells", "replace", "move"}
    assert {n for n, s in server.registry.items() if s.searches} == {"glob", "find", "grep", "replace"}
    assert server.admit("grep", caller=READER).searches and not server.admit("read", caller=READER).searches
    assert server.admit("grep", caller=READER).spill_quota == 600
    assert server.admit("grep", caller=OWNER).spill_quota is None


def test_a_search_that_waited_past_the_timeout_is_not_started(shared):
    server, _ = shared
    stale = Admission("grep", "default", OWNER, True, time.monotonic() - 31, None)
    r = server.call("grep", {"pattern": "hello"}, admission=stale)
    assert r.value["code"] == "SEARCH_ABORTED"
    assert r.text.startswith("Error: grep waited ") and r.text.endswith(
        " ms for a free search slot and was not started; try again"
    )
    fresh = Admission("read", "default", OWNER, False, time.monotonic() - 31, None)
    assert not server.call("read", {"file_path": "src/app.py"}, admission=fresh).is_error  # only searches wait


def test_token_only_callers_share_one_read_only_quota(shared):
    """Jupyter names each token-only request anew: counted per name, 17 callers had 17 quotas."""
    server, _ = shared
    owner = server.call("grep", {"pattern": "hello"}, caller=OWNER)
    assert owner.value["spill"]
    for i in range(17):
        someone = Caller("rest", f"Anonymous {i}", may_write=False, anonymous=True)
        assert someone.quota_owner == ANONYMOUS
        server.call("glob", {"pattern": "*.txt"}, caller=someone)
    spills = server.spill_list()
    read_only = [s for s in spills if s["user"] == ANONYMOUS]
    assert read_only and sum(s["size"] for s in read_only) <= 600
    assert owner.value["spill"] in [s["locator"] for s in spills]  # the owner's result was never pushed out


# -- the call log's bounds ---------------------------------------------------------------------------


def test_the_call_log_keeps_its_bounds_and_says_how_many_it_dropped(make_ws, root, tree):
    tree(root, {"a.txt": "x\n"})
    ws = make_ws(call_log_max_records_per_session=5)
    for _ in range(8):
        ws.run("read", file_path="a.txt")
    page = ws.calls()
    assert page["total"] == 5 and page["dropped"] == 3
    assert [c["tool"] for c in page["calls"]] == ["read"] * 5
    assert ws.session_info()["calls"] == 5


def test_read_only_callers_cannot_push_out_the_owners_records(make_ws, root, tree, tmp_path):
    tree(root, {"big.txt": "y" * 1000 + "\n"})
    ws = make_ws(call_log_max_bytes_read_only=5000, call_log_max_bytes=10**7)
    ws.run("read", file_path="big.txt")  # the owner's record
    for i in range(40):  # each record holds the read's ~1 KB of text
        ws.call(
            "read", {"file_path": "big.txt"}, caller=Caller("rest", f"Anonymous {i}", may_write=False, anonymous=True)
        )
    calls = ws.calls(limit=1000)["calls"]
    assert calls[0]["user"] == ws.user and calls[0]["surface"] == "python"  # kept
    assert 1 < len(calls) < 10  # the readers' records were bounded on their own
    assert ws.calls()["dropped"] == 41 - len(calls)


def test_bounds_hold_across_processes_sharing_the_state(make_ws, root, tree, state_file):
    tree(root, {"a.txt": "x\n"})
    one = make_ws(call_log_max_records_per_session=3)
    two = Workspace(root, session=one.session, state_path=state_file, call_log_max_records_per_session=3)
    for _ in range(3):
        one.run("read", file_path="a.txt")
        two.run("read", file_path="a.txt")
    assert one.calls()["total"] == 3 and one.calls()["dropped"] == 3


# -- what travels with a record -----------------------------------------------------------------------


def test_a_call_made_where_hidden_files_are_shown_is_withheld_where_they_are_not(shared):
    server, local = shared
    assert "hunter2" in local.run("read", file_path=".env").text
    assert "hunter2" in local.run("grep", pattern="SECRET_").text
    listing = server.calls()
    assert [c["tool"] for c in listing["calls"]] == ["read", "grep"]
    for call in listing["calls"]:
        assert call["withheld"] == "it was made where hidden files are shown, and this surface hides them"
        assert call["args"] == {} and call["text"] == ""
        assert call["surface"] == "mcp" and call["started"] > 0
    assert "hunter2" not in str(listing)
    # the surface that made them still sees them whole
    assert "hunter2" in local.calls()["calls"][0]["text"]


def test_a_saved_result_made_where_more_is_shown_is_not_served(shared, root):
    server, local = shared
    grep = local.run("grep", pattern="hello|SECRET")
    locator = grep.value["spill"]
    assert locator
    listed = server.spill_list()
    assert listed == [
        {**listed[0], "label": "", "withheld": "it was made where hidden files are shown, and this surface hides them"}
    ]
    r = server.run("read", file_path=locator)
    assert r.value["code"] == "FS_HIDDEN"
    assert r.text == (
        f'Error: cannot read "{locator}": it was made where hidden files are shown, and this surface hides them'
    )
    page = server.spill_page(locator)
    assert page.is_error and "hunter2" not in page.text
    assert not local.run("read", file_path=locator).is_error  # its own surface reads it


def test_records_made_under_the_same_or_narrower_visibility_are_served(shared):
    server, local = shared
    server.run("read", file_path="src/app.py")
    assert [c.get("withheld") for c in local.calls()["calls"]] == [None]  # narrower: served to a wider reader
    assert [c.get("withheld") for c in server.calls()["calls"]] == [None]
    narrower = Workspace(server.root, state_path=server.state_path, allow_hidden=False, hide_globs=["*.py"])
    assert narrower.calls()["calls"][0]["withheld"] == (
        "it was made where names this surface hides (hide_globs) are shown"
    )


V2_SCHEMA = """
CREATE TABLE sessions (key TEXT PRIMARY KEY, root TEXT NOT NULL, name TEXT NOT NULL, cwd TEXT NOT NULL,
    created REAL NOT NULL, user TEXT NOT NULL DEFAULT '');
CREATE TABLE observations (session TEXT NOT NULL, real_path TEXT NOT NULL, version TEXT NOT NULL,
    observed_at REAL NOT NULL, PRIMARY KEY (session, real_path)) WITHOUT ROWID;
CREATE TABLE spills (locator TEXT PRIMARY KEY, session TEXT NOT NULL, tool TEXT NOT NULL, size INTEGER NOT NULL,
    created REAL NOT NULL, evicted REAL, label TEXT NOT NULL DEFAULT '', user TEXT NOT NULL DEFAULT '');
CREATE TABLE calls (seq INTEGER PRIMARY KEY AUTOINCREMENT, call_id TEXT NOT NULL UNIQUE, session TEXT NOT NULL,
    tool TEXT NOT NULL, args TEXT NOT NULL, text TEXT NOT NULL, is_error INTEGER NOT NULL, surface TEXT NOT NULL,
    started REAL NOT NULL, duration_ms REAL NOT NULL, user TEXT NOT NULL DEFAULT '');
PRAGMA user_version = 2;
"""


def test_a_state_file_of_the_previous_version_is_migrated_and_its_calls_withheld_where_anything_is_hidden(
    root, tree, tmp_path
):
    import sqlite3

    from dsh_jupyter.core.state.store import SCHEMA_VERSION, session_key

    tree(root, {".env": "SECRET=1\n"})
    state = tmp_path / "old.sqlite"
    db = sqlite3.connect(state)
    db.executescript(V2_SCHEMA)
    key = session_key(str(root.resolve()), "default")
    db.execute("INSERT INTO sessions VALUES (?, ?, 'default', ?, 1.0, 'u')", (key, str(root.resolve()), str(root)))
    db.execute(
        "INSERT INTO calls (call_id, session, tool, args, text, is_error, surface, started, duration_ms, user) "
        "VALUES ('c1', ?, 'read', '{\"file_path\": \".env\"}', 'SECRET=1', 0, 'python', 2.0, 1.0, 'u')",
        (key,),
    )
    db.commit()
    db.close()
    hides = Workspace(root, state_path=state, allow_hidden=False)
    (call,) = hides.calls()["calls"]
    assert call["withheld"] == "it was made before calls recorded what they showed" and call["text"] == ""
    shows = Workspace(root, state_path=state)
    assert shows.calls()["calls"][0]["text"] == "SECRET=1"
    assert sqlite3.connect(state).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
