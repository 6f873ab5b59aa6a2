"""The notebook ``edit_cells`` would leave, checked before anything is written: valid, and small enough.

Why it exists: the file path and the shared-document path refuse the same results with the same
words: a notebook nbformat does not validate (``NOTEBOOK_INVALID``), or one larger than
``edit_max_bytes`` (``FS_TOO_LARGE``), as ``edit`` refuses them.

What it must never do: let nbformat change the notebook it checks (``notebook_problem`` validates
a copy), or write anything.
"""

from __future__ import annotations

import json

from ...errors import Codes, ToolError
from ...notebooks.format import notebook_problem, serialize_like
from ...text.quoting import in_message

__all__ = ["checked_result"]


def checked_result(data: dict, shown: str, limit: int, raw: bytes | None = None) -> bytes:
    """``data`` as the bytes a file would hold (in the layout of ``raw``, the file's bytes; else as
    compact JSON, to measure a shared document), once nbformat validates it and it fits ``limit``."""
    problem = notebook_problem(data)
    if problem is not None:
        raise ToolError(
            Codes.NOTEBOOK_INVALID,
            f"cannot edit {in_message(shown)}: the result would not be a valid notebook: {problem}; "
            "nothing was written",
        )
    out = (
        serialize_like(data, raw)
        if raw is not None
        else json.dumps(data, ensure_ascii=False).encode("utf-8", "surrogatepass")
    )
    if len(out) > limit:
        raise ToolError(
            Codes.FS_TOO_LARGE,
            f"cannot edit {in_message(shown)}: the result would be {len(out)} bytes, more than the {limit} an edit "
            "may write (setting edit_max_bytes)",
        )
    return out
