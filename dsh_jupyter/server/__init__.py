"""The Jupyter server layer: one ``ExtensionApp`` and its REST handlers under ``/dsh/api``.

Why it exists: agents reach a workspace over HTTP through the Jupyter server they already
authenticate against, and kernels started by that server must attach to the same session state.
This package is a thin adapter: it turns HTTP into ``Workspace`` calls and results into JSON.

What it must never do: hold tool logic of its own (that lives in ``dsh_jupyter.core``), run a tool
on the server's event loop, or answer with a traceback, the token or the absolute root. Nothing
outside this package may import it eagerly: ``import dsh_jupyter`` stays free of Jupyter.
"""
