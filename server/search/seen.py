"""A search's lines as seen: each file whose lines a search showed is recorded in the
session's read-state as a partial view of the file at that version.

The version is proved, not assumed: the file is opened again beneath its root, held
within `max_size_bytes`, and recorded only when every line the search showed is that
line of the content now read (a file changed between ripgrep's look and this one is
left unrecorded, so an edit of it still needs a read). The record is a partial view
(never a stub for a later read, never "held whole"), with the content's snapshot kept,
so an edit checks it exactly as it checks a ranged read: applied while the file is
unchanged, merged when a change is disjoint from the edit, refused `stale` otherwise.

The proof is on the search's way to its answer, so it does only what it must: the real
path of each folder is looked up once per search, a file is split only up to its last
line shown, and a file the session already holds at a stamp that still proves that
content (files/stamps.py, as a stub re-read trusts it) is checked against the text kept
of it (state/snapshots.py) rather than read, decoded and hashed again. Only the session's
own record counts, and the lines are checked all the same. It cannot wait until an edit
uses the lines: by then the content the search saw is gone, and with it the diff a
`stale` refusal shows and the proof that a change is disjoint.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import ReadkeeperError
from ..files.fileio import digest, open_regular, read_at_most
from ..files.stamps import Stamp
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
    folders: dict[str, str] = {}
    for path, lines in shown.items():
        if lines and _record_file(services, session, _real(path, folders), lines):
            recorded.append(path)
    return recorded


def _real(path: str, folders: dict[str, str]) -> str:
    """`os.path.realpath(path)`, each folder's looked up once per search ("" when it
    cannot be resolved). What this names is only where to open: the open itself
    follows no link (files/beneath.py)."""
    folder, _, name = path.rpartition(os.sep)
    try:
        real_folder = folders.get(folder)
        if real_folder is None:
            real_folder = folders[folder] = os.path.realpath(folder or os.sep)
        real = os.path.join(real_folder, name)
        return os.path.realpath(real) if os.path.islink(real) else real
    except OSError:  # a name that changed kind while it was resolved (EINVAL)
        return ""


def _record_file(services: ReadServices, session: str, real: str, lines: Mapping[int, str]) -> bool:
    where = services.workspace.locate(real, session, grants=False) if real else None
    if where is None:
        return False
    cap = services.settings.max_size_bytes
    last = max(lines)
    try:
        with open_regular(where) as opened:
            if opened.size > cap:
                return False  # too large to hold: a ranged read records it
            kept = _kept(services, session, opened.path, opened.stamp)
            if kept is None:
                data = read_at_most(opened.fd, cap)
                text, _ = decode_text(data, opened.path)
                content_digest = digest(data)
            else:
                content_digest, text = kept
    except (ReadkeeperError, OSError):
        return False
    file_lines = text.split("\n", last)  # the lines up to the last one shown
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
    services.snapshots.put(opened.path, content_digest, text, searched=True)
    services.shown_lines.saw(session, opened.path, whole)
    first = min(lines)
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


def _kept(
    services: ReadServices, session: str, path: str, stamp: Stamp | None
) -> tuple[str, str] | None:
    """The digest and text of the content the session holds of `path`, when the file's
    stamp now is the one that proved that content as it was read from disk, and its
    text is still kept; None when the file must be read."""
    if stamp is None:
        return None
    record = services.read_states.get(session, path)
    # A stamp is kept only on content read from disk (never a buffer's or an edit's);
    # a range's digest names no whole text.
    if record is None or record.stamp != stamp or record.scope != "file":
        return None
    text = services.snapshots.get(path, record.digest)
    return None if text is None else (record.digest, text)
