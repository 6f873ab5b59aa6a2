"""grep through REST: an over-cap page spread as the Python API spreads it, its modes and pages, and
notebook outputs searched when asked."""

from __future__ import annotations

import os
import re

import nbformat
import pytest
from nbformat import v4

from dsh_jupyter import Workspace

HINT = "Use read with offset/limit, or grep this path to search within it."


def needle_tree(tree, root) -> None:
    spec = {f"aaa/f{i}.txt": "needle\n" * 100 for i in range(10)}
    spec.update({f"{e * 3}/f{i}.txt": "needle\n" * 3 for e in "bcdefghij" for i in range(5)})
    tree(root, spec)


def without_locator(text: str, locator: str) -> str:
    return text.replace(locator, "LOC")


@pytest.mark.dsh_settings(grep_max_matches=250)
async def test_rest_grep_page_is_spread_and_says_so(tool, api, tree, jp_root_dir, state_path, spill_root):
    needle_tree(tree, jp_root_dir / "hay")
    data = await tool("grep", session="g", pattern="needle", path="hay")
    value = data["value"]
    loc = value["spill"]
    assert loc and loc.startswith(str(spill_root))
    assert (value["totalMatches"], value["files"], value["filesTotal"], value["sampled"]) == (1135, 55, 55, True)
    assert len(value["matches"]) == 250
    assert data["text"].startswith("Found 250 of 1135 matches\n\nhay/aaa/f0.txt\nLine 1: needle\n")
    assert data["text"].endswith(
        "\n\n(Showing 250 of 1135 matches from all 55 files that matched, sampled across top-level entries "
        f"and files instead of taken in path order. Full grep result stored at: {loc}. {HINT})"
    )
    # the same page as the Python API (which saves its own spill under another locator)
    python = Workspace(jp_root_dir, session="p", state_path=state_path, spill_root=str(spill_root))
    local = python.run("grep", pattern="needle", path="hay")
    assert without_locator(data["text"], loc) == without_locator(local.text, local.value["spill"])
    assert value["matches"] == local.value["matches"]
    # the call log holds exactly the text the agent got
    status, calls = await api("GET", "sessions", "g", "calls")
    assert status == 200 and calls["calls"][-1]["text"] == data["text"]
    # and the spill page the footer points to is the complete result, in path order
    status, page = await api("GET", "spill", params={"session": "g", "locator": loc, "offset": 1, "limit": 4})
    assert status == 200
    assert re.findall(r"^\d+: (.*)$", page["text"], re.M) == [
        "Found 1135 matches",
        "",
        "hay/aaa/f0.txt",
        "Line 1: needle",
    ]


@pytest.mark.dsh_settings(grep_max_matches=4)
async def test_rest_grep_modes_case_context_and_pages(tool, api, tree, jp_root_dir):
    """grep's modes, case, context and pages through REST, bad values refused as a result."""
    tree(jp_root_dir / "m", {"a.py": "one\nTODO two\nthree\n", "b.py": "todo\n", "c/d.py": "x\nTodo\n"})
    files = await tool("grep", session="m", pattern="todo", path="m", ignore_case=True, output_mode="count")
    assert (
        files["text"] == "Found 3 matches in 3 files, by match count, most first\n\nm/a.py: 1\nm/b.py: 1\nm/c/d.py: 1"
    )
    around = await tool("grep", session="m", pattern="TODO", path="m", context=1, offset=1)
    assert around["text"] == (
        "Found 1 match (rows Line N- are context, not matches)\n\nm/a.py\nLine 1- one\nLine 2: TODO two\nLine 3- three"
    )
    assert around["value"]["matches"][0]["before"] == [[1, "one"]]
    refused = await tool("grep", session="m", pattern="x", context=99)  # a tool error is a result (HTTP 200)
    assert refused["isError"] is True and refused["text"] == "Error: context must be at most 20"


async def test_rest_grep_searches_notebook_outputs_when_asked(tool, api, jp_root_dir):
    """notebook_scope reaches the REST surface: the schema offers it, outputs answer by cell and output."""
    cell = v4.new_code_cell(
        "run()",
        id="run",
        outputs=[
            v4.new_output("stream", name="stdout", text="step 1\rstep 2\n"),
            v4.new_output("error", ename="KeyError", evalue="'step'", traceback=["\x1b[0;31mKeyError\x1b[0m: 'step'"]),
        ],
    )
    (jp_root_dir / "nbs").mkdir()
    nbformat.write(v4.new_notebook(cells=[cell]), os.fspath(jp_root_dir / "nbs" / "run.ipynb"))
    status, tools = await api("GET", "tools")
    assert status == 200
    grep = next(t for t in tools if t["name"] == "grep")
    assert grep["inputSchema"]["properties"]["notebook_scope"]["enum"] == ["sources", "outputs", "all"]
    data = await tool("grep", session="o", pattern="step", path="nbs", notebook_scope="outputs")
    assert data["text"] == (
        "Found 3 matches\n\nnbs/run.ipynb\nCell 1, output 1, line 1: step 2\n"
        "Cell 1, output 2, line 1: KeyError: 'step'\nCell 1, output 2, line 2: KeyError: 'step'"
    )
    assert [(m["cell"], m["cellId"], m["output"], m["line"]) for m in data["value"]["matches"]] == [
        (1, "run", 1, 1),
        (1, "run", 2, 1),
        (1, "run", 2, 2),
    ]
    assert data["value"]["notebookScope"] == "outputs"
    assert (await tool("grep", session="o", pattern="step", path="nbs"))["text"] == "No matches found"
    refused = await tool("grep", session="o", pattern="step", notebook_scope="cells")
    assert refused["isError"] is True
    assert refused["text"] == "Error: notebook_scope must be one of sources, outputs, all"


async def test_rest_grep_honours_gitignore_for_one_call_when_asked(api, tree, jp_root_dir):
    """A person's search panel asks for the workspace's .gitignore rules call by call; without the
    field the setting (off) holds, and a field that is not true or false is refused."""
    tree(jp_root_dir / "g", {".gitignore": "node_modules/\n", "a.py": "needle\n", "node_modules/m.js": "needle\n"})

    async def grep(**extra):
        status, data = await api(
            "POST", "tools", "grep", body={"session": "i", "args": {"pattern": "needle", "path": "g"}, **extra}
        )
        return status, data

    _, plain = await grep()
    assert [m["path"] for m in plain["value"]["matches"]] == ["g/a.py", "g/node_modules/m.js"]
    _, honoured = await grep(respect_ignore_files=True)
    assert [m["path"] for m in honoured["value"]["matches"]] == ["g/a.py"]
    assert honoured["value"]["ignoreFiles"] is True
    assert honoured["text"].endswith(
        "(Files named by .gitignore or .ignore rules were not searched (setting respect_ignore_files); "
        "grep such a file by its path to search it anyway.)"
    )
    _, after = await grep()  # the next call is back to the setting
    assert len(after["value"]["matches"]) == 2
    status, refused = await grep(respect_ignore_files="yes")
    assert (status, refused["code"], refused["message"]) == (
        400,
        "BODY_INVALID",
        "respect_ignore_files must be true or false",
    )
