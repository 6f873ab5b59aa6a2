"""Every Python and ``%dsh`` snippet in README.md and docs/*.md runs pasted as shown.

The files are read when the test runs, so a snippet added tomorrow is tested tomorrow. A fenced
block is a snippet when it is tagged ``python`` (or ``ipython``), or untagged with a first line
that starts with ``%`` (a ``%%dsh edit`` cell). A block right after a line
``<!-- not-run: REASON -->`` is left out, and says why. Each file's snippets run in order, one
cell each, in one real kernel (nbclient, this Python's ipykernel) whose folder is a prepared
workspace, as a reader following the page top to bottom would run them; a snippet fails when its
cell raises (a ``UsageError`` from ``%dsh`` too). Tool failures are results, not errors, so a
snippet that edits before reading still "runs".
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\S*)\s*$")
NOT_RUN = re.compile(r"^<!-- not-run: \S.* -->$")

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Snippet:
    path: Path
    line: int  # 1-based line of the opening fence
    code: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def snippets(path: Path) -> list[Snippet]:
    """The runnable fenced blocks of one Markdown file, in order."""
    lines = path.read_text(encoding="utf-8").split("\n")
    found: list[Snippet] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        start, lang = i, opening.group(1)
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        before = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        first = next((b for b in body if b.strip()), "")
        runnable = lang in ("python", "ipython") or (lang == "" and first.startswith("%"))
        if runnable and not NOT_RUN.match(before):
            found.append(Snippet(path, start + 1, "\n".join(body)))
    return found


def prepare(folder: Path) -> Path:
    """A small project the snippets can work on: the files they name exist."""
    (folder / "src").mkdir(parents=True)
    (folder / "docs").mkdir()
    shutil.copyfile(REPO / "README.md", folder / "README.md")  # long enough for read --offset 100
    (folder / "notes.md").write_text("old text\nsecond line\n", encoding="utf-8")
    (folder / "notes.txt").write_text("first line\nsecond line\n", encoding="utf-8")
    (folder / "src" / "app.py").write_text("def main():\n    return 'hello world'\n", encoding="utf-8")
    (folder / "src" / "util.py").write_text("# TODO: tidy\ndef helper():\n    return 1\n", encoding="utf-8")
    (folder / "docs" / "guide.md").write_text("# Guide\nTODO: write it\n", encoding="utf-8")
    v4 = nbformat.v4
    out = v4.new_output("stream", name="stdout", text="loss nan\n")
    cells = [v4.new_markdown_cell("# Fit", id="intro"), v4.new_code_cell("fit()", id="fit", outputs=[out])]
    cells.append(v4.new_code_cell("plot()", id="plot"))
    nbformat.write(v4.new_notebook(cells=cells), str(folder / "analysis.ipynb"))
    return folder


def test_the_extractor_reads_the_convention(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "text\n```python\nprint(1)\n```\n```\n%dsh list\n```\n```\nplain output\n```\n"
        "<!-- not-run: needs a server -->\n\n```python\nboom()\n```\n```bash\nls\n```\n",
        encoding="utf-8",
    )
    assert [(s.line, s.code) for s in snippets(page)] == [(2, "print(1)"), (5, "%dsh list")]


def test_the_docs_have_snippets():
    counts = {p.name: len(snippets(p)) for p in DOCS}
    assert counts["README.md"] >= 3 and counts["notebook.md"] >= 5, counts


@pytest.mark.parametrize("doc", [p for p in DOCS if snippets(p)], ids=lambda p: p.name)
def test_every_snippet_runs_pasted_as_shown(doc, tmp_path, monkeypatch):
    from nbclient import NotebookClient

    for var in ("DSH_ROOT", "DSH_SPILL_ROOT", "DSH_SETTINGS", "DSH_SERVER_URL", "DSH_SERVER_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DSH_STATE_PATH", str(tmp_path / "state" / "state.sqlite"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    work = prepare(tmp_path / "project")
    found = snippets(doc)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s.code) for s in found])
    replies: dict[int, dict] = {}
    client = NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(work)}},
        on_cell_executed=lambda cell, cell_index, execute_reply: replies.update({cell_index: execute_reply["content"]}),
    )
    client.execute()
    failures = []
    for index, (snippet, cell) in enumerate(zip(found, nb.cells)):
        # a UsageError is printed to stderr, not sent as an error output: the reply's status tells
        reply = replies[index]
        stderr = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("name") == "stderr")
        if reply["status"] != "ok":
            failures.append(f"{snippet.where}: {reply.get('ename')}: {reply.get('evalue')}\n{stderr}{snippet.code}")
        elif "UsageError" in stderr or "Traceback" in stderr:
            failures.append(f"{snippet.where}: {stderr}{snippet.code}")
    assert len(replies) == len(found)
    assert not failures, "\n\n".join(failures)
