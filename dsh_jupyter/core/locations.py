"""Where the shared state file lives by default: one place for the server, kernels and plain Python.

Why it exists: a notebook run by nbconvert, papermill or ``jupyter console`` on the same machine
must share the read-before-write gate and the call log with the Jupyter server, so every process
must arrive at the same file without being told: ``<jupyter data dir>/dsh_jupyter/state.sqlite``,
unless ``DSH_STATE_PATH`` says otherwise.

The Jupyter data folder is computed here the way ``jupyter_core.paths.jupyter_data_dir`` does
(``JUPYTER_DATA_DIR``, else the platform's user data folder) because the core must not import
Jupyter; a test checks the two agree.
"""

from __future__ import annotations

import os
import re
import sys

__all__ = ["default_state_path", "filesystem_of", "is_network_filesystem", "jupyter_data_dir"]

# Filesystems on which SQLite's WAL mode is unsafe: WAL needs shared memory that every process
# sees the same way, which network and FUSE filesystems do not promise (SQLite's own advice).
NETWORK_FILESYSTEMS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb",
        "smb2",
        "smb3",
        "smbfs",
        "9p",
        "ceph",
        "glusterfs",
        "lustre",
        "afs",
        "gpfs",
        "beegfs",
        "sshfs",
        "davfs",
        "ncpfs",
        "orangefs",
        "ocfs2",
        "gfs2",
        "virtiofs",
    }
)


def _home() -> str:
    return os.path.realpath(os.path.expanduser("~"))


def _platform_dirs() -> bool:
    return os.environ.get("JUPYTER_PLATFORM_DIRS", "").lower() not in ("", "0", "false", "no", "off", "n", "f")


def jupyter_data_dir() -> str:
    """The user's Jupyter data folder, as ``jupyter_core.paths.jupyter_data_dir()`` finds it."""
    env = os.environ.get("JUPYTER_DATA_DIR")
    if env:
        return env
    if _platform_dirs():
        try:
            import platformdirs

            return platformdirs.user_data_dir("jupyter", appauthor=False)
        except ImportError:
            pass
    if sys.platform == "darwin":
        return os.path.join(_home(), "Library", "Jupyter")
    if os.name == "nt":
        appdata = os.environ.get("APPDATA")
        if appdata:
            return os.path.realpath(os.path.join(appdata, "jupyter"))
        return os.path.join(os.environ.get("JUPYTER_CONFIG_DIR") or os.path.join(_home(), ".jupyter"), "data")
    xdg = os.environ.get("XDG_DATA_HOME") or os.path.join(_home(), ".local", "share")
    return os.path.join(xdg, "jupyter")


def default_state_path() -> str:
    """``DSH_STATE_PATH`` when set, else ``<jupyter data dir>/dsh_jupyter/state.sqlite``."""
    return os.environ.get("DSH_STATE_PATH") or os.path.join(jupyter_data_dir(), "dsh_jupyter", "state.sqlite")


def _unescape(field: str) -> str:
    # mountinfo writes space, tab, newline and backslash as \040, \011, \012 and \134
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def filesystem_of(path: str, mountinfo: str = "/proc/self/mountinfo") -> str:
    """The type of the filesystem ``path`` lies on (``ext4``, ``nfs4``, ``fuse.sshfs`` …), or ``unknown``.

    Read from ``mountinfo`` (Linux): the mount whose mount point is the longest prefix of the
    path's real location. Elsewhere, or when it cannot be read, ``unknown``.
    """
    real = os.path.realpath(path)
    best, fstype = "", "unknown"
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return fstype
    for line in lines:
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if not sep or len(fields) < 5 or not right:
            continue
        point = _unescape(fields[4])
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, fstype = point, right.split()[0]
    return fstype


def is_network_filesystem(fstype: str) -> bool:
    """Whether WAL mode must not be used on a filesystem of this type (network or FUSE)."""
    base = fstype.lower()
    return base in NETWORK_FILESYSTEMS or base == "fuse" or base.startswith(("fuse.", "fuseblk"))
