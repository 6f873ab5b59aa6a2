"""Path resolution and confinement: the only place a tool argument becomes something opened.

A tool path is joined to the session cwd and normalised lexically; it must then name a place
beneath the root (or, for reading a saved result, beneath this session's spill folder). The
place itself is found by ``fs.tree.Tree``, which walks from the root's descriptor and holds a
descriptor of the folder the name is in, so what the tool opens next is what was checked: a
neighbour swapping a folder for a symlink meanwhile gets a refusal or the in-root file, never an
outside one. ``Target`` carries that descriptor; tools open through it and nothing else.

Display paths (what a model sees) are relative to the session cwd, with ``../`` for places
elsewhere in the root: the server's absolute root is never printed. Only spill locators are
absolute (they lie outside the root, and the model must be able to name them back).

What it must never do: open a file by a path string, reveal where the root is in a message, or
turn a permission problem into anything but ``FS_PERMISSION_DENIED``.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import stat as statmod
import threading
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import Codes, ToolError
from ..text.quoting import in_message
from .effects import CREATE, REPLACE, Change, refuse
from .tree import Entry, OutsideRoot, Raced, SymlinkLoop, Tree
from .visibility import Visibility

__all__ = ["RETRIES", "Resolver", "Target", "display_path", "fs_error", "is_within"]

log = logging.getLogger(__name__)

RETRIES = 8  # times a target is resolved again when a name changed between resolving and opening
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
# Lone surrogates that surrogateescape did not produce: no file name can hold one.
_FOREIGN_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def _home() -> str:
    return os.path.normpath(os.path.expanduser("~"))


def is_within(path: str, top: str) -> bool:
    """True when ``path`` is ``top`` or below it (both absolute and normalised)."""
    if path == top:
        return True
    prefix = top if top.endswith(os.sep) else top + os.sep
    return path.startswith(prefix)


def display_path(lexical: str, cwd: str) -> str:
    """``lexical`` relative to ``cwd``: ``.`` for cwd itself, ``../x`` for places above it."""
    if lexical == cwd:
        return "."
    if is_within(lexical, cwd):
        return lexical[len(cwd.rstrip(os.sep)) + 1 :]
    return os.path.relpath(lexical, cwd)


def fs_error(exc: OSError, verb: str, display: str) -> ToolError:
    """The one mapping of an OS error to a tool error (permission problems get their own code)."""
    if exc.errno in (errno.EACCES, errno.EPERM):
        return ToolError(Codes.FS_PERMISSION_DENIED, f"cannot {verb} {in_message(display)}: permission denied")
    if exc.errno == errno.ELOOP:
        return ToolError(Codes.FS_SYMLINK_LOOP, f"cannot {verb} {in_message(display)}: symbolic link loop")
    if exc.errno == errno.ENOENT:
        return ToolError(Codes.FS_NOT_FOUND, f"cannot {verb} {in_message(display)}: not found")
    return ToolError(Codes.FS_ERROR, f"cannot {verb} {in_message(display)}: {exc.strerror or exc}")


def _raced(verb: str, display: str) -> ToolError:
    return ToolError(
        Codes.FS_ERROR, f"cannot {verb} {in_message(display)}: it kept changing while being opened; try again"
    )


@dataclass
class Target:
    """A resolved tool path: how to show it, and the open ``Entry`` it names (close it: ``with``)."""

    display: str
    lexical: str
    entry: Entry
    in_spill: bool
    verb: str
    _again: Callable[[], Entry]  # resolve the same path again after a race

    @property
    def real(self) -> str:
        return self.entry.real

    @property
    def exists(self) -> bool:
        return self.entry.exists

    @property
    def is_dir(self) -> bool:
        return self.entry.is_dir

    def close(self) -> None:
        self.entry.close()

    def change(self) -> Change:
        """What writing this target does (``fs.effects``): it makes the entry, or replaces it, where
        the entry lies now."""
        return Change(REPLACE if self.exists else CREATE, self.entry.where(), self.verb, self.display)

    def __enter__(self) -> Target:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def not_found(self) -> ToolError:
        return ToolError(Codes.FS_NOT_FOUND, f"cannot {self.verb} {in_message(self.display)}: not found")

    def error(self, exc: OSError) -> ToolError:
        return fs_error(exc, self.verb, self.display)

    def refresh(self) -> None:
        """Resolve again (a name changed between resolving and opening)."""
        self.entry.close()
        self.entry = self._again()

    def open(self, flags: int) -> int:
        """Open the entry with ``flags`` (never following a symlink), resolving again on a race."""
        for _ in range(RETRIES):
            if not self.entry.exists:
                raise self.not_found()
            try:
                return self.entry.open(flags)
            except Raced:
                self.refresh()
            except FileNotFoundError:
                self.refresh()
            except OSError as exc:
                raise self.error(exc) from None
        raise _raced(self.verb, self.display)

    def open_dir(self, not_dir: ToolError) -> tuple[int, os.stat_result]:
        """A readable descriptor of the folder and its stat; ``not_dir`` when it is not a folder."""
        for _ in range(RETRIES):
            if not self.entry.exists:
                raise self.not_found()
            if not self.entry.is_dir:
                raise not_dir
            try:
                fd = self.entry.open(os.O_RDONLY | os.O_DIRECTORY)
            except (Raced, FileNotFoundError):
                self.refresh()
                continue
            except OSError as exc:
                raise self.error(exc) from None
            return fd, os.fstat(fd)
        raise _raced(self.verb, self.display)

    def open_regular(self) -> tuple[int, os.stat_result]:
        """A read descriptor of a regular file, refusing anything else before it can block.

        ``O_NONBLOCK`` keeps a FIFO swapped in after the lstat from hanging the open; the fstat of
        what was opened is what decides.
        """
        not_regular = ToolError(
            Codes.FS_NOT_REGULAR_FILE, f"cannot {self.verb} {in_message(self.display)}: not a regular file"
        )
        for _ in range(RETRIES):
            st = self.entry.st
            if st is None:
                raise self.not_found()
            if not statmod.S_ISREG(st.st_mode):
                raise not_regular
            try:
                fd = self.entry.open(os.O_RDONLY | _NONBLOCK)
            except (Raced, FileNotFoundError):
                self.refresh()
                continue
            except OSError as exc:
                raise self.error(exc) from None
            fst = os.fstat(fd)
            if not statmod.S_ISREG(fst.st_mode):
                os.close(fd)
                raise not_regular
            return fd, fst
        raise _raced(self.verb, self.display)


class Resolver:
    """Resolves tool paths for one root (and a read-only spill root), through descriptors."""

    def __init__(
        self,
        root: str,
        spill_root: str | None = None,
        *,
        use_openat2: bool = True,
        visibility: Visibility | None = None,
    ) -> None:
        self.tree = Tree(root, use_openat2=use_openat2)
        self.root = self.tree.real
        self._reopen = threading.Lock()
        self.spill_root = os.path.realpath(spill_root) if spill_root else None
        self.visibility = visibility or Visibility.build(self.root, True, (), ())
        self._use_openat2 = use_openat2
        self._spill_tree: Tree | None = None

    def close(self) -> None:
        self.tree.close()
        if self._spill_tree is not None:
            self._spill_tree.close()

    def check_root(self) -> None:
        """Make sure the root held open is the folder the root's path names now; re-open it if not.

        Why: a root removed and made again under a running server (``rm -rf ws; mkdir ws``, a
        fresh clone, a volume mounted again) leaves the descriptor on the deleted folder, and every
        tool would answer about it ("(Empty directory)", "not found", rg without a working
        directory) while Jupyter's own contents API shows the new files. So each call compares the
        path's device and inode with the descriptor's (one ``stat``) and, when they differ, opens
        the new folder (logged). Calls already running keep the old descriptor until they end.
        A root that is gone, no folder, or now leads elsewhere (a symlink on its path changed)
        is ``FS_ROOT_UNAVAILABLE``: the tools never answer about another folder than the one the
        workspace was started on.
        """
        tree = self.tree
        try:
            now = os.stat(self.root)
        except OSError:
            now = None
        held = os.fstat(tree.fd)
        if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            return
        if now is None or not statmod.S_ISDIR(now.st_mode):
            raise ToolError(
                Codes.FS_ROOT_UNAVAILABLE,
                "the workspace root was removed or replaced by something that is not a folder; make the folder "
                "again, or start the tools on another root",
            )
        if os.path.realpath(self.root) != self.root:
            raise ToolError(
                Codes.FS_ROOT_UNAVAILABLE,
                "the workspace root now leads to another folder (a symbolic link on its path changed); start the "
                "tools again to serve that folder",
            )
        with self._reopen:
            if self.tree is tree:  # not re-opened by another call meanwhile
                try:
                    self.tree = Tree(self.root, use_openat2=self._use_openat2)
                except OSError as exc:
                    raise fs_error(exc, "open", ".") from None
                log.warning("the workspace root was replaced (removed and made again); serving the new folder")

    @property
    def mode(self) -> str:
        """How paths are resolved: ``openat2`` (RESOLVE_BENEATH) or ``walk`` (the O_NOFOLLOW walk)."""
        return self.tree.resolver_name

    def spill_tree(self) -> Tree | None:
        if self._spill_tree is None and self.spill_root is not None:
            try:
                self._spill_tree = Tree(self.spill_root, use_openat2=self._use_openat2)
            except OSError:
                return None  # no spill was saved yet
        return self._spill_tree

    def lexical(self, cwd: str, path: str | None) -> tuple[str, str]:
        """``(raw, lexical)``: the argument as given and its absolute normalised form; or raise."""
        raw = "." if path is None else path
        if "\0" in raw:
            raise ToolError(Codes.ARGUMENT_INVALID, "path must not contain a NUL character")
        if _FOREIGN_SURROGATE.search(raw):
            # JSON may carry a lone surrogate; only U+DC80-U+DCFF stand for raw bytes of a name.
            raise ToolError(Codes.ARGUMENT_INVALID, "path must not contain an unpaired surrogate character")
        lexical = os.path.normpath(os.path.join(cwd, raw))
        if lexical.startswith("//"):
            lexical = "/" + lexical.lstrip("/")
        if raw.startswith("~/") and self.spill_root is not None:
            # A saved result's locator is shown under "~/" when it lies in the home folder
            # (``spill_display``); any other "~/..." is a folder named "~", as it always was.
            home = os.path.normpath(os.path.join(_home(), raw[2:]))
            if is_within(home, self.spill_root):
                lexical = home
        return raw, lexical

    def spill_display(self, locator: str, cwd: str) -> str:
        """How a saved result's locator is shown: relative to the cwd when the spill root lies in the
        workspace (the hub layout), under ``~/`` when it lies in the home folder, else as it is.

        So no answer names the home folder or the workspace root by its absolute path, and every
        form shown reads back (``lexical`` takes ``~/`` for saved results).
        """
        if self.rel_in_root(locator) is not None:
            return display_path(locator, cwd)
        home = _home()
        if home != "/" and is_within(locator, home):
            return "~/" + locator[len(home.rstrip("/")) + 1 :]
        return locator

    def rel_in_root(self, lexical: str) -> str | None:
        """Where ``lexical`` lies relative to the root, or None when it is outside.

        A path that names the root through a symlink outside it (``/home/u`` when the root is
        ``/srv/home/u``) is mapped by ``realpath``: that only picks the starting point, and the
        walk from the root's descriptor still decides what is opened.
        """
        rel = self.tree.relative(lexical)
        if rel is None and os.path.isabs(lexical):
            rel = self.tree.relative(os.path.realpath(lexical))
        return rel

    def in_spill(self, lexical: str) -> bool:
        return self.spill_root is not None and is_within(lexical, self.spill_root)

    def resolve(
        self,
        cwd: str,
        path: str | None,
        *,
        verb: str,
        spill_folder: str | None = None,
        follow_last: bool = True,
        make_parents: bool = False,
    ) -> Target:
        """Resolve ``path`` (default: ``cwd``) or raise ``ToolError``.

        ``verb`` names the action in messages (``cannot list "P": …``). ``spill_folder`` names
        the calling session's folder in the spill root when the tool may read saved results;
        a saved result of another session is "not found".
        """
        raw, lexical = self.lexical(cwd, path)

        def outside() -> ToolError:
            return ToolError(Codes.FS_OUTSIDE_ROOT, f"cannot {verb} {in_message(raw)}: path is outside the workspace")

        if self.spill_root is not None and is_within(lexical, self.spill_root) and spill_folder is not None:
            return self._resolve_spill(lexical, verb, spill_folder, self.spill_display(lexical, cwd))
        rel = self.rel_in_root(lexical)
        if rel is None:
            raise outside()
        display = display_path(lexical, cwd)
        vis = self.visibility
        # Before anything is created: as named. After: where it really lies (a symlink must not
        # lead into a hidden or protected place).
        vis.check(rel, self.root + ("/" + rel if rel else ""), verb, display)

        def before_make(real: str) -> None:
            # A missing parent is a change of its own: it must not make room for a protected folder.
            self.refuse([Change(CREATE, real, verb, display_path(real, cwd), made_for=display)])

        def again() -> Entry:
            entry = self._locate(
                self.tree, rel, verb, display, outside, follow_last, make_parents, before_make if make_parents else None
            )
            try:
                vis.check(rel, entry.real, verb, display)
                vis.check_identity(entry.st, verb, display)
            except ToolError:
                entry.remove_created()
                entry.close()
                raise
            return entry

        return Target(display, lexical, again(), False, verb, again)

    def _resolve_spill(self, lexical: str, verb: str, spill_folder: str, display: str) -> Target:
        def not_found() -> ToolError:
            return ToolError(Codes.FS_NOT_FOUND, f"cannot {verb} {in_message(display)}: not found")

        tree = self.spill_tree()
        rel = tree.relative(lexical) if tree is not None else None
        if tree is None or not rel or rel.split("/", 1)[0] != spill_folder or "/" not in rel:
            raise not_found()

        def again() -> Entry:
            return self._locate(tree, rel, verb, display, not_found, True, False, None)

        return Target(display, lexical, again(), True, verb, again)

    def refuse(self, changes: list[Change]) -> None:
        """``FS_PROTECTED`` when a change would create, replace or remove a protected path, a path
        inside one, or a folder above one (``fs.effects``: the one rule for every change)."""
        refuse(changes, self.visibility.protected_now())

    @staticmethod
    def _locate(
        tree: Tree,
        rel: str,
        verb: str,
        display: str,
        outside,
        follow_last: bool,
        make_parents: bool,
        before_make: Callable[[str], None] | None,
    ) -> Entry:
        try:
            return tree.locate(rel, follow_last=follow_last, make_parents=make_parents, before_make=before_make)
        except OutsideRoot:
            raise outside() from None
        except SymlinkLoop:
            raise ToolError(Codes.FS_SYMLINK_LOOP, f"cannot {verb} {in_message(display)}: symbolic link loop") from None
        except Raced:
            raise _raced(verb, display) from None
        except OSError as exc:
            raise fs_error(exc, verb, display) from None
