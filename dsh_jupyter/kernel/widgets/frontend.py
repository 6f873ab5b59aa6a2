"""The widgets' one front end, as built: the ES module and style sheet anywidget loads.

Why it exists: anywidget loads a view's code from one ES module (``_esm``) and one style sheet
(``_css``) that travel with the widget's state, so users need no JupyterLab extension: the same
code runs in JupyterLab, Notebook 7, VS Code and any other ipywidgets host. That code is written
as small ES modules in ``labextension_shim/src/widget/``, sharing its element and format helpers
with the JupyterLab extension (``labextension_shim/src/common/``); the npm build that builds the
extension also bundles them with esbuild into ``static/widget.js`` and ``static/widget.css``
beside this file (generated, never committed; in every wheel and editable install). This module
reads those two files once; every view class shares the two strings, so the browser compiles
them once.

What it must never do: build, fetch or rewrite code at run time, or let a view start without its
front end: anywidget takes a missing file's path for the module's text and would draw nothing,
so when a file is missing (a source checkout that was never built) importing this module fails
with ``FrontEndNotBuilt``, which says how to build it.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CSS", "ESM", "STATIC", "FrontEndNotBuilt", "load"]

STATIC = Path(__file__).with_name("static")
FILES = ("widget.js", "widget.css")


class FrontEndNotBuilt(RuntimeError):
    """The built front end is missing: the package was not built (``pip install -e .`` builds it)."""


def load(folder: Path = STATIC) -> tuple[str, str]:
    """The built module and style sheet in ``folder``; ``FrontEndNotBuilt`` when either is missing."""
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        raise FrontEndNotBuilt(
            f"The dsh widgets' front end is not built ({folder / missing[0]} is missing): run "
            "`pip install -e .` in the source checkout, whose build runs npm, or "
            "`npm install && npm run build:widget` in labextension_shim/."
        )
    module, style = (folder / name for name in FILES)
    return module.read_text(encoding="utf-8"), style.read_text(encoding="utf-8")


ESM, CSS = load()
