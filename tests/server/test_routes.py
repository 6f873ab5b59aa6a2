"""Every route of the running server, tried by callers who may not write: none changes state for them.

The routes are read from the running server's tornado application (every rule under ``/dsh/``),
not from a list kept here, so a route added later is tried too; a route with a path parameter this
test cannot fill fails it until it is taught. Each route is called with every method, each body
shape the API knows (a tool call, a session, a cwd, MCP messages) and the query parameters the
routes take, by a named reader (bob) and by a token-only one, in a session that does not exist
and in one that does. Around every request the real state file (every table), the spill files and
the workspace are compared: nothing may change, except what an admitted tool call of the reader
in the existing session records (its own call rows, observations and saved results, in that
session). Another caller's progress is running all along, under the id every request names, and
alice's JupyterLab page (the one the tab routes name) keeps what it reported: a reader can neither
replace it, poll it nor answer for it.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import urllib.parse
from pathlib import Path

import pytest
from servers import ALICE, BOB, TWO_USERS
from tornado.routing import PathMatches

from dsh_jupyter.core.documents import Presence
from dsh_jupyter.core.policy import ANONYMOUS, Caller
from dsh_jupyter.core.state.spills import session_folder
from dsh_jupyter.core.state.store import session_key

pytestmark = [
    pytest.mark.server_config(TWO_USERS),
    pytest.mark.dsh_settings(mcp_json_response=True, glob_max_results=2, grep_max_matches=2),
]

SESSION_REFUSED = "a caller without contents:write cannot create sessions; use an existing session or default"
FRESH, EXISTING = "made-by-a-reader", "shared"
PROGRESS_ID, PROGRESS_TEXT = "p1", "alice's search: 1,204 matches in 310 files so far"
ALICES_PAGE = "a11ce5a11ce5a11ce5a11ce5a11ce5aa"  # a JupyterLab page of alice's with notes.txt open
METHODS = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")
ARGS = {
    "list": {},
    "glob": {"pattern": "*"},
    "find": {"query": "a"},
    "grep": {"pattern": "e"},
    "read": {"file_path": "notes.txt"},
    "list_dir": {"path": "."},
    "write": {"file_path": "planted.txt", "content": "x"},
    "edit": {"file_path": "notes.txt", "old_string": "first", "new_string": "gone"},
    "edit_cells": {"file_path": "nb.ipynb", "operations": [{"op": "clear_outputs"}]},
    "move": {"source": "notes.txt", "destination": "moved.txt"},
    "replace": {"pattern": "e", "replacement": "E"},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


def dsh_routes(app) -> list[tuple[str, PathMatches]]:
    """``(pattern, matcher)`` of every rule under ``/dsh/`` in the running application."""
    found = []

    def walk(router) -> None:
        for rule in router.rules:
            if hasattr(rule.target, "rules"):
                walk(rule.target)
            elif isinstance(rule.matcher, PathMatches) and "/dsh/" in rule.matcher.regex.pattern:
                found.append((rule.matcher.regex.pattern, rule.matcher))

    walk(app.default_router)
    walk(app.wildcard_router)
    return found


def fills(pattern: str, matcher: PathMatches, session: str, tools: list[str]) -> list[tuple[str, str | None]]:
    """``(path, tool)`` for every way this test fills the route's parameters."""
    names = sorted(matcher.regex.groupindex, key=matcher.regex.groupindex.get)
    options = {"session": [session], "progress_id": [PROGRESS_ID], "name": [*tools, "nope"], "client": [ALICES_PAGE]}
    unknown = [n for n in names if n not in options]
    assert not unknown, f"route {pattern} has a parameter {unknown} this test cannot fill: teach it"
    combos: list[dict[str, str]] = [{}]
    for name in names:
        combos = [{**c, name: v} for c in combos for v in options[name]]
    out = []
    for combo in combos:  # (tornado's own reverse trips over the "%40" of the tests' base_url)
        path = re.sub(
            r"\(\?P<(\w+)>[^)]*\)",
            lambda m, c=combo: urllib.parse.quote(c[m.group(1)], safe=""),
            pattern.removesuffix("$"),
        )
        assert not re.search(r"[()\[\]*+?\\^$|]", path), f"route {pattern}: teach this test to fill it"
        out.append((path, combo.get("name")))
    return out


def bodies(method: str, session: str, tool: str | None) -> list[bytes | None]:
    if method in ("GET", "HEAD", "OPTIONS", "DELETE"):
        return [None]
    shapes: list[object] = [
        {"session": session, "args": ARGS.get(tool or "list", {}), "progress_id": PROGRESS_ID},
        {"id": session, "cwd": "."},
        {"cwd": "."},
    ]
    if method == "POST":
        shapes += [
            INIT,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": tool or "list", "arguments": ARGS.get(tool or "list", {})},
            },
        ]
    return [json.dumps(s).encode() for s in shapes]


def snapshot(state_path: Path, spill_root: Path, root: Path) -> dict[str, set[str]]:
    """Every row of every table of the state file, every spill file and every entry of the root."""
    db = sqlite3.connect(f"file:{state_path}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    try:
        tables = [
            r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        ]
        out = {t: {json.dumps(dict(r), sort_keys=True) for r in db.execute(f"SELECT * FROM {t}")} for t in tables}
    finally:
        db.close()
    for label, top in (("spill files", spill_root), ("root", root)):
        entries = set()
        for folder, dirs, files in os.walk(top):
            for name in dirs + files:
                st = os.lstat(os.path.join(folder, name))
                entries.add(json.dumps([os.path.relpath(os.path.join(folder, name), top), st.st_size, st.st_mtime_ns]))
        out[label] = entries
    return out


def changes(before: dict[str, set[str]], after: dict[str, set[str]]) -> dict[str, tuple[list, list]]:
    return {
        k: (sorted(before.get(k, set()) - after.get(k, set())), sorted(after.get(k, set()) - before.get(k, set())))
        for k in set(before) | set(after)
        if before.get(k) != after.get(k)
    }


def what_an_admitted_call_may_change(diff: dict, key: str, quota_owner: str) -> list[str]:
    """What in ``diff`` a reader's admitted tool call in session ``key`` may not have changed."""
    wrong = []
    for table, (gone, new) in diff.items():
        rows = [json.loads(r) for r in gone + new]
        if table == "calls":
            ok = all(r["session"] == key and r["read_only"] == 1 for r in rows)
        elif table == "call_totals":
            ok = True
        elif table == "observations":
            ok = all(r["session"] == key for r in rows)
        elif table == "spills":
            ok = all(r["session"] == key and r["user"] == quota_owner for r in rows)
        elif table == "sessions":  # updated, never made: the count of calls its bounds dropped
            ok = all(r["key"] == key for r in rows) and len(gone) == len(new)
        elif table == "spill files":  # its own saved results, made or removed by its quota
            folder = session_folder(key)
            ok = all(json.loads(r)[0] == folder or json.loads(r)[0].startswith(folder + "/") for r in gone + new)
        else:
            ok = False
        if not ok:
            wrong.append(table)
    return wrong


def is_tool_result(status: int, data: object) -> bool:
    if status != 200 or not isinstance(data, dict):
        return False
    return {"tool", "callId", "isError"} <= set(data) or (data.get("jsonrpc") == "2.0" and "result" in data)


async def prepare(jp_serverapp, api):
    """alice's session with saved results, an observation and calls; alice's search running
    (its entry: end it when done)."""
    for _ in range(2):  # two saved results: one for the session, one the readers' spill routes name
        status, data = await api(
            "POST", "tools", "grep", body={"session": EXISTING, "args": {"pattern": "e"}}, headers=ALICE
        )
        assert status == 200 and data["value"]["spill"], data
    locator = data["value"]["spill"]
    status, _ = await api(
        "POST", "tools", "read", body={"session": EXISTING, "args": {"file_path": "notes.txt"}}, headers=ALICE
    )
    assert status == 200
    status, _ = await api(
        "POST",
        "tabs",
        ALICES_PAGE,
        headers=ALICE,
        body={"documents": [{"path": "notes.txt", "kind": "file", "dirty": True, "tabs": 1}]},
    )
    assert status == 200
    ws = jp_serverapp.web_app.settings["dsh_jupyter_workspace"]
    alice = Caller("rest", "alice")
    reporter = ws.progress.start(alice.identity, PROGRESS_ID)
    reporter.report(PROGRESS_TEXT)
    return ws, locator, reporter


async def sweep(
    client, app, ws, headers: dict, quota_owner: str, session: str, locator: str, paths: tuple[Path, Path, Path]
):
    """Every route, method and body for the reader with ``headers``; a list of what went wrong,
    and how many requests were answered as admitted tool calls."""
    tools = list(ws.registry)
    query = urllib.parse.urlencode({"session": session, "locator": locator, "path": ".", "limit": "3"})
    key = session_key(ws.root, session)
    wrong: list[str] = []
    admitted = 0
    routes = dsh_routes(app)
    assert len(routes) >= 12, routes

    async def one(method: str, path: str, body: bytes | None, extra: dict | None = None):
        nonlocal admitted
        before = snapshot(*paths)
        response = await client.fetch(
            f"{path}?{query}",
            method=method,
            body=body,
            raise_error=False,
            allow_nonstandard_methods=True,
            request_timeout=30,
            headers={**MCP_HEADERS, **headers, **(extra or {})},
        )
        raw = response.body or b""
        try:
            data = json.loads(raw) if raw else None
        except ValueError:
            data = raw.decode("utf-8", "replace")
        diff = changes(before, snapshot(*paths))
        what = f"{method} {path} {body[:80] if body else ''!r} -> {response.code}"
        if PROGRESS_TEXT.encode() in raw:
            wrong.append(f"{what}: showed alice's progress")
        if is_tool_result(response.code, data) and method == "POST" and session == EXISTING:
            admitted += 1
            bad = what_an_admitted_call_may_change(diff, key, quota_owner) if diff else []
            if bad:
                wrong.append(f"{what}: changed {bad}: {str(diff)[:600]}")
        elif diff:
            wrong.append(f"{what}: changed {str(diff)[:600]}")
        return response, data

    for pattern, matcher in routes:
        for path, tool in fills(pattern, matcher, session, tools):
            for method in METHODS:
                for body in bodies(method, session, tool):
                    response, _ = await one(method, path, body)
                    mcp_session = response.headers.get("mcp-session-id")
                    if method == "POST" and mcp_session:  # a whole MCP exchange: every tool, called
                        extra = {"Mcp-Session-Id": mcp_session, "MCP-Protocol-Version": "2025-06-18"}
                        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
                        await one("POST", path, note, extra)
                        for name in tools:
                            call = {
                                "jsonrpc": "2.0",
                                "id": 3,
                                "method": "tools/call",
                                "params": {"name": name, "arguments": ARGS[name]},
                            }
                            await one("POST", path, json.dumps(call).encode(), extra)
                        await one("DELETE", path, None, extra)
    return wrong, admitted


READERS = {"bob": (BOB, "bob"), "token-only": (None, ANONYMOUS)}


@pytest.mark.parametrize("session", [FRESH, EXISTING])
@pytest.mark.parametrize("reader", list(READERS))
async def test_no_route_changes_state_for_a_reader(
    jp_serverapp, api, http_server_client, jp_auth_header, state_path, spill_root, jp_root_dir, reader, session
):
    ws, locator, alices = await prepare(jp_serverapp, api)
    auth, quota_owner = READERS[reader]
    paths = (state_path, spill_root, jp_root_dir)
    start = snapshot(*paths)
    wrong, admitted = await sweep(
        http_server_client, jp_serverapp.web_app, ws, auth or jp_auth_header, quota_owner, session, locator, paths
    )
    assert not wrong, "\n".join(wrong)
    sessions = {json.loads(r)["name"] for r in snapshot(*paths)["sessions"]}
    assert sessions == {json.loads(r)["name"] for r in start["sessions"]} == {EXISTING}  # none was made
    if session == EXISTING:
        assert admitted > 10  # the reader's tool calls ran (over REST and MCP) and changed only their own
    else:
        assert admitted == 0 and snapshot(*paths) == start
    # alice's progress went on untouched: nobody else's request saw, replaced or ended it
    assert ws.call_progress(PROGRESS_ID, Caller("rest", "alice")) == {"running": True, "progress": PROGRESS_TEXT}
    tabs = jp_serverapp.web_app.settings["dsh_jupyter_tabs"]
    assert tabs.presence(str(jp_root_dir / "notes.txt")) == Presence(shared=False, unsaved=True, tabs=1)
    assert not (jp_root_dir / "planted.txt").exists() and (jp_root_dir / "notes.txt").exists()
    assert os.path.exists(locator)  # alice's saved result was never pushed out
    alices.end()


def test_the_sweep_sees_a_route_that_creates_state_for_a_reader(jp_root_dir, state_path, spill_root, tmp_path):
    """The checks themselves: a session created, a call row of the owner's, a file, all caught."""
    state_path.parent.mkdir(parents=True, exist_ok=True)
    spill_root.mkdir(parents=True, exist_ok=True)
    from dsh_jupyter import Workspace

    ws = Workspace(jp_root_dir, state_path=state_path, spill_root=str(spill_root))
    paths = (state_path, spill_root, jp_root_dir)
    before = snapshot(*paths)
    ws.create_session("x")
    ws.run("list")
    (jp_root_dir / "planted.txt").write_text("x")
    diff = changes(before, snapshot(*paths))
    assert set(diff) >= {"sessions", "calls", "root"}
    key = session_key(ws.root, "default")
    assert set(what_an_admitted_call_may_change(diff, key, "bob")) >= {"sessions", "calls", "root"}


def test_route_parameters_are_filled_or_named():
    matcher = PathMatches(r"/dsh/api/things/(?P<thing>[^/]+)$")
    with pytest.raises(AssertionError, match=re.escape("['thing'] this test cannot fill")):
        fills(matcher.regex.pattern, matcher, "s", ["list"])


async def test_a_session_that_does_not_exist_gets_the_same_answer_on_every_route(
    api, http_server_client, jp_base_url, state_path
):
    """What a reader and a writer are told when they name a session nobody made; only a writer's
    POST makes it, recorded as that writer."""

    def sessions() -> set[str]:
        db = sqlite3.connect(f"file:{state_path}?mode=ro", uri=True)
        try:
            return {r[0] for r in db.execute("SELECT name FROM sessions")}
        finally:
            db.close()

    await api("POST", "tools", "list", body={"args": {}}, headers=ALICE)  # the state file exists
    uses = [
        ("GET", ("browse",), {"session": "ghost"}, None),
        ("GET", ("spill",), {"session": "ghost", "locator": "~/x"}, None),
        ("POST", ("tools", "list"), None, {"session": "ghost", "args": {}}),
    ]
    records = [("sessions", "ghost"), ("sessions", "ghost", "calls"), ("sessions", "ghost", "spills")]
    for method, parts, params, body in uses:
        status, data = await api(method, *parts, params=params, body=body, headers=BOB)
        assert (status, data["code"], data["message"]) == (403, "FORBIDDEN", SESSION_REFUSED), (parts, data)
    reply = await http_server_client.fetch(
        f"{jp_base_url}dsh/mcp?session=ghost",
        method="POST",
        raise_error=False,
        body=json.dumps(INIT),
        headers={**MCP_HEADERS, **BOB},
    )
    assert reply.code == 403 and json.loads(reply.body)["error"]["message"] == SESSION_REFUSED
    for headers in (BOB, ALICE):
        for parts in records:
            status, data = await api("GET", *parts, headers=headers)
            assert (status, data["code"], data["message"]) == (404, "SESSION_NOT_FOUND", 'no session "ghost"')
    # a writer's GETs answer as for a session with nothing in it, and make none
    status, listing = await api("GET", "browse", params={"session": "ghost"}, headers=ALICE)
    assert status == 200 and "notes.txt" in [e["name"] for e in listing["entries"]]
    status, page = await api("GET", "spill", params={"session": "ghost", "locator": "notes.txt"}, headers=ALICE)
    assert status == 200 and page["value"]["code"] == "FS_NOT_FOUND"
    assert page["text"] == 'Error: cannot read "notes.txt": not found'
    assert sessions() == {"default"}
    status, _ = await api("POST", "tools", "list", body={"session": "ghost", "args": {}}, headers=ALICE)
    assert status == 200
    status, info = await api("GET", "sessions", "ghost", headers=BOB)
    assert status == 200 and info["user"] == "alice"
