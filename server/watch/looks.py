"""A file as change notices see it now: whether it exists, its digest, its text and its
line count, read within the read caps (a file over them is counted, never read whole).

The notices compare what a session knows with this; it is read once per file per batch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import words
from ..errors import ReadkeeperError
from ..files.fileio import digest, open_regular, read_at_most
from ..read.readers.text import decode_text

if TYPE_CHECKING:
    from ..files.paths import Location

# Counting the lines of a file over the read caps stops here (a 2 GB log is not scanned).
_MAX_LINE_COUNT_BYTES = 64 << 20
_CHUNK = 1 << 20


# Why a file cannot be read at its path any more (not merely not shown this time): a
# change notice then names no read of it, which would be refused too (round 46).
THROUGH_LINK = (
    "it or a folder above it is a symbolic link now, and readkeeper follows no link it "
    "has not checked: no read reaches it"
)


@dataclass
class Look:
    """A file as it is now."""

    exists: bool
    digest: str | None = None  # of the whole file, when within the read caps
    text: str | None = None  # when within the read caps and text
    total_lines: int | None = None
    size: int = 0
    mtime_ns: int = 0
    why_no_text: str | None = None


def look_at(where: Location, max_bytes: int) -> Look:
    """The file as it is now: its digest and text when within `max_bytes`. A file that
    became a symlink is not followed (it may lead out of the workspace)."""
    path = where.path
    try:
        with open_regular(where) as opened:
            size, mtime = opened.size, opened.mtime_ns
            if size > max_bytes:
                lines = _count_lines(opened.fd)
                return Look(True, None, None, lines, size, mtime, "over the read size cap")
            data = read_at_most(opened.fd, max_bytes + 1)
    except ReadkeeperError as exc:
        if exc.kind in ("not_found", "is_directory"):
            return Look(False)
        if exc.data.get("moved"):  # its message's next step (read it again) is refused
            return Look(True, why_no_text=THROUGH_LINK)
        return Look(True, why_no_text=exc.message)
    if len(data) > max_bytes:
        return Look(True, None, None, None, len(data), mtime, "over the read size cap")
    content_digest = digest(data)
    try:
        text, _ = decode_text(data, path)
    except ReadkeeperError:
        return Look(True, content_digest, None, None, size, mtime, "it is not text now")
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    return Look(True, content_digest, text, lines, size, mtime)


def _count_lines(fd: int) -> int | None:
    count = seen = 0
    while seen < _MAX_LINE_COUNT_BYTES:
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return count
        count += chunk.count(b"\n")
        seen += len(chunk)
    return None


def stat_token(look: Look) -> str:
    """What a file known by its size and mtime (read in ranges) is now."""
    return f"~{look.mtime_ns}:{look.size}"


def lines_phrase(look: Look) -> str:
    """ "; it has N lines now" (or its bytes), for a note."""
    if look.total_lines is not None:
        return f"; it has {words.count(look.total_lines, 'line')} now"
    if look.size:
        return f"; it is {words.count(look.size, 'byte')} now"
    return ""
