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
import json
import os
import re
import stat as statmod
from dataclasses import dataclass, field

from ..errors import Codes, ToolError
from ..text.quoting import in_message

__all__ = [
    "Identities",
    "Visibility",
    "backups_folder",
    "default_identities",
    "default_protected",
    "index_folder",
    "state_files",
]

HIDDEN_MESSAGE = "hidden files are not shown here; the server's ContentsManager.allow_hidden setting allows them"
PROTECTED_MESSAGE = "Jupyter's own folders (runtime, data, config) and this tool's state are never shown"


# The state file's companions: SQLite's write-ahead log, its shared memory and its rollback journal.
STATE_COMPANIONS = ("-wal", "-shm", "-journal")


def state_files(state_path: str) -> list[str]:
    """The state file and its journals: exact files, protected wherever the state file was put."""
    path = os.path.abspath(os.path.expanduser(state_path))
    return [path, *(path + suffix for suffix in STATE_COMPANIONS)]


def backups_folder(state_path: str) -> str:
    """Where an interrupted in-place rewrite keeps a file's old content (``fs.rewrite``)."""
    return os.path.join(os.path.dirname(os.path.abspath(os.path.expanduser(state_path))), "backups")


def index_folder(state_path: str) -> str:
    """Where the workspace indexes are kept (``tools.indexing.keeper``)."""
    return os.path.join(os.path.dirname(os.path.abspath(os.path.expanduser(state_path))), "index")


def default_protected(state_path: str, spill_root: str | None) -> list[str]:
    """The places no tool may show, whatever the settings: Jupyter's folders (from
    ``jupyter_core.paths``), IPython's, and our own — the state folder, the state file and its
    journals by name (the state folder does not count where it holds the whole root), the
    copies of interrupted rewrites, the workspace indexes and the spill root."""
    from ..locations import jupyter_folders

    out = [*jupyter_folders(), os.path.dirname(os.path.abspath(state_path)), *state_files(state_path)]
    out.append(backups_folder(state_path))
    out.append(index_folder(state_path))
    if spill_root:
        out.append(spill_root)
    return out


@dataclass(frozen=True)
class Identities:
    """Files protected under any name (a hard link), as ``Visibility.linked_protected`` finds them.

    ``files`` are exact files (the state file and its journals), protected by identity whatever
    their link count; ``folders`` are ``(folder, depth)``: folders that hold only protected files
    (Jupyter's runtime folder, the spill root, the rewrite copies), whose files with a second name
    are protected, ``depth`` folders down. Never a folder that merely happens to hold the state file:
    that may be the home, and every workspace file there would pass for a protected one.
    """

    files: tuple[str, ...] = ()
    folders: tuple[tuple[str, int], ...] = ()


def default_identities(state_path: str, spill_root: str | None) -> Identities:
    """The runtime folder (servers' tokens, kernels' keys; one folder down), the spill root (a
    folder per session), the copies of interrupted rewrites, and the state file with its journals."""
    from ..locations import jupyter_runtime_dir

    folders = [(jupyter_runtime_dir(), 1), (backups_folder(state_path), 0)]
    if spill_root:
        folders.append((spill_root, 1))
    return Identities(tuple(state_files(state_path)), tuple(folders))


# Over how many entries the identity folders are looked at: the files that matter lie in the
# folder itself or one folder down, and a grep asks on every call.
_IDENTITY_MAX_ENTRIES = 5_000


def _linked_files(folders: tuple[tuple[str, int], ...]) -> set[tuple[int, int]]:
    """``(device, inode)`` of the regular files below ``folders`` that have more than one name."""
    found: set[tuple[int, int]] = set()
    budget = _IDENTITY_MAX_ENTRIES
    todo = list(folders)
    while todo and budget > 0:
        folder, depth = todo.pop()
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    budget -= 1
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if statmod.S_ISREG(st.st_mode) and st.st_nlink > 1:
                        found.add((st.st_dev, st.st_ino))
                    elif statmod.S_ISDIR(st.st_mode) and depth > 0:
                        todo.append((entry.path, depth - 1))
        except OSError:
            continue
    return found


def _exact_files(files: tuple[str, ...]) -> set[tuple[int, int]]:
    found: set[tuple[int, int]] = set()
    for path in files:
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            continue
        if statmod.S_ISREG(st.st_mode):
            found.add((st.st_dev, st.st_ino))
    return found


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(os.path.expanduser(path)))


@dataclass(frozen=True)
class Visibility:
    root: str
    allow_hidden: bool = True
    hide_globs: tuple[str, ...] = ()
    protected: tuple[str, ...] = ()
    identity: Identities = Identities()  # files protected under any name (hard links)
    _glob: re.Pattern | None = field(default=None, compare=False, repr=False)
    named: tuple[str, ...] = ()  # the protected paths as given (absolute), taken again by ``protected_now``

    @classmethod
    def build(
        cls, root: str, allow_hidden: bool, hide_globs, protected, identity: Identities | None = None
    ) -> Visibility:
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
        named = tuple(sorted({os.path.abspath(os.path.expanduser(p)) for p in protected}))
        return cls(
            real_root,
            allow_hidden,
            globs,
            tuple(sorted(set(dirs))),
            Identities(tuple(_real(p) for p in identity.files), tuple((_real(f), d) for f, d in identity.folders))
            if identity is not None
            else Identities(),
            pattern,
            named,
        )

    # -- names in a folder (listings) ---------------------------------------------------------

    def shown(self, name: str) -> bool:
        """Whether an entry called ``name`` may appear in a listing or a search result."""
        if not self.allow_hidden and name.startswith("."):
            return False
        return self._glob is None or self._glob.match(name) is None

    def shown_names(self, names: list[str]) -> list[str]:
        """``[n for n in names if self.shown(n)]``; a folder of 100,000 names with none hidden (no
        hide globs, no leading dot: one scan of the joined names) is kept as it is, with no
        call per name."""
        if self._glob is None:
            if self.allow_hidden or not ("\n" + "\n".join(names)).count("\n."):
                return names
            return [n for n in names if not n.startswith(".")]
        return [n for n in names if self.shown(n)]

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

    # -- what a record made under another visibility may show ---------------------------------------

    def stamp(self) -> str:
        """What this visibility shows, as a call record or a saved result remembers it."""
        made = {"hidden": self.allow_hidden, "globs": sorted(self.hide_globs), "protected": list(self.protected)}
        return json.dumps(made, separators=(",", ":"))

    def withholds(self, stamp: str | None) -> str | None:
        """Why something made under ``stamp`` may show more than this visibility does, or None.

        A call's text or a saved result holds what its surface showed: made where hidden files
        are shown, it may quote ``.env``; made where a hide glob or a protected folder was not in
        force, it may quote what this surface hides. Such a record is withheld here, with this
        reason. One made before records said what they showed is withheld wherever anything is
        hidden.
        """
        if stamp is None:
            if self.allow_hidden and not self.hide_globs:
                return None
            return "it was made before calls recorded what they showed"
        try:
            made = json.loads(stamp)
            shown_hidden, globs, protected = bool(made["hidden"]), set(made["globs"]), set(made["protected"])
        except (ValueError, KeyError, TypeError):
            return "what it showed is not known"
        if shown_hidden and not self.allow_hidden:
            return "it was made where hidden files are shown, and this surface hides them"
        if set(self.hide_globs) - globs:
            return "it was made where names this surface hides (hide_globs) are shown"
        if set(self.protected) - protected:
            return "it was made where folders this surface protects were not protected"
        return None

    def linked_protected(self) -> frozenset[tuple[int, int]]:
        """``(device, inode)`` of the protected files that may have a name elsewhere, now: the exact
        files (the state file and its journals) and the identity folders' files with a second name.

        Looked up when asked (a kernel's connection file appears at any time) and cheap: a few
        stats, and of the folders' files only those with a second name count.
        """
        found = _exact_files(self.identity.files)
        if self.identity.folders:
            found |= _linked_files(self.identity.folders)
        return frozenset(found)

    def check_identity(self, st: os.stat_result | None, verb: str, display: str) -> None:
        """Refuse a file that is a protected file under another name (a hard link to a token, or to
        the state file)."""
        if st is None or not statmod.S_ISREG(st.st_mode):
            return
        if st.st_nlink < 2 and not self.identity.files:
            return
        key = (st.st_dev, st.st_ino)
        if st.st_nlink < 2:
            # One name: only the exact files can be this one (the folders' files are protected by
            # their place); a few stats, no folder scanned.
            if key in _exact_files(self.identity.files):
                raise ToolError(Codes.FS_PROTECTED, f"cannot {verb} {in_message(display)}: {PROTECTED_MESSAGE}")
            return
        if key in self.linked_protected():
            raise ToolError(Codes.FS_PROTECTED, f"cannot {verb} {in_message(display)}: {PROTECTED_MESSAGE}")

    def protected_now(self) -> frozenset[str]:
        """The protected paths as they lie now: those found at start, and each one as given and
        resolved again (a symlink made since can move where a missing protected folder would land).

        Only a change to the tree asks (``fs.effects``); a protected path that holds the whole
        root does not count, as at start.
        """
        out = set(self.protected)
        root = self.root.rstrip("/") + "/"
        for given in self.named:
            for p in (given, os.path.realpath(given)):
                if p != self.root and not root.startswith(p.rstrip("/") + "/"):
                    out.add(p)
        return frozenset(out)

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
