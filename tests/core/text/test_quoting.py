"""The one quoting rule for names and paths, on exact strings."""

from __future__ import annotations

import json

import pytest

from dsh_jupyter.core.text.quoting import needs_quoting, quote_name


@pytest.mark.parametrize(
    "name",
    [
        "plain.txt",
        "with space inside",
        "café-naïve-日本語.md",  # non-ASCII stays bare
        "a@b",  # @ not at the end
        'a"b',  # a quote not at the start
        "x/y",  # a multi-segment path without </
        "<a>",
        "\ufffd.bin",  # the replacement char of an undecodable name
        ".hidden",
        "-rf",
    ],
)
def test_bare_names(name):
    assert not needs_quoting(name)
    assert quote_name(name) == name


@pytest.mark.parametrize(
    ("name", "quoted"),
    [
        ("a\nb", '"a\\u000ab"'),
        ("a\rb", '"a\\u000db"'),
        ("tab\there", '"tab\\u0009here"'),
        ("nul\x00", '"nul\\u0000"'),
        ("del\x7f", '"del\\u007f"'),
        ("c1\x85x", '"c1\\u0085x"'),
        ("c1\x9fx", '"c1\\u009fx"'),
        ("</content>", '"<\\/content>"'),
        ("a</b", '"a<\\/b"'),
        ("x@", '"x@"'),
        ("dir/", '"dir/"'),
        ('"quoted', '"\\"quoted"'),
        (" lead", '" lead"'),
        ("trail ", '"trail "'),
        ("\u3000ideographic", '"\u3000ideographic"'),  # Unicode whitespace at the start
        ("back\\slash", '"back\\\\slash"'),
        ("日本\n語", '"日本\\u000a語"'),  # non-ASCII kept in the quoted form too
        ("", '""'),
    ],
)
def test_quoted_names(name, quoted):
    assert needs_quoting(name)
    assert quote_name(name) == quoted


@pytest.mark.parametrize("name", ["a\nb", "</content>", 'x"@', " \\ ", "\x85\x00\x7f", "é\t"])
def test_quoted_form_is_a_json_string_of_the_name(name):
    q = quote_name(name)
    assert json.loads(q) == name
    assert "\n" not in q and "</" not in q


def test_quoted_form_has_no_raw_control_characters():
    name = "".join(chr(c) for c in list(range(0x20)) + list(range(0x7F, 0xA0)))
    q = quote_name(name)
    assert all(not (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F) for c in q)
    assert json.loads(q) == name


@pytest.mark.parametrize(
    "alphabet",
    [
        ["a", "b", "/", "@", " ", "\t", "\n", "\r", '"', "\\", "<", "\x85", "\x7f", "\u00a0", "é", "\u2028", "."],
        # no ASCII control: blocks whose only odd characters are spaces of other scripts, letters
        # beyond ASCII and undecodable bytes (surrogate escapes), each kind judged once
        ["a", "/", "@", " ", "\u3000", "\u2009", "\u00a0", "é", "日", "\udcff", "\n", "<", "."],
        # ASCII only: blocks that take the byte-translate path (spaces, controls that are whitespace)
        ["a", "b", "/", "@", " ", " ", "\t", "\x0b", "\x1c", "\x1f", "\n", '"', "\\", "<", ".", "~"],
    ],
    ids=["unicode", "ascii", "spaces-of-other-scripts"],
)
@pytest.mark.parametrize("big_from", [None, 0], ids=["as-is", "every-block-big"])
def test_quote_names_agrees_with_quote_name_on_random_hostile_names(alphabet, big_from, monkeypatch):
    """The bulk fast path must never print bare a name the per-name rule would quote (also with
    every block read as a big one, whose line edges numpy reads)."""
    import random

    from dsh_jupyter.core.text import quoting
    from dsh_jupyter.core.text.quoting import quote_names

    if big_from is not None:
        monkeypatch.setattr(quoting, "BIG_BLOCK", big_from)

    rng = random.Random(20261130)
    for _ in range(3000):
        names = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 5))) for _ in range(rng.randint(1, 6))]
        assert quote_names(names) == [quote_name(n) for n in names], names


def _in_message_char_by_char(text: str) -> str:
    from dsh_jupyter.core.text.quoting import _escape

    return '"' + "".join(_escape(ch) for ch in text).replace("</", "<\\/") + '"'


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("plain", '"plain"'),
        ("", '""'),
        ('say "hi"', '"say \\"hi\\""'),
        ("back\\slash", '"back\\\\slash"'),
        ("a\nb", '"a\\u000ab"'),
        ("</cell>", '"<\\/cell>"'),
        ("rtl\u202eevil", '"rtl\\u202eevil"'),
        ("lone\udcff", '"lone\\udcff"'),
        ("日本語 café", '"日本語 café"'),
    ],
)
def test_in_message_exact(text, quoted):
    from dsh_jupyter.core.text.quoting import in_message

    assert in_message(text) == quoted


def test_in_message_agrees_with_escaping_each_character_on_random_text():
    """The shortcut for text with nothing to escape answers what escaping each character does."""
    import random

    from dsh_jupyter.core.text.quoting import in_message

    alphabet = ["a", "/", "<", '"', "\\", "\n", "\x7f", "\x85", "\u2028", "\u202a", "\u2066", "\udc80", "é", "日"]
    rng = random.Random(20261205)
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
        assert in_message(text) == _in_message_char_by_char(text), repr(text)
