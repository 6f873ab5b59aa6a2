"""Pure functions of the front end (the widgets' and the helpers shared with the sidebar), run in Node.

Each module is bundled with its imports by the project's own esbuild (labextension_shim/'s npm
install), as the build bundles the widgets, and imported as an ES module."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

SHIM = Path(__file__).resolve().parents[2] / "labextension_shim"
ESBUILD = SHIM / "node_modules" / ".bin" / "esbuild"

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js to run the front end's modules")


@pytest.fixture(scope="module")
def bundled(tmp_path_factory):
    """``bundled(module)``: the path of ``src/<module>`` bundled with its imports into one ES module."""
    if not ESBUILD.exists():
        pytest.fail("labextension_shim/ has no npm install: run pip install -e . (its build runs npm install)")
    out = tmp_path_factory.mktemp("front")

    def bundle(module: str) -> Path:
        target = out / (module.replace("/", "-").rsplit(".", 1)[0] + ".mjs")
        if not target.exists():
            subprocess.run(
                [
                    str(ESBUILD),
                    f"src/{module}",
                    "--bundle",
                    "--format=esm",
                    "--loader:.svg=text",  # as the build does: JupyterLab's icons come as SVG text
                    "--log-level=warning",
                    f"--outfile={target}",
                ],
                cwd=SHIM,
                check=True,
                capture_output=True,
                timeout=120,
            )
        return target

    return bundle


@pytest.fixture
def run_js(bundled):
    def run(module: str, expression: str):
        code = f"import * as m from {json.dumps(str(bundled(module)))}; console.log(JSON.stringify({expression}));"
        out = subprocess.run(["node", "--input-type=module", "-e", code], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    return run


# A minimal document for h(): elements record their class, text, attributes, listeners and children.
DOCUMENT = (
    "globalThis.Node = class {}; class El extends Node { constructor(t) { super(); this.tag = t; this.className = '';"
    " this.kids = []; this.attrs = {}; this.on = []; } set textContent(v) { this.kids = [String(v)]; }"
    " setAttribute(k, v) { this.attrs[k] = v; } addEventListener(k) { this.on.push(k); }"
    " append(...k) { this.kids.push(...k); } replaceChildren() { this.kids = []; } }"
    " globalThis.document = { createElement: t => new El(t) };"
    " const plain = n => n instanceof Node ? { tag: n.tag, className: n.className, attrs: n.attrs, on: n.on,"
    " kids: n.kids.map(plain) } : n;"
)


def test_sizes_read_the_same_as_before_in_the_widgets_and_in_the_sidebar(run_js):
    sizes = [0, 532, 1023, 1024, 5000, 102399, 102400, 150 * 1024, 16 * 2**20 + 400 * 1024, 3 * 2**50, 2**60]
    got = run_js(
        "common/format.ts",
        f"{json.dumps(sizes)}.map(n => [m.humanSize(n), m.humanSize(n, m.SIDEBAR_SIZES)])"
        ".concat([[m.humanSize(null), m.humanSize(undefined)]])",
    )
    assert got == [
        ["0 B", "0 bytes"],
        ["532 B", "532 bytes"],
        ["1023 B", "1023 bytes"],
        ["1.0 KiB", "1.0 KiB"],
        ["4.9 KiB", "4.9 KiB"],
        ["100.0 KiB", "100.0 KiB"],
        ["100 KiB", "100.0 KiB"],
        ["150 KiB", "150.0 KiB"],
        ["16.4 MiB", "16.4 MiB"],
        ["3.0 PiB", "3072.0 TiB"],
        ["1024 PiB", "1048576.0 TiB"],
        ["", ""],
    ]


def test_one_element_builder_for_both_front_ends(run_js):
    got = run_js(
        "common/dom.ts",
        f"(() => {{ {DOCUMENT} return plain(m.h('button', {{ class: 'dsh-btn', type: 'button', disabled: true,"
        " hidden: false, title: null, tabindex: -1, onclick: () => 1, onchange: () => 2 },"
        " 'go', 3, null, undefined, false, [['a', [m.h('span', { text: 'inner', 'data-row': 0 })]]]));"
        " })()",
    )
    assert got == {
        "tag": "button",
        "className": "dsh-btn",
        "attrs": {"type": "button", "disabled": "", "tabindex": "-1"},
        "on": ["click", "change"],
        "kids": [
            "go",
            "3",
            "a",
            {"tag": "span", "className": "", "attrs": {"data-row": "0"}, "on": [], "kids": ["inner"]},
        ],
    }


def test_call_durations_are_shown_whole(run_js):
    got = run_js("widget/calls.js", "[12.3, 999.9, 1000, 2354.8, 99994, 123456].map(m.duration)")
    assert got == ["12.3 ms", "999.9 ms", "1.00 s", "2.35 s", "99.99 s", "123 s"]


def test_an_edit_diff_is_marked_line_by_line_and_its_text_kept(run_js):
    text = "The file f.txt has been updated successfully.\n--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-old\n+new\n same"
    # h() needs a document: give the module a minimal one, as a browser would
    got = run_js(
        "widget/calls.js",
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


def test_a_saved_results_path_is_shown_short_with_the_whole_path_kept(run_js):
    footer = (
        "(Showing 100 of 716 paths. Full sorted result stored at: /root/.local/share/jupyter/runtime/"
        "dsh-spills/session-s1-ab/3f2a-glob-results.txt. Use read with offset/limit, or grep this path.)"
    )
    got = run_js("widget/dom.js", f"[m.spillParts({json.dumps(footer)}), m.spillParts('(End of listing.)')]")
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


def test_counts_have_separators_and_a_singular_for_one(run_js):
    got = run_js(
        "common/format.ts",
        "[0, 1, 7, 1463, 50000, 392840].map(n => [m.formatCount(n), m.plural(n, 'file', 'files')])",
    )
    assert got == [
        ["0", "0 files"],
        ["1", "1 file"],
        ["7", "7 files"],
        ["1,463", "1,463 files"],
        ["50,000", "50,000 files"],
        ["392,840", "392,840 files"],
    ]


def test_sessions_are_offered_newest_active_first_with_the_extensions_own_apart(run_js):
    sessions = [
        {"id": "default", "cwd": ".", "created": 100, "lastCall": 150},
        {"id": "jupyterlab-sidebar", "cwd": ".", "created": 90, "lastCall": 500},
        {"id": "agent-b", "cwd": ".", "created": 300, "lastCall": None},
        {"id": "explorer-0a1b2c3d", "cwd": "src", "created": 120, "lastCall": 130},
        {"id": "agent-a", "cwd": ".", "created": 200, "lastCall": 400},
        {"id": "explorer-notes", "cwd": ".", "created": 50, "lastCall": 60},
    ]
    got = run_js(
        "sessions.ts",
        f"(({{shown, internal}}) => [shown.map(s => s.id), internal.map(s => s.id)])(m.orderSessions({json.dumps(sessions)}))",
    )
    # agent-b never called: it counts as active when it was made
    assert got == [["agent-a", "agent-b", "default", "explorer-notes"], ["jupyterlab-sidebar", "explorer-0a1b2c3d"]]
