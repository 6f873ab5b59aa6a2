"""dsh-jupyter: a workspace explorer whose tool output never passes a page off as the whole."""

from ._version import __version__
from .core.workspace import Result, Workspace

__all__ = ["Result", "Workspace", "__version__"]


def _jupyter_server_extension_points() -> list[dict]:
    """The Jupyter server extension (``jpserver_extensions: {"dsh_jupyter": true}``).

    The server layer is imported here, lazily, so ``import dsh_jupyter`` never imports Jupyter.
    """
    from .server.app import DshJupyterApp

    return [{"module": "dsh_jupyter", "app": DshJupyterApp}]


def load_ipython_extension(ip) -> None:
    """``%load_ext dsh_jupyter``: register the ``%dsh`` magic (the kernel layer is imported here, lazily)."""
    from .kernel import load

    load(ip)


def unload_ipython_extension(ip) -> None:
    """``%unload_ext dsh_jupyter``: remove the ``%dsh`` magic."""
    from .kernel import unload

    unload(ip)


def _jupyter_labextension_paths() -> list[dict]:
    """The prebuilt JupyterLab extension (built from ``labextension_shim/`` into ``labextension/``).

    Wheels install it through shared-data; this hook is what ``jupyter labextension develop .``
    reads to symlink the build folder instead (see docs/labextension.md).
    """
    return [{"src": "labextension", "dest": "dsh-jupyter-shim"}]
