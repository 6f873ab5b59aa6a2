"""The tool registry: the tools on offer, in the order a model should meet them.

One list, read by every surface: the REST ``GET /tools``, MCP's ``tools/list``, the magic's
``%dsh tools`` and ``Workspace.run``. Each tool is defined once, in its own module under
``tools/`` (spec, schemas and executor together). The tools that search (``glob``, ``grep``) are
offered only when a ripgrep binary was found: a schema shown to a model is a promise that the
tool can run.
"""

from __future__ import annotations

import logging

from .tools.edit.tool import EDIT
from .tools.edit_cells.tool import EDIT_CELLS
from .tools.find.tool import FIND
from .tools.glob.tool import GLOB
from .tools.grep.tool import GREP
from .tools.listing.list_dir import LIST_DIR
from .tools.listing.tool import LIST
from .tools.move.tool import MOVE
from .tools.read.tool import READ
from .tools.replace.tool import REPLACE
from .tools.spec import ToolSpec
from .tools.write.tool import WRITE

__all__ = ["TOOLS", "ToolSpec", "build_registry"]

log = logging.getLogger(__name__)

TOOLS: tuple[ToolSpec, ...] = (LIST, GLOB, FIND, GREP, READ, WRITE, EDIT, EDIT_CELLS, REPLACE, MOVE, LIST_DIR)


def build_registry(rg: str | None) -> dict[str, ToolSpec]:
    """The tools on offer by name, in ``TOOLS`` order (without the searching ones when rg is missing)."""
    if rg is None:
        log.warning("no ripgrep binary found: the glob and grep tools are not offered")
    return {t.name: t for t in TOOLS if rg is not None or not t.searches}
