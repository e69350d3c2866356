"""A search's lines as seen: each file whose lines a search showed is recorded in the
session's read-state as a partial view of the file at that version.

The version is proved, not assumed: the file is opened again beneath its root, held
within `max_size_bytes`, and recorded only when every line the search showed is that
line of the content now read (a file changed between ripgrep's look and this one is
left unrecorded, so an edit of it still needs a read). The record is a partial view
(never a stub for a later read, never "held whole"), with the content's snapshot kept,
so an edit checks it exactly as it checks a ranged read: applied while the file is
unchanged, merged when a change is disjoint from the edit, refused `stale` otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import ReadkeeperError
from ..files.fileio import digest, open_regular, read_at_most
from ..read.anchors import line_hash
from ..read.readers.text import decode_text
from ..read.services import ReadServices
from ..state.readstate import ReadRecord


def record_shown(
    services: ReadServices, session: str, shown: Mapping[str, Mapping[int, str]]
) -> list[str]:
    """Record the lines shown of each file (path -> line number -> text as shown, a
    cut line's text ending where it was cut); returns the paths recorded."""
    recorded = []
    for path, lines in shown.items():
        if lines and _record_file(services, session, path, lines):
            recorded.append(path)
    return recorded


def _record_file(services: ReadServices, session: str, path: str, lines: Mapping[int, str]) -> bool:
    try:
        real = os.path.realpath(path)
    except OSError:  # a name that changed kind while it was resolved (EINVAL)
        return False
    where = services.workspace.locate(real, session, grants=False)
    if where is None:
        return False
    cap = services.settings.max_size_bytes
    try:
        with open_regular(where) as opened:
            if opened.size > cap:
                return False  # too large to hold: a ranged read records it
            data = read_at_most(opened.fd, cap)
            text, _ = decode_text(data, opened.path)
    except (ReadkeeperError, OSError):
        return False
    file_lines = text.split("\n")
    views = []
    whole: dict[int, int] = {}  # the lines shown whole: an anchor may name them
    for number, shown in sorted(lines.items()):
        if number < 1 or number > len(file_lines):
            return False
        line, shown = file_lines[number - 1].rstrip("\r"), shown.rstrip("\r")
        if not line.startswith(shown):
            return False  # changed since ripgrep read it
        # A line shown cut is seen only up to the cut: an edit past it needs a read.
        views.append(f"{number}:{len(shown)}" if len(line) > len(shown) else str(number))
        if len(line) == len(shown):
            whole[number] = line_hash(file_lines[number - 1].removesuffix("\r"))
    content_digest = digest(data)
    services.snapshots.put(opened.path, content_digest, text)
    services.shown_lines.saw(session, opened.path, whole)
    first, last = min(lines), max(lines)
    services.read_states.put(
        session,
        ReadRecord(
            path=opened.path,
            digest=content_digest,
            scope="file",
            mtime_ns=opened.mtime_ns,
            size=opened.size,
            offset=first,
            limit=last - first + 1,
            partial=True,
            tokens=0,
            view="grep:" + ",".join(views),
            stamp=opened.stamp,
        ),
    )
    return True
