"""Authentication, authorization and XSRF on /dsh/api, as Jupyter's own API handlers do them."""

from __future__ import annotations

import json
import re
import urllib.parse
import warnings

import pytest
from jupyter_server.auth.authorizer import Authorizer
from tornado.httpclient import HTTPClientError

from dsh_jupyter import Workspace

TOKEN = "secret"
LOCKED = {"ServerApp": {"allow_unauthenticated_access": False}, "IdentityProvider": {"token": TOKEN}}


class ReadOnlyAuthorizer(Authorizer):
    """Allows everything except writing contents."""

    def is_authorized(self, handler, user, action, resource):
        return not (resource == "contents" and action == "write")


class NoContentsAuthorizer(Authorizer):
    """Refuses every action on contents."""

    def is_authorized(self, handler, user, action, resource):
        return resource != "contents"


GET_ROUTES = [
    ("tools",),
    ("sessions",),
    ("sessions", "default"),
    ("sessions", "default", "calls"),
    ("sessions", "default", "spills"),
    ("openapi.json",),
]


@pytest.mark.server_config(LOCKED)
@pytest.mark.parametrize(
    "headers", [{"Authorization": ""}, {"Authorization": "token wrong"}], ids=["no-token", "wrong-token"]
)
async def test_missing_or_wrong_token_is_refused(api, headers, jp_root_dir):
    for parts in GET_ROUTES:
        status, data = await api("GET", *parts, headers=dict(headers))
        assert status == 403, (parts, data)
        assert TOKEN not in json.dumps(data) and str(jp_root_dir) not in json.dumps(data)
    status, _ = await api("GET", "spill", params={"locator": "x"}, headers=dict(headers))
    assert status == 403
    for parts, body in [
        (("tools", "list"), {"args": {}}),
        (("tools", "write"), {"args": {"file_path": "x", "content": ""}}),
        (("sessions",), {"id": "x"}),
    ]:
        status, _ = await api("POST", *parts, body=body, headers=dict(headers))
        assert status == 403, parts
    status, _ = await api("DELETE", "sessions", "default", headers=dict(headers))
    assert status == 403
    assert not (jp_root_dir / "x").exists()


async def test_every_handler_method_is_authenticated(jp_configurable_serverapp, jp_server_config):
    """Jupyter warns about extension handlers a locked-down server would leave open; none of ours."""
    jp_server_config["ServerApp"]["allow_unauthenticated_access"] = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jp_configurable_serverapp(config=jp_server_config)
    assert not [w for w in caught if "without @allow_unauthenticated" in str(w.message)]
    from dsh_jupyter.server.handlers import route_table

    for _, handler in route_table():
        for method in ("get", "post", "delete"):
            fn = getattr(handler, method)
            if fn.__qualname__.startswith("RequestHandler"):
                continue
            assert fn.__wrapped__.__qualname__.startswith(handler.__name__), (handler, method)


@pytest.mark.server_config(LOCKED)
async def test_right_token_is_accepted(api):
    status, data = await api("GET", "tools", headers={"Authorization": f"token {TOKEN}"})
    assert status == 200 and data[0]["name"] == "list"
    status, data = await api("POST", "tools", "list", body={"args": {}}, headers={"Authorization": f"token {TOKEN}"})
    assert status == 200 and data["isError"] is False


@pytest.mark.server_config({"ServerApp": {"authorizer_class": ReadOnlyAuthorizer}})
async def test_read_only_user_can_read_but_not_write(api, jp_root_dir, state_path, spill_root):
    # a session someone with write access made: a read-only caller may use it, not create one
    Workspace(jp_root_dir, state_path=state_path, spill_root=str(spill_root)).create_session("ro")
    for name, args in [
        ("list", {}),
        ("read", {"file_path": "notes.txt"}),
        ("glob", {"pattern": "*.py"}),
        ("grep", {"pattern": "hello"}),
        ("list_dir", {"path": "."}),
    ]:
        status, data = await api("POST", "tools", name, body={"session": "ro", "args": args})
        assert (status, data["isError"]) == (200, False), (name, data)
    # the session has observed notes.txt, so only authorization can stop these
    for name, args in [
        ("write", {"file_path": "notes.txt", "content": "gone"}),
        ("edit", {"file_path": "notes.txt", "old_string": "first", "new_string": "x"}),
        ("write", {"file_path": "fresh.txt", "content": "new"}),
        ("move", {"source": "notes.txt", "destination": "moved.txt"}),
    ]:
        status, data = await api("POST", "tools", name, body={"session": "ro", "args": args})
        assert status == 403, (name, data)
        assert data["code"] == "FORBIDDEN"
        assert "write" in data["message"]
    assert (jp_root_dir / "notes.txt").read_text() == "first line\nsecond line\n"
    assert not (jp_root_dir / "fresh.txt").exists() and not (jp_root_dir / "moved.txt").exists()
    await api("POST", "tools", "list")  # creates the "default" session the GET routes name
    for parts in GET_ROUTES:
        status, _ = await api("GET", *parts)
        assert status == 200, parts
    status, _ = await api("POST", "sessions", body={"id": "ro2"})
    assert status == 403  # a read-only token cannot create sessions ...
    status, data = await api("POST", "tools", "list", body={"session": "ro-new", "args": {}})
    assert status == 403 and "cannot create sessions" in data["message"]  # ... not even implicitly
    status, _ = await api("DELETE", "sessions", "ro2")
    assert status == 403
    # refused calls are not run, so they are not in the call log either
    log = Workspace(jp_root_dir, state_path=state_path, spill_root=str(spill_root)).calls("ro")
    assert [c["tool"] for c in log["calls"]] == ["list", "read", "glob", "grep", "list_dir"]


@pytest.mark.server_config({"ServerApp": {"authorizer_class": NoContentsAuthorizer}})
async def test_user_without_contents_read_is_refused_everywhere(api):
    for parts in GET_ROUTES:
        status, _ = await api("GET", *parts)
        assert status == 403, parts
    status, _ = await api("POST", "tools", "list", body={"args": {}})
    assert status == 403


# -- XSRF: a browser (cookie-authenticated) POST needs the _xsrf token, as in Jupyter's own API --


def _cookies(response) -> dict:
    jar = {}
    for header in response.headers.get_list("Set-Cookie"):
        name, _, rest = header.partition("=")
        jar[name.strip()] = rest.split(";", 1)[0]
    return jar


async def _browser_login(jp_fetch) -> dict:
    page = await jp_fetch("login", method="GET", raise_error=False, headers={"Authorization": ""})
    jar = _cookies(page)
    xsrf = jar["_xsrf"]
    cookie = "; ".join(f"{k}={v}" for k, v in jar.items())
    form = urllib.parse.urlencode({"password": TOKEN, "_xsrf": xsrf})
    try:
        done = await jp_fetch(
            "login", method="POST", body=form, follow_redirects=False, headers={"Authorization": "", "Cookie": cookie}
        )
    except HTTPClientError as exc:  # the 302 after a successful login
        done = exc.response
    jar.update(_cookies(done))
    assert any(re.match(r"username-", k) for k in jar), jar
    return jar


@pytest.mark.server_config(LOCKED)
async def test_browser_post_needs_the_xsrf_token(api, jp_fetch):
    jar = await _browser_login(jp_fetch)
    cookie = "; ".join(f"{k}={v}" for k, v in jar.items())
    browser = {"Authorization": "", "Cookie": cookie}
    status, _ = await api("GET", "tools", headers=dict(browser))
    assert status == 200  # cookie-authenticated GET
    status, data = await api("POST", "tools", "list", body={"args": {}}, headers=dict(browser))
    assert status == 403 and "_xsrf" in data["message"]
    status, data = await api(
        "POST", "tools", "list", body={"args": {}}, headers={**browser, "X-XSRFToken": jar["_xsrf"]}
    )
    assert (status, data["isError"]) == (200, False)
