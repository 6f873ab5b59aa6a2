"""How a complete grep result becomes a page, a value and a spill.

The result arrives as runs of one file from up to two sources: the main search in rg's heading
form (``rg.headingform.FileBlocks``: one ``bytes`` body per file) or, when that form could not be read
for sure, in ``--json`` (``rg.jsonstream.Matches``), and the notebooks' cell matches (``Matches``).
Everything that concerns the whole result is decided per run, never per match: display paths,
the exclusions, the path order, the counts, the sampler's input and the spill (assembled from
the runs by ``render_grep_spill_runs``). Only the matches the page shows are split into line
numbers, decoded texts and submatch spans.

What it must never do: show a path the exclusions or the VCS rule drop, reorder a file's matches,
or show a text longer than ``grep_max_line_bytes`` (it is cut on a character boundary, with a
note, in the page and in the spill alike).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate, chain, compress, islice, repeat
from operator import eq, gt, is_

from ...errors import Codes, ToolError
from ...render.search import _TRUNCATED, render_grep_files_spill, render_grep_spill_runs, truncate_line
from ...rg.headingform import FileBlocks
from ...rg.jsonform import submatch_spans
from ...rg.jsonstream import Matches
from ..context import CallContext
from ..search.flags import VCS_IN_PATH
from ..search.sampling import sample_sorted_paths
from ..search.scans import drop_excluded, lines_have_vcs, lines_name_any
from .spans import literal_spans

__all__ = ["shape_grep", "shaped_bodies"]


def shape_grep(
    ctx: CallContext,
    value: dict,
    sources: list[FileBlocks | Matches],
    strip: str | None,
    prefix: str,
    excluded: list[str],
    root_prefix: str,
    spans_of,
    pattern: str | None = None,
    before: tuple[str, str | None] | None = None,
) -> bytes | None:
    """Fill ``value`` (counts, sampling, the page's ``matches``); return the spill's bytes when the
    result is over the cap, else None.

    rg's paths start with ``strip`` (``./``), which becomes ``prefix``; with ``strip`` None (one
    file searched) every path is ``prefix``; ``root_prefix`` is what every path starts with below
    the search root (the sampler groups by the next segment). ``spans_of`` finds the submatches
    of heading-form lines (``spans.line_records``) when the pattern is not a plain string;
    ``pattern`` is the one rg searched with (the value's own, or it with ``(?i)`` for ignore_case).

    ``before`` (a search cut short, walked in path order): the last display path rg finished and
    the first that may sort among the files it did not search (``cut.complete_before``); only
    the paths up to the first and before the second are kept, so no page skips a matching file.

    ``value["outputMode"]`` other than content makes a page of files with their counts
    (``_shape_files``); ``value["offset"]`` makes a page of the path-ordered result from that
    position on, with no sampling and no spill (the first page already saved the whole).

    A run is kept as parallel lists (path, key in its source, count, source), and the run order
    as indices, so that no per-run object is made for a result of thousands of files.
    """
    limit = ctx.settings.grep_max_line_bytes
    paths: list[str] = []
    keys: list[int] = []
    counts: list[int] = []
    owners: list[FileBlocks | Matches] = []
    for source in sources:
        source_paths, source_keys, source_counts = source.runs()
        paths += source_paths
        keys += source_keys
        counts += source_counts
        owners += [source] * len(source_paths)
    shown = _display_paths(paths, strip, prefix)
    files = set(shown)
    # VCS and protected folders were left out by rg; the paths are checked again one by one only
    # where one scan of them all, joined by newlines, finds such a name
    joined = "\n".join(files)
    vcs = lines_have_vcs(joined)
    hidden = bool(excluded) and lines_name_any(joined, excluded)
    keep = files
    if vcs:
        keep = {p for p in keep if not VCS_IN_PATH.search(p)}
    if hidden:
        keep = set(drop_excluded(list(keep), excluded))
    if before is not None:
        last, unsearched = before
        keep = {p for p in keep if p <= last and (unsearched is None or p < unsearched)}
    # rg searches files in parallel; a stable file order makes pages repeatable. Runs are sorted
    # by display path (stable: a file split over two runs keeps them in rg's order).
    order = sorted(range(len(shown)), key=shown.__getitem__)
    if keep is not files:
        order = [i for i in order if shown[i] in keep]
    sorted_paths = list(map(shown.__getitem__, order))
    sorted_counts = list(map(counts.__getitem__, order))
    total = sum(sorted_counts)
    cap = ctx.settings.grep_max_matches
    value["totalMatches"] = total
    value["filesTotal"] = len(keep)
    offset = value.get("offset")
    if value.get("outputMode", "content") != "content":
        return _shape_files(value, sorted_paths, sorted_counts, cap)
    positions: range | list[int] = range(min(total, cap))
    if offset is not None:
        _check_offset(offset, total, "match", "matches")
        positions = range(offset - 1, min(total, offset - 1 + cap))
    elif total > cap:
        # the display path of each match in path order, for the sampler's bisections
        each = list(chain.from_iterable(map(repeat, sorted_paths, sorted_counts)))
        sample = sample_sorted_paths(each, cap, prefix=root_prefix)
        value["sampled"] = not sample.flat
        if not sample.flat:
            positions = [j for first, count in sample.spans for j in range(first, first + count)]
    value["matches"] = _page(
        pattern or value["pattern"], order, sorted_paths, sorted_counts, owners, keys, positions, limit, spans_of
    )
    value["files"] = len(keep) if len(positions) == total else len({m["path"] for m in value["matches"]})
    if total <= cap or offset is not None:
        return None
    return render_grep_spill_runs(sorted_paths, _spill_pieces(order, owners, keys, counts, limit), total)


def _check_offset(offset: int, total: int, singular: str, plural: str) -> None:
    if offset > max(total, 1):
        raise ToolError(
            Codes.ARGUMENT_INVALID,
            f"offset {offset} is out of range for this grep ({total} {singular if total == 1 else plural})",
        )


def _shape_files(value: dict, sorted_paths: list[str], sorted_counts: list[int], cap: int) -> bytes | None:
    """A page of matching files with their match counts: in path order (files_with_matches) or by
    count, most first, then path (count). Capped at ``cap`` files; over the cap the first page
    saves every file's row (``render_grep_files_spill``), and ``offset`` pages on in the same order.
    """
    rows: list = []
    if any(map(eq, sorted_paths, islice(sorted_paths, 1, None))):
        for path, n in zip(sorted_paths, sorted_counts):
            if rows and rows[-1][0] == path:  # one file split over two runs
                rows[-1][1] += n
            else:
                rows.append([path, n])
    else:  # no file split over two runs (the rule): the rows as they are, made in C
        rows = list(zip(sorted_paths, sorted_counts))
    if value["outputMode"] == "count":
        rows.sort(key=lambda row: -row[1])  # stable: equal counts stay in path order
    offset = value.get("offset")
    start = 0
    if offset is not None:
        _check_offset(offset, len(rows), "file", "files")
        start = offset - 1
    value["fileCounts"] = [{"path": path, "matches": n} for path, n in rows[start : start + cap]]
    value["files"] = len(value["fileCounts"])
    if len(rows) <= cap or offset is not None:
        return None
    return render_grep_files_spill(rows, value["totalMatches"]).encode("utf-8", "replace")


def _display_paths(paths: list[str], strip: str | None, prefix: str) -> list[str]:
    """Each rg path as the tool shows it: ``strip`` becomes ``prefix``; one file searched: ``prefix``."""
    if strip is None:
        return [prefix] * len(paths)
    cut = len(strip)
    joined = "\0".join(paths)  # no path holds a NUL: one replace turns every path at once
    if paths and joined.startswith(strip) and joined.count("\0" + strip) == len(paths) - 1:
        return (prefix + joined[cut:]).replace("\0" + strip, "\0" + prefix).split("\0")
    return [prefix + p[cut:] if p.startswith(strip) else p for p in paths]


def _page(
    pattern: str,
    order: list[int],
    sorted_paths: list[str],
    sorted_counts: list[int],
    owners: list,
    keys: list[int],
    positions,
    limit: int,
    spans_of,
) -> list[dict]:
    """The shown matches at ``positions`` (of the path-ordered result) as the value's dicts."""
    ends = list(accumulate(sorted_counts))
    rows: list[tuple[str, int, str, bytes | None, bytes | None]] = []  # (path, line, text, record, raw bytes)
    for j in positions:
        r = bisect_right(ends, j)
        i = order[r]
        source, k = owners[i], j - ends[r] + sorted_counts[r]
        if isinstance(source, FileBlocks):
            line, raw = source.line(keys[i], k)
            rows.append((sorted_paths[r], line, _decoded(raw), None, raw))
        else:
            x = keys[i] + k
            rows.append((sorted_paths[r], source.lines[x], _untruncated(source.texts[x]), source.record(x), None))
    plain = [k for k, row in enumerate(rows) if row[3] is None and row[4] is not None]
    spans: list = [None] * len(rows)
    if plain:  # read in the heading form: the submatches are found in the shown lines alone
        found = literal_spans(pattern, [rows[k][2] for k in plain])
        if found is None:
            found = spans_of([rows[k][4] for k in plain])
        for k, record in zip(plain, found):
            spans[k] = record
    return [
        _shown(path, line, text, record if span is None else span, limit)
        for (path, line, text, record, _), span in zip(rows, spans)
    ]


# rg's words at the end of a line it printed only the start of (``--max-columns-preview``).
_PREVIEW = re.compile(r" \[\.\.\. (?:omitted end of long line|\d+ more match(?:es)?)\]$")


def preview_columns(limit: int) -> int:
    """rg's ``--max-columns`` for a page that shows ``limit`` bytes of a line: one more, so every line
    rg cuts is longer than the page shows, and the page's own cut (with its suffix) applies."""
    return limit + 1


def without_preview(text: str, limit: int) -> str:
    """``text`` without rg's "omitted end of long line" words when rg printed only its start.

    Only a preview carries them: rg previews a line longer than ``preview_columns(limit)``
    characters, so its shown start is at least that long. A shorter line that happens to end with
    the same words is the file's own text and stays as it is.
    """
    found = _PREVIEW.search(text) if text.endswith("]") else None
    if found is None or found.start() < preview_columns(limit):
        return text
    return text[: found.start()]


def _decoded(raw: bytes) -> str:
    """A heading-form text as the page shows it before any cut: decoded leniently, CR dropped."""
    text = raw.decode("utf-8", "replace")
    return text[:-1] if text.endswith("\r") else text


def _untruncated(text: str) -> str:
    """``text`` without rg's line terminator: what a shown line is when it was not cut."""
    if text.endswith("\n"):
        return text[:-2] if text.endswith("\r\n") else text[:-1]
    return text


def _spill_pieces(order: list[int], owners: list, keys: list[int], counts: list[int], limit: int) -> list:
    """Each run's rows for ``render_grep_spill_runs``, in ``order``, each text as the page shows it."""
    if owners and all(map(is_, owners, repeat(owners[0]))) and isinstance(owners[0], FileBlocks):
        # the common case, one heading-form search and no notebook: C-level passes only
        return shaped_bodies(list(map(owners[0].bodies.__getitem__, map(keys.__getitem__, order))), limit)
    pieces: list = [None] * len(order)
    heading = []
    for j, i in enumerate(order):
        source = owners[i]
        if isinstance(source, FileBlocks):
            heading.append(j)
            pieces[j] = source.bodies[keys[i]]
        else:
            pieces[j] = [
                (source.lines[x], truncate_line(source.texts[x], limit)) for x in range(keys[i], keys[i] + counts[i])
            ]
    for j, body in zip(heading, shaped_bodies([pieces[j] for j in heading], limit)):
        pieces[j] = body
    return pieces


def shaped_bodies(bodies: list[bytes], limit: int) -> list[bytes]:
    """Heading-form bodies with each text as the page shows it: CR dropped, cut to ``limit`` bytes."""
    if not bodies:
        return bodies
    joined = b"\0".join(bodies)  # no body holds a NUL: one pass for all
    if b"\r" in joined:  # a CRLF line keeps its CR in rg's form; the shown text drops it
        joined = joined.replace(b"\r\n", b"\n").replace(b"\r\0", b"\0")
        if joined.endswith(b"\r"):
            joined = joined[:-1]
        bodies = joined.split(b"\0")
    # A line the cap could cut is longer than the cap in ASCII, or than a third of it otherwise
    # (an undecodable byte is shown as U+FFFD, three bytes).
    if joined.isascii():
        suspects: Iterable[int] = compress(range(len(bodies)), map(gt, map(len, bodies), repeat(limit)))
    else:
        third = limit // 3
        suspects = [
            k
            for k in compress(range(len(bodies)), map(gt, map(len, bodies), repeat(third)))
            if len(bodies[k]) > limit or not bodies[k].isascii()
        ]
    for k in suspects:
        bodies[k] = _cut_long_lines(bodies[k], limit)
    return bodies


def _cut_long_lines(body: bytes, limit: int) -> bytes:
    rows = body.split(b"\n")
    for k, row in enumerate(rows):
        if len(row) * 3 > limit:
            number, _, raw = row.partition(b": ")
            text = raw.decode("utf-8", "replace")
            shown = truncate_line(without_preview(text, limit), limit)
            if shown != text:
                rows[k] = number + b": " + shown.encode("utf-8")
    return b"\n".join(rows)


def _shown(path: str, line, text: str, record: bytes | list | None, limit: int) -> dict:
    """One match of the shown page: ``text`` cut to the byte cap, with ``submatches``: character
    spans of the pattern in the shown text (for highlighting in the widgets; never in model text),
    found beforehand (``spans``) or read from the match's raw JSON record."""
    text = without_preview(text, limit)
    shown = truncate_line(text, limit)
    keep_chars = len(shown) if shown == text else len(shown) - len(_TRUNCATED.format(limit))
    if isinstance(record, list):
        spans = [[a, min(b, keep_chars)] for a, b in record if a < keep_chars]
    else:
        try:
            spans = [] if record is None else submatch_spans(record, keep_chars)
        except ValueError as exc:
            raise ToolError(Codes.SEARCH_FAILED, f"grep failed: {exc}") from None
    match = {"path": path, "line": line, "text": shown, "submatches": spans}
    if hasattr(line, "as_value"):  # a match in a notebook cell: line within the cell, cell and id
        match.update(line.as_value())
    return match
