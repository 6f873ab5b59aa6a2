"""The one rule for printing a file name or path so it cannot forge result structure.

A name is printed bare unless printing it bare could make the output lie: a control character
(or a Unicode line or paragraph separator) would split one entry over two lines, a
bidirectional control would reorder what a person reads, ``</`` could close the envelope, a backslash or a leading
``"`` could pass for our own quoting, a trailing ``@`` or ``/`` would read as a type marker, and
leading or trailing whitespace would vanish in a transcript. Such a name is printed as a JSON
string with ``</`` written ``<\\/``; non-ASCII text stays readable, every control character
(C0, DEL and C1), line and paragraph separator and bidirectional control is escaped as
``\\uXXXX``. A name that is not valid UTF-8 holds its undecodable bytes as lone surrogates
(Python's ``surrogateescape``: byte ``0xff`` is U+DCFF); it is always quoted, each such byte
written ``\\udcff``, so the text stays valid UTF-8 and the JSON form decodes back to the same
name.
"""

from __future__ import annotations

import re

__all__ = [
    "escape_surrogates",
    "has_raw_bytes",
    "in_message",
    "needs_quoting",
    "quote_lines",
    "quote_name",
    "quote_names",
    "quote_names_joined",
]

# C0, DEL, C1 (NEL is U+0085), the line and paragraph separators, bidirectional embeddings,
# overrides and isolates, and lone surrogates (undecodable bytes of a name).
_UNSAFE = "\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_CONTROL = re.compile(f"[{_UNSAFE}]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED = re.compile(f'[{_UNSAFE}"\\\\]')  # the characters ``_escape`` changes


def has_raw_bytes(name: str) -> bool:
    """Whether ``name`` holds bytes that were not valid UTF-8 (as surrogate escapes)."""
    return _SURROGATE.search(name) is not None


def escape_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written as the six characters ``\\udcXX`` (valid UTF-8)."""
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def needs_quoting(name: str) -> bool:
    if not name:
        return True
    if _CONTROL.search(name) or "</" in name or "\\" in name:
        return True
    if name.endswith(("@", "/")) or name.startswith('"'):
        return True
    return name[0].isspace() or name[-1].isspace()


def _escape(ch: str) -> str:
    code = ord(ch)
    if ch == '"':
        return '\\"'
    if ch == "\\":
        return "\\\\"
    if (
        code < 0x20
        or 0x7F <= code <= 0x9F
        or 0x2028 <= code <= 0x202E
        or 0x2066 <= code <= 0x2069
        or 0xD800 <= code <= 0xDFFF
    ):
        return f"\\u{code:04x}"
    return ch


def quote_name(name: str, force: bool = False) -> str:
    """Return ``name`` bare, or as a JSON string when bare text could forge structure (always with
    ``force``: a caller that appends its own text to the row knows a form bare names could forge)."""
    if not force and not needs_quoting(name):
        return name
    body = "".join(_escape(ch) for ch in name).replace("</", "<\\/")
    return f'"{body}"'


# A joined block of names is checked with a few C-level scans instead of one call per name:
# any character that may need quoting anywhere (a control, a backslash, a quote), ``</``, a
# name ending in ``@`` or ``/``, or whitespace next to a line break sends the block down the
# per-name path. Names that hold a newline themselves, or are empty, skip the fast path too.
_ANY_SUSPECT_CHAR = re.compile('[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\\\\"]')


# Printable ASCII but the backslash and the quote, and the line break: what an ASCII block may
# hold with no name needing a closer look (deleting these leaves only what may need quoting).
_PLAIN_ASCII = bytes(b for b in range(0x21, 0x7F) if b not in b'\\"') + b"\n"


BIG_BLOCK = 1 << 16  # bytes: a block this big has its line edges read by numpy in one pass


def _all_bare(names: list[str], blob: str) -> bool:
    """Whether every name prints bare, judged from ``blob`` (the names joined by newlines)."""
    return bool(names) and all(names) and _bare_block(blob, len(names))


def _bare_block(blob: str, count: int, data: bytes | None = None) -> bool:
    """Whether each of the ``count`` names joined in ``blob`` (none empty) prints bare; ``data``:
    ``blob`` in UTF-8 when the caller has it (a block of megabytes is not encoded again)."""
    if not count or blob[0].isspace() or blob[-1].isspace() or blob.endswith(("@", "/")):
        return False
    # a one-character search (memchr) first: "<" is rare in names
    if "<" in blob and "</" in blob:
        return False
    if data is None:
        data = blob.encode("utf-8", "surrogatepass")
    if len(data) < BIG_BLOCK:
        if blob.count("\n") != count - 1 or "@\n" in blob or "/\n" in blob:
            return False
        return _no_suspect_char_or_edge_space(blob, data)
    # A big block: the byte before and after every line break, gathered by numpy, instead of a
    # substring search per pattern (each of those crawls through megabytes of paths, because
    # "/" and the line break are in every one). A UTF-8 sequence holds no byte below 0x80 but
    # its first, so these are the characters themselves.
    import numpy as np  # a core dependency (through pandas); imported where it is needed

    octets = np.frombuffer(data, dtype=np.uint8)
    breaks = np.flatnonzero(octets == 0x0A)
    if len(breaks) != count - 1:
        return False  # a name holds a line break itself
    if len(breaks):
        before, after = octets[breaks - 1], octets[breaks + 1]
        if np.any((before == 0x2F) | (before == 0x40) | (before == 0x20)) or np.any(after == 0x20):
            return False  # a name ends with "/", "@" or a space, or starts with a space
    return _no_suspect_char_or_edge_space(blob, data, spaces_seen=True)


def _no_suspect_char_or_edge_space(blob: str, data: bytes, spaces_seen: bool = False) -> bool:
    """No character that may need quoting, and no whitespace at a name's edge (next to a break).

    ``data`` is ``blob`` in UTF-8; ``spaces_seen``: the caller has checked the ASCII space at
    the edges already. One byte ``translate`` deletes the plain ASCII characters; what is left
    is the few kinds of character that may need a closer look, each judged once. Where
    whitespace is among them, a substring search per kind asks whether it touches a line break.
    A regular expression over the block took about 200 ms on the 5 MB of an 85,000-path glob of
    a real checkout (two of its names hold a space); these scans take a few milliseconds.
    """
    rest = data.translate(None, _PLAIN_ASCII)
    if not rest:
        return True
    kinds = set(rest.decode("utf-8", "surrogatepass"))
    if any(_ANY_SUSPECT_CHAR.match(ch) for ch in kinds):
        return False
    # only characters that print bare are left; whitespace may not sit at a name's edge
    if spaces_seen:
        kinds.discard(" ")
    return not any(ch + "\n" in blob or "\n" + ch in blob for ch in kinds if ch.isspace())


def quote_names(names: list[str]) -> list[str]:
    """``[quote_name(n) for n in names]``, scanning the joined text once instead of per name.

    Search results can hold 100,000 paths and nearly all print bare.
    """
    if not names:
        return []
    if _all_bare(names, "\n".join(names)):
        return list(names)
    return [quote_name(n) for n in names]


def quote_names_joined(names: list[str], joined: str | None = None) -> str:
    """``"\n".join(quote_names(names))``, joining only once when every name prints bare
    (``joined``: that join, when the caller has made it already)."""
    if not names:
        return ""
    blob = "\n".join(names) if joined is None else joined
    if _all_bare(names, blob):
        return blob
    return "\n".join([quote_name(n) for n in names])


def quote_lines(blob: str, count: int, data: bytes | None = None) -> str:
    """``quote_names_joined`` of ``count`` non-empty names that ``blob`` holds joined by newlines
    (no name holding one): ``blob`` itself when every name prints bare, no list of them made.
    ``data``: ``blob`` in UTF-8, when the caller has it."""
    if not count:
        return ""
    if _bare_block(blob, count, data):
        return blob
    return "\n".join([quote_name(n) for n in blob.split("\n")])


def in_message(text: str) -> str:
    """``text`` in double quotes for a one-line error message, escaped like a JSON string.

    Error messages name paths the caller gave; a name holding a newline or a quote must not be
    able to split or forge the message. An ordinary name reads exactly as ``"name"``.
    """
    if _ESCAPED.search(text) is not None:
        text = "".join(_escape(ch) for ch in text)
    return '"' + text.replace("</", "<\\/") + '"'
