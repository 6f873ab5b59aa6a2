"""A complete glob or grep result saved in this session's spill folder, named as it is shown.

Why it exists: a page shows at most its cap; the whole result is saved (``state.spills``) so the
caller can read or search it. A big result is written on a thread while the page is built.

What it must never do: leave a writer running when the call ends (``start_spill``'s function is
called in every case), or name a saved result other than as the caller is shown it.
"""

from __future__ import annotations

from ..context import CallContext

__all__ = ["save_spill", "start_spill"]


def save_spill(ctx: CallContext, tool: str, text: str | bytes, pattern: str) -> str | None:
    """Save a complete result in this session's spill folder; its locator as shown (``spill_display``),
    or None when it could not be saved."""
    return start_spill(ctx, tool, text, pattern, background=False)()


def start_spill(ctx: CallContext, tool: str, text: str | bytes, pattern: str, background: bool = True):
    """``save_spill`` with a big file written on a thread while the caller builds its page: a
    function that waits for it and returns what ``save_spill`` would. Call it in every case (in
    a ``finally``), so the writer is always waited for."""
    if ctx.spills is None:
        return lambda: None
    pending = ctx.spills.start_save(
        ctx.session_key,
        ctx.call_id,
        tool,
        text,
        label=f"{tool} {pattern}",
        user=ctx.spill_owner or ctx.user,
        quota=ctx.spill_quota,
        visibility=ctx.resolver.visibility.stamp(),
        background=background,
    )

    def finish() -> str | None:
        locator = pending.finish()
        return None if locator is None else ctx.resolver.spill_display(locator, ctx.cwd)

    return finish
