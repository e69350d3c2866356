"""Whether what a session read of a file it moved counts at the new path (moves.py).

A read's record is the file as its reader showed it: a notebook's cells, or text's
numbered lines. A rename that changes the reader (`nb.ipynb` to `nb.txt`: its JSON is
then read as lines of text; `t.txt` to `t.ipynb`: read as a notebook's cells) leaves that
record a view no read at the new path gives: cells a text edit there is checked against,
or lines of JSON that never showed a cell. And each reader has its own cap (a notebook
is read and edited whole up to `max_document_bytes`, text up to `max_size_bytes`), so
the file may be past what a read or an edit takes there (attack round 31, B1 and B3:
a notebook renamed to .txt was told it could be edited without reading again, then
every edit was refused `not_read` naming a read that was refused `too_large`).

So a record follows its file only when a read at the new path reads it the same way.
The readers pick by the bytes first, then by the name's suffix (read/readers.sniff); a
move changes no byte, so the same suffix (case aside) is the same reader, and only a
file whose suffix changed is looked at. A folder's files keep their names, so they keep
their records. Otherwise the record is dropped, and the move's note says so: read the
file again at its new path, or, when it is past the cap of its new reader, that
readkeeper does not edit it there, naming the move back when that brings it within its
cap again, never a read that would be refused.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from .. import quoting
from ..files.beneath import Location, Moved, open_in
from ..hints import call
from ..read.readers import SNIFF_BYTES, Kind, cap_for, sniff
from ..settings import Settings

_WORDS: dict[Kind | None, str] = {
    "notebook": "a notebook",
    "pdf": "a PDF",
    "image": "an image",
    None: "text",
}
# The readers whose reads license edits (a PDF's text and an image are drawn from the
# file, never edited: commit.load).
_EDITED: tuple[Kind | None, ...] = ("notebook", None)


@dataclass(frozen=True)
class Reader:
    """How a read at each end of a move reads a file, and its size."""

    old: str
    new: str
    before: Kind | None
    after: Kind | None
    size: int
    head: bytes
    looked: bool = True  # False: the file could not be looked at


def _unknown(old: str, new: str) -> Reader:
    return Reader(old, new, None, None, 0, b"", looked=False)


def changed(destination: Location, old: str) -> Reader | None:
    """How the regular file just moved from `old` to `destination` is read at each end,
    when the two differ; None when they are the same. A file that cannot be looked at
    counts as changed (its record is dropped: the session reads it again)."""
    if os.path.splitext(old)[1].lower() == os.path.splitext(destination.path)[1].lower():
        return None
    try:
        folder = destination.open_folder()
    except (OSError, Moved):
        return _unknown(old, destination.path)
    try:
        fd = open_in(folder, destination.name, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, Moved):
        return _unknown(old, destination.path)
    finally:
        os.close(folder)
    try:
        found = os.fstat(fd)
        head = os.pread(fd, SNIFF_BYTES, 0) if stat.S_ISREG(found.st_mode) else b""
    except OSError:
        return _unknown(old, destination.path)
    finally:
        os.close(fd)
    if not stat.S_ISREG(found.st_mode):
        return None
    before, after = sniff(head, old), sniff(head, destination.path)
    if before == after:
        return None
    return Reader(old, destination.path, before, after, found.st_size, head)


def note(reader: Reader, settings: Settings, had_read: bool) -> str:
    """What the move's answer says of a file now read another way: that what the
    session read of it (`had_read`) does not count there, and the next step that works
    ("" when there is nothing to say)."""
    name = quoting.name(reader.new)
    # "may": a damaged notebook is read as its text under either name (read/damaged.py).
    said = (
        f"{name}'s new name may change how it is read (as {_WORDS[reader.after]}, not as "
        f"{_WORDS[reader.before]})"
    )
    dropped = "what this session read of it does not count there"
    if not reader.looked:  # nothing said of a file the session never read
        return f"{name} may now be read another way, so {dropped}." if had_read else ""
    if reader.after not in _EDITED:
        return f"{said}, which readkeeper does not edit" + (f": {dropped}." if had_read else ".")
    limit, setting = cap_for(reader.head, reader.new, settings)
    if reader.size <= limit:
        again = "again " if had_read else ""
        lead = f"{said}: {dropped}; read" if had_read else f"{said}: read"
        return f"{lead} it {again}before editing it ({call('read', file_path=reader.new)})."
    reads = (
        "does not read or edit it there"
        if reader.after == "notebook"
        else "does not read it whole or edit it there"
    )
    what = "reading a notebook" if setting == "max_document_bytes" else "reading a file whole"
    told = (
        f"{said}, and at {reader.size:,} bytes it is over the {limit:,}-byte limit for "
        f"{what} ({setting}): readkeeper {reads}"
    )
    told += f", and {dropped}. " if had_read else ". "
    raise_it = f"ask the user to raise {setting} (READKEEPER_{setting.upper()})"
    old_limit, _ = cap_for(reader.head, reader.old, settings)
    if reader.before in _EDITED and reader.size <= old_limit:
        back = call("move", source=reader.new, destination=reader.old)
        return f"{told}To edit it, move it back ({back}) and read it there, or {raise_it}."
    return f"{told}To edit it, {raise_it}."
