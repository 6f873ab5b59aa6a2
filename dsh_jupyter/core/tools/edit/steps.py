"""The steps of one ``edit`` call: one replacement, or a batch (``edits``) applied in order.

Why it exists: the text file path (``edit``), the notebook file path (``cells``) and the open
notebook path (``open_notebook``) all apply the same steps with the same rules, and must name a
failing step the same way: ``edit 2 of 3: old_string not found in "f.txt"; nothing was changed``,
also a step whose result would pass ``edit_max_bytes``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import Codes, ToolError
from ...text.quoting import in_message

__all__ = ["Step", "edit_steps", "step_error", "too_large"]

MAX_EDITS = 100  # steps in one call (the schema's maxItems)


@dataclass(frozen=True)
class Step:
    old: str
    new: str
    replace_all: bool


def edit_steps(args: dict) -> list[Step]:
    """The call's steps, from ``old_string``/``new_string``/``replace_all`` or from ``edits``."""
    edits = args.get("edits")
    single = [key for key in ("old_string", "new_string", "replace_all") if key in args]
    if edits is not None:
        if single:
            raise ToolError(
                Codes.ARGUMENT_INVALID, f"give either edits or old_string and new_string, not both ({single[0]} given)"
            )
        steps = [Step(e["old_string"], e["new_string"], bool(e.get("replace_all", False))) for e in edits]
        for k, step in enumerate(steps, 1):
            if step.old == step.new:
                raise ToolError(
                    Codes.ARGUMENT_INVALID, f"edit {k} of {len(steps)}: old_string and new_string must differ"
                )
        return steps
    for key in ("old_string", "new_string"):
        if key not in args:
            raise ToolError(Codes.ARGUMENT_INVALID, f"{key} is required (or give edits, a list of them)")
    step = Step(args["old_string"], args["new_string"], bool(args.get("replace_all", False)))
    if step.old == step.new:
        raise ToolError(Codes.ARGUMENT_INVALID, "old_string and new_string must differ")
    return [step]


def step_error(exc: ToolError, k: int, steps: list[Step], batch: bool = True) -> ToolError:
    """``exc`` of step ``k``, named as that step of a batch (a single edit's error is unchanged)."""
    if not batch:
        return exc
    return ToolError(exc.code, f"edit {k} of {len(steps)}: {exc.message}; nothing was changed", exc.name)


def too_large(size: int, limit: int, what: str, shown: str, k: int, steps: list[Step], batch: bool) -> ToolError:
    """``FS_TOO_LARGE``: after step ``k``, ``what`` ("the result") would be ``size`` bytes, more than
    ``edit_max_bytes``; named as that step of a ``batch``, else as the edit of ``shown``."""
    message = f"{what} would be {size} bytes, more than the {limit} an edit may write (setting edit_max_bytes)"
    if batch:
        return step_error(ToolError(Codes.FS_TOO_LARGE, message), k, steps)
    return ToolError(Codes.FS_TOO_LARGE, f"cannot edit {in_message(shown)}: {message}")
