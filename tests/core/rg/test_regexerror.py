"""rg's regex parse errors, from the real rg, quoted as the pattern was written (``rg/regexerror.py``)."""

from __future__ import annotations

import subprocess

import pytest

from dsh_jupyter.core.rg.regexerror import regex_parse_error
from dsh_jupyter.core.rg.runner import find_rg

RG = find_rg()


def rg_error(pattern: str) -> str:
    assert RG is not None
    done = subprocess.run([RG, "-U", "-e", pattern], input=b"x", capture_output=True, timeout=10)
    assert done.returncode == 2
    return done.stderr.decode()


@pytest.mark.parametrize(
    "pattern, shown",
    [
        (
            "a{2,1}b",
            "regex parse error:\n    a{2,1}b\n     ^^^^^\n"
            "error: invalid repetition count range, the start must be <= the end",
        ),
        (
            "[z-a]",
            "regex parse error:\n    [z-a]\n     ^^^\nerror: invalid character class range, the start must be <= the end",
        ),
        ("foo(bar", "regex parse error:\n    foo(bar\nerror: unclosed group"),  # rg blamed its own (?:
        ("x)", "regex parse error:\n    x)\nerror: unopened group"),  # and its own closing )
        ("ab\n(c", "regex parse error:\n" + "~" * 79 + "\n1: ab\n2: (c\n" + "~" * 79 + "\nerror: unclosed group"),
    ],
)
def test_the_pattern_is_quoted_as_written_with_the_diagram_on_its_lines(pattern, shown):
    assert regex_parse_error(rg_error(pattern)) == shown


@pytest.mark.parametrize(
    "stderr",
    [
        "rg: error parsing glob '[': unclosed character class; missing ']'\n",
        "rg: regex parse error:\n    (?:abc\n",  # cut before its error line
        "rg: regex parse error:\n    abc)\n    ^\nerror: x\n",  # not wrapped as rg wraps
        "",
    ],
)
def test_anything_else_is_left_to_the_one_line_form(stderr):
    assert regex_parse_error(stderr) is None
