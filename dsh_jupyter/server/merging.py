"""Three-way merges of an agent's new content with a person's live document: text and notebooks.

Why it exists: with real-time collaboration a ``write`` of a file a person has open must not replace
the document (their unsaved typing would go). What the agent read (the base), what the agent wrote
and the document now (the person's changes since) are merged, and the result is applied to the
document as changes; where both changed the same lines or cells, nothing is changed and the agent
is told where. Merging is a solved problem with maintained libraries: ``merge3`` (the merge of bzr
and breezy, the classic diff3 regions) for text, and nbdime's ``merge_notebooks`` (a Jupyter
project: cells matched as nbdime matches them, sources merged line by line) for notebooks. Both are
in the ``lab`` and ``collab`` extras, the installs that run collaboration.

What it must never do: return a merge that holds conflict markers, or decide a conflict for
either side: a conflict is ``MergeConflict``, and the caller changes nothing.
"""

from __future__ import annotations

import argparse
import json

import nbformat

from ..core.documents import MergeConflict

__all__ = ["merge_notebooks", "merge_texts"]


def _lines(where: list[tuple[int, int]]) -> str:
    spans = [f"line {a + 1}" if b - a <= 1 else f"lines {a + 1}-{b}" for a, b in where]
    return ", ".join(spans[:5]) + (f" and {len(spans) - 5} more" if len(spans) > 5 else "")


def merge_texts(base: str, mine: str, theirs: str) -> tuple[str, bool]:
    """``mine`` (the agent's) and ``theirs`` (the document now) merged from ``base``, line by line,
    and whether ``theirs`` held changes of its own that the merge kept.

    ``MergeConflict`` names the conflicting lines as they are numbered in the document now.
    """
    from merge3 import Merge3

    if theirs == base or mine == theirs:
        return mine, False
    if mine == base:
        return theirs, True
    merge = Merge3(base.splitlines(True), theirs.splitlines(True), mine.splitlines(True))
    out: list[str] = []
    conflicts: list[tuple[int, int]] = []
    for region in merge.merge_regions():
        kind = region[0]
        if kind == "unchanged":
            out.extend(merge.base[region[1] : region[2]])
        elif kind in ("a", "same"):
            out.extend(merge.a[region[1] : region[2]])
        elif kind == "b":
            out.extend(merge.b[region[1] : region[2]])
        else:  # ("conflict", zstart, zend, astart, aend, bstart, bend)
            astart, aend = region[3], region[4]  # type: ignore[misc]
            conflicts.append((astart, max(aend, astart + 1)))
    if conflicts:
        raise MergeConflict(_lines(conflicts))
    return "".join(out), True


def _cell_name(cells: list, index: int) -> str:
    if 0 <= index < len(cells):
        cell_id = cells[index].get("id")
        return f'cell {index + 1} (id "{cell_id}")' if cell_id else f"cell {index + 1}"
    return f"cell {index + 1}"


def merge_notebooks(base: dict, mine: dict, theirs: dict) -> tuple[dict, bool]:
    """``mine`` and ``theirs`` merged from ``base`` by nbdime, and whether ``theirs`` held changes of
    its own that the merge kept; ``MergeConflict`` names the cells."""
    from nbdime.merging import merge_notebooks as nbdime_merge

    # one form for all three: sources and output text joined (a file may hold them as lists of lines)
    nodes = [nbformat.reads(json.dumps(nb), as_version=nbformat.NO_CONVERT) for nb in (base, mine, theirs)]
    if _same(nodes[2], nodes[0]) or nodes[1] == nodes[2]:
        return nodes[1], False
    if nodes[1] == nodes[0]:
        return nodes[2], True
    # conflicts are recorded, never resolved inline; execution counts are content, not transients
    args = argparse.Namespace(
        merge_strategy=None, input_strategy=None, output_strategy=None, ignore_transients=False, log_level="INFO"
    )
    merged, decisions = nbdime_merge(nodes[0], nodes[1], nodes[2], args)
    conflicts = [d for d in decisions if d.conflict]
    if conflicts:
        names = []
        for decision in conflicts:
            path = tuple(decision.common_path)
            if len(path) >= 2 and path[0] == "cells" and isinstance(path[1], int):
                name = _cell_name(theirs.get("cells", []), path[1])
            elif path and path[0] == "cells":
                name = "cells added, removed or moved beside a cell the person changed"
            else:
                name = "the notebook's " + ("/".join(str(p) for p in path) or "structure")
            if name not in names:
                names.append(name)
        raise MergeConflict(", ".join(names))
    return nbformat.from_dict(merged), True


def _same(a, b) -> bool:
    """Two notebooks the same for a person: what a shared document adds on its own (the kernel's
    ``language_info``, empty kernelspec defaults) set aside."""

    def key(nb):
        meta = {k: v for k, v in nb.get("metadata", {}).items() if k not in ("language_info", "kernelspec")}
        return [(c.get("id"), c.get("cell_type"), c.get("source")) for c in nb.get("cells", [])], meta

    return a == b or key(a) == key(b)
