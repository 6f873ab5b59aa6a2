"""Argument validation from each tool's JSON Schema.

The schemas are small and flat (strings, integers, booleans; required; no extra properties), so a
tiny validator covering exactly that subset keeps messages in our own words: one sentence naming
the argument, code ``ARGUMENT_INVALID``. Two extension keywords: ``x-allow-nul`` lets a string hold
NUL (file content may), and ``x-not-blank`` refuses a string of only whitespace (a path argument:
``"   "`` names no file anyone means, and would otherwise create one named three spaces).
"""

from __future__ import annotations

from .errors import Codes, ToolError
from .render.quoting import in_message

__all__ = ["validate_args"]


def _fail(message: str) -> ToolError:
    return ToolError(Codes.ARGUMENT_INVALID, message)


def validate_args(schema: dict, args: object) -> dict:
    """Return the arguments with defaults applied, or raise ARGUMENT_INVALID."""
    if not isinstance(args, dict):
        raise _fail("arguments must be an object")
    props: dict = schema.get("properties", {})
    for name in args:
        if name not in props:
            known = ", ".join(props) or "none"
            raise _fail(f'unknown argument {in_message(name)} (this tool takes: {known})')
    for name in schema.get("required", []):
        if name not in args or args[name] is None:
            raise _fail(f"{name} is required")
    out: dict = {}
    for name, spec in props.items():
        if name not in args or args[name] is None:
            continue
        out[name] = _check(name, spec, args[name])
    return out


def _check(name: str, spec: dict, value: object) -> object:
    kind = spec.get("type")
    if kind == "string":
        if not isinstance(value, str):
            raise _fail(f"{name} must be a string")
        if len(value) < spec.get("minLength", 0) or (spec.get("x-not-blank") and not value.strip()):
            raise _fail(f"{name} must be a non-empty string")
        if "\0" in value and not spec.get("x-allow-nul", False):
            raise _fail(f"{name} must not contain a NUL character")
        return value
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(f"{name} must be an integer")
        low = spec.get("minimum")
        if low is not None and value < low:
            raise _fail(f"{name} must be at least {low}")
        return value
    if kind == "boolean":
        if not isinstance(value, bool):
            raise _fail(f"{name} must be true or false")
        return value
    raise _fail(f"{name} has an unsupported type")  # pragma: no cover - schemas are ours
