"""Path resolution and confinement: the only place a tool argument becomes a filesystem path.

Every path is resolved against the session cwd, then its *real* path (symlinks resolved) must lie
inside the root -- or, for reading only, inside the spill root. Comparing real paths rather than
strings is what stops ``..``, absolute paths, prefix siblings (``/srv/root-evil`` next to
``/srv/root``) and symlinks that point out. Nothing here opens a file; it only stats.

Display paths (what a model sees) are relative to the session cwd when inside it, else absolute.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass

from .errors import Codes, ToolError
from .render.quoting import in_message

__all__ = ["Resolved", "Resolver", "display_path", "is_within"]


def is_within(path: str, top: str) -> bool:
    """True when ``path`` is ``top`` or below it (both absolute and normalised)."""
    if path == top:
        return True
    prefix = top if top.endswith(os.sep) else top + os.sep
    return path.startswith(prefix)


def display_path(lexical: str, cwd: str) -> str:
    """Relative to ``cwd`` when inside it (``.`` for cwd itself), else the absolute path."""
    if lexical == cwd:
        return "."
    if is_within(lexical, cwd):
        return lexical[len(cwd.rstrip(os.sep)) + 1 :]
    return lexical


def printable(path: str) -> str:
    """Text for a path that may hold undecodable bytes (surrogate escapes) -> U+FFFD."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        pass
    try:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a surrogate that no undecodable byte produced
        return path.encode("utf-8", "replace").decode("utf-8")


@dataclass(frozen=True)
class Resolved:
    lexical: str  # absolute, normalised, symlinks kept: what the user named
    real: str  # absolute, symlinks resolved (for a missing path: as far as it exists)
    display: str  # what the model sees
    exists: bool
    in_spill: bool  # inside the spill root (read-only) rather than the workspace


class Resolver:
    """Resolves tool paths for one root (and optional read-only spill root)."""

    def __init__(self, root: str, spill_root: str | None = None) -> None:
        self.root = os.path.realpath(root)
        self.spill_root = os.path.realpath(spill_root) if spill_root else None

    def resolve(self, cwd: str, path: str | None, *, verb: str, allow_spill: bool = False) -> Resolved:
        """Resolve ``path`` (default: ``cwd``) or raise ``ToolError``.

        ``verb`` names the action in error messages (``cannot list "P": …``).
        """
        raw = "." if path is None else path
        if "\0" in raw:
            raise ToolError(Codes.ARGUMENT_INVALID, "path must not contain a NUL character")
        try:
            os.fsencode(raw)  # JSON may carry a lone surrogate; no file name can hold one
        except UnicodeEncodeError:
            raise ToolError(Codes.ARGUMENT_INVALID, "path must not contain an unpaired surrogate character") from None
        lexical = os.path.normpath(os.path.join(cwd, raw))
        if lexical.startswith("//"):
            lexical = "/" + lexical.lstrip("/")
        shown = printable(display_path(lexical, cwd))
        # Name the path as the caller wrote it: never reveal where the root lies.
        outside = ToolError(Codes.FS_OUTSIDE_ROOT, f'cannot {verb} {in_message(printable(raw))}: path is outside the workspace')
        try:
            real, exists = self._realpath(lexical, verb, shown)
        except ToolError:
            # A loop or an OS error on a path that does not even name the workspace is, first of
            # all, outside it: say that rather than describe a path the caller may not probe.
            if not (self._allowed(lexical, allow_spill)):
                raise outside from None
            raise
        if not self._allowed(real, allow_spill):
            raise outside
        in_spill = not is_within(real, self.root)
        return Resolved(lexical=lexical, real=real, display=shown, exists=exists, in_spill=in_spill)

    def _allowed(self, path: str, allow_spill: bool) -> bool:
        if is_within(path, self.root):
            return True
        return allow_spill and self.spill_root is not None and is_within(path, self.spill_root)

    @staticmethod
    def _realpath(lexical: str, verb: str, shown: str) -> tuple[str, bool]:
        try:
            return os.path.realpath(lexical, strict=True), True
        except (FileNotFoundError, NotADirectoryError):
            pass
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ToolError(Codes.FS_SYMLINK_LOOP, f'cannot {verb} {in_message(shown)}: symbolic link loop') from None
            raise ToolError(Codes.FS_ERROR, f'cannot {verb} {in_message(shown)}: {exc.strerror or exc}') from None
        # Missing (or under a file): resolve as far as the path exists, following dangling
        # links textually so a link that points out is still judged by where it points.
        real = os.path.realpath(lexical, strict=False)
        probe = real
        while True:
            try:
                os.lstat(probe)
                break
            except FileNotFoundError:
                parent = os.path.dirname(probe)
                if parent == probe:
                    break
                probe = parent
            except NotADirectoryError:
                break
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise ToolError(Codes.FS_SYMLINK_LOOP, f'cannot {verb} {in_message(shown)}: symbolic link loop') from None
                break
        if os.path.islink(probe):
            # Non-strict realpath stops at a link it cannot resolve (a loop).
            raise ToolError(Codes.FS_SYMLINK_LOOP, f'cannot {verb} {in_message(shown)}: symbolic link loop')
        return real, False
