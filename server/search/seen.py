"""A search's lines as seen: each file whose lines a search showed is recorded in the
session's read-state as a partial view of the file at that version.

The version is proved, not assumed: the file is opened again beneath its root, held
within `max_size_bytes`, and recorded only when every line the search showed is that
line of the content now read (a file changed between ripgrep's look and this one is
left unrecorded, so an edit of it still needs a read). The record is a partial view
(never a stub for a later read, never "held whole"), with the content's snapshot kept,
so an edit checks it exactly as it checks a ranged read: applied while the file is
unchanged, merged when a change is disjoint from the edit, refused `stale` otherwise.

The proof runs once the answer is out, before the session's next call (state/later.py):
nothing in the answer depends on it. It still does only what it must, since that call
may be waiting for it: each
folder's real path is looked up, and the folder opened beneath its root, once per search
(its files then opened by name in it; a name that is itself a link is found by that
open, not looked up first), a file is split only up to its last line shown, and a file
the session already holds at a stamp that still proves that content (files/stamps.py,
as a stub re-read trusts it; the stamp taken by name in its folder, the file not even
opened) is checked against the text kept of it (state/snapshots.py) rather than read,
decoded and hashed again. Only the session's own record counts, and the lines are
checked all the same. It cannot wait until an edit
uses the lines: by then the content the search saw may be gone, and with it the diff a
`stale` refusal shows and the proof that a change is disjoint. A change landing in the
milliseconds between the answer and the proof is met as one landing between ripgrep's
look and the proof: the lines shown changed, nothing is recorded (the edit needs a read);
changed elsewhere, the version proved is recorded.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Mapping
from itertools import accumulate, chain
from typing import NamedTuple

from ..errors import ReadkeeperError
from ..files.beneath import Location, lstat_in
from ..files.fileio import digest, open_regular_in, read_at_most
from ..files.stamps import Stamp, proof
from ..read.anchors import line_hash
from ..read.readers.text import decode_text
from ..read.services import ReadServices
from ..state.readstate import ReadRecord
from .realdirs import RealFolders


def record_shown(
    services: ReadServices, session: str, shown: Mapping[str, Mapping[int, str]]
) -> list[str]:
    """Record the lines shown of each file (path -> line number -> text as shown, a
    cut line's text ending where it was cut); returns the paths recorded."""
    recorded = []
    with _Folders(services, session) as folders:
        for path, lines in shown.items():
            if lines and _record_file(services, session, folders, path, lines):
                recorded.append(path)
    return recorded


class _Folders:
    """The folders of one search's files: each one's real path looked up, and each one
    opened beneath its anchor, once (a search shows many files of few folders). What a
    real path names is only where to open: the open itself follows no link
    (files/beneath.py)."""

    def __init__(self, services: ReadServices, session: str) -> None:
        self._workspace = services.workspace
        self._session = session
        self._real = RealFolders()
        self._open: dict[tuple[int, str], int | None] = {}
        self._located: dict[str, Location] = {}  # by folder (real path)
        self._by_name = {*services.workspace.roots, *services.workspace.allowed}

    def __enter__(self) -> _Folders:
        return self

    def __exit__(self, *_: object) -> None:
        for fd in self._open.values():
            if fd is not None:
                os.close(fd)

    def real(self, path: str) -> str:
        """`path` with its folder's real path (the name itself is not looked at: a
        link there is found when it is opened); "" when it cannot be resolved."""
        folder, _, name = path.rpartition(os.sep)
        real_folder = self._real(folder or os.sep)
        return os.path.join(real_folder, name) if real_folder else ""

    def find(self, real: str) -> tuple[int, Location] | None:
        """The open folder holding `real`, and where `real` is beneath its permitted
        folder; None when it is not permitted, or its folder cannot be opened. A folder
        permitted for one file is for its siblings (the roots and allowed folders hold
        whole folders), so it is located once; a file allowed by its own name is not."""
        parent, _, name = real.rpartition(os.sep)
        known = self._located.get(parent)
        if known is not None:
            where: Location | None = Location(real, known.anchor, known.folder, name)
        else:
            where = self._workspace.locate(real, self._session, grants=False) if real else None
            if where is not None and where.name == name and real not in self._by_name:
                self._located[parent] = where
        if where is None:
            return None
        key = (id(where.anchor), where.folder)
        if key not in self._open:
            try:
                self._open[key] = where.open_folder()
            except OSError:
                self._open[key] = None
        folder = self._open[key]
        return None if folder is None else (folder, where)


class _Proved(NamedTuple):
    """A file's content as it is now, and the stat that proves it."""

    path: str
    size: int
    mtime_ns: int
    stamp: Stamp | None
    digest: str
    text: str


def _record_file(
    services: ReadServices,
    session: str,
    folders: _Folders,
    path: str,
    lines: Mapping[int, str],
) -> bool:
    real = folders.real(path)
    try:
        proved = _content(services, session, folders, real)
    except ReadkeeperError as exc:
        if not exc.data.get("moved"):
            return False
        # The name itself is a link (ripgrep follows one named on its command line, or
        # one was planted since): the file it leads to, as os.path.realpath finds it.
        try:
            target = os.path.realpath(real)
            proved = _content(services, session, folders, target) if target != real else None
        except (ReadkeeperError, OSError):
            return False
    except OSError:
        return False
    return proved is not None and _record(services, session, proved, lines)


def _content(services: ReadServices, session: str, folders: _Folders, real: str) -> _Proved | None:
    """The file at `real` as it is now, when it is permitted, regular and within
    `max_size_bytes`."""
    cap = services.settings.max_size_bytes
    found = folders.find(real)
    if found is None:
        return None
    folder, where = found
    kept = _kept(services, session, folder, where, cap)
    if kept is not None:
        return kept
    with open_regular_in(folder, where.name, where.path) as opened:
        if opened.size > cap:
            return None  # too large to hold: a ranged read records it
        data = read_at_most(opened.fd, cap)
    text, _ = decode_text(data, opened.path)
    return _Proved(opened.path, opened.size, opened.mtime_ns, opened.stamp, digest(data), text)


def _record(
    services: ReadServices, session: str, proved: _Proved, lines: Mapping[int, str]
) -> bool:
    last = max(lines)
    starts = _STARTS.of(proved.path, proved.digest, proved.text)
    views = []
    whole: dict[int, int] = {}  # the lines shown whole: an anchor may name them
    for number, shown in sorted(lines.items()):
        if number < 1 or number > len(starts):
            return False
        end = starts[number] - 1 if number < len(starts) else len(proved.text)
        text = proved.text[starts[number - 1] : end]
        line, shown = text.rstrip("\r"), shown.rstrip("\r")
        if not line.startswith(shown):
            return False  # changed since ripgrep read it
        # A line shown cut is seen only up to the cut: an edit past it needs a read.
        views.append(f"{number}:{len(shown)}" if len(line) > len(shown) else str(number))
        if len(line) == len(shown):
            whole[number] = line_hash(text.removesuffix("\r"))
    services.snapshots.put(proved.path, proved.digest, proved.text, searched=True)
    services.shown_lines.saw(session, proved.path, whole)
    first = min(lines)
    services.read_states.put(
        session,
        ReadRecord(
            path=proved.path,
            digest=proved.digest,
            scope="file",
            mtime_ns=proved.mtime_ns,
            size=proved.size,
            offset=first,
            limit=last - first + 1,
            partial=True,
            tokens=0,
            view="grep:" + ",".join(views),
            stamp=proved.stamp,
        ),
    )
    return True


class _LineStarts:
    """Where each line of a text starts, for the last `_STARTS_KEPT` texts (by path and
    digest, and checked against the text's own hash and length: the very text, however
    it was decoded): a search shows lines of the same files again and again, and
    splitting a file up to its last line shown cost most of its proof (0.8 ms of 2 for
    the 51 files of a rare search). Found in C (split, map, accumulate)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[str, str], tuple[int, int, array[int]]] = OrderedDict()
        self._held = 0  # starts kept, in all

    def of(self, path: str, digest: str, text: str) -> array[int]:
        key, mark = (path, digest), hash(text)  # a kept text's hash is cached on it
        with self._lock:
            found = self._kept.get(key)
            if found is not None and found[:2] == (mark, len(text)):
                self._kept.move_to_end(key)
                return found[2]
        # line i+1 starts where line i did, plus its length and its newline
        ends = accumulate(map((1).__add__, map(len, text.split("\n"))))
        starts = array("q", chain([0], ends))
        starts.pop()  # the end of the text, not a line's start
        if len(starts) > _STARTS_HELD // 4:
            return starts  # a huge file's starts are not worth the memory
        with self._lock:
            if key in self._kept:
                self._held -= len(self._kept.pop(key)[2])
            self._kept[key] = (mark, len(text), starts)
            self._held += len(starts)
            while len(self._kept) > _STARTS_KEPT or self._held > _STARTS_HELD:
                self._held -= len(self._kept.popitem(last=False)[1][2])
        return starts


_STARTS_KEPT = 1024
# The line starts kept in all (8 bytes each: 16 MB), so a few files of millions of lines
# cannot make the cache hold gigabytes.
_STARTS_HELD = 2_000_000
_STARTS = _LineStarts()


def _kept(
    services: ReadServices, session: str, folder: int, where: Location, cap: int
) -> _Proved | None:
    """The content the session holds of the file, when the file's stamp now is the one
    that proved that content as it was read from disk, and its text is still kept; None
    when the file must be read. The stamp is taken by name in its folder, following no
    link, without opening the file: the stat of the entry is the stat of the file an
    open would give, and nothing of it is read."""
    record = services.read_states.get(session, where.path)
    # A stamp is kept only on content read from disk (never a buffer's or an edit's);
    # a range's digest names no whole text.
    if record is None or record.stamp is None or record.scope != "file":
        return None
    now = time.time_ns()  # before the stat: a change after it is on a later tick
    try:
        st = lstat_in(folder, where.name)
    except OSError:
        return None
    if st is None or not stat.S_ISREG(st.st_mode) or st.st_size > cap:
        return None  # opened, it is refused or read as any other file
    stamp = proof(st, now)
    if stamp != record.stamp:
        return None
    text = services.snapshots.get(where.path, record.digest)
    if text is None:
        return None
    return _Proved(where.path, st.st_size, st.st_mtime_ns, stamp, record.digest, text)
