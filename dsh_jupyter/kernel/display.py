"""One display rule for everything ``%dsh`` returns: a widget where one can live, true text everywhere.

Why it exists: a magic's value is shown by whatever frontend runs the kernel. JupyterLab and
Notebook 7 render a widget; terminal IPython prints ``text/plain``; nbconvert's HTML exporter
skips a widget view it has no saved state for and falls back to ``text/html``. So every returned
object offers all three from one ``_repr_mimebundle_``: the widget view, ``text/plain`` equal to
the exact model text, and ``text/html`` a static table with the model's footer.

A widget view outlives its kernel only in the saved notebook, where ipywidgets, which JupyterLab
prefers to the HTML, finds no model and shows an error. So beside a widget view the bundle holds
``DSH_VIEW_MIME``, which the JupyterLab extension renders above the widget view: the live widget
while its model lives, else the saved ``text/html`` (``labextension_shim/src/savedoutput.ts``).
Frontends that do not know it ignore it.

What it must never do: build a widget when no kernel can carry it (terminal IPython, a plain
``InteractiveShell``), or when the frontend asked for other mime types only; or let a widget
failure hide the text (the text and the table are always in the bundle).
"""

from __future__ import annotations

import logging

__all__ = ["DSH_VIEW_MIME", "WIDGET_MIME", "bundle", "frontend_has_widgets"]

log = logging.getLogger(__name__)

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# Our own key beside the widget view; its value names where the two forms are, for the renderer.
DSH_VIEW_MIME = "application/vnd.dsh-jupyter.view+json"
DSH_VIEW = {"live": WIDGET_MIME, "saved": "text/html"}


def frontend_has_widgets() -> bool:
    """True inside a Jupyter kernel (a frontend is attached that may render widgets)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - the kernel layer runs inside IPython
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _wanted(mime: str, include, exclude) -> bool:
    if exclude and mime in exclude:
        return False
    return not include or mime in include


def bundle(obj, include=None, exclude=None) -> dict:
    """``obj``'s text and HTML, plus its widget view (and ``DSH_VIEW_MIME`` beside it) when a kernel
    frontend may render it.

    ``obj`` has ``text``, ``_html()`` and ``widget()`` (which may return None: not every result
    has a navigable view).
    """
    data = {}
    if _wanted(WIDGET_MIME, include, exclude) and frontend_has_widgets():
        try:
            view = obj.widget()
        except Exception:  # a widget bug must not hide the result; the text below still shows
            log.exception("could not build the dsh widget")
            view = None
        if view is not None:
            shown = view._repr_mimebundle_()
            if isinstance(shown, tuple):  # anywidget answers (data, metadata)
                shown = shown[0]
            if WIDGET_MIME in shown:
                data[DSH_VIEW_MIME] = dict(DSH_VIEW)
                data[WIDGET_MIME] = shown[WIDGET_MIME]
    data["text/plain"] = obj.text
    data["text/html"] = obj._html()
    return {k: v for k, v in data.items() if _wanted(k, include, exclude)}
