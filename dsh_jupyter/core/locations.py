"""Where the shared state file lives by default: one place for the server, kernels and plain Python.

Why it exists: a notebook run by nbconvert, papermill or ``jupyter console`` on the same machine
must share the read-before-write gate and the call log with the Jupyter server, so every process
must arrive at the same file without being told: ``<jupyter data dir>/dsh_jupyter/state.sqlite``,
unless ``DSH_STATE_PATH`` says otherwise.

Jupyter's own folders come from ``jupyter_core.paths``, the small package every Jupyter
application asks (it honours ``JUPYTER_CONFIG_DIR``, ``JUPYTER_DATA_DIR``,
``JUPYTER_RUNTIME_DIR``, ``JUPYTER_CONFIG_PATH``, ``JUPYTER_PATH``, ``JUPYTER_PLATFORM_DIRS`` and
the environment and system folders), so the folders the tools protect are the ones Jupyter reads
its configuration and tokens from, not a list kept by hand.
"""

from __future__ import annotations

import os
import re

from .settings import STATE_PATH_ENV

__all__ = [
    "default_state_path",
    "filesystem_of",
    "ipython_dir",
    "is_network_filesystem",
    "jupyter_data_dir",
    "jupyter_folders",
    "jupyter_runtime_dir",
]

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


def jupyter_data_dir() -> str:
    """The user's Jupyter data folder (``jupyter_core.paths.jupyter_data_dir``)."""
    from jupyter_core.paths import jupyter_data_dir as data_dir

    return data_dir()


def jupyter_runtime_dir() -> str:
    """Where Jupyter keeps its servers' and kernels' connection files and tokens."""
    from jupyter_core.paths import jupyter_runtime_dir as runtime_dir

    return runtime_dir()


def ipython_dir() -> str:
    """IPython's folder (its profiles' startup code runs in every kernel), as IPython finds it."""
    return os.path.expanduser(os.environ.get("IPYTHONDIR") or os.path.join("~", ".ipython"))


def jupyter_folders() -> list[str]:
    """Every folder Jupyter and IPython read configuration, extensions or tokens from.

    The user's config, data and runtime folders, every folder of the config path (the
    environment's ``etc/jupyter`` and the system's included, and ``JUPYTER_CONFIG_PATH``), every
    folder of the data path (``JUPYTER_PATH`` included) and IPython's folder.
    """
    from jupyter_core import paths

    return [
        paths.jupyter_config_dir(),
        *paths.jupyter_config_path(),
        paths.jupyter_data_dir(),
        *paths.jupyter_path(),
        paths.jupyter_runtime_dir(),
        ipython_dir(),
    ]


def default_state_path() -> str:
    """``DSH_STATE_PATH`` when set, else ``<jupyter data dir>/dsh_jupyter/state.sqlite``."""
    return os.environ.get(STATE_PATH_ENV) or os.path.join(jupyter_data_dir(), "dsh_jupyter", "state.sqlite")


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
