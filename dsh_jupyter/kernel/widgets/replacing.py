"""The ``replace`` preview as a person checks it: occurrences grouped by file, a box each, Apply.

Why it exists: a preview is a list of proposed changes, and a person decides per occurrence, as in
an editor's "replace in files". The view shows one page of the preview (the model's page) grouped
by file, each occurrence's line before (the replaced text struck) and after (the new text marked),
and a checkbox per occurrence and per file. Apply calls ``replace`` again with the same arguments
and the checked ids of the page shown — or, when the page is the whole preview and every box is
checked, ``"all"`` guarded by the preview's total, as the tool asks — then shows what changed and
previews again, so what is left (or what a neighbour changed meanwhile) is what is on screen.

What it must never do: apply an occurrence the person did not see checked (ids come from the
page shown, never from pages not loaded), apply anything on a page change or a refresh, or hide a
refusal (a file changed since the preview refuses the whole call: its text is shown and the page
stays, so the person can look and preview again).
"""

from __future__ import annotations

from traitlets import List, Unicode

from ...core.text.quoting import quote_name
from .base import DshView
from .search import query_name

__all__ = ["ReplaceView", "change_parts", "split_change"]

# Arguments of a preview that an apply repeats unchanged (everything but the page and the choice).
_PAGE_ARGS = ("offset", "occurrences", "expected_count")


def split_change(before: str, after: str) -> tuple[str, str, str, str]:
    """``(head, removed, added, tail)``: the two lines' common start and end, and what differs.

    A preview line holds one occurrence replaced, so the difference is that occurrence; the split
    is what the view strikes and marks. The tail never overlaps the head (``foo`` → ``foofoo``
    gives head ``foo``, removed ``""``, added ``foo``).
    """
    n = 0
    limit = min(len(before), len(after))
    while n < limit and before[n] == after[n]:
        n += 1
    m = 0
    while m < limit - n and before[-1 - m] == after[-1 - m]:
        m += 1
    return before[:n], before[n : len(before) - m], after[n : len(after) - m], before[len(before) - m :]


def change_parts(occurrence: dict) -> tuple[str, str, str, str]:
    """``(head, removed, added, tail)`` of a preview row: the occurrence as the tool placed it
    (``span``), or, when a long line was cut before the occurrence's end, what differs."""
    before, after = occurrence["before"], occurrence["after"]
    start, end = occurrence.get("span") or (0, -1)
    rest = len(before) - end
    if 0 <= start <= end <= len(before) and rest <= len(after) - start and before[end:] == after[len(after) - rest :]:
        return before[:start], before[start:end], after[start : len(after) - rest], before[end:]
    return split_change(before, after)


class ReplaceView(DshView):
    """A ``replace`` preview page with a box per occurrence; Apply changes the checked ones."""

    # [{path, label, count, items: [{id, place, head, removed, added, tail}]}]
    files = List().tag(sync=True)
    applied = Unicode("").tag(sync=True)  # the last apply's answer, verbatim ("" before any)

    def __init__(self, workspace, session: str, result) -> None:
        super().__init__(workspace, session)
        self.kind, self.title = "replace", "replace"
        self.args = {k: v for k, v in (getattr(result, "args", None) or {}).items() if k not in _PAGE_ARGS}
        self.subject = self.args.get("pattern", "")
        self._show(result, int((getattr(result, "args", None) or {}).get("offset") or 1))

    def _show(self, result, offset: int) -> None:
        value = result.value
        self.model_text = result.text
        self.footer = result.footer()
        self.header = result.header()
        self.shown_ids = [o["id"] for o in value["occurrences"]]
        by_file: dict[str, list] = {}
        for o in value["occurrences"]:
            head, removed, added, tail = change_parts(o)
            place = f"{o['cell']}:{o['line']}" if o.get("cell") is not None else str(o["line"])
            by_file.setdefault(o["path"], []).append(
                {"id": o["id"], "place": place, "head": head, "removed": removed, "added": added, "tail": tail}
            )
        self.files = [
            {"path": p, "label": quote_name(p), "count": len(items), "items": items} for p, items in by_file.items()
        ]
        total, files = value["totalOccurrences"], value["files"]
        self.total, self.offset = total, offset
        noun = "occurrence" if total == 1 else "occurrences"
        self.summary = (
            f"{total:,} {noun} in {files:,} {'file' if files == 1 else 'files'}" if total else "No occurrences"
        )
        last = offset + len(self.shown_ids) - 1
        self.status = f"occurrences {offset:,}-{last:,} of {total:,}" if self.shown_ids else ""
        step = max(len(self.shown_ids), 1)
        self.pager = {"prev": offset > 1, "next": last < total, "offset": offset, "noun": "occurrences", "step": step}
        self.notice = "" if self.shown_ids else result.text.partition("\n")[0]
        self.spill_name = query_name("replace", self.args)

    # -- requests from the browser -------------------------------------------------------------

    def handlers(self) -> dict:
        return {**super().handlers(), "apply": self.apply, "page": self.page, "refresh": self.refresh}

    def preview(self, offset: int = 1) -> bool:
        """Preview again from ``offset``; a failed call shows its text and keeps the page."""
        result = self.call("replace", **self.args, **({"offset": offset} if offset > 1 else {}))
        if not self.accept(result):
            return False
        self._show(result, offset)
        return True

    def page(self, where) -> bool:
        if where == "next":
            return self.preview(self.offset + len(self.shown_ids))
        if where == "previous":
            return self.offset > 1 and self.preview(max(1, self.offset - self.pager.get("step", 1)))
        return self.preview(max(1, int(where)))

    def refresh(self) -> bool:
        return self.preview(self.offset)

    def apply(self, ids: list[str]) -> bool:
        """Apply the checked occurrences of the page shown, then preview again from the start.

        Ids not on the page are refused here (the person never saw them); every id of a page that
        is the whole preview becomes ``"all"`` with ``expected_count``, the tool's own guard.
        """
        chosen = [i for i in self.shown_ids if i in set(ids)]
        if len(chosen) != len(set(ids)):
            raise ValueError("an occurrence to apply is not on the page shown")
        if not chosen:
            self.error = "Error: no occurrence is checked; check the ones to change"
            return False
        whole = self.offset == 1 and len(self.shown_ids) == self.total
        if whole and len(chosen) == self.total:
            which: dict = {"occurrences": "all", "expected_count": self.total}
        else:
            which = {"occurrences": chosen}
        result = self.call("replace", **self.args, **which)
        if not self.accept(result):
            return False
        self.applied = result.text
        self.preview(1)
        return True
