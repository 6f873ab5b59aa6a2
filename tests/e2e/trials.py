"""One trial of a person and agents working on one open file, what it checks, and the tally of all trials.

A trial's file is fresh: a text file of twelve lines (``alpha = 0`` … ``lima = 11``) or a notebook
of eight one-line code cells (ids ``alpha`` … ``hotel``). The person types only at the end of line
(or cell) 1, ``bravo``; agent A changes only line 6 (cell 4), agent B only line 10 (cell 6), each
change appending a tag of its own (`` A3``) to its line. So what the file must hold at the end is
known exactly: the person's line with every character they typed, in order, each agent's line
with the tags of exactly the changes the agent was told it made, in order, every other line as
it was. A refused change's tag must be nowhere.

``Trial`` holds that bookkeeping and the agents' operations (read, then edit, write or move),
checking every answer as it comes: a change the agent was told it made must say that the file is
open in JupyterLab (``value["open"]`` and the sentence of docs/tools.md, "Files a person has
open"), and a refusal must be one the mode allows, word for word. Agents may call from worker
threads; what they find wrong is kept and failed on at the end (an assertion in a thread would be
lost). ``finish`` is the end of every trial: the person's final Ctrl+S, the room's autosave left to
settle (with collaboration), then the file on disk and the document in the browser compared with
what they must hold, and the dialogs counted. ``Tally`` adds up the trials per scenario and mode.
"""

from __future__ import annotations

import difflib
import itertools
import json
import os
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import v4

from .person import letters

__all__ = ["KERNELSPEC", "Tally", "Trial"]

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"]
UNITS = {"text": 12, "notebook": 8}  # lines of the text file, cells of the notebook
PERSON_AT = 1
AGENT_AT = {"text": {"A": 6, "B": 10}, "notebook": {"A": 4, "B": 6}}
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}

# The refusals each mode may answer: they change nothing, and the agent may read again and retry.
REFUSALS = {
    "collab": {"FS_NOT_OBSERVED", "FS_OPEN_CONFLICT"},
    "tabs": {"FS_OPEN_UNSAVED", "FS_NOT_OBSERVED", "FS_OPEN_UNANSWERED"},
}
READ_NOTES = {
    "shared": "(This file is open in JupyterLab: shown as its live document, unsaved changes included.)",
    "live": "(This notebook is open in Jupyter: shown as its live document, unsaved changes included.)",
    "tab": "(This file is open in JupyterLab, with no unsaved changes.)",
    "unsaved": "(This file is open in JupyterLab with unsaved changes, which this read does not show; a change to "
    "it is refused until they are saved.)",
}
MERGED = " The person's changes since this session read it were kept."
_LINE = re.compile(r"^(\d+): (.*)$")


def refusal_texts(code: str, verbs: tuple[str, ...], shown: str) -> list[str]:
    """The exact error texts of docs/tools.md for ``code``, one per verb (a conflict: a pattern)."""
    said = {
        "FS_OPEN_UNSAVED": 'Error: cannot {v} "{p}": it is open in JupyterLab with unsaved changes; nothing was '
        "changed. Ask the person to save or close it, then read it again",
        "FS_NOT_OBSERVED": 'Error: cannot {v} "{p}": it changed since this session last read it; read it again',
        "FS_OPEN_UNANSWERED": 'Error: cannot {v} "{p}": it is open in JupyterLab, and the page that has it open did '
        "not answer in time; nothing was changed; try again",
    }
    return [said[code].format(v=v, p=shown) for v in verbs] if code in said else []


CONFLICT = re.compile(
    r'Error: cannot write "(?P<p>[^"]+)": it is open in JupyterLab, and the person changed (?P<where>.+) since '
    r"this session read it, which this change changes too; nothing was changed\. Read it again"
)


@dataclass
class Change:
    """One change an agent asked for: its tag, what it was, and how it ended."""

    who: str
    tool: str
    tag: str
    code: str | None = None  # None: the agent was told it was made
    surface: str = ""


@dataclass
class Record:
    mode: str
    scenario: str
    kind: str
    seed: str
    surfaces: list[str] = field(default_factory=list)
    typed: int = 0
    lost_keystrokes: int = 0
    changes: int = 0
    lost_changes: int = 0
    refused_but_made: int = 0
    dialogs: int = 0
    unanswered_saves: int = 0  # the person's saves the server never answered (collaboration; see Person.save)
    refusals: dict = field(default_factory=dict)
    passed: bool = False
    failure: str = ""


class Trial:
    """One person, one or two agents, one fresh file (see the module docstring)."""

    def __init__(self, side, scenario: str, kind: str, rng, seed: str, number: int) -> None:
        self.side, self.person, self.rng = side, side.person, rng
        self.mode, self.collab = side.mode, side.mode == "collab"
        self.scenario, self.kind, self.notebook = scenario, kind, kind == "notebook"
        self.path = f"{scenario}-{kind}-{number}.{'ipynb' if self.notebook else 'txt'}"
        self.first_path = self.path
        self.units = [f"{w} = {i}" for i, w in enumerate(WORDS[: UNITS[kind]])]
        self.language_info: dict = {}
        self.agent_at = AGENT_AT[kind]
        self.typed = ""
        self.changes: list[Change] = []
        self.problems: list[str] = []
        self.record = Record(side.mode, scenario, kind, seed)
        self._tags = itertools.count(1)
        self._lock = threading.Lock()
        self._dialogs_before = len(self.person.dialogs())
        self._console_before = len(self.person.console)

    # -- the file --------------------------------------------------------------------------------

    @property
    def real(self) -> Path:
        return self.side.lab.root / self.path

    def create(self) -> None:
        if self.notebook:
            # the kernel's own language_info, or only its name, as notebooks are often committed
            # (then the page holds more than the file: JupyterLab marks the notebook unsaved)
            self.language_info = self.rng.choice([self.side.language_info, {"name": "python"}])
            nb = v4.new_notebook(
                metadata={"kernelspec": KERNELSPEC, "language_info": self.language_info},
                cells=[v4.new_code_cell(u, id=u.split(" ")[0]) for u in self.units],
            )
            nbformat.write(nb, str(self.real))
        else:
            self.real.write_text("".join(u + "\n" for u in self.units))

    def open(self) -> None:
        """The person opens the file (and saves a notebook JupyterLab marks unsaved as it connects
        to the kernel); the trial starts once the server knows it is open."""
        self.person.open(self.path, self.notebook, self.side.kernel_id if self.notebook else None)
        if self.notebook and not self.collab and self.dirty():
            self.save()  # only the kernel's language_info: the server leaves the file as it was
        want = "shared" if self.collab else "tab"
        deadline = time.monotonic() + 30
        while True:
            read = self.side.probe.call("read", file_path=self.path)
            if read.value.get("open") == want:
                return
            assert time.monotonic() < deadline, f"the server never said {self.path} is open ({want}): {read.text}"
            time.sleep(0.1)

    def disk(self):
        """What the file holds: its text, or its cells' sources (after nbformat validates it)."""
        if not self.notebook:
            return self.real.read_text(encoding="utf-8")
        nb = nbformat.read(str(self.real), as_version=nbformat.NO_CONVERT)
        nbformat.validate(nb)
        return [c.source for c in nb.cells]

    def expected(self) -> list[str]:
        units = list(self.units)
        units[PERSON_AT] += self.typed
        for who, at in self.agent_at.items():
            units[at] += "".join(f" {c.tag}" for c in self.made(who) if c.tool in ("edit", "write"))
        return units

    def as_units(self, content) -> list[str]:
        if self.notebook:
            return list(content)
        return content[:-1].split("\n") if content.endswith("\n") else content.split("\n")

    # -- the person ------------------------------------------------------------------------------

    def type(self, n: int, click: bool = True) -> None:
        """The person clicks at the end of their line (unless ``click`` is false: the keyboard is
        there already) and types ``n`` characters."""
        if click:
            self.click()
        text = letters(self.rng, n)
        self.person.type(text, self.rng)
        self.typed += text
        self.check_no_dialog()

    def click(self) -> None:
        self.person.click_end_of(self.path, self.notebook, PERSON_AT)

    def type_on(self, seconds: float, save_p: float) -> None:
        """The person types on for ``seconds``, 1 to 4 characters every 30-150 ms. Now and then
        (``save_p`` per burst) they press Ctrl+S, half the time typing on at once, while the save
        is under way, and more often than not then stop to think for 0.3-0.9 s (the document is
        saved then, unless they typed during the save: an agent's change may go in)."""
        self.click()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._burst()
            time.sleep(self.rng.uniform(0.03, 0.15))
            if self.rng.random() < save_p:
                self.person.press_save()
                if self.rng.random() < 0.5:
                    self._burst()  # typing on while the save is under way
                if self.rng.random() < 0.6:
                    time.sleep(self.rng.uniform(0.3, 0.9))  # stopping to think
        self.check_no_dialog()

    def _burst(self) -> None:
        chunk = letters(self.rng, self.rng.randint(1, 4))
        self.person.page.keyboard.type(chunk)
        self.typed += chunk

    def save(self) -> None:
        if not self.person.save(self.path, unanswered_ok=self.collab):
            self.record.unanswered_saves += 1
        self.check_no_dialog()

    def dirty(self) -> bool:
        return bool(self.person.seen(self.path)["dirty"])

    def check_no_dialog(self) -> None:
        dialogs = self.person.dialogs()[self._dialogs_before :]
        assert not dialogs, f"JupyterLab showed a dialog: {dialogs}; the page's errors: {self.console()}"

    def console(self) -> list[str]:
        return self.person.console[self._console_before :]

    # -- the agents ------------------------------------------------------------------------------

    def read(self, agent):
        read = agent.call("read", file_path=self.path)
        if read.code is not None:
            self.problem(f"{agent.surface} read failed: {read.text}")
            return read
        value = read.value
        opened = value.get("open")
        if self.collab:
            note = READ_NOTES["live"] if self.notebook else READ_NOTES["shared"]
            if opened != "shared" or (self.notebook and value.get("live") is not True):
                self.problem(f"a read did not say the file is open as a shared document: {value}")
        else:
            note = READ_NOTES.get(opened or "", "")
            if opened not in ("tab", "unsaved"):
                self.problem(f"a read did not say the file is open in a tab: {value}")
        if not note or f"\n\n{note}\n" not in read.text:
            self.problem(f"a read did not say the file is open ({opened!r}): {read.text!r}")
        return read

    def units_in(self, read) -> list[str]:
        """The file's lines (a notebook: its cells' sources) as a read showed them."""
        if self.notebook:
            cells = read.value.get("cells") or []
            return ["\n".join(line["text"] for line in cell["lines"]) for cell in cells]
        return [m.group(2) for m in map(_LINE.match, read.text.split("\n")) if m]

    def attempt_edit(self, agent, who: str, rng=None) -> bool:
        """Read, then append a new tag to this agent's line; True when the agent was told it was made."""
        rng = rng or self.rng
        read = self.read(agent)
        if read.code is not None:
            return False
        units = self.units_in(read)
        at = self.agent_at[who]
        if len(units) != len(self.units):
            self.problem(f"a read showed {len(units)} lines or cells, not {len(self.units)}: {read.text!r}")
            return False
        old = units[at]
        tag = f"{who}{next(self._tags)}"
        time.sleep(rng.uniform(0, 0.1))
        answer = agent.call("edit", file_path=self.path, old_string=old, new_string=f"{old} {tag}")
        return self._answered(agent, who, "edit", tag, answer, old=old)

    def edit_until_made(self, agent, who: str, tries: int = 4, between=None) -> bool:
        for _ in range(tries):
            if self.attempt_edit(agent, who):
                return True
            if between is not None:
                between()
        return False

    def new_version(self, read, who: str) -> tuple[str, str]:
        """The whole file as this agent writes it: what it read, with a new tag on its line."""
        units = self.units_in(read)
        tag = f"{who}{next(self._tags)}"
        units[self.agent_at[who]] += f" {tag}"
        if not self.notebook:
            return "".join(u + "\n" for u in units), tag
        ids = [cell["id"] for cell in read.value["cells"]]
        nb = v4.new_notebook(
            metadata={"kernelspec": KERNELSPEC, "language_info": self.language_info},
            cells=[v4.new_code_cell(u, id=i) for u, i in zip(units, ids, strict=True)],
        )
        return nbformat.writes(nb), tag

    def write(self, agent, who: str, content: str, tag: str) -> bool:
        answer = agent.call("write", file_path=self.path, content=content)
        return self._answered(agent, who, "write", tag, answer)

    def move(self, agent, destination: str) -> bool:
        answer = agent.call("move", source=self.path, destination=destination)
        made = self._answered(agent, "A", "move", f"move to {destination}", answer, destination=destination)
        if made:
            self.path = destination
        return made

    def _answered(self, agent, who: str, tool: str, tag: str, answer, old: str = "", destination: str = "") -> bool:
        change = Change(who, tool, tag, answer.code, agent.surface)
        with self._lock:
            self.changes.append(change)
            if agent.surface not in self.record.surfaces:
                self.record.surfaces.append(agent.surface)
        if answer.code is not None:
            self._check_refusal(tool, answer)
            return False
        value, text = answer.value, answer.text
        want_open = "shared" if self.collab else "tab"
        if value.get("open") != want_open:
            self.problem(f"{tool}'s value does not say the file is open ({want_open}): {value}")
        where = (
            "The change went to the notebook open in Jupyter, which saves it."
            if self.collab and self.notebook
            else f"The change went to the file open in JupyterLab, which {'saves' if self.collab else 'saved'} it."
        )
        if tool == "edit":
            head = f"The file {self.path} has been updated successfully. {where}\n"
            if not text.startswith(head) or f"\n-{old}\n+{old} {tag}" not in text:
                self.problem(f"edit's answer is not {head!r} and the diff of {tag}: {text!r}")
        elif tool == "write":
            merged = MERGED if value.get("merged") else ""
            want = f"<path>{self.path}</path>\n<type>file</type>\n<content>\nUpdated file. {where}{merged}\n</content>"
            if text != want:
                self.problem(f"write's answer is not {want!r}: {text!r}")
        elif tool == "move":
            made = ", creating the missing parent directories." if value.get("createdParents") else "."
            want = f"Moved file {self.path} to {destination}{made} It was open in JupyterLab, and its tab follows it."
            if text != want:
                self.problem(f"move's answer is not {want!r}: {text!r}")
        return True

    def _check_refusal(self, tool: str, answer) -> None:
        code = answer.code
        if code not in REFUSALS[self.mode]:
            self.problem(f"{tool} was refused with {code}, which this mode never answers: {answer.text!r}")
            return
        verbs = {"edit": ("edit", "write"), "write": ("write",), "move": ("move",)}[tool]
        if code == "FS_OPEN_CONFLICT":
            match = CONFLICT.fullmatch(answer.text)
            if match is None or match.group("p") != self.path:
                self.problem(f"{tool}'s conflict is not in docs/tools.md's words: {answer.text!r}")
        elif answer.text not in refusal_texts(code, verbs, self.path):
            self.problem(f"{tool}'s {code} is not in docs/tools.md's words: {answer.text!r}")

    def problem(self, message: str) -> None:
        with self._lock:
            self.problems.append(message)

    def made(self, who: str | None = None) -> list[Change]:
        return [c for c in self.changes if c.code is None and (who is None or c.who == who)]

    # -- the end ---------------------------------------------------------------------------------

    def settle(self, timeout: float = 30.0):
        """The file on disk once it holds what the browser's document holds, and keeps holding it
        (with collaboration, for 1.5 s: past the room's autosave delay of 1 s)."""
        quiet = 1.5 if self.collab else 0.3
        deadline = time.monotonic() + timeout
        since = None
        last = None
        while time.monotonic() < deadline:
            try:
                disk = self.as_units(self.disk())
            except (OSError, ValueError, nbformat.ValidationError):
                disk = None  # gone, or being written
            seen = self.person.seen(self.path)
            model = self.as_units(seen["model"]) if seen else None
            same = disk is not None and disk == model
            if same and disk == last:
                if since is None:
                    since = time.monotonic()
                if time.monotonic() - since >= quiet:
                    return disk
            else:
                since = None
            last = disk if same else None
            time.sleep(0.1)
        return None

    def finish(self) -> None:
        """The person's final save; then everything the trial promises is checked (see the module docstring)."""
        self.save()
        self.settle()
        seen = self.person.seen(self.path)
        assert seen is not None, f"the tab of {self.path} is gone"
        disk = self.as_units(self.disk())  # a notebook is validated here
        self.person.close(self.path)
        want = self.expected()
        self.record.typed = len(self.typed)
        shown, model = self.as_units(seen["shown"]), self.as_units(seen["model"])
        self.record.lost_keystrokes = max(self._lost_keys(u) for u in (disk, shown, model))
        made = [c for c in self.made() if c.tool in ("edit", "write")]
        self.record.changes = len(self.made())
        self.record.lost_changes = max(self._lost_tags(u, made) for u in (disk, shown, model))
        refused = [c for c in self.changes if c.code is not None and c.tool in ("edit", "write")]
        self.record.refused_but_made = max(self._present(u, refused) for u in (disk, shown, model))
        self.record.refusals = dict(Counter(c.code for c in self.changes if c.code is not None))
        dialogs = self.person.dialogs()[self._dialogs_before :]
        self.record.dialogs = len(dialogs)
        assert not self.problems, "\n".join(self.problems)
        assert not dialogs, f"JupyterLab showed a dialog: {dialogs}; the page's errors: {self.console()}"
        assert self.record.lost_keystrokes == 0, f"keystrokes lost: typed {self.typed!r}; disk {disk}, browser {shown}"
        assert self.record.lost_changes == 0, f"changes lost: made {[c.tag for c in made]}; disk {disk}"
        assert self.record.refused_but_made == 0, f"refused changes made: {[c.tag for c in refused]}; disk {disk}"
        assert disk == want, f"the file on disk:\n{disk}\nnot\n{want}"
        assert shown == want and model == want, f"the browser shows:\n{shown}\n(model {model})\nnot\n{want}"
        assert seen["path"] == self.path, seen
        if self.path != self.first_path:  # moved: exactly one copy, at the new path
            assert not (self.side.lab.root / self.first_path).exists(), f"{self.first_path} exists again"
        name = Path(self.first_path).stem
        copies = sorted(
            str(p.relative_to(self.side.lab.root))
            for p in self.side.lab.root.rglob(f"*{name}*")
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(self.side.lab.root).parts)
        )
        assert copies == [self.path], f"copies of the file: {copies}"
        self.record.passed = True

    def _lost_keys(self, units: list[str]) -> int:
        orig = self.units[PERSON_AT]
        got = units[PERSON_AT] if len(units) > PERSON_AT else ""
        got = got[len(orig) :] if got.startswith(orig) else got
        blocks = difflib.SequenceMatcher(None, self.typed, got, autojunk=False).get_matching_blocks()
        return len(self.typed) - sum(b.size for b in blocks)

    def _lost_tags(self, units: list[str], made: list[Change]) -> int:
        return sum(1 for c in made if not self._has(units, c))

    def _present(self, units: list[str], refused: list[Change]) -> int:
        return sum(1 for c in refused if self._has(units, c))

    def _has(self, units: list[str], change: Change) -> bool:
        at = self.agent_at[change.who]
        return len(units) > at and re.search(rf" {re.escape(change.tag)}(?!\d)", units[at]) is not None


class Tally:
    """Every trial's record; the table per scenario and mode, printed and written as JSON."""

    COLUMNS = (
        "mode",
        "scenario",
        "trials",
        "passed",
        "typed",
        "lost keys",
        "changes",
        "lost changes",
        "dialogs",
        "unanswered saves",
    )

    def __init__(self, seed: str) -> None:
        self.seed = seed
        self.records: list[Record] = []
        self._lock = threading.Lock()

    def add(self, record: Record) -> None:
        with self._lock:
            self.records.append(record)

    def rows(self) -> list[dict]:
        groups: dict[tuple[str, str], list[Record]] = {}
        for r in self.records:
            groups.setdefault((r.mode, r.scenario), []).append(r)
        rows = []
        for (mode, scenario), records in groups.items():
            refusals: Counter = Counter()
            for r in records:
                refusals.update(r.refusals)
            rows.append(
                {
                    "mode": mode,
                    "scenario": scenario,
                    "trials": len(records),
                    "passed": sum(r.passed for r in records),
                    "typed": sum(r.typed for r in records),
                    "lost keys": sum(r.lost_keystrokes for r in records),
                    "changes": sum(r.changes for r in records),
                    "lost changes": sum(r.lost_changes + r.refused_but_made for r in records),
                    "dialogs": sum(r.dialogs for r in records),
                    "unanswered saves": sum(r.unanswered_saves for r in records),
                    "refusals": dict(sorted(refusals.items())),
                }
            )
        return rows

    def table(self) -> str:
        rows = self.rows()
        head = [*self.COLUMNS, "refusals"]
        cells = [
            [str(r[c]) for c in self.COLUMNS] + [", ".join(f"{k} {v}" for k, v in r["refusals"].items()) or "0"]
            for r in rows
        ]
        widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(head)]
        lines = [" | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))]
        lines.append("-+-".join("-" * w for w in widths))
        lines += [" | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
        return "\n".join(lines)

    @classmethod
    def from_dicts(cls, seed: str, records: list[dict]) -> Tally:
        found = cls(seed)
        found.records = [Record(**r) for r in records]
        return found

    def report(self, write) -> None:
        """The table through ``write`` (the terminal's), and the JSON when ``DSH_TRIALS_REPORT`` is set."""
        path = self.report_path()
        if path:
            self.write_json(path)
        write(f"\nperson and agent trials (DSH_TRIALS_SEED={self.seed})\n{self.table()}\n")

    def write_json(self, path: str) -> None:
        body = {"seed": self.seed, "rows": self.rows(), "trials": [r.__dict__ for r in self.records]}
        Path(path).write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")

    @staticmethod
    def report_path() -> str | None:
        return os.environ.get("DSH_TRIALS_REPORT") or None
