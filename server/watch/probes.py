"""Linux probes: what the kernel says about the watcher's surroundings.

The filesystem a root is on (/proc/self/mountinfo), which decides whether its events
can be trusted, and the inotify limits (/proc/sys), named in the warning when the
kernel refuses a watch. Elsewhere than Linux the probes answer "unknown".
"""

from __future__ import annotations

import errno

from ..files.paths import is_within

# Filesystems whose change events miss changes made elsewhere (another machine, the
# VM host, Windows): their roots are polled.
UNRELIABLE_FILESYSTEMS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "9p",
        "drvfs",
        "virtiofs",
        "vboxsf",
        "vmhgfs",
        "fuse.vmhgfs-fuse",
        "fuse.sshfs",
        "fuse.rclone",
        "fuse.s3fs",
        "fuse.gcsfuse",
        "fuse.glusterfs",
        "ceph",
        "afs",
        "lustre",
        "gpfs",
        "davfs",
        "fuse.davfs2",
    }
)


def filesystem_type(path: str) -> str | None:
    """The type of the filesystem `path` is on (Linux /proc/self/mountinfo), if known."""
    best: tuple[int, str] | None = None
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as file:
            for line in file:
                left, sep, right = line.partition(" - ")
                fields = left.split()
                if not sep or len(fields) < 5 or not right:
                    continue
                mount = _unescape(fields[4])
                if is_within(path, mount) and (best is None or len(mount) >= best[0]):
                    best = (len(mount), right.split()[0])
    except OSError:
        return None
    return best[1] if best else None


def _unescape(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as octal (\040 ...).
    if "\\" not in field:
        return field
    return field.encode().decode("unicode_escape")


def limit_reason(error: OSError) -> str:
    """Why the kernel refused an inotify watch or instance, with the limit it hit (an
    error without an errno says itself: the inotify reader ended, state/health.py)."""
    if error.errno is None:
        return str(error)
    if error.errno == errno.EMFILE:
        return (
            "the system refused another inotify instance "
            f"(fs.inotify.max_user_instances = {_sysctl('max_user_instances')})"
        )
    return (
        "the system ran out of inotify watches "
        f"(fs.inotify.max_user_watches = {_sysctl('max_user_watches')})"
    )


def _sysctl(name: str) -> str:
    # /proc/sys/user/ holds the limits of this process's user namespace (the same as
    # fs.inotify.* outside containers); fs.inotify.* is the host-wide setting.
    user_name = {"max_user_watches": "max_inotify_watches"}.get(name, "max_inotify_instances")
    for path in (f"/proc/sys/user/{user_name}", f"/proc/sys/fs/inotify/{name}"):
        try:
            with open(path) as file:
                return file.read().strip()
        except OSError:
            continue
    return "unknown"
