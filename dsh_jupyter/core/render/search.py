"""Model-visible text for glob and grep: canonical value in, exact text out.

Why this exists: glob and grep results are often too big to show whole, and a bounded page that
reads like the complete answer leads an agent to wrong conclusions about a workspace. These
functions are the one place that decides how a page, its counts and its footer read, so every
capped page says how much it shows, of how many, how it was chosen, and where the full result is
(or that it could not be saved), and every page says what was left out (files that could not be
read or dated). The spill functions format the full result that footer points to.

What they must never do: touch the filesystem or a process, print a path except through
``quote_name``, omit the footer from a page that is not the whole result, or build text by
repeated string concatenation (grep pages with tens of thousands of matches are joined once).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from itertools import islice, repeat
from operator import eq

from dsh_jupyter.core.text.quoting import in_message, quote_lines, quote_name, quote_names, quote_names_joined

__all__ = [
    "glob_page_footer",
    "grep_header",
    "grep_next_offset",
    "grep_page_footer",
    "render_glob",
    "render_glob_spill",
    "render_glob_spill_joined",
    "render_grep",
    "render_grep_files_spill",
    "render_grep_spill",
    "render_grep_spill_runs",
    "truncate_line",
]

_READ_HINT = "Use read with offset/limit, or grep this path to search within it."
_NOT_SAVED = "The full result could not be saved."


def _plural(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


# --------------------------------------------------------------------------------------- glob


def _glob_footer(value: dict, shown: int, total: int) -> str:
    head = f"Showing {shown} of {total} paths"
    if value.get("sampled"):
        groups_shown = value["groupsShown"]
        groups_total = value["groupsTotal"]
        entries = "entry" if groups_total == 1 else "entries"
        head += (
            f", sampled across {groups_shown} of the {groups_total} top-level {entries} this pattern"
            " matched instead of taken in modification-time order"
        )
        if groups_shown < groups_total:
            head += "; narrow path to see the others"
    spill = value.get("spill")
    if spill is None:
        return f"({head}. {_NOT_SAVED})"
    # with paths left out (said in the notes above), the saved result is not called full
    whole = "Sorted result" if _glob_left_out(value) else "Full sorted result"
    return f"({head}. {whole} stored at: {spill}. {_READ_HINT})"


def _glob_left_out(value: dict) -> list[str]:
    """The notes on what a glob left out: folders rg could not read, paths that could not be dated."""
    notes = []
    unreadable = value.get("unreadable", 0)
    if unreadable > 0:
        verb = "was" if unreadable == 1 else "were"
        notes.append(f"({_plural(unreadable, 'folder', 'folders')} could not be read and {verb} left out.)")
    undated = value.get("undated", 0)
    if undated > 0:
        verb = "was" if undated == 1 else "were"
        notes.append(f"({_plural(undated, 'file', 'files')} could not be dated and {verb} left out.)")
    return notes


# Said by every answer of a search over a folder while ``respect_ignore_files`` is on: a page that
# holds every match found still left out what the ignore files name, so "Found 1 match" must not
# pass for the whole workspace.
IGNORED_NOTE = (
    "(Files named by .gitignore or .ignore rules were not searched (setting respect_ignore_files); "
    "grep such a file by its path to search it anyway.)"
)


def render_glob(value: dict) -> str:
    """Render a glob page: the shown paths, and a footer whenever the page is not the whole result."""
    lines = ["No files found"] if value["totalPaths"] == 0 else quote_names(value["paths"])
    for note in _glob_notes(value):
        lines += ["", note]
    return "\n".join(lines)


def _glob_notes(value: dict) -> list[str]:
    """The parenthesised paragraphs after the paths: what was left out, said on every page, capped
    or not (the page is not the whole tree), then an over-cap page's footer."""
    total = value["totalPaths"]
    notes = _glob_left_out(value)
    if value.get("ignoreFiles"):
        notes.append(IGNORED_NOTE)
    # A page that is shorter than the total is capped whatever the flag says.
    if total and (value.get("capped") or total > len(value["paths"])):
        notes.append(_glob_footer(value, len(value["paths"]), total))
    return notes


def glob_page_footer(value: dict) -> str:
    """A glob value's ``footer``: its parenthesised paragraphs after the paths, as the text has them."""
    return "\n\n".join(_glob_notes(value))


def render_glob_spill(display_paths: Sequence[str], joined: str | None = None) -> str:
    """The complete glob result for the spill file: one quoted path per line, newline-terminated
    (``joined``: the paths already joined by newlines, if the caller has that string)."""
    if not display_paths:
        return ""
    names = display_paths if isinstance(display_paths, list) else list(display_paths)
    return quote_names_joined(names, joined) + "\n"


def render_glob_spill_joined(joined: str, count: int, data: bytes | None = None, bare: bool = False) -> bytes:
    """``render_glob_spill`` of ``count`` display paths already joined by newlines (none holding
    one), in UTF-8. ``data``: ``joined`` in UTF-8 already (the index's bytes): when every name
    prints bare the file is those bytes and a newline, the text never encoded (nor copied) again.
    ``bare``: the caller has seen that every name is printable ASCII that prints bare (the
    index's list, read in C), so the names are not checked again."""
    if not count:
        return b""
    if bare and data is not None:
        return data + b"\n"
    quoted = quote_lines(joined, count, data)
    if quoted is joined and data is not None:
        return data + b"\n"
    return (quoted + "\n").encode("utf-8", "replace")


# --------------------------------------------------------------------------------------- grep

_TRUNCATED = "... (line truncated to {} bytes)"


def truncate_line(text: str, max_bytes: int) -> str:
    """Strip rg's line terminator and cap the UTF-8 size at ``max_bytes``, on a character boundary."""
    if text.endswith("\n"):
        text = text[:-2] if text.endswith("\r\n") else text[:-1]
    # Each character is at most 4 UTF-8 bytes: short text needs no encoding at all.
    if len(text) * 4 <= max_bytes:
        return text
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    cut = max(max_bytes, 0)
    # Back off over continuation bytes (10xxxxxx) so the cut never splits a character.
    while cut > 0 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return data[:cut].decode("utf-8", "surrogatepass") + _TRUNCATED.format(max_bytes)


def _match_lines(matches: Iterable, ids: bool = False) -> list[str]:
    """Per-file blocks: the quoted path, then ``Line L: TEXT`` lines (``Cell C, line L: TEXT`` in a
    notebook's cells, ``Cell C, output K, line L: TEXT`` in the text of a cell's output K,
    ``Cell C (id="I"), line L: TEXT`` with ``ids`` when the cell has an id, the id quoted as
    ``read`` quotes it); a blank line between files.

    ``matches`` holds dicts ``{path, line, text}`` or ``(path, line, text)`` tuples (the executor
    passes tuples for a complete result: tens of thousands of rows). Files appear in order of
    first appearance; a file's matches stay together even if the input interleaved them (rg
    emits each file's matches contiguously, so normally nothing moves).
    """
    if isinstance(matches, list) and matches and isinstance(matches[0], tuple):
        blocks = _tuple_blocks(matches, ids)
        if blocks is not None:
            return blocks
    by_path: dict[str, list[str]] = {}
    shown_to: dict[str, int] = {}  # with context: the last line number shown in each file's block
    for match in matches:
        if isinstance(match, dict):
            path, line, text, cell = match["path"], match["line"], match["text"], match.get("cell")
            output = match.get("output")
        else:
            path, line, text = match
            cell = getattr(line, "cell", None)  # a notebook match's line knows its cell (CellLine)
            output = getattr(line, "output", None)
        rows = by_path.get(path)
        if rows is None:
            rows = by_path[path] = []
        before = match.get("before") if isinstance(match, dict) else None
        if before is not None:
            # context rows read "Line N-"; "--" where a group does not join the rows above it
            first = before[0][0] if before else line
            if path in shown_to and first > shown_to[path] + 1:
                rows.append("--")
            rows += [f"Line {n}- {t}" for n, t in before]
        rows.append(f"Line {line}: {text}" if cell is None else _cell_row(cell, line, text, ids, output))
        if before is not None:
            rows += [f"Line {n}- {t}" for n, t in match["after"]]
            shown_to[path] = match["after"][-1][0] if match["after"] else line
    out: list[str] = []
    for path, rows in by_path.items():
        if out:
            out.append("")
        out.append(quote_name(path))
        out.extend(rows)
    return out


# A saved result names a cell's id on each of its rows: quoted once per id, not once per row.
_quoted_id = functools.lru_cache(maxsize=4096)(in_message)


def _cell_row(cell: int, line, text: str, ids: bool, output: int | None = None) -> str:
    cell_id = getattr(line, "cell_id", None) if ids else None
    named = f"Cell {cell}" if cell_id is None else f"Cell {cell} (id={_quoted_id(cell_id)})"
    if output is not None:
        named += f", output {output}"
    return f"{named}, line {line}: {text}"


def _row(line, text: str, ids: bool) -> str:
    """One match line of a complete result: ``Line L: TEXT``, or a notebook cell's row."""
    cell = getattr(line, "cell", None)
    return f"Line {line}: {text}" if cell is None else _cell_row(cell, line, text, ids, getattr(line, "output", None))


def _tuple_blocks(matches: list[tuple], ids: bool = False) -> list[str] | None:
    """``_match_lines`` of tuples whose files already come in runs (the complete, path-sorted
    result): the lines formatted by one ``map``, the paths quoted in one batch. None when a
    file's matches are split over two runs (the general path then groups them)."""
    paths, numbers, texts = zip(*matches)
    n = len(paths)
    starts = [i for i in range(n) if i == 0 or paths[i] != paths[i - 1]]
    if len(starts) != len(set(paths)):
        return None
    if set(map(type, numbers)) <= {int}:  # no notebook cell among them: one map (C-level passes)
        formatted = list(map("Line {}: {}".format, numbers, texts))
    else:
        formatted = [_row(number, text, ids) for number, text in zip(numbers, texts)]
    names = quote_names([paths[i] for i in starts])
    out: list[str] = []
    ends = [*starts[1:], n]
    for name, first, end in zip(names, starts, ends):
        if out:
            out.append("")
        out.append(name)
        out += formatted[first:end]
    return out


def _found(shown: int, total: int, partial: bool = False) -> str:
    noun = "match" if total == 1 else "matches"
    least = "at least " if partial else ""  # a search stopped early: more may exist
    if shown >= total:
        return f"Found {least}{total} {noun}"
    return f"Found {shown} of {least}{total} {noun}"


def _partial_note(value: dict) -> str:
    return (
        f"(Partial result: rg was stopped after writing {value['partialAfterBytes']} bytes of matches "
        "(setting raw_output_max_bytes); the counts cover the files it had finished, and other files "
        "may match too. Narrow the pattern, path or include to see every match.)"
    )


_CONTEXT_NOTE = " (rows Line N- are context, not matches)"
_FILE_ORDER = {"files_with_matches": "in path order", "count": "by match count, most first"}


def _files_found(value: dict) -> str:
    total, files = value["totalMatches"], value["filesTotal"]
    return f"Found {_plural(total, 'match', 'matches')} in {_plural(files, 'file', 'files')}"


def _file_rows(rows: Iterable) -> list[str]:
    """``path: N`` per file (the count is always the last ``: N`` of a row, whatever the name)."""
    rows = list(rows)
    names = quote_names([path for path, _ in rows])
    return [f"{name}: {n}" for name, (_, n) in zip(names, rows)]


def render_grep(value: dict) -> str:
    """Render a grep page: header with counts, matches grouped by file, then any notes/footer.

    ``outputMode`` files_with_matches and count show one ``path: N`` row per file instead;
    ``offset`` pages of either form end with the next offset, as ``list`` does.
    """
    mode = value.get("outputMode", "content")
    head = grep_header(value)
    if not head:
        lines = ["No matches found"]
    elif mode != "content":
        lines = [head, ""]
        lines.extend(_file_rows((row["path"], row["matches"]) for row in value["fileCounts"]))
    else:
        lines = [head, ""]
        lines.extend(_match_lines(value["matches"]))
    for note in _grep_notes(value):
        lines += ["", note]
    return "\n".join(lines)


def _page(value: dict) -> tuple[str, int, int]:
    """(output mode, rows shown, rows in the whole result): matches, or files in the files modes."""
    mode = value.get("outputMode", "content")
    if mode == "content":
        return mode, len(value["matches"]), value["totalMatches"]
    return mode, len(value["fileCounts"]), value["filesTotal"]


def grep_header(value: dict) -> str:
    """The count line that starts a grep page (``Found K of N matches``); "" for no matches."""
    mode, shown, total = _page(value)
    if value["totalMatches"] == 0 and not shown:
        return ""
    if mode != "content":
        return f"{_files_found(value)}, {_FILE_ORDER[mode]}"
    context = _CONTEXT_NOTE if value.get("context") else ""
    return _found(shown, total, "partialAfterBytes" in value) + context


def _grep_notes(value: dict) -> list[str]:
    """The parenthesised paragraphs after the rows: what stopped or was skipped, then the footer."""
    mode, shown, total = _page(value)
    notes = []
    if "partialAfterBytes" in value:
        notes.append(_partial_note(value))
    unreadable = value.get("unreadable", 0)
    if unreadable > 0:
        verb = "was" if unreadable == 1 else "were"
        notes.append(f"({_plural(unreadable, 'file', 'files')} could not be read and {verb} skipped.)")
    binary = value.get("binarySkipped", 0)
    if binary > 0:
        notes.append(
            f"({_plural(binary, 'binary file', 'binary files')} "
            f"{'was' if binary == 1 else 'were'} skipped: grep searches text files only.)"
        )
    if value.get("ignoreFiles"):
        notes.append(IGNORED_NOTE)
    offset = value.get("offset")
    if offset is not None and (shown < total or offset > 1):
        notes.append(_offset_footer(offset, shown, total, mode))
    elif shown < total:
        notes.append(_grep_footer(value, shown, total, mode))
    return notes


def grep_page_footer(value: dict) -> str:
    """A grep value's ``footer``: its parenthesised paragraphs after the rows, as the text has them."""
    return "\n\n".join(_grep_notes(value))


def grep_next_offset(value: dict) -> int | None:
    """The offset the footer names for the next page (``nextOffset``): an offset page's, or a
    files page's; None on the last page and for a sampled page of matches (it is not in path order)."""
    mode, shown, total = _page(value)
    offset = value.get("offset")
    if offset is not None and (shown < total or offset > 1):
        last = offset + shown - 1
        return last + 1 if last < total else None
    if shown < total and mode != "content":
        return shown + 1
    return None


def _offset_footer(offset: int, shown: int, total: int, mode: str) -> str:
    """A page asked for by offset: which rows of the ordered whole, and the next offset."""
    last = offset + shown - 1
    what = "matches" if mode == "content" else "files"
    order = "in path order" if mode != "count" else _FILE_ORDER[mode]
    tail = "End of result." if last >= total else f"Use offset={last + 1} to continue."
    return f"(Showing {what} {offset}-{last} of {total} {order}. {tail})"


def _grep_footer(value: dict, shown: int, total: int, mode: str = "content") -> str:
    """Where the full result is; for a sampled page also how much of the tree it covers.

    A page that is the plain path-order head (one file, or a sample that would equal the head)
    makes no sampling claim, as glob's flat rule. A page of files says which files it shows
    and the offset of the next page.
    """
    spill = value.get("spill")
    saved = (
        "Every match found before the stop stored at" if "partialAfterBytes" in value else "Full grep result stored at"
    )
    where = _NOT_SAVED if spill is None else f"{saved}: {spill}. {_READ_HINT}"
    if mode != "content":
        head = f"Showing files 1-{shown} of {total} {_FILE_ORDER[mode]}. Use offset={shown + 1} to continue"
        return f"({head}. {where})"
    if not value.get("sampled"):
        return f"({where})"
    files, files_total = value["files"], value["filesTotal"]
    matched = _plural(files_total, "file", "files") + " that matched"
    cover = f"all {matched}" if files >= files_total else f"{files} of the {matched}"
    head = (
        f"Showing {shown} of {_plural(total, 'match', 'matches')} from {cover}, sampled across "
        "top-level entries and files instead of taken in path order"
    )
    if files < files_total:
        head += "; narrow path or include to see the others"
    return f"({head}. {where})"


def render_grep_spill_runs(paths: Sequence[str], pieces: Sequence[bytes | Sequence[tuple]], total: int) -> bytes:
    """``render_grep_spill`` of a complete result held as runs of one file, in output order, as
    UTF-8 bytes: the display path of each run and its rows, either a file's lines as rg's heading
    form prints them (``N: TEXT`` joined by newlines, each text already shown as the page shows
    it: CR dropped, cut to the byte cap) or ``(line, text)`` pairs (a notebook's cells, a result
    read from ``--json``). Consecutive runs of one path make one block (rg may split a file's
    matches).

    Why bytes and runs: a broad grep holds tens of thousands of matches in a few thousand files;
    a heading-form file becomes its ``Line N: TEXT`` lines by one C-level replace, and the whole
    is one join, with no per-match object at all, and the spill file is written as these bytes.
    Undecodable text bytes become U+FFFD here, in one pass over the whole, as the page decodes
    them.
    """
    if total == 0 and not paths:
        return b"No matches found\n"
    head = _found(total, total).encode()
    n = len(paths)
    if all(map(isinstance, pieces, repeat(bytes))) and not any(map(eq, paths, islice(paths, 1, None))):
        # Every run a heading-form file of its own: name, its lines, a blank line; all C-level.
        parts: list[bytes] = [b""] * (4 * n)
        parts[0::4] = "\0".join(quote_names(list(paths))).encode("utf-8", "replace").split(b"\0")
        parts[1::4] = [b"\nLine "] * n
        parts[2::4] = list(map(bytes.replace, pieces, repeat(b"\n"), repeat(b"\nLine ")))  # type: ignore[arg-type]
        parts[3::4] = [b"\n\n"] * n
        parts[-1] = b"\n"
        data = b"".join([head, b"\n\n", *parts])
    else:
        heads: list[str] = []
        for path in paths:
            if not heads or path != heads[-1]:
                heads.append(path)
        names = iter(quote_names(heads))
        out = [head]
        previous = None
        for path, rows in zip(paths, pieces):
            if path != previous:
                out.append(b"")
                out.append(next(names).encode("utf-8", "replace"))
                previous = path
            if isinstance(rows, bytes):
                out.append(b"Line " + rows.replace(b"\n", b"\nLine "))
            else:
                out.append("\n".join([_row(number, text, True) for number, text in rows]).encode("utf-8", "replace"))
        data = b"\n".join(out) + b"\n"
    return data if data.isascii() else data.decode("utf-8", "replace").encode("utf-8")


def render_grep_spill(matches: Sequence[dict], total: int) -> str:
    """The complete grep result for the spill file: header and every match, newline-terminated."""
    if total == 0 and not matches:
        return "No matches found\n"
    lines = [_found(total, total), ""]
    lines.extend(_match_lines(matches, ids=True))
    return "\n".join(lines) + "\n"


def render_grep_files_spill(rows: Sequence[Sequence], total: int) -> str:
    """The complete files_with_matches or count result for the spill file: every ``path: N`` row."""
    head = f"Found {_plural(total, 'match', 'matches')} in {_plural(len(rows), 'file', 'files')}"
    return "\n".join([head, "", *_file_rows(rows)]) + "\n"
