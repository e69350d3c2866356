"""The temporary files readkeeper has in users' folders, written down first, so that the
next start removes what a kill -9 left, and nothing else.

atomic.py writes a file's new bytes to a temporary file beside it and then renames it
over the name; a process killed in between leaves the temporary file. Telling leftovers
by their names would delete a user's file that merely looks like one, and sweeping
only folders written to later would leave the rest where they are. So, before a
temporary file is created, its folder and name are appended to this process's journal,
a file in the user's state folder (`$XDG_STATE_HOME/readkeeper/pending`, else
`~/.local/state/readkeeper/pending`, private to the user) that the process holds an
exclusive `flock` on for as long as it lives. The kernel drops a dead process's locks,
killed or not, so a journal nobody holds is one whose writer is gone: `sweep` (once per
process, at start, on a thread of its own) removes the files such a journal names that
are still there (regular files, in their folder opened by its real path with no symlink
followed), then the journal. The journal is emptied whenever no temporary file is in
flight, so it stays a few hundred bytes.

Where the state folder cannot be made (a read-only home), nothing is written down and a
kill can leave a temporary file, as before; that is logged once.
"""

from __future__ import annotations

import atexit
import errno
import logging
import os
import secrets
import stat
import threading
from contextlib import suppress

from .beneath import Anchor, lstat_in

if os.name == "posix":
    import fcntl

log = logging.getLogger("readkeeper")

# The suffix of every file readkeeper creates for a moment in a user's folder (atomic.py's
# temporary files, leases.py's probe): a journal naming anything else is not ours.
TEMP_SUFFIX = ".rk-tmp"
_SUFFIX = ".journal"
_MAX_JOURNAL_BYTES = 1 << 20  # a journal is emptied often; one this big is not ours


def folder() -> str:
    """The folder of the journals (not made here)."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(state, "readkeeper", "pending")


class Journal:
    """This process's journal of temporary files in flight."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._pid = 0
        self._broken = False
        self._in_flight: set[bytes] = set()
        self._path = ""  # where the journal is, to remove it at a clean exit

    def add(self, folder_path: str, name: str) -> bytes | None:
        """Write down that `name` in `folder_path` is about to be created; the entry
        `done` takes, or None when nothing could be written down."""
        entry = os.fsencode(folder_path) + b"\0" + os.fsencode(name) + b"\0"
        with self._lock:
            fd = self._open()
            if fd is None:
                return None
            try:
                os.write(fd, entry)
            except OSError as exc:
                self._give_up(exc)
                return None
            self._in_flight.add(entry)
        return entry

    def done(self, entry: bytes | None) -> None:
        """The temporary file of `entry` was renamed or removed."""
        if entry is None:
            return
        with self._lock:
            self._in_flight.discard(entry)
            if not self._in_flight and self._fd is not None:
                with suppress(OSError):
                    os.ftruncate(self._fd, 0)

    def _open(self) -> int | None:
        if self._pid != os.getpid():  # a forked child writes its own journal
            self._fd, self._pid, self._in_flight = None, os.getpid(), set()
        if self._fd is not None or self._broken:
            return self._fd
        try:
            where = _state_folder(create=True)
            token = f"{os.getpid()}.{secrets.token_hex(4)}"
            making = f".{token}.new"
            fd = os.open(
                making, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600, dir_fd=where
            )
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # before the name a sweep looks at
                os.rename(making, token + _SUFFIX, src_dir_fd=where, dst_dir_fd=where)
                self._path = os.path.join(folder(), token + _SUFFIX)
            except OSError:
                os.close(fd)
                raise
            finally:
                os.close(where)
        except OSError as exc:
            self._give_up(exc)
            return None
        self._fd = fd
        atexit.register(self.close)
        return fd

    def close(self) -> None:
        """At a clean exit: remove the journal, unless a write is cut short."""
        with self._lock:
            if self._fd is None or self._pid != os.getpid():
                return
            if not self._in_flight:
                with suppress(OSError):
                    os.unlink(self._path)
            os.close(self._fd)
            self._fd = None

    def _give_up(self, exc: OSError) -> None:
        self._broken = True
        log.warning(
            "readkeeper: cannot write down its temporary files in %s (%s); one a kill "
            "leaves behind will not be removed",
            folder(),
            exc.strerror or exc,
        )


def _state_folder(create: bool) -> int:
    """The journals' folder, opened; it must be a folder of this user's, not a link."""
    path = folder()
    if create:
        os.makedirs(path, mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or st.st_mode & 0o022:
        os.close(fd)
        raise PermissionError(errno.EPERM, "not a private folder of this user", path)
    return fd


def sweep() -> int:
    """Remove the temporary files of every journal whose process is gone, and those
    journals; how many files were removed."""
    try:
        where = _state_folder(create=False)
    except OSError:
        return 0  # no journal was ever written here
    removed = 0
    try:
        for name in os.listdir(where):
            # (A ".new" journal is one being made, not yet locked: left alone.)
            if name.endswith(_SUFFIX):
                removed += _sweep_journal(where, name)
    finally:
        os.close(where)
    return removed


def _sweep_journal(where: int, name: str) -> int:
    try:
        fd = os.open(name, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=where)
    except OSError:
        return 0
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0  # its process is alive
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return 0
        data = os.pread(fd, _MAX_JOURNAL_BYTES, 0)
        fields = [os.fsdecode(f) for f in data.split(b"\0")]
        pairs = zip(fields[::2], fields[1::2], strict=False)  # a cut last entry is dropped
        removed = sum(_remove(folder_path, temp) for folder_path, temp in pairs)
        with suppress(OSError):
            os.unlink(name, dir_fd=where)
        return removed
    finally:
        os.close(fd)


def _remove(folder_path: str, name: str) -> int:
    """Remove one leftover, if it is still there and a regular file of ours."""
    if os.sep in name or not (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
        return 0  # not a name atomic.py makes: the journal was not ours
    try:
        anchor = Anchor.open(folder_path)
        entry = lstat_in(anchor.fd, name)
        if entry is None or not stat.S_ISREG(entry.st_mode):
            return 0
        os.unlink(name, dir_fd=anchor.fd)
    except OSError:
        return 0
    return 1


_swept = threading.Event()
_sweep_lock = threading.Lock()


def sweep_once() -> None:
    """`sweep`, on a thread, the first time a process asks."""
    with _sweep_lock:
        if _swept.is_set():
            return
        _swept.set()
    threading.Thread(target=_sweep_quietly, name="readkeeper-sweep", daemon=True).start()


def _sweep_quietly() -> None:
    try:
        sweep()
    except Exception:  # never take the server down over a leftover
        log.exception("readkeeper: removing leftover temporary files failed")


JOURNAL = Journal()
