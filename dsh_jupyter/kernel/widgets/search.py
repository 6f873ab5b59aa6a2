"""Search widgets: glob paths grouped by top-level entry, grep matches grouped by file.

Why it exists: a glob or grep page is at most ``glob_max_results`` paths or ``grep_max_matches``
matches, so it is shown whole, but arranged the way a person scans a search panel: per-file
groups with counts, lines in the code font with the matched text marked (from the value's
``submatches``), and every path or match opening a read window in place (a match at its line,
marked). When the core saved the full result, "open the full result" opens it in the same panel.
The model's header and footer are shown as the model got them.

What it must never do: fetch the full result into the widget (the saved-result window pages it),
or show a path other than as the model saw it.
"""

from __future__ import annotations

import shlex

from traitlets import Dict, List, Unicode

from ...core.text.quoting import quote_name
from .base import DshView
from .windows import SpillWindow

__all__ = ["GlobView", "GrepView", "group_paths", "query_name"]


def group_paths(paths: list[str], root: str) -> dict[str, list[str]]:
    """Shown glob paths by top-level entry of the search root, groups in first-appearance order."""
    prefix = "" if root == "." else root.rstrip("/") + "/"
    groups: dict[str, list[str]] = {}
    for path in paths:
        rest = path[len(prefix) :] if prefix and path.startswith(prefix) else path
        head, sep, _ = rest.partition("/")
        groups.setdefault(head + sep, []).append(path)
    return groups


def query_name(tool: str, args: dict) -> str:
    """A call as a person would type it: ``grep TODO src --include '*.py'`` (names a saved result)."""
    words = [tool]
    for key in ("pattern", "file_path", "path"):
        if args.get(key) is not None:
            words.append(shlex.quote(str(args[key])))
    for key, value in args.items():
        if key not in ("pattern", "file_path", "path") and value is not None:
            words.append(f"--{key.replace('_', '-')}" if value is True else f"--{key} {shlex.quote(str(value))}")
    return " ".join(words)


class _SearchView(DshView):
    spill = Unicode(None, allow_none=True).tag(sync=True)
    spill_name = Unicode("").tag(sync=True)

    def __init__(self, workspace, session: str, result) -> None:
        super().__init__(workspace, session)
        self.args = dict(getattr(result, "args", None) or {})
        self.spill = result.value.get("spill")
        self.spill_name = query_name(result.tool, self.args)
        self.model_text = result.text
        self.footer = result.footer()
        self.header = result.header()

    def handlers(self) -> dict:
        return {**super().handlers(), "spill": self.open_spill}

    def open_spill(self):
        if not self.spill:
            return None
        window = SpillWindow(self, self.spill, name=self.spill_name, tool=self.title)
        return self.open_window(window, "spill")


class GlobView(_SearchView):
    """A glob page: paths grouped by top-level entry, each opening a read window."""

    groups = List().tag(sync=True)  # [{key, label, paths: [[path, label], ...]}]
    paths = List()
    grouped = Dict()

    def __init__(self, workspace, session: str, result) -> None:
        super().__init__(workspace, session, result)
        value = result.value
        self.kind, self.title = "glob", "glob"
        self.paths = list(value["paths"])
        self.grouped = group_paths(self.paths, value.get("root", "."))
        shown, total = len(self.paths), value["totalPaths"]
        self.subject = value["pattern"]
        root = quote_name(value.get("root", "."))
        n = len(self.grouped)
        self.summary = (
            f"in {root}: {shown:,} of {total:,} paths in {n:,} top-level {'entry' if n == 1 else 'entries'} shown"
        )
        self.groups = [
            {
                "key": key,
                "label": quote_name(key.rstrip("/")) + ("/" if key.endswith("/") else ""),
                "paths": [[p, quote_name(p)] for p in paths],
            }
            for key, paths in self.grouped.items()
        ]
        if not self.paths:
            self.notice = result.text

    def handlers(self) -> dict:
        return {**super().handlers(), "open_path": self.open_path}

    def open_path(self, group: int, index: int):
        path = self.groups[int(group)]["paths"][int(index)][0]
        return self.open_file(path, 0, f"path:{group}:{index}")


class GrepView(_SearchView):
    """A grep page: matches grouped by file; a file opens at line 1, a match at its line (marked)."""

    files = List().tag(sync=True)  # [{path, label, matches: [[line, text, [[start, end], ...], cell?], ...]}]
    matches = List()

    def __init__(self, workspace, session: str, result) -> None:
        super().__init__(workspace, session, result)
        value = result.value
        self.kind, self.title = "grep", "grep"
        self.matches = list(value["matches"])
        self.subject = value["pattern"]
        by_file: dict[str, list] = {}
        for m in self.matches:
            row = [m["line"], m["text"], m.get("submatches", [])]
            if m.get("cell") is not None:  # a match in a notebook cell: opens that cell
                row.append(m["cell"])
            by_file.setdefault(m["path"], []).append(row)
        self.by_file = {path: len(ms) for path, ms in by_file.items()}
        self.files = [{"path": p, "label": quote_name(p), "matches": ms} for p, ms in by_file.items()]
        self.summary = self.header or result.text.partition("\n")[0]
        if not self.matches:
            self.notice = result.text.partition("\n")[0]

    def handlers(self) -> dict:
        return {**super().handlers(), "open_match": self.open_match, "open_path": self.open_path}

    def open_path(self, group: int):
        return self.open_file(self.files[int(group)]["path"], 0, f"file:{group}")

    def open_match(self, group: int, index: int):
        entry = self.files[int(group)]
        match = entry["matches"][int(index)]
        return self.open_file(entry["path"], match[0], f"match:{group}:{index}", *match[3:])
