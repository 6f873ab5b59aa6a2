"""JupyterHub: a read-only role, through one custom scope.

Why it exists: with stock JupyterHub every token that may access a server (``access:servers``)
may also write through it, as Jupyter's own ``/api/contents`` allows; there is no read/write
split. ``WriteScopeAuthorizer`` adds one: on a single-user server started with
``--ServerApp.authorizer_class=dsh_jupyter.hub.WriteScopeAuthorizer``, writing contents — the
``write`` and ``edit`` tools, and Jupyter's own contents API — needs the custom scope
``custom:dsh:write`` for this server, besides access to it. Grant it to owners in the hub config
(``"custom:dsh:write!user"`` in the ``user`` role) and leave it out of the roles of readers.

Import it only inside a single-user server: it needs the ``jupyterhub`` package.
"""

from __future__ import annotations

from jupyterhub.singleuser.extension import JupyterHubAuthorizer

__all__ = ["WRITE_SCOPE", "WriteScopeAuthorizer"]

WRITE_SCOPE = "custom:dsh:write"


class WriteScopeAuthorizer(JupyterHubAuthorizer):
    """Every action needs access to this server; writing contents also needs ``custom:dsh:write``."""

    def is_authorized(self, handler, user, action, resource) -> bool:
        if not super().is_authorized(handler, user, action, resource):
            return False
        if resource != "contents" or action != "write":
            return True
        # The same filters as the access scopes (``!server=alice/``, ``!user=alice``), so the
        # scope is granted per server exactly as access is.
        required = {scope.replace("access:servers", WRITE_SCOPE, 1) for scope in self.hub_auth.oauth_scopes}
        return bool(self.hub_auth.check_scopes(required, user.hub_user))
