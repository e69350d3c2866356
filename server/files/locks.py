"""The per-file locks of readkeeper's own changes.

An edit or write of a file holds its lock from the first look at the file to the
read-state record of what it left. Our own concurrent edits of one file take turns under
it (so they never have to be caught by the slower guards meant for other programs), and
change notices wait for it, so a change is never judged between an edit's rename and
its record (which would report the agent's own edit back to it).
"""

from __future__ import annotations

import threading
import zlib

# One lock per path stripe: bounded memory, and a brief wait at worst for two paths
# that share one.
_STRIPES = [threading.Lock() for _ in range(64)]


def lock_for(path: str) -> threading.Lock:
    """The lock of `path`'s stripe."""
    return _STRIPES[zlib.crc32(path.encode("utf-8", "surrogateescape")) % len(_STRIPES)]
