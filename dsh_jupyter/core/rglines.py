"""rg's plain match lines (``--null --with-filename --line-number --no-heading``) parsed while rg runs.

Why it exists: for a broad grep, ``--json`` made rg print 22 MB for 44,000 matches (every record
carries the path, the submatches and offsets, JSON-escaped), rg spent much of its time writing
it and Python most of its time reading it. The plain form is a third of the size and cheaper for
rg to write: one line ``PATH\\0N:TEXT\\n`` per match. It is exact because neither part can forge
the other: a path cannot hold NUL, so the first NUL ends it; ``N:`` follows; and a line's text can
hold neither NUL (rg stops searching a file at its first NUL) nor a newline (no multiline mode).
Undecodable bytes stay bytes until the end: paths keep them as surrogate escapes (so a path can
be named back), line text gets U+FFFD, exactly as the JSON parser decodes them.

What it must never do: guess. The one thing that breaks the form is a line that is not a match
(rg's ``PATH: WARNING: stopped searching binary file after match …``, printed on stdout with a
colon, not a NUL) or a path holding a newline: then a warning and the next path run together and
cannot be told apart from one strange file name. Each chunk is checked by counting (one record
per newline and per NUL); anything else marks the stream ``broken`` and the caller runs the
search again with ``--json`` (``rgstream``), which says unambiguously what is what.

The submatch positions the widgets highlight are not in this form; ``Matches.raw_line`` keeps
each line's bytes so the caller can have rg find them in the few lines it shows.
"""

from __future__ import annotations

import re

from .rgstream import LineChunks, Matches

__all__ = ["PLAIN_FLAGS", "LineStream"]

PLAIN_FLAGS = ["--null", "--with-filename", "--line-number", "--no-heading", "--color=never"]

_RECORD = re.compile(rb"([^\0]*)\0(\d+):([^\n]*)\n")


class LineStream(LineChunks):
    """Collects the match lines of rg's plain output fed to it in pieces."""

    def __init__(self) -> None:
        super().__init__()  # broken: a line that is not a plain match; search again with --json
        self._found: list[tuple[bytes, bytes, bytes]] = []

    def _take(self, block: bytes) -> None:
        found = _RECORD.findall(block)
        # Every line a record, every record one line and one NUL: a path holding a newline, a
        # warning line or a NUL in a text changes one of the counts.
        if len(found) != block.count(b"\n") or len(found) != block.count(b"\0"):
            self.broken = True
            return
        self._found += found

    def finish(self) -> Matches | None:
        """Every match, or None when the search must be run again with ``--json``."""
        if self.broken or self._carry:
            return None
        found = self._found
        raw_paths = [f[0] for f in found]
        names = {raw: raw.decode("utf-8", "surrogateescape") for raw in dict.fromkeys(raw_paths)}
        paths = list(map(names.__getitem__, raw_paths))
        lines = list(map(int, [f[1] for f in found]))
        raw_lines = [f[2] for f in found]
        # One decode for all texts (none holds a newline, so the split gives them back one by
        # one); a CRLF line keeps its CR in the raw form, which the text drops as JSON's would.
        blob = b"\n".join(raw_lines).decode("utf-8", "replace")
        texts = blob.split("\n") if found else []
        if "\r" in blob:
            texts = [t[:-1] if t.endswith("\r") else t for t in texts]
        return Matches(paths, lines, texts, raw_lines=raw_lines)
