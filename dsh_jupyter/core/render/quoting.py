"""The one rule for printing a file name or path so it cannot forge result structure.

A name is printed bare unless printing it bare could make the output lie: a control character
would split one entry over two lines, ``</`` could close the envelope, a backslash or a leading
``"`` could pass for our own quoting, a trailing ``@`` or ``/`` would read as a type marker, and
leading or trailing whitespace would vanish in a transcript. Such a name is printed as a JSON
string with ``</`` written ``<\\/``; non-ASCII text stays readable, every control character
(C0, DEL and C1) is escaped as ``\\uXXXX``.
"""

from __future__ import annotations

import re

__all__ = ["quote_name", "needs_quoting"]

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


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
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return f"\\u{code:04x}"
    return ch


def quote_name(name: str) -> str:
    """Return ``name`` bare, or as a JSON string when bare text could forge structure."""
    if not needs_quoting(name):
        return name
    body = "".join(_escape(ch) for ch in name).replace("</", "<\\/")
    return f'"{body}"'


# A joined block of names is checked with a few C-level scans instead of one call per name:
# any character that may need quoting anywhere (a control, a backslash, a quote), ``</``, a
# name ending in ``@`` or ``/``, or whitespace next to a line break sends the block down the
# per-name path. Names that hold a newline themselves, or are empty, skip the fast path too.
_ANY_SUSPECT_CHAR = re.compile('[\x00-\x09\x0b-\x1f\x7f-\x9f\\\\"]')
_EDGE_SPACE = re.compile("[^\\S\n](?=\n)|(?<=\n)[^\\S\n]")


def quote_names(names: list[str]) -> list[str]:
    """``[quote_name(n) for n in names]``, scanning the joined text once instead of per name.

    Search results can hold 100,000 paths and nearly all print bare.
    """
    if not names:
        return []
    blob = "\n".join(names)
    if (
        all(names)
        and blob.count("\n") == len(names) - 1
        and "</" not in blob
        and "@\n" not in blob
        and "/\n" not in blob
        and not blob.endswith(("@", "/"))
        and not blob[0].isspace()
        and not blob[-1].isspace()
        and _ANY_SUSPECT_CHAR.search(blob) is None
        # when the line breaks are the only whitespace, none can sit at a name's edge
        and (len("".join(blob.split())) + len(names) - 1 == len(blob) or _EDGE_SPACE.search(blob) is None)
    ):
        return list(names)
    return [quote_name(n) for n in names]


def in_message(text: str) -> str:
    """``text`` in double quotes for a one-line error message, escaped like a JSON string.

    Error messages name paths the caller gave; a name holding a newline or a quote must not be
    able to split or forge the message. An ordinary name reads exactly as ``"name"``.
    """
    return '"' + "".join(_escape(ch) for ch in text).replace("</", "<\\/") + '"'
