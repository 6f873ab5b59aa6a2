"""The core settings as configurable traitlets, made from their one declaration; and their docs table.

The server's ``DshJupyter`` (``c.DshJupyter.glob_max_results = 50``) and the kernel's
``DshMagics`` (``%config DshMagics.glob_max_results = 50``) both inherit ``SettingTraits``, so a
setting has one name, one default and one help text everywhere. The traits are made from the
fields of ``core.settings.Settings`` (kind, default, doc), which also validates the values; this
module lives outside ``core`` because traitlets belongs to Jupyter.

``python -m dsh_jupyter.settings_traits`` prints the settings table of ``docs/settings.md`` (the
server-only traits of ``DshJupyter`` included); a test keeps the page equal to it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from traitlets import Bool, HasTraits, Int, List, TraitType, Unicode

from .core.settings import Settings

__all__ = ["SettingTraits", "settings_table"]


def _trait(f: dataclasses.Field) -> TraitType:
    kind, doc = f.metadata["kind"], f.metadata["doc"]
    default: Any = f.default
    if kind == "int":
        return Int(default, help=doc).tag(config=True)
    if kind == "bool":
        return Bool(default, help=doc).tag(config=True)
    if kind == "strings":
        return List(Unicode(), default_value=list(default), help=doc).tag(config=True)
    if kind == "path":
        return Unicode(None, allow_none=True, help=doc).tag(config=True)
    return Unicode(default, help=doc).tag(config=True)  # a choice: the core says which values


def _setting_values(self) -> dict:
    """The traits' values under their core names (None for an unset path)."""
    return {name: getattr(self, name) for name in Settings.names()}


if TYPE_CHECKING:

    class SettingTraits(HasTraits):
        """What a type checker sees of the class made below: one trait per setting."""

        def __getattr__(self, name: str) -> Any: ...

        def setting_values(self) -> dict: ...

else:
    SettingTraits = type(
        "SettingTraits",
        (HasTraits,),
        {
            "__doc__": "Mixin: one configurable trait per core setting, under the core's snake_case name.",
            "__module__": __name__,
            **{f.name: _trait(f) for f in Settings.fields()},
            "setting_values": _setting_values,
        },
    )


def _default_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ", ".join(f"`{v}`" for v in value) or "none"
    return str(value)


def settings_table() -> str:
    """The Markdown table of every setting: the core ones, then the server-only traits."""
    from .server.app import DshJupyter  # the server-only traits (Jupyter is there when docs are made)

    rows = ["| setting | default | what it is for |", "|---|---|---|"]
    for f in Settings.fields():
        default = f.metadata["default_text"] or _default_text(f.default)
        rows.append(f"| `{f.name}` | {default} | {f.metadata['doc']} |")
    core = set(Settings.names())
    for name, trait in sorted(DshJupyter.class_own_traits(config=True).items()):
        if name not in core:
            rows.append(f"| `{name}` (server only) | {_default_text(trait.default_value)} | {trait.help} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(settings_table(), end="")
