"""Where a ``replace`` pattern occurs, and what each occurrence becomes, as ripgrep says.

How: rg itself finds the occurrences and makes each one's replacement (``--json --replace``: a
submatch's byte offsets, its text and its replaced text), so the pattern means exactly what it
means in ``grep`` (rg's regex syntax, ``$1``/``${name}`` in the replacement, ``--fixed-strings``
for a literal). Files are searched as grep searches them (the same discovery, include, exclude,
VCS and protected folders); notebooks by their cell sources only, from a text made of them that
rg reads on its standard input (never outputs or metadata). Each file that holds an occurrence is
then read whole beneath the search root and every occurrence is checked against its bytes, so
the version recorded is the one the occurrences were found in. ``search_sources`` searches given
texts the same way (a notebook's cells; a live document's content, ``live.py``).

An occurrence's id is a short hash of the session, the file, its version, the place and the text
matched and put in: it names that occurrence in that version of that file and no other. Its
first four characters name the file alone, so an id whose file changed can still say which.

What it must never do: search a notebook's outputs or metadata, or keep an occurrence whose
bytes the file read afterwards does not hold.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import json
import os
from dataclasses import dataclass, field

from ...documents import Presence
from ...errors import Codes, ToolError
from ...fs.files import file_version, pread_upto
from ...fs.tree import proc_fd_path
from ...index.plan import plan
from ...notebooks.format import NotNotebook, parse_notebook
from ...rg.recheck import Rechecker
from ...rg.runner import memory_file
from ...text.quoting import in_message
from ..context import CallContext
from ..grep.indexed import indexed_targets
from ..grep.notebooks import NOT_NOTEBOOKS, NotebookListing, searches_notebook_file
from ..search.flags import VCS_EXCLUDES, discovery_flags, exclusion_flags, hide_flags, user_exclusion_flags
from ..search.root import SearchRoot, excluded_below, inside_vcs
from ..search.run import diagnostic, file_errors, overflow_error, run_search, unfenced

__all__ = [
    "FileHits",
    "Found",
    "Occurrence",
    "find_occurrences",
    "occurrence_id",
    "path_tag",
    "search_args",
    "search_sources",
]


@dataclass
class Occurrence:
    id: str
    start: int  # byte offset in the file (or, in a notebook, in its cell's source)
    end: int
    match: bytes
    replacement: bytes
    line: int  # 1-based, in the file or in the cell
    before: str  # the whole line, as it is
    after: str  # the line with this occurrence replaced
    column: int = 0  # where the occurrence starts in ``before``, in characters


@dataclass
class FileHits:
    rel: str  # below the search root
    display: str
    real: str
    notebook: bool
    data: bytes = b""
    st: os.stat_result | None = None
    occurrences: list[Occurrence] = field(default_factory=list)
    cells: dict[int, list[Occurrence]] = field(default_factory=dict)  # a notebook's, by 1-based cell
    version: str = ""  # what the ids are tied to: the file's version, or its shared document's (``live``)
    presence: Presence | None = None  # open in JupyterLab (shared: its document was searched, ``live``)
    base: str | dict | None = None  # a shared document's content the occurrences were found in

    def all(self) -> list[tuple[int | None, Occurrence]]:
        if not self.notebook:
            return [(None, o) for o in self.occurrences]
        return [(c, o) for c in sorted(self.cells) for o in self.cells[c]]


@dataclass
class Found:
    files: list[FileHits]
    unreadable: int = 0
    too_large: int = 0  # files holding an occurrence, larger than edit_max_bytes: left out

    @property
    def total(self) -> int:
        return sum(len(f.all()) for f in self.files)


def path_tag(real: str) -> str:
    """The four hex characters that start the id of every occurrence in the file ``real``."""
    return hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:4]


def occurrence_id(session: str, real: str, version: str, cell: int | None, o: Occurrence) -> str:
    h = hashlib.sha256()
    for part in (session, real, version, str(cell), str(o.start), str(o.end)):
        h.update(part.encode("utf-8", "surrogateescape") + b"\0")
    h.update(o.match + b"\0" + o.replacement)
    return path_tag(real) + h.hexdigest()[:8]


def _bytes(obj: dict) -> bytes:
    if "text" in obj:
        return obj["text"].encode("utf-8", "surrogateescape")
    return base64.b64decode(obj["bytes"])


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace").rstrip("\r\n")


def _records(stdout: bytes):
    """rg's match records: (path bytes, line number, byte offset of the line, line, submatches)."""
    for raw in stdout.splitlines():
        if not raw.startswith(b'{"type":"match"'):
            continue
        data = json.loads(raw)["data"]
        subs = [(s["start"], s["end"], _bytes(s["match"]), _bytes(s["replacement"])) for s in data["submatches"]]
        yield _bytes(data["path"]), data["line_number"], data["absolute_offset"], _bytes(data["lines"]), subs


def _occurrences(line_no: int, offset: int, line: bytes, subs) -> list[Occurrence]:
    out = []
    for start, end, match, replacement in subs:
        after = line[:start] + replacement + line[end:]
        column = len(line[:start].decode("utf-8", "replace"))
        out.append(
            Occurrence("", offset + start, offset + end, match, replacement, line_no, _text(line), _text(after), column)
        )
    return out


def search_args(pattern: str, replacement: str, literal: bool, ignore_case: bool) -> list[str]:
    if literal:  # plain text both ways: a $ in the replacement is a $ ($$ to rg)
        replacement = replacement.replace("$", "$$")
    flags = ["--json", f"--replace={replacement}"]
    if literal:
        flags.append("--fixed-strings")
    if ignore_case:
        flags.append("--ignore-case")
    return [*flags, f"--regexp={pattern}"]


def find_occurrences(
    ctx: CallContext,
    root: SearchRoot,
    pattern: str,
    replacement: str,
    include: str | None,
    excludes: list[str],
    literal: bool,
    ignore_case: bool,
    value: dict | None = None,
) -> Found:
    """Every occurrence below the search root, file by file in path order, each file read whole.
    ``value``: the answer's, told which way the search went when the workspace index is in play
    (rg searches the index's candidate files only, as grep does: ``grep/indexed.py``)."""
    found = Found([])
    if inside_vcs(ctx, root):
        return found
    search = search_args(pattern, replacement, literal, ignore_case)
    excluded = excluded_below(ctx, root)
    one_notebook = searches_notebook_file(root)
    hits: dict[str, FileHits] = {}
    listing = NotebookListing(ctx, root, include, excluded, excludes)
    try:
        if not one_notebook:
            targets = None
            if root.is_dir and value is not None:
                query = plan(pattern, ignore_case=ignore_case, literal=literal)
                targets = indexed_targets(ctx, root, query, include, excludes, value)
            flags = [*discovery_flags(ctx), *(targets.flags if targets is not None else [])]
            if include is not None:
                flags.append(f"--glob={include}")
            flags += [
                *VCS_EXCLUDES,
                NOT_NOTEBOOKS,
                *hide_flags(ctx),
                *exclusion_flags(excluded),
                *user_exclusion_flags(excludes),
                *search,
                "--",
            ]
            if targets is not None:  # no candidate: rg reads its empty standard input
                flags += targets.paths or ["-"]
            else:
                flags.append("." if root.is_dir else (proc_fd_path(root.fd) or root.real))
            outcome = run_search(ctx, flags, "replace", root)
            if outcome.overflow:
                raise overflow_error(ctx, "replace")
            if outcome.returncode == 2:
                found.unreadable = file_errors(outcome)
                if not outcome.stdout and not found.unreadable:
                    raise ToolError(Codes.SEARCH_FAILED, f"replace failed: {diagnostic(outcome)}")
            for path, line_no, offset, line, subs in _records(outcome.stdout):
                rel = path.decode("utf-8", "surrogateescape").removeprefix("./") if root.is_dir else ""
                fh = hits.get(rel)
                if fh is None:
                    fh = hits[rel] = _file(root, rel, False)
                fh.occurrences.extend(_occurrences(line_no, offset, line, subs))
    finally:
        listing.wait()
    if root.is_dir:
        notebooks = listing.result()
    else:
        notebooks = [""] if one_notebook else []
    with Rechecker(root.fd) as check:
        for rel in sorted(hits):
            _load_checked(ctx, root, check, hits[rel], found)
        if notebooks:
            for fh in _notebook_hits(ctx, root, check, notebooks, search, found):
                hits[fh.rel] = fh
    if root.is_dir and unfenced(ctx):
        hits = {rel: fh for rel, fh in hits.items() if fh.st is not None}
    linked = ctx.resolver.visibility.linked_protected()
    files = []
    for rel in sorted(hits):
        fh = hits[rel]
        if fh.st is None:
            continue
        if linked and fh.st.st_nlink > 1 and (fh.st.st_dev, fh.st.st_ino) in linked:
            continue
        version = fh.version = file_version(fh.st)
        for cell, o in fh.all():
            o.id = occurrence_id(ctx.session_key, fh.real, version, cell, o)
        files.append(fh)
    found.files = files
    return found


def _file(root: SearchRoot, rel: str, notebook: bool) -> FileHits:
    if root.is_dir:
        return FileHits(rel, root.prefix + rel, os.path.join(root.real, rel), notebook)
    return FileHits(rel, root.target.display, root.real, notebook)


def _read(
    root: SearchRoot, check: Rechecker, rel: str, limit: int
) -> tuple[bytes, os.stat_result] | os.stat_result | None:
    """The file's bytes and status; only its status when it is larger than ``limit``; None when
    it is gone, not a regular file beneath the root, or changed while it was read."""
    fd = check.open_regular(rel) if root.is_dir else os.dup(root.fd)
    if fd is None:
        return None
    try:
        st = os.fstat(fd)
        if st.st_size > limit:
            return st
        data = pread_upto(fd, st.st_size)
        if len(data) != st.st_size or file_version(os.fstat(fd)) != file_version(st):
            return None
        return data, st
    finally:
        os.close(fd)


def _changed_while_searched(fh: FileHits) -> ToolError:
    return ToolError(
        Codes.SEARCH_FAILED, f"replace failed: {in_message(fh.display)} changed while it was searched; try again"
    )


def _load_checked(ctx: CallContext, root: SearchRoot, check: Rechecker, fh: FileHits, found: Found) -> None:
    """Read the file whole and check every occurrence rg reported against its bytes."""
    got = _read(root, check, fh.rel, ctx.settings.edit_max_bytes)
    if got is None:
        return  # gone, or not a regular file beneath the root any more
    if isinstance(got, os.stat_result):
        found.too_large += 1
        return
    data, st = got
    for o in fh.occurrences:
        if data[o.start : o.end] != o.match:
            raise _changed_while_searched(fh)
    fh.data, fh.st = data, st


def search_sources(
    ctx: CallContext, root: SearchRoot, search: list[str], sources: list[bytes]
) -> list[list[Occurrence]]:
    """The occurrences in each of ``sources`` (a cell's source, a live document's text): one rg
    run over a text made of them all, read on its standard input, each occurrence mapped back to
    its source (byte offsets and line numbers within it)."""
    kept = [i for i, source in enumerate(sources) if source and b"\0" not in source]  # empty or binary: none
    out: list[list[Occurrence]] = [[] for _ in sources]
    if not kept:
        return out
    fd = memory_file("dsh-replace-cells")
    starts: list[int] = []
    pos = 0
    try:
        for i in kept:
            starts.append(pos)
            chunk = sources[i] if sources[i].endswith(b"\n") else sources[i] + b"\n"
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
            pos += len(chunk)
        os.lseek(fd, 0, os.SEEK_SET)
        outcome = run_search(ctx, [*search, "--", "-"], "replace", root, stdin=fd)
    finally:
        os.close(fd)
    if outcome.overflow:
        raise overflow_error(ctx, "replace")
    if outcome.returncode == 2 and not outcome.stdout:
        raise ToolError(Codes.SEARCH_FAILED, f"replace failed: {diagnostic(outcome)}")
    for _path, _line_no, offset, line, subs in _records(outcome.stdout):
        k = bisect.bisect_right(starts, offset) - 1
        index, local = kept[k], offset - starts[k]
        line_no = sources[index].count(b"\n", 0, local) + 1
        out[index].extend(_occurrences(line_no, local, line, subs))
    return out


def _notebook_hits(
    ctx: CallContext, root: SearchRoot, check: Rechecker, rels: list[str], search: list[str], found: Found
):
    """The occurrences in the cell sources of the notebooks ``rels`` (``search_sources``), by
    notebook, cell and byte offset in the cell's source."""
    limit = min(ctx.settings.edit_max_bytes, ctx.settings.notebook_max_bytes)
    owners: list[tuple[FileHits, int]] = []  # (notebook, cell)
    sources: list[bytes] = []
    for rel in rels:
        got = _read(root, check, rel, limit)
        if got is None:
            continue
        if isinstance(got, os.stat_result):  # its cells were not searched: said, whether or not they match
            found.too_large += 1
            continue
        data, st = got
        try:
            nb = parse_notebook(data)
        except NotNotebook:
            continue  # not a notebook: the main search left it out as *.ipynb (grep searches it as text)
        fh = _file(root, rel, True)
        fh.data, fh.st = data, st
        for cell in nb.cells:
            source = cell.source.encode("utf-8", "surrogatepass")
            owners.append((fh, cell.index))
            sources.append(source)
    if not owners:
        return []
    out: dict[str, FileHits] = {}
    for (fh, index), occs in zip(owners, search_sources(ctx, root, search, sources)):
        if occs:
            fh.cells[index] = occs
            out[fh.rel] = fh
    return [out[rel] for rel in sorted(out)]
