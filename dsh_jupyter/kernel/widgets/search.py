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

__all__ = ["GlobView", "GrepView", "grep_counts", "group_paths", "query_name"]


def _plural(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def grep_counts(value: dict) -> str:
    """A grep page's counts as a person reads them beside the title, in the Workspace panel's words:
    the whole result (``4,163 matches in 1,463 files``), which part of it the page shows, or at
    least how many a search stopped at the output limit found. The model's header stays as it is."""
    total, files = value.get("totalMatches", 0), value.get("filesTotal", 0)
    if not total:
        return "No matches"
    if "partialAfterBytes" in value:
        return (
            f"at least {_plural(total, 'match', 'matches')} in {files:,}+ files — stopped at the output limit "
            f"({value['partialAfterBytes']:,} bytes of matches)"
        )
    whole = f"{_plural(total, 'match', 'matches')} in {_plural(files, 'file', 'files')}"
    files_mode = "outputMode" in value  # a row per file
    shown, of = (len(value.get("fileCounts") or []), files) if files_mode else (len(value["matches"]), total)
    if shown >= of:
        return whole
    if value.get("sampled"):
        return f"{whole} — showing {shown:,}, sampled across files"
    first = value.get("offset", 1)
    return f"{whole} — showing {'files ' if files_mode else ''}{first:,}–{first + shown - 1:,}"


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
    order = Unicode("time").tag(sync=True)  # "time": the tool's order (oldest first); "name"
    paths = List()
    grouped = Dict()

    def __init__(self, workspace, session: str, result) -> None:
        super().__init__(workspace, session, result)
        value = result.value
        self.kind, self.title = "glob", "glob"
        self.paths = list(value["paths"])
        self.grouped = group_paths(self.paths, value.get("root", "."))
        self._counts = (len(self.paths), value["totalPaths"], quote_name(value.get("root", ".")))
        self.subject = value["pattern"]
        self._show_groups()
        if not self.paths:
            self.notice = result.text

    def _show_groups(self) -> None:
        shown, total, root = self._counts
        n = len(self.grouped)
        # the order inside a group is the tool's, oldest first, unless sorted by name here: said
        # in the summary (names alone do not show it), and the page's paths stay the same
        cue = (
            ", oldest first in each" if self.order == "time" else ", by name in each (the model's page is oldest first)"
        )
        self.summary = (
            f"in {root}: {shown:,} of {total:,} paths in {n:,} top-level {'entry' if n == 1 else 'entries'} shown{cue}"
        )
        self.groups = [
            {
                "key": key,
                "label": quote_name(key.rstrip("/")) + ("/" if key.endswith("/") else ""),
                "paths": [[p, quote_name(p)] for p in (paths if self.order == "time" else sorted(paths))],
            }
            for key, paths in self.grouped.items()
        ]

    def set_order(self, order: str) -> None:
        """Show each group's paths in the tool's order (``time``, oldest first) or by ``name``; no call."""
        if order not in ("time", "name"):
            raise ValueError("order must be time or name")
        self.close_opened()  # an opened window's anchor names a row by its place
        self.order = order
        self._show_groups()

    def handlers(self) -> dict:
        return {**super().handlers(), "open_path": self.open_path, "order": self.set_order}

    def open_path(self, group: int, index: int):
        path = self.groups[int(group)]["paths"][int(index)][0]
        return self.open_file(path, 0, f"path:{group}:{index}")


class GrepView(_SearchView):
    """A grep page: matches grouped by file; a file opens at line 1, a match at its line (marked).

    The toolbar asks grep again with another case rule, output mode or context (``refine``): the
    new page replaces this one, as the model would see it for those arguments. In the
    files_with_matches and count modes each file is a group with its count and no lines; context
    rows are drawn apart from matches (dimmed, no mark) and open the file at that line.
    """

    # [{path, label, count, matches: [[line, text, spans, cell?], ...]}]; a match in the text of a
    # cell's output is [line, text, spans, cell, False, output]; a context row is
    # [line, text, [], None, True]
    files = List().tag(sync=True)
    options = Dict().tag(sync=True)  # {ignore_case, output_mode, context}: the arguments the page was made with
    matches = List()

    def __init__(self, workspace, session: str, result) -> None:
        super().__init__(workspace, session, result)
        self.kind, self.title = "grep", "grep"
        self._show(result)

    def _show(self, result) -> None:
        value = result.value
        self.matches = list(value["matches"])
        self.subject = value["pattern"]
        self.options = {
            "ignore_case": bool(self.args.get("ignore_case")),
            "output_mode": self.args.get("output_mode") or "content",
            "context": int(self.args.get("context") or 0),
        }
        by_file: dict[str, list] = {}
        for m in self.matches:
            rows = by_file.setdefault(m["path"], [])
            rows += [[n, text, [], None, True] for n, text in m.get("before", [])]
            row = [m["line"], m["text"], m.get("submatches", [])]
            if m.get("cell") is not None:  # a match in a notebook cell: opens that cell
                row.append(m["cell"])
                if m.get("output") is not None:  # in its output's text: the cell, nothing marked
                    row += [False, m["output"]]
            rows.append(row)
            rows += [[n, text, [], None, True] for n, text in m.get("after", [])]
        self.by_file = {path: sum(1 for row in rows if len(row) < 5 or not row[4]) for path, rows in by_file.items()}
        self.files = [
            {"path": p, "label": quote_name(p), "count": self.by_file[p], "matches": ms} for p, ms in by_file.items()
        ]
        if value.get("fileCounts"):
            self.files = [
                {"path": row["path"], "label": quote_name(row["path"]), "count": row["matches"], "matches": []}
                for row in value["fileCounts"]
            ]
            self.by_file = {row["path"]: row["matches"] for row in value["fileCounts"]}
        self.spill = value.get("spill")
        self.spill_name = query_name("grep", self.args)
        self.model_text = result.text
        self.footer = result.footer()
        self.header = result.header()
        self.summary = grep_counts(value) if not result.is_error else result.text.partition("\n")[0]
        self.notice = "" if self.files else result.text.partition("\n")[0]

    def handlers(self) -> dict:
        return {
            **super().handlers(),
            "open_match": self.open_match,
            "open_path": self.open_path,
            "refine": self.refine,
        }

    def refine(self, ignore_case: bool = False, output_mode: str = "content", context: int = 0) -> None:
        """grep again with these options (the rest of the arguments as they were); a failed call
        shows its text and keeps the page."""
        args = {k: v for k, v in self.args.items() if k not in ("ignore_case", "output_mode", "context", "offset")}
        if ignore_case:
            args["ignore_case"] = True
        if output_mode != "content":
            args["output_mode"] = output_mode
        if context:
            args["context"] = int(context)
        result = self.call("grep", **args)
        if not self.accept(result):
            return
        self.close_opened()
        self.args = args
        self._show(result)

    def open_path(self, group: int):
        return self.open_file(self.files[int(group)]["path"], 0, f"file:{group}")

    def open_match(self, group: int, index: int):
        entry = self.files[int(group)]
        row = entry["matches"][int(index)]
        cell = row[3] if len(row) > 3 and row[3] else 0
        spans = row[2] if len(row) > 2 and row[2] else []  # a context row has none
        if len(row) > 5 and row[5]:  # a line of a cell's output: its cell, no source line to mark
            return self.open_file(entry["path"], 0, f"match:{group}:{index}", cell)
        return self.open_file(entry["path"], row[0], f"match:{group}:{index}", cell, list(spans[0]) if spans else None)
