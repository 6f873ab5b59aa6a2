"""Numbered lines that fit a ``read`` window: long lines cut, the window stopped at the byte cap.

Why it exists: a text file's window, an open file's shared document and one notebook output read
whole (``output``) are all numbered lines under the same two caps (``read_max_line_length``,
``read_max_bytes``), cut the same way. What it must never do: drop the first line of a window (one
row is always shown, so a read always moves on) or cost more than summing lengths.
"""

from __future__ import annotations

from itertools import accumulate

__all__ = ["fit_lines"]


def fit_lines(raw: list[str], offset: int, max_chars: int, max_bytes: int) -> tuple[list[dict], bool]:
    """Number the lines, cut long ones, and stop before the text would pass ``max_bytes``.

    A row costs the bytes of ``f"{number}: {text}\n"`` in UTF-8. The costs are summed from
    lengths, not by formatting and encoding each row (this runs for every line of every read):
    a text's length is its size when the window is ASCII, and the numbers' digits are counted
    by ranges of equal width.
    """
    suffix = f"... (line truncated to {max_chars} chars)"
    if raw and max(map(len, raw)) > max_chars:
        raw = [text[:max_chars] + suffix if len(text) > max_chars else text for text in raw]
    if "".join(raw).isascii():
        sizes = list(accumulate(map(len, raw)))
    else:
        sizes = list(accumulate(len(text.encode("utf-8", "replace")) for text in raw))

    def cost(k: int) -> int:  # the bytes of the first k rows
        return sizes[k - 1] + _number_chars(offset, k) + 3 * k

    shown = len(raw)
    if raw and cost(shown) > max_bytes:
        low, high = 1, shown  # the most rows that fit; one row is always shown
        while low < high:
            mid = (low + high + 1) // 2
            low, high = (mid, high) if cost(mid) <= max_bytes else (low, mid - 1)
        shown = low
    capped = shown < len(raw)
    return [{"number": n, "text": text} for n, text in zip(range(offset, offset + shown), raw)], capped


def _number_chars(first: int, k: int) -> int:
    """The characters of the numbers ``first`` .. ``first + k - 1`` as printed, minus signs included."""
    total, low, high = 0, first, first + k
    if low < 0:  # -n prints as n with a sign
        top = min(high, 0)
        total += (top - low) + _digit_chars(1 - top, 1 - low)
        low = top
    return total + (_digit_chars(low, high) if low < high else 0)


def _digit_chars(low: int, high: int) -> int:
    """Digits of the numbers ``low`` .. ``high - 1`` (``0 <= low``)."""
    total, width, start = 0, 1, 0
    while start < high:
        end = 10**width
        total += max(0, min(high, end) - max(low, start)) * width
        width, start = width + 1, end
    return total
