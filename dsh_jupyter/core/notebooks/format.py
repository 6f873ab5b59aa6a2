"""Notebooks as cells: recognise, parse and validate ``.ipynb`` content, and change cell sources.

Why it exists: in a Jupyter workspace the most important files are notebooks, and as raw JSON
they read badly (base64 images, escaped source lines) and are easy to break (one stray comma and
Jupyter cannot open the file). Here a notebook's bytes become a list of ``Cell`` s, a change to
cell sources becomes new bytes in the file's own JSON layout, and every notebook a tool is about
to write is validated with nbformat first.

What it must never do: open a file or a document (callers hand it bytes, or the dict a live
document gives), change anything but the cell sources it was asked to change (outputs, metadata,
ids and key order stay as they were), or let nbformat repair a notebook behind the caller's back.
nbformat's validator changes the dict it checks in one case only: in nbformat 4.5 and later it adds
missing cell ids and renumbers duplicate ones in place. ``notebook_problem`` refuses both before
the validator runs, so the validator is handed the dict itself, with no copy (a copy of a big
notebook cost as much as the schema check); the schemas set no defaults, so the compiled check
adds nothing either. A valid notebook is recognised by a quicker validator first (``schema.py``);
nbformat decides every other case and words every message. The JSON is parsed with the cyclic
garbage collector held off (``gcpause.py``): a parse makes no cycles for it to find.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from .gcpause import collector_paused
from .schema import quickly_valid

__all__ = [
    "NOTEBOOK_SUFFIX",
    "Cell",
    "Cells",
    "NotNotebook",
    "Notebook",
    "is_notebook_name",
    "notebook_from_dict",
    "notebook_problem",
    "parse_notebook",
    "serialize_like",
    "source_text",
    "with_sources",
]

NOTEBOOK_SUFFIX = ".ipynb"
_PROBLEM_MAX = 300  # characters of a validation message quoted to the model


def is_notebook_name(path: str) -> bool:
    """Whether ``path`` names a notebook by Jupyter's rule: the ``.ipynb`` suffix."""
    return path.endswith(NOTEBOOK_SUFFIX)


class NotNotebook(Exception):
    """The content is not a notebook the tools can treat as cells; ``reason`` says why (one line)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Cell:
    index: int  # 1-based position in the notebook
    id: str | None  # nbformat 4.5+ cell id; None in older notebooks
    type: str  # code, markdown or raw
    execution_count: int | None
    source: str
    outputs: list  # the cell's output dicts, as stored
    attachments: dict | None


@dataclass(frozen=True)
class Notebook:
    data: dict  # the parsed JSON, in its own key order (kept parses are shared: never changed)
    cells: Sequence[Cell]


def source_text(value: object) -> str:
    """A multiline string as nbformat stores it (a string, or a list of lines) joined."""
    if isinstance(value, list):
        try:
            return "".join(value)  # nearly always: a list of strings
        except TypeError:
            return "".join(part for part in value if isinstance(part, str))
    return value if isinstance(value, str) else ""


def _one_line(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _PROBLEM_MAX else text[: _PROBLEM_MAX - 3] + "..."


def _where(exc: Exception) -> str:
    """`` (in cell 3)`` or `` (at ['metadata'])`` from nbformat's ``On instance[...]`` line."""
    for line in str(exc).splitlines():
        if line.startswith("On instance"):
            place = line[len("On instance") :].rstrip(":")
            cell = re.match(r"\['cells'\]\[(\d+)\]", place)
            if cell:
                return f" (in cell {int(cell.group(1)) + 1})"
            return f" (at {place})" if place else ""
    return ""


def _id_problem(cells: list) -> str | None:
    """Why the cells' ids would make nbformat's validator change them (one missing, two the same)."""
    try:  # most notebooks: every cell a dict with a string id, no two alike, seen in C-level passes
        ids = [cell["id"] for cell in cells]
    except (KeyError, TypeError):
        ids = None
    if ids is not None and set(map(type, ids)) <= {str} and len(set(ids)) == len(ids):
        return None
    seen: dict[str, int] = {}
    for i, cell in enumerate(cells, start=1):
        cid = cell.get("id") if isinstance(cell, dict) else None
        if not isinstance(cid, str):
            return f"cell {i} has no id (nbformat 4.5 and later require one)"
        if cid in seen:
            return f"cells {seen[cid]} and {i} have the same id {json.dumps(cid)}"
        seen[cid] = i
    return None


def notebook_problem(data: object) -> str | None:
    """Why ``data`` is not a valid nbformat notebook, in one line; None when it is valid."""
    if not isinstance(data, dict):
        return "the top level is not a JSON object"
    major, minor = data.get("nbformat"), data.get("nbformat_minor")
    if not isinstance(major, int) or isinstance(major, bool):
        return "it has no nbformat version"
    if major != 4:
        return f"nbformat {major} notebooks are not supported (nbformat 4 is)"
    cells = data.get("cells")
    if isinstance(cells, list) and isinstance(minor, int) and minor >= 5:
        # nbformat's validator would add missing ids and renumber duplicates instead of refusing;
        # with both refused here it changes nothing, so it checks ``data`` itself (no copy).
        problem = _id_problem(cells)
        if problem is not None:
            return problem
    if isinstance(minor, int) and not isinstance(minor, bool) and quickly_valid(data, minor):
        return None  # a yes from the quick check is nbformat's yes (schema.py); a no goes on to it
    from nbformat import validator  # imported on first use: most tool calls never need it

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            validator.validate(data)
    except validator.ValidationError as exc:
        message = getattr(exc, "message", None) or str(exc).splitlines()[0]
        return _one_line(f"{message}{_where(exc)}")
    except Exception as exc:  # nbformat found no schema for this minor version, and the like
        return _one_line(f"{type(exc).__name__}: {exc}")
    return None


def _cell(i: int, cell: dict) -> Cell:
    count = cell.get("execution_count")
    return Cell(
        index=i,
        id=cell.get("id") if isinstance(cell.get("id"), str) else None,
        type=cell.get("cell_type", ""),
        execution_count=count if isinstance(count, int) and not isinstance(count, bool) else None,
        source=source_text(cell.get("source", "")),
        outputs=(cell.get("outputs") or []) if cell.get("cell_type") == "code" else [],
        attachments=cell.get("attachments") if isinstance(cell.get("attachments"), dict) else None,
    )


class Cells(Sequence[Cell]):
    """A notebook's cells, each built from its dict the first time it is asked for.

    Why: a first read shows one page of a notebook, but building every ``Cell`` of a 5,000-cell
    notebook cost half as much as parsing its JSON. Kept parses are shared between threads; two
    threads building the same cell build equal ones, and either may be kept.
    """

    __slots__ = ("_built", "_dicts")

    def __init__(self, dicts: list) -> None:
        self._dicts = dicts
        self._built: list[Cell | None] = [None] * len(dicts)

    def __len__(self) -> int:
        return len(self._dicts)

    def _at(self, i: int) -> Cell:
        cell = self._built[i]
        if cell is None:
            cell = self._built[i] = _cell(i + 1, self._dicts[i])
        return cell

    @overload
    def __getitem__(self, key: int) -> Cell: ...
    @overload
    def __getitem__(self, key: slice) -> list[Cell]: ...
    def __getitem__(self, key: int | slice) -> Cell | list[Cell]:
        if isinstance(key, slice):
            return [self._at(i) for i in range(*key.indices(len(self._dicts)))]
        n = len(self._dicts)
        if not -n <= key < n:
            raise IndexError("cell index out of range")
        return self._at(key % n)

    def __iter__(self) -> Iterator[Cell]:
        return (self._at(i) for i in range(len(self._dicts)))


def notebook_from_dict(data: dict) -> Notebook:
    """The cells of a validated notebook dict (built as they are asked for: ``Cells``)."""
    return Notebook(data, Cells(data.get("cells", [])))


def _load(raw: bytes) -> object:
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotNotebook(f"it is not UTF-8 text (byte {exc.start})") from None
    try:
        with collector_paused():  # a parse makes no cycles: the collector need not walk its objects
            return json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotNotebook(_one_line(f"it is not valid JSON ({exc})")) from None
    except (ValueError, RecursionError) as exc:
        raise NotNotebook(_one_line(f"it is not valid JSON ({type(exc).__name__})")) from None


def parse_notebook(raw: bytes) -> Notebook:
    """The notebook in ``raw``, validated; ``NotNotebook`` with the reason otherwise."""
    data = _load(raw)
    problem = notebook_problem(data)
    if problem is not None:
        raise NotNotebook(f"it is not a valid notebook: {problem}")
    return notebook_from_dict(data)  # type: ignore[arg-type]


def with_sources(data: dict, sources: dict[int, str]) -> dict:
    """A copy of ``data`` whose cells at 1-based ``sources`` keys hold the new source text.

    A source stored as a list of lines stays a list of lines (as nbformat writes it), a string
    stays a string; nothing else of the notebook is touched.
    """
    out = dict(data)
    cells = list(data["cells"])
    for index, text in sources.items():
        cell = dict(cells[index - 1])
        cell["source"] = text.splitlines(keepends=True) if isinstance(cell.get("source"), list) else text
        cells[index - 1] = cell
    out["cells"] = cells
    return out


def serialize_like(data: dict, original: bytes) -> bytes:
    """``data`` as JSON in the layout of ``original``: its indent, its escaping, its final newline.

    Keys keep their order (``json`` keeps it both ways), so a notebook Jupyter wrote (indent 1,
    keys sorted, non-ASCII as is) comes back byte for byte except where its sources changed.
    """
    body = original[3:] if original.startswith(b"\xef\xbb\xbf") else original
    indent: int | None = None
    newline = body.find(b"\n")
    if newline >= 0:
        rest = body[newline + 1 :]
        indent = len(rest) - len(rest.lstrip(b" "))
        if indent == 0 and rest[:1] == b"\t":
            indent = None  # tabs: fall back to nbformat's own layout below
    ascii_only = all(b < 0x80 for b in body) and b"\\u" in body
    if newline < 0:
        text = json.dumps(data, ensure_ascii=ascii_only, separators=(",", ":"))
    else:
        text = json.dumps(data, indent=indent or 1, ensure_ascii=ascii_only)
    out = text.encode("utf-8")
    if body.endswith(b"\n"):
        out += b"\n"
    return (original[:3] if original is not body else b"") + out
