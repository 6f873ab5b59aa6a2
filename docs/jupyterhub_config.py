# A JupyterHub configuration for dsh-jupyter: local users, their homes as roots, owners write,
# readers read. Tested as is by tests/hub/test_hub.py (which sets the DSH_HUB_* variables below;
# without them the defaults are those of a small single-machine hub).
#
#     jupyterhub -f jupyterhub_config.py
#
# Every single-user server has the dsh_jupyter extension (install dsh-jupyter where
# jupyterhub-singleuser runs); nothing else below is needed for the tools themselves. What this
# file adds is a read/write split: stock JupyterHub lets every token that may access a server
# write through it, as Jupyter's own /api/contents does.
import json
import os

c = get_config()  # noqa: F821 (provided by JupyterHub)

port, hub_port, proxy_api_port = (int(p) for p in os.environ.get("DSH_HUB_PORTS", "8000,8081,8001").split(","))

# -- network: this machine only ----------------------------------------------------------------
c.JupyterHub.bind_url = f"http://127.0.0.1:{port}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = hub_port
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.command = [os.environ.get("DSH_HUB_PROXY", "configurable-http-proxy")]

# -- users: local accounts; their servers run as them, rooted at their homes ---------------------
users = os.environ.get("DSH_HUB_USERS", "alice,bob").split(",")
c.Authenticator.allowed_users = set(users)
c.JupyterHub.authenticator_class = "dummy"  # a shared password, for a test or a demo only
c.DummyAuthenticator.password = os.environ.get("DSH_HUB_PASSWORD", "change me")
c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
c.Spawner.cmd = [os.environ.get("DSH_HUB_SINGLEUSER", "jupyterhub-singleuser")]
c.Spawner.notebook_dir = "~"  # the root of the tools is the home, as for Jupyter itself
c.Spawner.start_timeout = 120

# -- the read/write split: writing needs custom:dsh:write for that server -----------------------
# dsh_jupyter.hub.WriteScopeAuthorizer refuses contents:write (the write and edit tools, and
# Jupyter's own contents API) unless the token has custom:dsh:write for the server.
c.Spawner.args = ["--ServerApp.authorizer_class=dsh_jupyter.hub.WriteScopeAuthorizer"]
c.JupyterHub.custom_scopes = {
    "custom:dsh:write": {"description": "Write and edit files on a server through the dsh tools and the contents API."},
}
readers = json.loads(os.environ.get("DSH_HUB_READERS", "{}"))  # {"bob": "alice"}: bob may read alice's server
c.JupyterHub.load_roles = [
    # owners keep everything they have by default, and may write on their own servers
    {"name": "user", "scopes": ["self", "custom:dsh:write!user"]},
    *(
        {"name": f"reads-{owner}", "scopes": [f"access:servers!server={owner}/"], "users": [reader]}
        for reader, owner in readers.items()
    ),
]

# A service token for scripts (the test uses it to start servers and make tokens).
if os.environ.get("DSH_HUB_SERVICE_TOKEN"):
    c.JupyterHub.services = [{"name": "dsh-admin", "api_token": os.environ["DSH_HUB_SERVICE_TOKEN"]}]
    c.JupyterHub.load_roles.append(
        {
            "name": "dsh-admin",
            "services": ["dsh-admin"],
            "scopes": ["admin:users", "admin:servers", "tokens", "read:users"],
        }
    )

# Named servers share a home (and so, by default, one state file: sessions are kept apart by root,
# but two servers on the same root share them). To give each server its own state file:
# c.JupyterHub.allow_named_servers = True
# c.Spawner.environment = {
#     "DSH_STATE_PATH": lambda spawner: f"~/.local/share/jupyter/dsh_jupyter/{spawner.name or 'default'}.sqlite",
# }
