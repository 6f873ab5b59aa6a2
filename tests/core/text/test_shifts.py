"""``shifted_ranges``: an occurrence found again after a person typed elsewhere, never after they
typed in it or right against it."""

from __future__ import annotations

from dsh_jupyter.core.text.shifts import shifted_ranges

TEXT = "alpha = 1\nbeta = alpha\ngamma\n"


def spans(text: str, word: str) -> list[tuple[int, int]]:
    out, at = [], text.find(word)
    while at >= 0:
        out.append((at, at + len(word)))
        at = text.find(word, at + 1)
    return out


def test_unchanged_text_keeps_every_range():
    assert shifted_ranges(TEXT, TEXT, spans(TEXT, "alpha")) == spans(TEXT, "alpha")


def test_lines_typed_above_move_the_ranges():
    after = "# new\n# lines\n" + TEXT
    assert shifted_ranges(TEXT, after, spans(TEXT, "alpha")) == spans(after, "alpha")


def test_typing_on_the_same_line_away_from_the_range_moves_it():
    after = TEXT.replace("beta = alpha", "betamax = alpha")
    assert shifted_ranges(TEXT, after, spans(TEXT, "alpha")) == spans(after, "alpha")


def test_typing_inside_or_against_a_range_loses_it_and_only_it():
    inside = TEXT.replace("beta = alpha", "beta = alXpha")
    assert shifted_ranges(TEXT, inside, spans(TEXT, "alpha")) == [(0, 5), None]
    against = TEXT.replace("beta = alpha", "beta = alphas")
    assert shifted_ranges(TEXT, against, spans(TEXT, "alpha")) == [(0, 5), None]
    before = "x" + TEXT
    assert shifted_ranges(TEXT, before, [(0, 5), (17, 22)]) == [None, (18, 23)]


def test_typing_at_the_end_of_the_line_above_keeps_a_range_that_starts_its_line():
    after = TEXT.replace("alpha = 1\n", "alpha = 1 and more\n")
    assert shifted_ranges(TEXT, after, spans(TEXT, "beta")) == spans(after, "beta")


def test_a_deleted_line_loses_its_range_and_the_rest_move_up():
    after = TEXT.replace("alpha = 1\n", "")
    assert shifted_ranges(TEXT, after, spans(TEXT, "alpha")) == [None, spans(after, "alpha")[0]]


def test_a_range_at_the_very_end_needs_nothing_typed_after_it():
    text = "one alpha"
    assert shifted_ranges(text, "zero " + text, [(4, 9)]) == [(9, 14)]
    assert shifted_ranges(text, text + "s", [(4, 9)]) == [None]


def test_ranges_hold_exactly_their_text_in_a_long_text_edited_in_many_places():
    lines = [f"row {i} alpha\n" for i in range(5_000)]
    before = "".join(lines)
    edited = [("# typed\n" + line) if i % 7 == 0 else line for i, line in enumerate(lines)]
    after = "".join(edited)
    got = shifted_ranges(before, after, spans(before, "alpha"))
    assert all(r is not None and after[r[0] : r[1]] == "alpha" for r in got)
    assert got == spans(after, "alpha")
