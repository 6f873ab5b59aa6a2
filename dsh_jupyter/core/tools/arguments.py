"""Argument validation from each tool's JSON Schema.

The schemas are small and flat (strings, integers, booleans; required; no extra properties), so a
tiny validator covering exactly the keywords they use keeps messages in our own words: one
sentence naming the argument, code ``ARGUMENT_INVALID``. The keywords are standard JSON Schema
(``type``, ``minLength``, ``pattern``, ``minimum``, ``maximum``, ``enum``, ``required``,
``additionalProperties``, ``properties``, ``items``, ``minItems``, ``maxItems``, ``anyOf``, and
``oneOf`` over objects told apart by one property's single-value ``enum``, as ``edit_cells``'
operations are), so clients validate with the same schema the model is shown. A string
whose ``pattern`` fails is told why in words, not as a regex: a NUL character, or nothing but
whitespace (the two patterns ``tools.spec`` declares).
"""

from __future__ import annotations

import functools
import re

from ..errors import Codes, ToolError
from ..text.quoting import in_message

__all__ = ["validate_args"]


def _fail(message: str) -> ToolError:
    return ToolError(Codes.ARGUMENT_INVALID, message)


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(pattern)


def validate_args(schema: dict, args: object) -> dict:
    """Return the arguments with defaults applied, or raise ARGUMENT_INVALID."""
    if not isinstance(args, dict):
        raise _fail("arguments must be an object")
    props: dict = schema.get("properties", {})
    for name in args:
        if name not in props:
            known = ", ".join(props) or "none"
            raise _fail(f"unknown argument {in_message(name)} (this tool takes: {known})")
    for name in schema.get("required", []):
        if name not in args or args[name] is None:
            raise _fail(f"{name} is required")
    out: dict = {}
    for name, spec in props.items():
        if name not in args or args[name] is None:
            continue
        out[name] = _check(name, spec, args[name])
    return out


_PYTHON_TYPES: dict = {"string": str, "array": list, "integer": int, "boolean": bool, "object": dict}
_WORDS = {
    "string": "a string",
    "array": "a list",
    "integer": "an integer",
    "boolean": "true or false",
    "object": "an object",
}


def _words_or(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _one_of(name: str, branches: list[dict], value: object) -> object:
    """An object that must match exactly one of ``branches``, each pinning one tag property (its
    ``enum`` of one value: ``op``); the branches of one tag differ in which of a few keys they take
    (``after``, ``before``, ``at``): exactly one of those must be given."""
    if not isinstance(value, dict):
        raise _fail(f"{name} must be an object")
    tag = next(key for key, prop in branches[0]["properties"].items() if len(prop.get("enum", ())) == 1)
    if value.get(tag) is None:
        raise _fail(f"{name}.{tag} is required")
    tags = list(dict.fromkeys(b["properties"][tag]["enum"][0] for b in branches))
    chosen = [b for b in branches if b["properties"][tag]["enum"][0] == value[tag]]
    if not chosen:
        raise _fail(f"{name}.{tag} must be one of {', '.join(map(str, tags))}")
    label = f"{name} ({value[tag]})"
    known = list(dict.fromkeys(key for b in chosen for key in b["properties"]))
    given = [key for key, v in value.items() if v is not None]
    for key in value:
        if key not in known:
            raise _fail(f"{name} has an unknown key {in_message(key)} ({value[tag]} takes: {', '.join(known)})")
    alternatives = [key for key in known if not all(key in b["properties"] for b in chosen)]
    picked = [key for key in alternatives if key in given]
    if len(picked) > 1:
        raise _fail(f"{label} takes one of {_words_or(alternatives)}, not {' and '.join(picked)} together")
    for key in chosen[0].get("required", []):
        if key not in alternatives and key not in given:
            raise _fail(f"{name}.{key} is required")
    fits = [b for b in chosen if all(key in b["properties"] for key in given)]
    if len(fits) != 1:
        raise _fail(f"{label} needs one of {_words_or(alternatives)}")
    return _check(name, fits[0], value)


def _check(name: str, spec: dict, value: object) -> object:
    branches = spec.get("oneOf")
    if branches is not None:
        return _one_of(name, branches, value)
    options = spec.get("anyOf")
    if options is not None:  # one of several forms (one glob, or a list of them): the one of its type
        for option in options:
            if isinstance(value, _PYTHON_TYPES.get(option.get("type"), ())) and not isinstance(value, bool):
                return _check(name, option, value)
        kinds = " or ".join(_WORDS.get(option.get("type"), "a value") for option in options)
        raise _fail(f"{name} must be {kinds}")
    kind = spec.get("type")
    if kind == "array":
        if not isinstance(value, list):
            raise _fail(f"{name} must be a list")
        if len(value) > spec.get("maxItems", len(value)):
            raise _fail(f"{name} may hold at most {spec['maxItems']} items")
        if len(value) < spec.get("minItems", 0):
            raise _fail(f"{name} must hold at least {spec['minItems']} item{'s' if spec['minItems'] > 1 else ''}")
        return [_check(f"{name}[{i}]", spec.get("items", {}), item) for i, item in enumerate(value)]
    if kind == "object":  # an item of a list of objects (edit's ``edits``): the same rules as the arguments
        if not isinstance(value, dict):
            raise _fail(f"{name} must be an object")
        props = spec.get("properties", {})
        for key in value:
            if key not in props:
                raise _fail(f"{name} has an unknown key {in_message(key)} (it takes: {', '.join(props)})")
        for key in spec.get("required", []):
            if key not in value or value[key] is None:
                raise _fail(f"{name}.{key} is required")
        return {key: _check(f"{name}.{key}", props[key], v) for key, v in value.items() if v is not None}
    if kind == "string":
        if not isinstance(value, str):
            raise _fail(f"{name} must be a string")
        if len(value) < spec.get("minLength", 0):
            raise _fail(f"{name} must be a non-empty string")
        pattern = spec.get("pattern")
        if pattern is not None and not _compiled(pattern).search(value):
            if "\0" in value:
                raise _fail(f"{name} must not contain a NUL character")
            if not value.strip():
                raise _fail(f"{name} must be a non-empty string")
            raise _fail(f"{name} must match the pattern {pattern}")  # pragma: no cover - schemas are ours
    elif kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(f"{name} must be an integer")
        low, high = spec.get("minimum"), spec.get("maximum")
        if low is not None and value < low:
            raise _fail(f"{name} must be at least {low}")
        if high is not None and value > high:
            raise _fail(f"{name} must be at most {high}")
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise _fail(f"{name} must be true or false")
    else:
        raise _fail(f"{name} has an unsupported type")  # pragma: no cover - schemas are ours
    allowed = spec.get("enum")
    if allowed is not None and value not in allowed:
        raise _fail(f"{name} must be one of {', '.join(map(str, allowed))}")
    return value
