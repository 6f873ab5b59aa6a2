"""A tool's ``%dsh`` arguments made from its input schema, and the tool arguments a parsed line gave.

Why it exists: the JSON Schema a model sees already names each argument, its type and what it
means, so the magic's argparse is generated from it (``offset`` -> ``--offset N``, a boolean a
flag, a list of globs a repeated option, the schema's description as the help) instead of
declaring every argument a second time by hand. ``ToolCommand`` holds what a schema cannot say.

An object or a list of objects (``edit_cells``' ``operations``) is one argument written as JSON
(``'[{"op": "delete", "cell_id": "a1"}]'``), parsed here; what it holds is the tool's to check,
as for every surface.

What it must never do: build an argument the user did not give (``given`` leaves out what was
not), or change what a JSON argument says (it is passed on as parsed).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.tools.spec import ToolSpec

__all__ = ["ToolCommand", "given", "schema_arguments", "tool_arguments"]


@dataclass(frozen=True)
class ToolCommand:
    """What a tool's subcommand declares besides its input schema (see ``commands.py``)."""

    summary: str = ""  # "" : the first sentence of the tool's description
    positional: tuple[tuple[str, str], ...] = ()  # (property, METAVAR), in order; optional ones may be left out
    short: dict[str, str] = field(default_factory=dict)  # property -> short flag ("ignore_case": "-i")
    metavars: dict[str, str] = field(default_factory=dict)  # property -> METAVAR of its option
    elsewhere: tuple[str, ...] = ()  # properties the runner fills (from the cell body, from own options)
    own: tuple = ()  # the magic's own options: ((flags...), {argparse kwargs}) pairs
    run: Callable | None = None  # (magics, namespace, cell) -> result; None: call the tool with what was given
    cell: bool = False
    line_flag: str | None = None


def given(**kwargs) -> dict:
    """Tool arguments the user gave (None and False flags are left out)."""
    return {k: v for k, v in kwargs.items() if v is not None and v is not False}


# -- arguments from a tool's input schema --------------------------------------------------------


def _kinds(prop: dict) -> set[str]:
    """The JSON types a property takes (an ``anyOf``'s branches together; an ``enum`` is a string)."""
    branches = prop.get("anyOf", [prop])
    kinds = {b["type"] for b in branches if isinstance(b.get("type"), str)}
    return kinds or ({"string"} if "enum" in prop else set())


def _help_of(prop: dict) -> str:
    return prop.get("description", "").replace("%", "%%")  # argparse formats help with %


def _json_value(text: str) -> object:
    """A command-line word read as JSON (an object, a list of objects)."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc})") from None


def _structured(prop: dict) -> bool:
    """Whether a property is given as JSON: an object, or a list of anything but strings."""
    kinds = _kinds(prop)
    items = [b for b in prop.get("anyOf", [prop]) if b.get("type") == "array"]
    strings = bool(items) and all(_kinds(b.get("items", {})) == {"string"} for b in items)
    return ("array" in kinds or "object" in kinds) and not strings


def _option(name: str, prop: dict, metavar: str | None) -> dict | None:
    """argparse keywords for one schema property as an option; None for one a command line cannot
    give."""
    kinds = _kinds(prop)
    items = [b for b in prop.get("anyOf", [prop]) if b.get("type") == "array"]
    if kinds == {"boolean"}:
        return {"action": "store_true", "help": _help_of(prop)}
    if items and all(_kinds(b.get("items", {})) == {"string"} for b in items):
        return {"action": "append", "metavar": metavar or name.upper(), "help": _help_of(prop) + " Repeat for more."}
    if _structured(prop):
        return {"type": _json_value, "metavar": metavar or "JSON", "help": _help_of(prop) + " As JSON."}
    if "integer" in kinds:
        return {"type": int, "metavar": metavar or "N", "help": _help_of(prop)}
    if "number" in kinds:
        return {"type": float, "metavar": metavar or "X", "help": _help_of(prop)}
    if "string" in kinds:
        choices = {"choices": prop["enum"]} if "enum" in prop else {}
        return {"metavar": metavar or name.upper(), **choices, "help": _help_of(prop)}
    return None


def schema_arguments(spec: ToolSpec, command: ToolCommand) -> tuple:
    """The ``((flags...), {kwargs})`` arguments of a tool's subcommand: the positional properties
    in ``command``'s order, then every other property the command line can give as an option, in
    the schema's order, then the magic's own options."""
    props = spec.input_schema["properties"]
    required = set(spec.input_schema.get("required", ()))
    out: list = []
    for name, metavar in command.positional:
        kwargs: dict = {"metavar": metavar, "help": _help_of(props[name])}
        if _kinds(props[name]) == {"integer"}:
            kwargs["type"] = int
        elif _structured(props[name]):
            kwargs["type"] = _json_value
        if name not in required:
            kwargs["nargs"] = "?"
        out.append(((name,), kwargs))
    skip = {name for name, _ in command.positional} | set(command.elsewhere)
    for name, prop in props.items():
        option = None if name in skip else _option(name, prop, command.metavars.get(name))
        if option is not None:
            short = (command.short[name],) if name in command.short else ()
            out.append(((*short, "--" + name.replace("_", "-")), {"dest": name, **option}))
    return (*out, *command.own)


def tool_arguments(spec: ToolSpec, namespace) -> dict:
    """The tool arguments a parsed command line gave: its schema properties that were given."""
    props = spec.input_schema["properties"]
    return given(**{name: getattr(namespace, name) for name in props if hasattr(namespace, name)})
