"""When a file's stat proves its content has not changed.

A file's stamp is its device, inode, size, mtime and ctime. The kernel stamps ctime on
every change of a file, from its own clock, and nothing short of changing the system
clock sets it back; a file replaced by a rename is another inode. So a file whose stamp
is the same as when its bytes were read still holds those bytes, with one exception:
two changes within one tick of that clock (a few milliseconds) can share a ctime, and a
read between them would record the first change's bytes under the second's stamp.
Git's rule for racily clean files closes that gap: a stamp is only kept as a proof when
the file was already unchanged for `SETTLED_NS` as it was opened, so that any change
after the read lands on a later tick. On a filesystem that keeps whole seconds (FAT
keeps mtime to 2 s) the wait is `COARSE_SETTLED_NS`.

What it can still miss, as git can: a filesystem whose clock runs behind this machine's
by more than the wait (a network share), a single write call lasting longer than it, the
system clock set back, and a file written through a shared memory map (the kernel stamps
it at the first write to a page, not at each write to a page still unsaved: a database's
files, rarely an agent's). `force` reads such a file again. The stamp is a fast path for
telling a re-read it is unchanged (DESIGN.md: "mtime and size are only the fast path");
an edit always checks the bytes.
"""

from __future__ import annotations

import os

SETTLED_NS = 100_000_000  # how long unchanged before a file's stamp proves its content
COARSE_SETTLED_NS = 2_000_000_000  # the same where timestamps are whole seconds

Stamp = tuple[int, int, int, int, int]  # device, inode, size, mtime_ns, ctime_ns


def stamp_of(st: os.stat_result) -> Stamp:
    """The stamp of a file's stat."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled(st: os.stat_result, now_ns: int) -> bool:
    """Whether a file stat'ed at `now_ns` (the wall clock, taken before the stat) was
    unchanged long enough for any later change to give it another stamp."""
    return now_ns - max(st.st_mtime_ns, st.st_ctime_ns) >= settles_after(st)


def settles_after(st: os.stat_result) -> int:
    """How long a file must be unchanged for its stamp to prove its content: longer on
    a filesystem whose timestamps are whole seconds (both of them, to the nanosecond)."""
    if st.st_mtime_ns % 1_000_000_000 == 0 and st.st_ctime_ns % 1_000_000_000 == 0:
        return COARSE_SETTLED_NS
    return SETTLED_NS


def proof(st: os.stat_result, now_ns: int) -> Stamp | None:
    """The stamp of a file stat'ed at `now_ns` when it proves the content read after
    the stat (`settled`); None when the file changed too recently."""
    return stamp_of(st) if settled(st, now_ns) else None
