"""An edit's steps applied to a file's text: linear in the text, its size known before it is built.

Why it exists: ``edit`` runs on files up to ``edit_max_bytes`` whose shape an attacker chooses
(one 4 MiB line, two million matches, a batch that doubles the text at every step). Each step
counts its matches and the bytes its result would have in one pass over the text, then builds
the result in a second -- with ``str.count`` and ``str.replace`` wherever it can: always where
line endings cannot matter, and run by run of lines that end alike where they can -- so a step
whose result would pass ``edit_max_bytes`` is refused before it is made.

The rules are ``edit``'s: a line break in ``old_string`` matches ``\\n`` or ``\\r\\n``; each
replacement's line breaks are written CRLF if the matched text held one, else as the line the
match ends on ends, else (on a last line without a line break) as most of the file's lines end.

What it must never do: scan the text again for each match, build a text larger than an edit may
write, or expand anything in ``new_string`` (``$&``, ``\\1``, ``\\g<0>``): it goes in literally.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

from ...errors import Codes, ToolError
from ...text.quoting import in_message
from ..writing import encode_text
from .steps import Step, step_error, too_large

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
    if "\n" not in old:
        return _apply_by_lines(text, size, limit, old, new, step, shown)
    return _apply_across_lines(text, size, limit, old, new, step, shown)


_LONE_LF = re.compile(r"(?<!\r)\n")


def _runs(text: str) -> Iterator[tuple[int, int, bool]]:
    """``text`` cut after line breaks into runs of lines that end alike: ``(start, end, crlf)``,
    in order, covering it; the last line, without a line break, ends as most lines do."""
    pos = 0
    for m in _LONE_LF.finditer(text):
        lf = m.start()
        before = text.rfind("\n", pos, lf)  # scans the LF line only: the lines before it end CRLF
        if before >= 0:
            yield pos, before + 1, True
            pos = before + 1
        yield pos, lf + 1, False
        pos = lf + 1
    last = text.rfind("\n", pos)
    if last >= 0:
        yield pos, last + 1, True
        pos = last + 1
    if pos < len(text):
        yield pos, len(text), text.count("\r\n") * 2 > text.count("\n")


def _apply_by_lines(
    text: str, size: int, limit: int, old: str, new: str, step: Step, shown: str
) -> tuple[str, int, int]:
    """``old`` without a line break, ``new`` with one, in a text with CRLF: a match lies within
    one line and its new text takes that line's ending. Runs of lines that end alike are counted,
    then replaced, each with ``str.count``/``str.replace``."""
    as_crlf = new.replace("\n", "\r\n")
    counts = [0, 0]  # matches on lines ending LF, CRLF
    for start, end, crlf in _runs(text):
        counts[crlf] += text.count(old, start, end)
    found = counts[0] + counts[1]
    _counted(found, step, shown)
    size += counts[0] * (byte_size(new) - byte_size(old)) + counts[1] * (byte_size(as_crlf) - byte_size(old))
    if size > limit:
        raise _TooLarge(size)
    out = io.StringIO()
    for start, end, crlf in _runs(text):
        out.write(text[start:end].replace(old, as_crlf if crlf else new))
    return out.getvalue(), found, size


def _apply_across_lines(
    text: str, size: int, limit: int, old: str, new: str, step: Step, shown: str
) -> tuple[str, int, int]:
    """``old`` with a line break, in a text with CRLF: each match's new text takes CRLF if the
    matched text held one. One pass counts the matches, their endings and the size; a second
    builds the text (there are at most as many matches as line breaks)."""
    pattern = _matcher(old)
    as_crlf = new.replace("\n", "\r\n")
    grow = (byte_size(new) - byte_size(old), byte_size(as_crlf) - byte_size(old))
    crlf = bytearray()  # one flag per match: its new text takes CRLF
    for m in pattern.finditer(text):
        matched = m.group()
        ending = "\r\n" in matched
        # Out goes the matched text: old_string with one more byte for each CR a line break matched.
        size += grow[ending] - (len(matched) - len(old))
        crlf.append(ending)
    _counted(len(crlf), step, shown)
    if size > limit:
        raise _TooLarge(size)
    choices = iter(crlf)
    # A function, not a template: the new text goes in literally.
    return pattern.sub(lambda _m: as_crlf if next(choices) else new, text), len(crlf), size
