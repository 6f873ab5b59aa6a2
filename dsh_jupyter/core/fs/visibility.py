"""What the tools may show: hidden files as Jupyter hides them, and folders that are never shown.

Why it exists: under JupyterHub the root is the user's home, which holds Jupyter's runtime folder
(``jpserver-*.json`` with live API tokens, ``kernel-*.json`` with kernel keys, the cookie secret)
and startup code that runs in every kernel. Jupyter's own contents API hides dotfiles by default
(``ContentsManager.allow_hidden``) and drops ``hide_globs`` names from listings; the tools must
never be more permissive than that. So:

* **hidden** (``allow_hidden`` false): a path with a component starting with ``.`` — as named, or
  where it really lies — is refused by ``read``/``write``/``edit``/``list`` (``FS_HIDDEN``), and
  left out of listings and searches, which count what they left out;
* **hide globs**: names matching one (``__pycache__``, ``*.pyc`` …) are left out of listings and
  searches, as Jupyter leaves them out of its listings; a path naming one is still usable;
* **protected**, whatever the setting: the Jupyter runtime, data and config folders, IPython's
  folder, the state folder and the spill root are never shown, searched, read or written
  (``FS_PROTECTED``), except saved results through their own session.

The plain Python API and the stdio MCP server show everything by default (hidden files shown,
nothing globbed away); the server takes both settings from its ContentsManager.

What it must never do: decide on a path it was not given in both forms (as named and as
resolved): a symlink must not make a hidden or protected place visible.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field

from ..errors import Codes, ToolError
from ..text.quoting import in_message

__all__ = ["Visibility", "default_protected"]

HIDDEN_MESSAGE = "hidden files are not shown here; the server's ContentsManager.allow_hidden setting allows them"
PROTECTED_MESSAGE = "Jupyter's own folders (runtime, data, config) and this tool's state are never shown"


def default_protected(state_path: str, spill_root: str | None) -> list[str]:
    """The folders no tool may show, whatever the settings: Jupyter's, IPython's and our own."""
    from ..locations import jupyter_data_dir

    home = os.path.expanduser("~")
    data = jupyter_data_dir()
    out = [
        data,
        os.environ.get("JUPYTER_RUNTIME_DIR") or os.path.join(data, "runtime"),
        os.environ.get("JUPYTER_CONFIG_DIR") or os.path.join(home, ".jupyter"),
        os.environ.get("IPYTHONDIR") or os.path.join(home, ".ipython"),
        os.path.dirname(os.path.abspath(state_path)),
    ]
    if spill_root:
        out.append(spill_root)
    return out


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(os.path.expanduser(path)))


@dataclass(frozen=True)
class Visibility:
    root: str
    allow_hidden: bool = True
    hide_globs: tuple[str, ...] = ()
    protected: tuple[str, ...] = ()
    _glob: re.Pattern | None = field(default=None, compare=False, repr=False)

    @classmethod
    def build(cls, root: str, allow_hidden: bool, hide_globs, protected) -> Visibility:
        real_root = os.path.realpath(root)
        dirs = []
        for p in protected:
            rp = _real(p)
            # A protected folder that holds the whole workspace would hide everything; it is the
            # user's explicit choice of root, so only folders below or beside the root count.
            if rp != real_root and not real_root.startswith(rp.rstrip("/") + "/"):
                dirs.append(rp)
        globs = tuple(hide_globs)
        pattern = re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in globs)) if globs else None
        return cls(real_root, allow_hidden, globs, tuple(sorted(set(dirs))), pattern)

    # -- names in a folder (listings) ---------------------------------------------------------

    def shown(self, name: str) -> bool:
        """Whether an entry called ``name`` may appear in a listing or a search result."""
        if not self.allow_hidden and name.startswith("."):
            return False
        return self._glob is None or self._glob.match(name) is None

    def protected_names(self, folder_real: str) -> frozenset[str]:
        """Names directly in ``folder_real`` that are protected folders (left out of its listing)."""
        return frozenset(os.path.basename(p) for p in self.protected if os.path.dirname(p) == folder_real)

    def protected_below(self, folder_real: str) -> list[str]:
        """Protected folders below ``folder_real``, relative to it (for search exclusions)."""
        prefix = folder_real.rstrip("/") + "/"
        return [p[len(prefix) :] for p in self.protected if p.startswith(prefix)]

    def hidden_path(self, rel: str) -> bool:
        """Whether a root-relative path (``/``-separated) has a hidden component."""
        return not self.allow_hidden and any(
            part.startswith(".") and part not in (".", "..") for part in rel.split("/") if part
        )

    def globbed_path(self, rel: str) -> bool:
        """Whether any component of a root-relative path matches a hide glob."""
        return self._glob is not None and any(self._glob.match(part) for part in rel.split("/") if part)

    # -- one resolved target --------------------------------------------------------------------

    def is_protected(self, real: str) -> bool:
        return any(real == p or real.startswith(p.rstrip("/") + "/") for p in self.protected)

    def check(self, lexical_rel: str, real: str, verb: str, display: str) -> None:
        """Refuse a hidden or protected target: ``lexical_rel`` as named, ``real`` where it lies."""
        if self.is_protected(real):
            raise ToolError(Codes.FS_PROTECTED, f"cannot {verb} {in_message(display)}: {PROTECTED_MESSAGE}")
        if self.allow_hidden:
            return
        real_rel = real[len(self.root) :].lstrip("/") if real.startswith(self.root) else real
        if self.hidden_path(lexical_rel) or self.hidden_path(real_rel):
            raise ToolError(Codes.FS_HIDDEN, f"cannot {verb} {in_message(display)}: {HIDDEN_MESSAGE}")
