"""A call's progress is its caller's: two users, and token-only callers, on one real server.

alice and bob (``servers.TWO_USERS``) name their calls with the same progress id; each sees only
their own call running, and neither's call takes the other's progress away when it starts or
ends. The searches hang (a stand-in rg that sleeps) until their clients give up, so each call
runs exactly as long as the test needs; when a client leaves, its call ends (its rg is killed).
"""

from __future__ import annotations

import asyncio
import json

import pytest
from servers import ALICE, BOB, TWO_USERS, hanging_rg_settings, processes_with, wait_for

dsh_settings = hanging_rg_settings(listing_hangs=False)
pytestmark = pytest.mark.server_config(TWO_USERS)

NOT_RUNNING = {"running": False, "progress": None}
HUNG = {"running": True, "progress": None}  # a search that has found nothing yet


def start(jp_fetch, headers: dict, progress_id: str, seconds: float, tool: str = "grep") -> asyncio.Future:
    """A call posted with ``progress_id`` whose client gives up after ``seconds``."""
    body = {"args": {"pattern": "hello"} if tool == "grep" else {}, "progress_id": progress_id}
    return asyncio.ensure_future(
        jp_fetch(
            "dsh",
            "api",
            "tools",
            tool,
            method="POST",
            body=json.dumps(body),
            headers=dict(headers),
            request_timeout=seconds,
            raise_error=False,
        )
    )


async def test_two_users_see_and_keep_only_their_own_progress(jp_fetch, api, jp_auth_header, marker):
    async def progress(headers: dict) -> dict:
        status, data = await api("GET", "progress", "p", headers=dict(headers))
        assert status == 200
        return data

    alices = start(jp_fetch, ALICE, "p", 8)
    assert await wait_for(lambda: len(processes_with(marker)) == 1, 10), "alice's search never started"
    assert await progress(ALICE) == HUNG
    assert await progress(BOB) == NOT_RUNNING  # the same id, another caller: not bob's to see
    assert await progress(jp_auth_header) == NOT_RUNNING  # nor a token-only caller's

    bobs = start(jp_fetch, BOB, "p", 2)  # bob's own call under the same id
    assert await wait_for(lambda: len(processes_with(marker)) == 2, 10), "bob's search never started"
    assert await progress(BOB) == HUNG and await progress(ALICE) == HUNG
    await asyncio.gather(bobs, return_exceptions=True)  # bob gives up: his call ends ...
    assert await wait_for(lambda: len(processes_with(marker)) == 1, 10)
    for _ in range(50):  # ... and its end took nothing of alice's
        if (await progress(BOB))["running"] is False:
            break
        await asyncio.sleep(0.05)
    assert await progress(BOB) == NOT_RUNNING
    assert await progress(ALICE) == HUNG
    # quick calls of others under the same id neither end nor replace alice's
    for headers in (BOB, jp_auth_header):
        status, data = await api("POST", "tools", "list", body={"args": {}, "progress_id": "p"}, headers=dict(headers))
        assert status == 200 and not data["isError"], data
        assert await progress(ALICE) == HUNG
    await asyncio.gather(alices, return_exceptions=True)
    assert await wait_for(lambda: not processes_with(marker), 10)
    for _ in range(50):
        if (await progress(ALICE))["running"] is False:
            break
        await asyncio.sleep(0.05)
    assert await progress(ALICE) == NOT_RUNNING


async def test_token_only_callers_are_the_token_they_hold(jp_fetch, api, jp_auth_header, marker):
    """Jupyter names each token-only request anew; the token is what tells them apart, so the
    request that asks sees the call another request with the same token started, and nobody else does."""
    call = start(jp_fetch, jp_auth_header, "q", 4)
    assert await wait_for(lambda: len(processes_with(marker)) == 1, 10)
    assert await api("GET", "progress", "q", headers=dict(jp_auth_header)) == (200, HUNG)
    for headers in (ALICE, BOB):
        assert await api("GET", "progress", "q", headers=dict(headers)) == (200, NOT_RUNNING)
    await asyncio.gather(call, return_exceptions=True)
    assert await wait_for(lambda: not processes_with(marker), 10)
