"""Which file systems inotify cannot fully see: the table the index's watcher checks ``statfs`` against.

Why it exists: inotify reports what this kernel does to a file system. On a network file system a
change made by another client raises no event here, and on a FUSE file system neither does one
its daemon makes by itself; a watcher there would look authoritative and miss changes. So the
watcher (``watch.py``) asks ``fstatfs`` for the root's type, and for every folder on another device
below it, and gives up on any type listed here.

What it must never do: list a local file system whose changes all go through this kernel
(ext4, xfs, btrfs, tmpfs, overlayfs, ...): the index would then never be used there.
"""

from __future__ import annotations

__all__ = ["REMOTE_FILESYSTEMS", "SUBFOLDER_LINKS", "remote_filesystem"]

# f_type magic numbers of file systems whose changes inotify cannot all see: changes made by
# another client or the file system's own daemon raise no event here. Sources: linux/magic.h and
# statfs(2) for the kernel's own; GNU coreutils' src/stat.c (the file systems it marks "remote")
# for the others. Left out of coreutils' list on purpose: overlayfs and aufs (container roots,
# where every change goes through this kernel) and pseudo file systems that hold no workspace.
REMOTE_FILESYSTEMS: dict[int, tuple[str, str]] = {
    0x6969: ("nfs", "network"),
    0x517B: ("smb", "network"),
    0xFE534D42: ("smb2", "network"),
    0xFF534D42: ("cifs", "network"),
    0x5346414F: ("afs", "network"),
    0x6B414653: ("afs", "network"),  # the kernel's kAFS
    0x00C36400: ("ceph", "network"),
    0x01021997: ("9p", "network"),
    0x73757245: ("coda", "network"),
    0x564C: ("ncp", "network"),
    0x7461636F: ("ocfs2", "network"),
    0x01161970: ("gfs2", "network"),
    0x47504653: ("gpfs", "network"),
    0x0BD00BD0: ("lustre", "network"),
    0x19830326: ("beegfs", "network"),
    0xAAD7AAEA: ("panfs", "network"),
    0x013111A8: ("ibrix", "network"),
    0xBEEFDEAD: ("snfs", "network"),
    0x61636673: ("acfs", "network"),
    0xBACBACBC: ("vmhgfs", "network"),  # VMware shared folders
    0x786F4256: ("vboxsf", "network"),  # VirtualBox shared folders (the kernel's fs/vboxsf/super.c)
    0x7C7C6673: ("prl_fs", "network"),  # Parallels shared folders
    0x65735546: ("fuse", "user-space"),  # also sshfs, glusterfs, virtiofs, rclone, s3fs
}


def remote_filesystem(f_type: int) -> tuple[str, str] | None:
    """``(name, kind)`` when ``f_type`` is a file system inotify cannot fully see, else None."""
    return REMOTE_FILESYSTEMS.get(f_type & 0xFFFFFFFF)


# f_type magic numbers of file systems where a folder's link count is 2 plus its subfolders (its
# name in its parent, its own ".", each subfolder's ".."), so a count of 2 proves a folder has no
# subfolder without listing it. Left out: btrfs (a folder's count is always 1), overlayfs (a
# merged folder may count only its upper layer's), and every other file system. ext4 sets the
# count to 1 past 65,000 subfolders (dir_nlink), never to 2 wrongly.
SUBFOLDER_LINKS: dict[int, str] = {
    0xEF53: "ext2/ext3/ext4",
    0x58465342: "xfs",
    0x01021994: "tmpfs",
}
