"""The widgets' one front end: the ES modules in ``front/`` joined into one anywidget ``_esm``.

Why it exists: anywidget loads a view's code from one ES module string (``_esm``) and one style
sheet (``_css``) that travel with the widget's state, so users need no build step and no
JupyterLab extension: the same code runs in JupyterLab, Notebook 7, VS Code and any other
ipywidgets host. The code is kept in small modules (``front/*.js``), each a real ES module
that names what it imports from its neighbours. A module string loaded by anywidget cannot
import its neighbours by relative path, so this joins them, in dependency order, into one
module: each ``import … from "./x.js";`` line is dropped and each ``export `` keyword before a
declaration is removed (``export default`` stays, in ``main.js`` only). Nothing else is
rewritten, so the joined module reads like its parts.

What it must never do: minify, fetch anything at run time, or pull code from anywhere but
``front/``; every view class shares these two strings, so the browser compiles them once.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

__all__ = ["CSS", "ESM", "MODULES", "join_modules"]

FRONT = Path(__file__).with_name("front")

# Dependency order: each module imports only from those before it.
MODULES = ("dom.js", "frame.js", "keys.js", "window.js", "listing.js", "search.js", "calls.js", "main.js")

_IMPORT = re.compile(r'^import\s+\{[^}]*\}\s+from\s+"\./[\w.-]+\.js";[ \t]*\n', re.MULTILINE)
_EXPORT = re.compile(r"^export (?=(?:async\s+)?(?:function|const|let|class)\b)", re.MULTILINE)


def join_modules(sources: list[str]) -> str:
    """The modules as one ES module: relative imports dropped, ``export`` before declarations removed."""
    parts = []
    for text in sources:
        text = _IMPORT.sub("", text)
        parts.append(_EXPORT.sub("", text))
    return "\n".join(parts)


@cache
def _esm() -> str:
    return join_modules([(FRONT / name).read_text(encoding="utf-8") for name in MODULES])


@cache
def _css() -> str:
    return (FRONT / "dsh.css").read_text(encoding="utf-8")


ESM = _esm()
CSS = _css()
