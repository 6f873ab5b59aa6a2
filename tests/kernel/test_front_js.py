"""Pure functions of the widgets' front end, run in Node as the browser runs them (ES modules)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

FRONT = Path(__file__).resolve().parents[2] / "dsh_jupyter" / "kernel" / "widgets" / "front"

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js to run the front end's modules")


def run_js(module: str, expression: str):
    code = f"import * as m from {json.dumps(str(FRONT / module))}; console.log(JSON.stringify({expression}));"
    out = subprocess.run(["node", "--input-type=module", "-e", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_call_durations_are_shown_whole():
    got = run_js("calls.js", "[12.3, 999.9, 1000, 2354.8, 99994, 123456].map(m.duration)")
    assert got == ["12.3 ms", "999.9 ms", "1.00 s", "2.35 s", "99.99 s", "123 s"]


def test_an_edit_diff_is_marked_line_by_line_and_its_text_kept():
    text = "The file f.txt has been updated successfully.\n--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-old\n+new\n same"
    # h() needs a document: give the module a minimal one, as a browser would
    got = run_js(
        "calls.js",
        "(() => { globalThis.Node = class {}; globalThis.document = { createElement: t => ({ tag: t, kids: [],"
        " setAttribute(k, v) { this[k] = v; }, append(...k) { this.kids.push(...k); } }) };"
        f" return m.diffMarks({json.dumps(text)}).map(n => typeof n === 'string' ? n : [n.className, n.kids.join('')]);"
        " })()",
    )
    assert got == [
        "The file f.txt has been updated successfully.\n",
        "--- f.txt\n",
        "+++ f.txt\n",
        ["dsh-diff-hunk", "@@ -1 +1 @@\n"],
        ["dsh-diff-del", "-old\n"],
        ["dsh-diff-add", "+new\n"],
        " same",
    ]


def test_a_saved_results_path_is_shown_short_with_the_whole_path_kept():
    footer = (
        "(Showing 100 of 716 paths. Full sorted result stored at: /root/.local/share/jupyter/runtime/"
        "dsh-spills/session-s1-ab/3f2a-glob-results.txt. Use read with offset/limit, or grep this path.)"
    )
    got = run_js("dom.js", f"[m.spillParts({json.dumps(footer)}), m.spillParts('(End of listing.)')]")
    assert got == [
        {
            "before": "(Showing 100 of 716 paths. Full sorted result stored at: ",
            "short": "…/3f2a-glob-results.txt",
            "after": ". Use read with offset/limit, or grep this path.)",
            "full": "/root/.local/share/jupyter/runtime/dsh-spills/session-s1-ab/3f2a-glob-results.txt",
        },
        None,
    ]
    whole = got[0]
    assert whole["before"] + whole["full"] + whole["after"] == footer
