"""The server keeps serving under abuse: deep JSON, hung searches, foreign origins, session moves."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from servers import hanging_rg_settings, processes_with, wait_for

from dsh_jupyter.core.registry import TOOLS

from .test_server_auth import ReadOnlyAuthorizer

# A grep over a folder also lists its notebooks (rg --files, alongside the search): that answers
# at once with none, so each hung search is one process, as the pool counts them.
dsh_settings = hanging_rg_settings(listing_hangs=False)


async def test_deeply_nested_json_is_a_bad_request_not_a_crash(api):
    for body in ("[" * 100_000 + "]" * 100_000, '{"args": ' * 100_000 + "{}" + "}" * 100_000):
        status, data = await api("POST", "tools", "list", body=body)
        assert status == 400, data
        assert data["code"] == "BODY_INVALID"
        assert data["message"] in ("request body is nested too deeply", "request body must be a JSON object")
    status, data = await api("POST", "tools", "list", body={"args": {}})
    assert status == 200 and not data["isError"]  # and it keeps serving


async def test_hung_searches_never_delay_list_or_read(jp_fetch, api, marker):
    """8 searches hang at once (the default search pool is 4): list and read are served at once."""
    greps = [
        asyncio.ensure_future(
            jp_fetch(
                "dsh",
                "api",
                "tools",
                "grep",
                method="POST",
                body='{"args": {"pattern": "hello"}}',
                request_timeout=6,
                raise_error=False,
            )
        )
        for _ in range(8)
    ]
    assert await wait_for(lambda: len(processes_with(marker)) >= 4, 10), "the stand-in searches never started"
    worst = 0.0
    for _ in range(10):
        for name, args in (("list", {"path": "src"}), ("read", {"file_path": "notes.txt"})):
            started = time.monotonic()
            status, data = await api("POST", "tools", name, body={"args": args})
            worst = max(worst, time.monotonic() - started)
            assert status == 200 and not data["isError"], data
    # Each call takes a few ms; queued behind the searches it would take 6 s. The bound is loose
    # for shared CI machines; benchmarks/bench_confinement.py prints the real figure.
    assert worst < 2.0, f"a list or read took {worst:.2f} s while 8 searches hung"
    assert len(processes_with(marker)) == 4, "searches beyond the search pool must queue, not run"
    # the clients give up (their connections close): every search is killed or never started
    await asyncio.gather(*greps, return_exceptions=True)
    assert await wait_for(lambda: not processes_with(marker), 10), processes_with(marker)


@pytest.mark.dsh_settings(search_timeout_ms=1000)
@pytest.mark.server_config({"DshJupyter": {"search_threads": 1}})
async def test_a_search_queued_too_long_is_aborted_unstarted(tool, marker):
    results = await asyncio.gather(*(tool("grep", pattern=f"p{i}") for i in range(3)))
    codes = [r["value"]["code"] for r in results]
    assert codes == ["SEARCH_ABORTED"] * 3
    waited = [r["value"]["message"] for r in results if "free search slot" in r["value"]["message"]]
    assert waited, [r["value"]["message"] for r in results]
    assert waited[0].startswith("grep waited ") and waited[0].endswith(
        " ms for a free search slot and was not started; try again"
    )
    assert await wait_for(lambda: not processes_with(marker), 5)


# -- CORS --------------------------------------------------------------------------------------

FOREIGN = "http://evil.example"
CORS_CONFIGS = [
    pytest.param({}, id="default"),
    pytest.param({"ServerApp": {"allow_origin": "*"}}, id="allow-any"),
    pytest.param({"ServerApp": {"allow_origin": "http://good.example"}}, id="allow-one"),
    pytest.param(
        {"ServerApp": {"allow_origin_pat": r"http://.*\.good\.example", "allow_credentials": True}},
        id="pattern-with-credentials",
    ),
    pytest.param({"ServerApp": {"allow_credentials": True}}, id="credentials-only"),
]
CORS_HEADERS = (
    "Access-Control-Allow-Origin",
    "Access-Control-Allow-Credentials",
    "Access-Control-Allow-Methods",
    "Access-Control-Allow-Headers",
)


async def _cors(jp_fetch, method, parts, origin, extra=None):
    headers = {"Origin": origin, **(extra or {})}
    response = await jp_fetch(
        *parts,
        method=method,
        headers=headers,
        raise_error=False,
        **({"allow_nonstandard_methods": True} if method == "OPTIONS" else {}),
    )
    return response.code, {h: response.headers.get(h) for h in CORS_HEADERS}


@pytest.mark.parametrize("config", CORS_CONFIGS)
@pytest.mark.parametrize("origin", [FOREIGN, "http://good.example", "http://a.good.example"])
async def test_cors_is_never_more_permissive_than_the_contents_api(jp_fetch, jp_server_config, config, origin):
    for section, values in config.items():
        jp_server_config.setdefault(section, {}).update(values)
    for method, extra in (
        ("GET", None),
        ("OPTIONS", {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"}),
    ):
        theirs = await _cors(jp_fetch, method, ("api", "contents"), origin, extra)
        ours = await _cors(jp_fetch, method, ("dsh", "api", "tools"), origin, extra)
        assert ours[0] == theirs[0], (method, ours, theirs)
        assert ours[1]["Access-Control-Allow-Origin"] == theirs[1]["Access-Control-Allow-Origin"]
        if ours[1]["Access-Control-Allow-Credentials"]:
            assert theirs[1]["Access-Control-Allow-Credentials"]
            assert origin != FOREIGN, "credentials allowed for an origin nobody allowed"


@pytest.mark.server_config({"ServerApp": {"allow_credentials": True}})
async def test_no_credentials_for_a_foreign_origin_even_when_jupyter_would(jp_fetch):
    code, headers = await _cors(jp_fetch, "GET", ("dsh", "api", "tools"), FOREIGN)
    assert code == 200
    assert headers["Access-Control-Allow-Origin"] == FOREIGN  # token-authenticated, as Jupyter allows
    assert headers["Access-Control-Allow-Credentials"] is None
    _, contents = await _cors(jp_fetch, "GET", ("api", "contents"), FOREIGN)
    assert contents["Access-Control-Allow-Credentials"] == "true"  # what Jupyter itself would have sent


# -- sessions: creating never moves; moving needs write; status --------------------------------


async def test_post_never_moves_an_existing_session_and_patch_does(api):
    status, created = await api("POST", "sessions", body={"id": "m", "cwd": "src"})
    assert (status, created["cwd"]) == (201, "src")
    status, data = await api("POST", "sessions", body={"id": "m", "cwd": "docs"})
    assert status == 409 and data["code"] == "SESSION_EXISTS", data
    status, same = await api("POST", "sessions", body={"id": "m", "cwd": "src"})
    assert (status, same["cwd"]) == (200, "src")
    status, moved = await api("PATCH", "sessions", "m", body={"cwd": "docs"})
    assert (status, moved["cwd"]) == (200, "docs")
    status, data = await api("PATCH", "sessions", "nope", body={"cwd": "docs"})
    assert status == 404
    status, data = await api("PATCH", "sessions", "m", body={"cwd": "../.."})
    assert status == 400 and data["code"] == "FS_OUTSIDE_ROOT"


@pytest.mark.server_config({"ServerApp": {"authorizer_class": ReadOnlyAuthorizer}})
async def test_moving_a_session_needs_write_permission(api, jp_root_dir, state_path, spill_root):
    from dsh_jupyter import Workspace

    Workspace(jp_root_dir, state_path=state_path, spill_root=str(spill_root)).create_session("shared")
    status, data = await api("POST", "tools", "list", body={"session": "shared", "args": {}})
    assert status == 200, data  # a read-only caller may use a session others made
    status, data = await api("PATCH", "sessions", "shared", body={"cwd": "src"})
    assert status == 403, data
    status, info = await api("GET", "sessions", "shared")
    assert info["cwd"] == "."


async def test_status_says_how_the_tools_are_confined(api):
    status, data = await api("GET", "status")
    assert status == 200
    assert data["confinement"] in ("landlock", "descriptors-only")
    assert data["resolver"] in ("openat2", "walk")
    assert data["tools"] == [t.name for t in TOOLS]
    assert data["allowHidden"] is False  # Jupyter's ContentsManager default, followed here
    assert data["state"]["available"] is True and data["state"]["journal"] == "wal"
    assert data["state"]["filesystem"] not in ("", None)
    assert json.dumps(data)  # plain JSON
