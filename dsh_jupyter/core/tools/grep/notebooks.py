"""``grep`` in notebooks: matches in cell sources (``Cell C, line L``) and, asked, in outputs' text.

Why it exists: searched as files, notebooks answer with JSON lines (``Line 812:       "    df =
load()\\n",``), miss what their escaping hides (``^import`` never matches ``"import os\\n",``)
and match inside base64 images. So the main search leaves ``*.ipynb`` out (``NOT_NOTEBOOKS``), and
here the notebooks below the search root are listed (the same discovery flags, include glob and
exclusions), parsed, and their cell sources are searched by ripgrep itself: one run over a text
made of every cell's source, read from standard input, so the pattern means exactly what it means
everywhere else. Each match is mapped back to its notebook, cell and line; the line number is a
``CellLine`` (an ``int`` that also knows its cell), which the page, the spill and the value carry.
A ``.ipynb`` that is not a valid notebook is searched as text, as ``read`` shows it.

``notebook_scope`` (``SCOPES``) says which texts of a cell go into that text: its source
(``sources``, the default), the text of its outputs (``outputs``: ``notebooks.outputs`` makes it,
the text ``read`` shows under ``[output K: ...]``, ANSI escapes removed) or both (``all``), in the
order the cell view shows them, so a notebook's matches come in its own order. A line of an
output is a ``CellLine`` that also knows the output's number, K as ``read`` numbers outputs.

What it must never do: open a notebook by a path string (each is opened beneath the search
root's descriptor, no symlink followed), search an output the scope did not ask for, or give rg
anything but the cells' text: never a payload (base64 images, other MIME types) or metadata.
"""

from __future__ import annotations

import bisect
import os
import threading
from collections.abc import Sequence

from ...caches.notebooks import plain_globs
from ...caches.parsed import ParsedNotebooks, parse_open
from ...errors import Codes, ToolError
from ...fs.files import pread_all
from ...fs.textwindow import BINARY_SNIFF_BYTES
from ...notebooks.format import NotNotebook, is_notebook_name
from ...notebooks.outputs import output_text
from ...rg.jsonform import RgMatch
from ...rg.recheck import Rechecker
from ...rg.runner import memory_file
from ..context import CallContext
from ..search.flags import (
    VCS_DIRS,
    VCS_EXCLUDES,
    VCS_IN_PATH,
    discovery_flags,
    exclusion_flags,
    hide_flags,
    user_exclusion_flags,
)
from ..search.root import SearchRoot
from ..search.run import run_search
from ..search.scans import drop_excluded
from .spans import search_input

__all__ = ["NOT_NOTEBOOKS", "SCOPES", "CellLine", "NotebookListing", "search_notebooks", "searches_notebook_file"]

NOT_NOTEBOOKS = "--glob=!*.ipynb"  # after the include glob: a later glob wins in rg
SCOPES = ("sources", "outputs", "all")  # notebook_scope: what of a notebook's cells is searched


class CellLine(int):
    """A line number within a cell's source, or within one of its outputs' text, that also names
    the cell (1-based index, id or None) and the output (1-based, as ``read`` numbers them; None
    for a source line)."""

    cell: int
    cell_id: str | None
    output: int | None

    def __new__(cls, line: int, cell: int, cell_id: str | None, output: int | None = None) -> CellLine:
        obj = super().__new__(cls, line)
        obj.cell, obj.cell_id, obj.output = cell, cell_id, output
        return obj

    def as_value(self) -> dict:
        value = {"line": int(self), "cell": self.cell, "cellId": self.cell_id}
        if self.output is not None:
            value["output"] = self.output
        return value


def searches_notebook_file(root: SearchRoot) -> bool:
    """Whether the search root is one notebook file (searched here only, not by the main run)."""
    return not root.is_dir and not root.target.in_spill and is_notebook_name(root.target.lexical)


class _Stream:
    """The text rg searches, written as it is made into an anonymous file rg reads as its input.

    It is made of segments of lines (a cell's source, or a whole file searched as text), each
    remembered with the file and cell it came from, so a line of the stream maps back to them.
    """

    def __init__(self) -> None:
        self.fd = memory_file("dsh-notebook-cells")
        self.starts: list[int] = []  # 1-based first stream line of each segment
        self.owners: list[tuple[str, int | None, str | None, int | None]] = []  # (rg-style path, cell, id, output)
        self.lines = 0

    def close(self) -> None:
        os.close(self.fd)

    def _write(self, data: bytes) -> None:
        data = data.replace(b"\0", b"\xef\xbf\xbd")  # a NUL would make rg call the whole stream binary
        view, pos = memoryview(data), 0
        while pos < len(data):
            pos += os.write(self.fd, view[pos:])
        self.lines += data.count(b"\n")

    def add(self, data: bytes, path: str, cell: int | None, cell_id: str | None, output: int | None = None) -> None:
        if not data:
            return
        self.starts.append(self.lines + 1)
        self.owners.append((path, cell, cell_id, output))
        self._write(data if data.endswith(b"\n") else data + b"\n")

    def add_file(self, fd: int, path: str) -> None:
        """The whole file ``fd`` as one segment, copied in chunks (it may be large)."""
        first, pos, last = True, 0, b"\n"
        while True:
            chunk = os.pread(fd, _CHUNK, pos)
            if not chunk:
                break
            if first:
                self.starts.append(self.lines + 1)
                self.owners.append((path, None, None, None))
                first = False
            self._write(chunk)
            pos, last = pos + len(chunk), chunk[-1:]
        if not first and last != b"\n":
            self._write(b"\n")

    def place(self, line: int) -> tuple[str, int]:
        """``(path, line number)`` of stream line ``line``: a ``CellLine`` inside a cell."""
        i = bisect.bisect_right(self.starts, line) - 1
        path, cell, cell_id, output = self.owners[i]
        local = line - self.starts[i] + 1
        return path, (local if cell is None else CellLine(local, cell, cell_id, output))

    def rewind(self) -> None:
        os.lseek(self.fd, 0, os.SEEK_SET)


_CHUNK = 1 << 22


def _add_notebook(
    stream: _Stream, fd: int, path: str, max_bytes: int, scope: str = "sources", parsed: ParsedNotebooks | None = None
) -> None:
    """The notebook's cell sources, or its outputs' text, or both (``scope``); a file that is not a
    notebook (or is too large to parse) as text, whatever the scope. ``parsed``: the parses kept
    per file version (only read here)."""
    fst = os.fstat(fd)
    if fst.st_size <= max_bytes:
        try:
            nb = parse_open(parsed, fd, fst, lambda: pread_all(fd, fst.st_size))
        except NotNotebook:
            pass
        else:
            sources, outputs = scope != "outputs", scope != "sources"
            for cell in nb.cells:
                if sources:
                    stream.add(cell.source.encode("utf-8", "surrogatepass"), path, cell.index, cell.id)
                if outputs:
                    for number, out in enumerate(cell.outputs, start=1):  # numbered as read numbers them
                        text = output_text(out) if isinstance(out, dict) else None
                        if text:  # every line read shows under the output, a last empty one too
                            data = (text + "\n").encode("utf-8", "surrogatepass")
                            stream.add(data, path, cell.index, cell.id, number)
            return
    if b"\0" not in os.pread(
        fd, BINARY_SNIFF_BYTES, 0
    ):  # searched as text, as read shows it; binary skipped as rg does
        stream.add_file(fd, path)


def _list(
    ctx: CallContext, root: SearchRoot, include: str | None, excluded: list[str], excludes: Sequence[str] = ()
) -> list[str]:
    """The notebooks below the search root that the main search would have searched, in path order.

    From the kept tree (``caches.notebooks``) when no include glob, no ``exclude`` glob and no hide
    glob needs rg's own reading; else by an rg walk.
    """
    vis = ctx.resolver.visibility
    tree = ctx.notebooks
    quick = include is None and not excludes and not ctx.settings.respect_ignore_files
    if tree is not None and quick and plain_globs(vis.hide_globs):
        rels = tree.list_notebooks(
            root.fd,
            shown=vis.shown,
            skip_dirs=frozenset(VCS_DIRS),
            excluded=frozenset(excluded),
            cancelled=ctx.cancel.is_set,
        )
        if rels is None:
            raise ToolError(Codes.SEARCH_ABORTED, "grep was cancelled before it finished")
        return sorted(drop_excluded(rels, excluded))
    argv = [
        "--files",
        "--null",
        "--threads=1",
        *discovery_flags(ctx),
        f"--glob={include}" if include else "--glob=*.ipynb",
        *VCS_EXCLUDES,
        *hide_flags(ctx),
        *exclusion_flags(excluded),
        *user_exclusion_flags(list(excludes)),
        "--",
        ".",
    ]
    outcome = run_search(ctx, argv, "grep", root)
    rels = [
        p[2:] if p.startswith("./") else p for p in outcome.stdout.decode("utf-8", "surrogateescape").split("\0") if p
    ]
    rels = [p for p in rels if is_notebook_name(p) and not VCS_IN_PATH.search(p)]
    return sorted(drop_excluded(rels, excluded))


class NotebookListing:
    """The listing of the notebooks below a folder root, made by a thread while the main rg runs.

    Why a thread: the listing is a second walk of the tree; alongside the main search it costs
    little more than the longer of the two. ``result()`` waits for it and raises what it raised.
    The caller must call ``result()`` (or ``wait()``) before the search root's descriptor is
    closed: the listing's rg runs in that folder through ``/proc/self/fd/N``.
    """

    def __init__(
        self, ctx: CallContext, root: SearchRoot, include: str | None, excluded: list[str], excludes: Sequence[str] = ()
    ) -> None:
        self._rels: list[str] = []
        self._error: BaseException | None = None
        self._thread = None
        if root.is_dir and not root.target.in_spill:
            self._thread = threading.Thread(
                target=self._run,
                args=(ctx, root, include, excluded, excludes),
                name="dsh-notebook-listing",
                daemon=True,
            )
            self._thread.start()

    def _run(self, ctx, root, include, excluded, excludes) -> None:
        try:
            self._rels = _list(ctx, root, include, excluded, excludes)
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def result(self) -> list[str]:
        self.wait()
        if self._error is not None:
            raise self._error
        return self._rels


def search_notebooks(
    ctx: CallContext,
    root: SearchRoot,
    pattern: str,
    include: str | None,
    excluded: list[str],
    listing: NotebookListing | None = None,
    excludes: Sequence[str] = (),
    scope: str = "sources",
) -> tuple[list[RgMatch], list[bytes]]:
    """The matches in the cells of the notebooks the search covers (their sources, their outputs'
    text or both, as ``scope`` says), as rg matches and records.

    Paths are as the main run prints them (``./rel`` below a folder root); a line inside a cell is
    a ``CellLine``. Raises the search's ``ToolError`` s (a bad pattern, a timeout, a cancel).
    """
    if root.target.in_spill:
        return [], []
    limit = ctx.settings.notebook_max_bytes
    stream = _Stream()
    try:
        if root.is_dir:
            rels = listing.result() if listing is not None else _list(ctx, root, include, excluded, excludes)
            with Rechecker(root.fd) as check:
                for rel in rels:
                    if ctx.cancel.is_set():
                        raise ToolError(Codes.SEARCH_ABORTED, "grep was cancelled before it finished")
                    fd = check.open_regular(rel)
                    if fd is None:
                        continue  # gone, or no longer a regular file beneath the root
                    try:
                        _add_notebook(stream, fd, "./" + rel, limit, scope, ctx.parsed)
                    except OSError:
                        pass
                    finally:
                        os.close(fd)
        elif searches_notebook_file(root):
            _add_notebook(stream, root.fd, root.target.display, limit, scope, ctx.parsed)
        if not stream.starts:
            return [], []
        stream.rewind()
        found, records = search_input(ctx, root, pattern, stream.fd)
    finally:
        stream.close()
    placed = []
    for m in found:
        path, line = stream.place(m.line)
        placed.append(RgMatch(path, line, m.text))
    return placed, records
