"""Parse ``rg --json`` output into match records, quickly.

Why this exists: grep runs ripgrep with ``--json`` so that file names and line text that are not
valid UTF-8 survive (rg sends them as base64 ``bytes``) and so that a path containing ``:`` or a
newline cannot be confused with the line number or the next record. Output can run to tens of
megabytes, so only ``match`` records are parsed: every other record is recognised by its prefix
and skipped without decoding.

What it must never do: run rg, touch the filesystem, or silently drop or guess at a record it
cannot read. A match record with a missing or broken field, a line that is not JSON, or a
record cut off mid-line raises ``ValueError`` starting with ``malformed rg --json output:``
(callers map it to ``SEARCH_FAILED``), so a damaged stream is not reported as a short but
complete result.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

import orjson

__all__ = ["RgMatch", "parse_match_records", "parse_matches", "submatch_spans"]


@dataclass(frozen=True, slots=True)
class RgMatch:
    """One matching line: rg's path as printed, its 1-based line number (0 if rg gave none), its text."""

    path: str
    line: int
    text: str


# rg serialises begin/match/context/end records with "type" first, exactly like this; the final
# summary record is written by a different serialiser and starts with {"data": instead.
_MATCH = b'{"type":"match"'
_SKIP = (b'{"type":"begin"', b'{"type":"end"', b'{"type":"context"')
_OFFSET_KEY = b',"absolute_offset":'


def _malformed(line_no: int, why: str) -> ValueError:
    return ValueError(f"malformed rg --json output: line {line_no}: {why}")


def _data_text(obj: object, field: str, line_no: int) -> str:
    """Decode rg's ``{"text": str}`` or ``{"bytes": base64}`` (non-UTF-8 bytes become U+FFFD)."""
    if isinstance(obj, dict):
        text = obj.get("text")
        if isinstance(text, str):
            return text
        encoded = obj.get("bytes")
        if isinstance(encoded, str):
            try:
                raw = base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise _malformed(line_no, f"{field} bytes are not base64") from exc
            # A path keeps its undecodable bytes as surrogate escapes (so it can be named back);
            # line text gets replacement characters.
            return raw.decode("utf-8", "surrogateescape" if field == "path" else "replace")
    raise _malformed(line_no, f"match record has no {field} text or bytes")


def _load(line: bytes, line_no: int) -> dict:
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise _malformed(line_no, "not valid JSON") from exc
    if not isinstance(record, dict) or not isinstance(record.get("type"), str):
        raise _malformed(line_no, "record has no type")
    return record


def _match(record: dict, line_no: int) -> RgMatch:
    data = record.get("data")
    if not isinstance(data, dict):
        raise _malformed(line_no, "match record has no data object")
    if "line_number" not in data:
        raise _malformed(line_no, "match record has no line_number")
    number = data["line_number"]
    if number is None:
        number = 0
    elif not isinstance(number, int) or isinstance(number, bool) or number < 0:
        raise _malformed(line_no, "match record has an invalid line_number")
    return RgMatch(
        path=_data_text(data.get("path"), "path", line_no),
        line=number,
        text=_data_text(data.get("lines"), "lines", line_no),
    )


def parse_matches(stdout: bytes) -> list[RgMatch]:
    """Every ``match`` record in ``stdout``, in rg's output order.

    The fast path parses all match records with one ``orjson`` call (as one JSON array) and
    reads their fields directly; anything unexpected sends the whole output through the careful
    line-by-line parser below, which either agrees or raises the precise error.
    """
    return parse_match_records(stdout)[0]


def parse_match_records(stdout: bytes) -> tuple[list[RgMatch], list[bytes]]:
    """``parse_matches`` and, in the same order, each match's raw record line.

    The raw lines cost nothing extra (they are slices the parser makes anyway); a caller keeps
    the few it shows and reads their submatches with ``submatch_spans``, so the complete result
    never pays for parsing the submatch arrays.
    """
    lines = stdout.split(b"\n")
    picked = [line for line in lines if line.startswith(_MATCH)]
    try:
        return _fast(lines, picked), picked
    except Exception:
        records: list[bytes] = []
        return _careful(lines, records), records


def submatch_spans(record: bytes, keep: int) -> list[list[int]]:
    """``[[start, end], ...]``: where the pattern matched, as character offsets into the line text.

    rg reports byte offsets into the line's bytes; they are turned into offsets into the decoded
    text (as ``RgMatch.text`` holds it) and clipped to its first ``keep`` characters (the part of
    a long line that is shown); a span that starts past them is left out. Raises ``ValueError``
    (``malformed rg --json output: …``) on a record that is not a well-formed match.
    """
    data = _load(record, 1).get("data")
    if not isinstance(data, dict):
        raise _malformed(1, "match record has no data object")
    lines = data.get("lines")
    if isinstance(lines, dict) and isinstance(lines.get("text"), str):
        raw = lines["text"].encode("utf-8", "surrogatepass")
    else:
        raw = base64.b64decode(_data_text_bytes(lines))
    spans = []
    for sub in data.get("submatches") or ():
        start, end = (sub.get("start"), sub.get("end")) if isinstance(sub, dict) else (None, None)
        if type(start) is not int or type(end) is not int or not 0 <= start <= end <= len(raw):
            raise _malformed(1, "match record has an invalid submatch")
        first = len(raw[:start].decode("utf-8", "replace"))
        if first >= keep:
            continue
        last = min(len(raw[:end].decode("utf-8", "replace")), keep)
        spans.append([first, last])
    return spans


def _data_text_bytes(obj: object) -> str:
    if isinstance(obj, dict) and isinstance(obj.get("bytes"), str):
        return obj["bytes"]
    raise _malformed(1, "match record has no lines text or bytes")


def _fast(lines: list[bytes], picked: list[bytes]) -> list[RgMatch]:
    for line in lines:
        if line and not line.startswith(_MATCH) and not (line.startswith(_SKIP) and line.endswith(b"}")):
            record = orjson.loads(line)  # the summary (or garbage: then the careful path reports it)
            if not isinstance(record, dict) or not isinstance(record.get("type"), str) or record["type"] == "match":
                raise ValueError("not the common shape")
    # Parse only what is kept: each record is cut before ``"absolute_offset"`` (the offset and
    # the submatches array, often the bulk of a record, are never read). The cut is exact
    # because an unescaped quote cannot occur inside a JSON string.
    trimmed = []
    for line in picked:
        cut = line.find(_OFFSET_KEY)
        if cut < 0:
            raise ValueError("not the common shape")
        trimmed.append(line[:cut])
    records = orjson.loads(b"[" + b"}},".join(trimmed) + b"}}]") if trimmed else []
    out: list[RgMatch] = []
    append = out.append
    for record in records:
        data = record["data"]
        number = data["line_number"]
        if type(number) is not int or number < 0:
            raise ValueError("not the common shape")
        path = data["path"]["text"]
        text = data["lines"]["text"]
        if type(path) is not str or type(text) is not str or record["type"] != "match":
            raise ValueError("not the common shape")
        append(RgMatch(path, number, text))
    return out


def _careful(lines: list[bytes], records: list[bytes] | None = None) -> list[RgMatch]:
    """Line by line, validating every record; raises ``ValueError`` naming the first bad line.

    Non-match records that start with rg's own prefix are skipped after a cheap framing check
    (the line must end in ``}``, which catches a stream cut off mid-record) and are not otherwise
    validated: parsing them would cost most of the time on context-heavy output and they carry
    nothing we keep. Any other line is parsed in full, so garbage cannot hide.
    """
    matches: list[RgMatch] = []
    append = matches.append
    for line_no, line in enumerate(lines, start=1):
        if not line:
            continue
        if line.startswith(_MATCH):
            record = _load(line, line_no)
            if record["type"] != "match":
                raise _malformed(line_no, "duplicate type key")
            append(_match(record, line_no))
            if records is not None:
                records.append(line)
        elif line.startswith(_SKIP) and line.endswith(b"}"):
            continue
        else:
            # Not framed like rg's own records (e.g. the summary, or garbage): parse in full.
            record = _load(line, line_no)
            if record["type"] == "match":
                append(_match(record, line_no))
                if records is not None:
                    records.append(line)
    return matches
