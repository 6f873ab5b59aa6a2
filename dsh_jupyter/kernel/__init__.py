"""The kernel surface: the ``%dsh`` magic and the navigable widgets, a thin adapter over the core.

``%load_ext dsh_jupyter`` calls ``load(shell)``: it registers ``DshMagics`` and adds it to the
shell's configurables so ``%config DshMagics.<setting> = …`` works. ``unload`` removes both. The
widgets (``dsh_jupyter.kernel.widgets``) are imported only when a result is shown as a widget:
``load`` registers ``_view_for`` with ``kernel.results``, which never imports the widgets itself.
"""

from __future__ import annotations

__all__ = ["load", "unload"]

_KEY = "_dsh_jupyter_magics"


def _view_for(result):
    from .widgets import view_for  # anywidget and ipywidgets are imported only when a view is wanted

    return view_for(result)


def load(shell) -> None:
    from . import results
    from .magic import DshMagics

    results.set_view_factory(_view_for)
    if getattr(shell, _KEY, None) is not None:
        return  # already loaded in this shell
    magics = DshMagics(shell=shell)
    shell.register_magics(magics)
    if magics not in shell.configurables:
        shell.configurables.append(magics)
    setattr(shell, _KEY, magics)


def unload(shell) -> None:
    magics = getattr(shell, _KEY, None)
    if magics is None:
        return
    table = shell.magics_manager.magics
    for kind in ("line", "cell"):
        if getattr(table[kind].get("dsh"), "__self__", None) is magics:
            del table[kind]["dsh"]
    shell.magics_manager.registry.pop(type(magics).__name__, None)
    if magics in shell.configurables:
        shell.configurables.remove(magics)
    setattr(shell, _KEY, None)
