"""An edit's steps applied to a file's text: one pass per step, its size known before it is built.

Why it exists: ``edit`` runs on files up to ``edit_max_bytes`` whose shape an attacker chooses
(one 4 MiB line, two million matches, a batch that doubles the text at every step). Each step
finds its matches, chooses their line endings and builds the new text in one pass over the text
-- ``str.count`` and ``str.replace`` wherever the line endings cannot matter -- and the bytes
the new text would have are counted from the matches before it is built, so a step whose result
would pass ``edit_max_bytes`` is refused without being made.

The rules are ``edit``'s: a line break in ``old_string`` matches ``\\n`` or ``\\r\\n``; each
replacement's line breaks are written as the matched text had them (CRLF if it held one),
else as the line the match ends on ends, else (on a last line without one) as most of the file's
lines end.

What it must never do: scan the text again for each match, build a text larger than an edit may
write, or expand anything in ``new_string`` (``$&``, ``\\1``, ``\\g<0>``): it goes in literally.
"""

from __future__ import annotations

import re

from ..errors import Codes, ToolError
from ..text.quoting import in_message
from .editsteps import Step, step_error, too_large
from .write import encode_text

__all__ = ["apply_steps", "byte_size"]


def byte_size(text: str) -> int:
    """The bytes ``text`` is written as (``encode_text``): additive, so a text's size moves by the
    sizes of what is cut out and put in."""
    return len(encode_text(text))


def apply_steps(
    text: str, size: int, bom: int, limit: int, steps: list[Step], batch: bool, shown: str
) -> tuple[str, int, int]:
    """The steps applied in order, each to what the ones before it left; all or nothing.

    ``text`` is the file's text, ``size`` its bytes and ``bom`` the bytes of the byte-order mark
    before it (the mark counts towards ``limit``). Answers the new text, the number of
    replacements and the new text's bytes.
    """
    found = 0
    for k, step in enumerate(steps, 1):
        try:
            text, n, size = _apply(text, size, limit - bom, step, shown)
        except _TooLarge as exc:
            raise too_large(exc.size + bom, limit, "the result", shown, k, steps, batch) from None
        except ToolError as exc:
            raise step_error(exc, k, steps, batch) from None
        found += n
    return text, found, size


class _TooLarge(Exception):
    def __init__(self, size: int) -> None:
        self.size = size


def _matcher(old: str) -> re.Pattern:
    """``old`` (its CRLFs made LF) as a literal pattern in which each line break matches ``\\n`` or ``\\r\\n``."""
    return re.compile(r"\r?\n".join(re.escape(part) for part in old.split("\n")))


def _counted(count: int, step: Step, shown: str) -> None:
    if count == 0:
        raise ToolError(Codes.EDIT_NOT_FOUND, f"old_string not found in {in_message(shown)}")
    if count > 1 and not step.replace_all:
        raise ToolError(
            Codes.EDIT_AMBIGUOUS,
            f"old_string appears {count} times in {in_message(shown)}; add context or set replace_all",
        )


def _apply(text: str, size: int, limit: int, step: Step, shown: str) -> tuple[str, int, int]:
    """One step over ``text`` (``size`` bytes): the new text, its replacements and its size."""
    old, new = step.old.replace("\r\n", "\n"), step.new.replace("\r\n", "\n")
    if ("\n" not in old and "\n" not in new) or "\r\n" not in text:
        # Line endings cannot matter: without a line break in old_string or new_string there is
        # none to choose, and in a text without CRLF every choice is LF (a CR before a match's
        # line break would make one). The pattern is then old_string itself.
        count = text.count(old)
        _counted(count, step, shown)
        size += count * (byte_size(new) - byte_size(old))
        if size > limit:
            raise _TooLarge(size)
        return text.replace(old, new), count, size
    return _apply_with_endings(text, size, limit, old, new, step, shown)


def _apply_with_endings(
    text: str, size: int, limit: int, old: str, new: str, step: Step, shown: str
) -> tuple[str, int, int]:
    """A step whose replacements' line endings depend on where they land: one pass chooses each
    one's ending and counts the size, a second builds the text."""
    pattern = _matcher(old)
    old_bytes, new_bytes, new_breaks = byte_size(old), byte_size(new), new.count("\n")
    crlf = bytearray()  # one flag per match: its new text takes CRLF
    multiline = "\n" in old
    last_crlf: bool | None = None  # how a last line without a line break ends: as most lines do
    nl = -1  # the first "\n" at or after the previous match's end; len(text) when there is none
    for m in pattern.finditer(text):
        start, end = m.span()
        if multiline:
            ending = "\r\n" in m.group()
        else:
            if nl < end:
                nl = text.find("\n", end)
                if nl < 0:
                    nl = len(text)
            if nl < len(text):
                ending = nl > 0 and text[nl - 1] == "\r"
            else:
                if last_crlf is None:
                    last_crlf = text.count("\r\n") * 2 > text.count("\n")
                ending = last_crlf
        # Out goes the matched text (old_string with each line break as matched: one byte more
        # for each CR), in comes new_string with its line breaks as chosen.
        size += new_bytes + (new_breaks if ending else 0) - old_bytes - (end - start - len(old))
        crlf.append(ending)
    _counted(len(crlf), step, shown)
    if size > limit:
        raise _TooLarge(size)
    choices = iter(crlf)
    as_crlf = new.replace("\n", "\r\n")
    # A function, not a template: the new text goes in literally.
    result = pattern.sub(lambda _m: as_crlf if next(choices) else new, text)
    return result, len(crlf), size
