"""A quick yes to "is this notebook valid?", with nbformat keeping the last word and every message.

Why it exists: the first read of a big notebook paid more for nbformat's schema check than for
everything else together (5,001 cells: ``json.loads`` 22 ms, the check 134 ms, about 26 µs a cell in
nbformat's compiled fastjsonschema validator). ``jsonschema_rs`` (a maintained JSON Schema validator
written in Rust, with Draft 4, the draft nbformat's schemas are written in) checks the same dict
against the same schema in a few milliseconds.

How it stays exact: the schema is the one nbformat itself picks for the notebook's version
(``nbformat.validator.get_validator(4, minor)``), so both validators judge by one document. Only a
*yes* is taken from here. A *no*, or anything unexpected (the library missing, a schema it cannot compile, an error while
checking), sends the caller to nbformat's own validator, which decides and words the message. So a
disagreement can only cost time, never let an invalid notebook through — provided a yes here is a
yes there, which ``tests/core/notebooks/test_schema.py`` checks on every valid and invalid notebook
the tests know and on seeded mutations of them.

Why the schema file is read without importing nbformat: importing nbformat imports jsonschema,
which imports every optional format checker installed beside it; ``rfc3987_syntax`` (brought by
``jsonschema[format-nongpl]``, which Jupyter's event library asks for) builds a grammar as it is
imported, and that took 2.6 s here. A kernel's first notebook read or write paid it. The file is
found through the package's import spec (which runs none of its code) by the name nbformat's
``nbformat_schema`` table gives each 4.x minor version; a minor version newer than the files
present (nbformat relaxes its latest schema for those) is left to nbformat.
``tests/core/notebooks/test_schema.py`` checks that each document is the one nbformat picks.

What it must never do: change the dict, or answer "invalid" on its own.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import threading

__all__ = ["quickly_valid", "schema_document"]

_log = logging.getLogger(__name__)
_lock = threading.Lock()
_compiled: dict[int, object] = {}  # nbformat minor version → jsonschema_rs validator, or None
_warned = False


def _validator_for(minor: int) -> object | None:
    with _lock:
        if minor in _compiled:
            return _compiled[minor]
        found = None
        try:
            import jsonschema_rs

            schema = schema_document(minor)
            if isinstance(schema, dict):
                found = jsonschema_rs.Draft4Validator(schema)
        except ImportError:
            global _warned
            if not _warned:
                _warned = True
                _log.info("jsonschema_rs is not installed: notebooks are validated by nbformat alone (slower)")
        except Exception as exc:  # a schema the library cannot compile: nbformat alone decides
            _log.info("notebook schema 4.%d not compiled for the quick check: %s", minor, exc)
        _compiled[minor] = found
        return found


def schema_document(minor: int) -> dict | None:
    """nbformat's schema for version 4.``minor``, read from its package without running it; None
    when there is no file of that minor version (a notebook from a newer nbformat) or no nbformat."""
    spec = importlib.util.find_spec("nbformat")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = os.path.join(folder, "v4", f"nbformat.v4.{minor}.schema.json")
        try:
            with open(path, encoding="utf-8") as file:
                return json.load(file)
        except FileNotFoundError:
            continue
    return None


def quickly_valid(data: dict, minor: int) -> bool:
    """True when ``data`` is certainly valid against nbformat's schema for version 4.``minor``.

    False means "ask nbformat": the notebook may be invalid, or this check could not tell.
    """
    validator = _validator_for(minor)
    if validator is None:
        return False
    try:
        return bool(validator.is_valid(data))  # type: ignore[attr-defined]
    except Exception:  # e.g. a value the library cannot convert: nbformat decides
        return False
