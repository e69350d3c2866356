"""Change notices: which files a session read have changed since, and how.

The watcher (watcher.py) says which paths may have changed; this module compares each
file itself with what every session whose read-state has it saw. The rules:

- Changed means the content digest differs from what the session knows: a `touch` or a
  rewrite of identical bytes is no notice. (A file read in ranges, too large to read
  whole, has no whole-file digest: for it a change of size or mtime is the change.)
- What the session knows is what its read (or its own edit or write) recorded, and then
  each change it was given in full by `readkeeper/changes`; a partial view since (a
  search, a range) never moves that for the lines it did not show (tracks.py). A
  notice's diff goes from there to the file now, so a second change to a file is shown
  as its own diff. A diff is bounded (`changes_max_tokens`), an answer's notices too
  (in tokens and in characters: room.py); a file whose old content is
  no longer kept (snapshots.py), or whose new content is over the read caps or not text,
  gets "changed, N lines now, read it again", and what the session knows stays its read.
- Each change is reported once per channel: pushed to the editor as the notification
  `readkeeper/didChangeReadFiles`, and returned once by `readkeeper/changes`, which is
  what the agent reads (the two are independent: an editor showing a notice does not
  take it from the agent). A change reverted before the agent asked is not reported.
- A notice never waits behind another file's costly diff (batches.py). A file left
  without a diff when the budget is spent is told it changed and which read shows it.
- Sessions that never read a file get nothing for it. A read of an editor buffer with
  unsaved changes is left to the editor: the agent saw the buffer, not the disk.
- readkeeper's own edits and writes: the edit records the new content as the editing
  session's read-state, so that session gets no notice of its own change; every other
  session that read the old content does.
- Notices say what changed, never who; reads and edits check the file themselves.
- A read file no live watch covers is looked at when `changes` is asked (unwatched.py).
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import quoting
from ..files.fileio import digest
from ..files.locks import lock_for
from ..protocol import ChangeKind, ChangesResult, FileChange
from ..read import held_document
from ..read.diffs import bounded_diff  # one diff format for stale edits and change notices
from ..read.room import LINES_MAX_CHARS
from ..settings import Settings
from ..state.readstate import ReadRecord, ReadStates
from ..state.snapshots import Snapshots
from ..state.stats import Stats
from . import unwatched
from .batches import Batch, cost_order, notice_cost, size_of
from .looks import THROUGH_LINK, Look, lines_phrase, look_at, stat_token
from .tracks import Track as _Track
from .tracks import track_of

if TYPE_CHECKING:
    from ..files.paths import Location
    from .coalesce import FsChange

# Files written lately, where a read file that is gone may have been moved.
_APPEARED_FOR_S = 5.0
_MAX_MOVE_CANDIDATES = 256
_EDIT_WAIT_S = 5.0  # how long a notice waits for an edit of its file to be recorded
_EMPTY = f"={digest(b'')}"  # every empty file: never taken for a move
Channel = str  # "notified" (the editor notification) or "reported" (readkeeper/changes)


@dataclass
class _Verdict:
    change: FileChange
    token: str
    known: str | None  # what the session knows once told this (None: unchanged)
    text: str | None = None  # the new content, kept as a snapshot when `known` moves
    size: int | None = None  # bytes of the new content


class ChangeNotices:
    """Every session's change notices, by the rules above: the watcher feeds it
    (`process`), `readkeeper/changes` takes from it (`take`)."""

    def __init__(
        self,
        read_states: ReadStates,
        snapshots: Snapshots,
        settings: Callable[[], Settings],
        stats: Stats,
        locate: Callable[[str], Location | None],
        count: Callable[[str], int],
        ours: Callable[[str], bool] = lambda path: False,
    ) -> None:
        self._read_states = read_states
        # The files readkeeper wrote itself for an answer (rendered PDF pages, in its
        # output folders): never a change notice, whoever reads them.
        self._ours = ours
        self._count = count  # exact, never waiting for the token table (`count_now`)
        # Where a path may be opened (beneath its root), or None: no longer permitted.
        self._locate = locate
        self._snapshots = snapshots
        self._settings = settings
        self._stats = stats
        self._tracks: dict[str, dict[str, _Track]] = {}  # session -> path -> track
        self._appeared: deque[tuple[float, str]] = deque(maxlen=_MAX_MOVE_CANDIDATES)
        # What the last `take` changed, per session and path, so `restore` can undo it.
        self._taken: dict[str, dict[str, tuple[str | None, str, int | None]]] = {}
        self._lock = threading.Lock()
        # Where pushed notices go (the LSP front end sends readkeeper/didChangeReadFiles).
        self.on_notice: Callable[[str, list[FileChange]], None] | None = None
        self.unwatched = unwatched.Unwatched()  # read files no watch covers (unwatched.py)

    # --- from the watcher ---------------------------------------------------------------

    def process(self, batch: Sequence[FsChange]) -> None:
        """Look at the paths the watcher reported; push what is new to each session."""
        work = Batch(send=self._send)
        now = time.monotonic()
        with self._lock:
            for fs_change in batch:
                if fs_change.kind in ("created", "modified") and not fs_change.folder:
                    self._appeared.append((now, fs_change.path))
            while self._appeared and now - self._appeared[0][0] > _APPEARED_FOR_S:
                self._appeared.popleft()
        failure: Exception | None = None
        for fs_change in sorted(batch, key=cost_order):
            if self._ours(fs_change.path):
                continue  # a file readkeeper wrote for an answer: no one's change
            if not fs_change.folder and not self._read_states.readers(fs_change.path):
                continue  # nobody has read it: nothing to tell, no edit of ours to wait for
            # Never between one of our edits' rename and its record (locks.py): the
            # agent's own edit would be reported back to it. An edit waiting on the
            # editor (applyEdit) holds it longer: then judge anyway, as before.
            lock = lock_for(fs_change.path)
            held = lock.acquire(timeout=_EDIT_WAIT_S)
            try:
                self._process_one(fs_change, work)
            except Exception as exc:  # one bad path must not cost the others their notice
                failure = failure or exc
            finally:
                if held:
                    lock.release()
        work.flush()
        if failure is not None:
            raise failure

    def _send(self, session: str, changes: list[FileChange]) -> None:
        self._stats.add(session, notices_sent=len(changes))
        if self.on_notice is not None:
            self.on_notice(session, changes)

    def _process_one(self, fs_change: FsChange, work: Batch) -> None:
        if fs_change.folder:
            readers = self._read_states.readers_under(fs_change.path)
        else:
            readers = self._read_states.readers(fs_change.path)
            written = fs_change.kind in ("created", "modified")
            if readers and written and not self._look(fs_change.path, work).exists:
                # A write seen late, after the file went away: the event that removed it
                # says how (deleted, or moved where), and is judged on its own.
                return
        for session, record in readers:
            if record.source == "buffer":
                continue
            moved_to = fs_change.moved_to
            if fs_change.folder and moved_to is not None:
                moved_to = moved_to + record.path[len(fs_change.path) :]
            track = self._track(session, record, moved_to)
            verdict = self._evaluate(record, track, "notified", work)
            if verdict is None:
                continue
            with self._lock:
                track.notified = verdict.token
                track.pending = True
            work.pushed.setdefault(session, []).append(verdict.change)

    # --- readkeeper/changes -------------------------------------------------------------

    def take(self, session: str, within: Callable[[str], bool] | None = None) -> ChangesResult:
        """The changes not yet reported to `session`, each reported once, within the
        total token cap (the rest wait for the next call); only of paths `within` takes."""
        settings = self._settings()
        records = self._read_states.records(session)
        mine = [r for r in records if r.source != "buffer" and not self._ours(r.path)]
        due, left = self.unwatched.due(session, [r for r in mine if not within or within(r.path)])
        for unheard in due:  # no watch covers these: compared now, like a heard change
            self._track(session, unheard, None, pending=True)
        with self._lock:
            held = self._tracks.get(session, {}).items()
            tracks = [(p, t) for p, t in held if t.pending and (not within or within(p))]
        tracks.sort(key=lambda item: (size_of(item[0]), item[0]))  # batches.py
        work = Batch()
        changes: list[FileChange] = []
        taken: dict[str, tuple[str | None, str, int | None]] = {}
        used = used_chars = remaining = 0
        for path, track in tracks:
            record = self._read_states.get(session, path)
            if record is None:
                with self._lock:  # forgotten: nothing to tell
                    self._drop(session, path, track)
                continue
            if record.recorded_ns != track.record_ns:  # read since: from what it holds now
                track = self._track(session, record, None)
            verdict = self._evaluate(record, track, "reported", work)
            if verdict is None:
                with self._lock:
                    track.pending = False
                continue
            tokens, chars = notice_cost(self._count, verdict.change)
            over = used + tokens > settings.changes_total_max_tokens
            if changes and (over or used_chars + chars > LINES_MAX_CHARS):  # 602,067 sent
                remaining += 1
                continue
            used, used_chars = used + tokens, used_chars + chars
            changes.append(verdict.change)
            with self._lock:
                taken[path] = (track.reported, track.known, track.known_size)
                track.reported = verdict.token
                track.pending = False
                if verdict.known is not None:
                    track.known, track.known_size = verdict.known, verdict.size
            if verdict.known is not None and verdict.text is not None:
                # The session now knows this content: the next diff starts from it.
                self._snapshots.put(path, verdict.known.removeprefix("="), verdict.text)
        with self._lock:
            self._taken[session] = taken
        if changes:
            self._stats.add(session, changes_reported=len(changes))
        return ChangesResult(changes, remaining or None, unwatched.note(left) if left else None)

    def restore(self, session: str, paths: Sequence[str]) -> None:
        """Undo the last `take` for `paths`: they were taken but never reached the agent
        (an attachment dropped for the budget), so the next call reports them again."""
        with self._lock:
            taken = self._taken.get(session, {})
            mine = self._tracks.get(session, {})
            for path in paths:
                track, before = mine.get(path), taken.pop(path, None)
                if track is not None and before is not None:
                    track.reported, track.known, track.known_size = before
                    track.pending = True

    def forget(self, session: str, paths: Sequence[str] | None = None) -> None:
        """Stop telling `session` of changes to `paths` (all its files when None): after
        `readkeeper/forget`, it no longer holds what it read."""
        with self._lock:
            if paths is None:
                self._tracks.pop(session, None)
                self.unwatched.forget(session)
                return
            mine = self._tracks.get(session, {})
            for path in paths:
                mine.pop(path, None)

    # --- deciding -----------------------------------------------------------------------

    def _track(
        self, session: str, record: ReadRecord, moved_to: str | None, pending: bool = False
    ) -> _Track:
        with self._lock:
            mine = self._tracks.setdefault(session, {})
            track = mine[record.path] = track_of(record, mine.get(record.path))
            if moved_to is not None:
                track.moved_to = moved_to
            track.pending = track.pending or pending
            return track

    def _drop(self, session: str, path: str, track: _Track) -> None:
        mine = self._tracks.get(session)
        if mine is not None and mine.get(path) is track:
            del mine[path]

    def _evaluate(
        self, record: ReadRecord, track: _Track, channel: Channel, work: Batch
    ) -> _Verdict | None:
        """What to tell the session on `channel` about `record`'s file; None if
        nothing new."""
        path = record.path
        shown = quoting.name(path)  # in notes, quoted when odd: no name forges a notice
        look = self._look(path, work)
        with self._lock:
            known, moved_to, known_size = track.known, track.moved_to, track.known_size
            last = track.notified if channel == "notified" else track.reported
        new_path: str | None = None
        moved_look: Look | None = None
        if look.exists:
            token = f"={look.digest}" if record.scope == "file" else stat_token(look)
            if record.scope == "file" and look.digest is None:
                token = stat_token(look)
        else:
            if moved_to is not None:
                moved_look = self._look(moved_to, work)
            if moved_look is None or not moved_look.exists:
                found = self._same_content_elsewhere(path, known, known_size, work)
                if found is not None:
                    moved_to, moved_look = found
                    with self._lock:
                        track.moved_to = moved_to
            if moved_look is not None and moved_look.exists:
                new_path = moved_to
                token = f"moved:{moved_to}:{moved_look.digest}"
            else:
                token = "deleted"
        if token == last or (last is None and token == known):
            return None
        was_gone = last is not None and (last == "deleted" or last.startswith("moved:"))
        settings = self._settings()
        if not look.exists:
            kind: ChangeKind = "moved" if new_path is not None else "deleted"
            return self._gone(path, kind, new_path, moved_look, known, token, settings, work)
        kind = "created" if was_gone else "modified"
        if record.scope == "range":
            lines = lines_phrase(look)
            note = (
                f"{shown} changed since you read part of it (it was too large to read whole)"
                f"{lines}. Read the lines you need again."
            )
            change = FileChange(path, kind, "", True, total_lines=look.total_lines, note=note)
            return _Verdict(change, token, None)
        before = self._snapshot(path, known)
        if before is None or look.text is None:
            why = f" ({look.why_no_text})" if look.text is None and look.why_no_text else ""
            why += lines_phrase(look)
            if record.document is not None:  # not read as lines: what the agent read of it
                why = f" since you read {held_document.named(record.document)}"
            # A file no read reaches now (outside, beyond a link) has no diff to cut, and
            # no read to name.
            gone = look.text is None and look.why_no_text in (THROUGH_LINK, _OUT)
            note = f"{shown} changed{why}." + ("" if gone else " Read it again to see it.")
            if kind == "created":
                note = f"{shown} is back after it was reported gone; " + note[len(shown) + 1 :]
            change = FileChange(path, kind, "", not gone, total_lines=look.total_lines, note=note)
            return _Verdict(change, token, None)
        diff, truncated = self._diff(path, known, token, before, look.text, settings, work)
        extra: str | None = None
        if not diff.strip() and before == look.text:
            extra = f"{shown} is back, with the content you read."
        elif kind == "created":
            extra = f"{shown} is back after it was reported gone; the diff is from what you read."
        if record.document is not None:  # a notebook, read as cells: its file is JSON
            extra = f"{extra or ''} {held_document.json_diff(record.document)}".lstrip()
        change = FileChange(path, kind, diff, truncated, total_lines=look.total_lines, note=extra)
        return _Verdict(
            change,
            token,
            None if truncated else token,
            look.text,
            size=look.size,
        )

    def _gone(
        self,
        path: str,
        kind: ChangeKind,
        new_path: str | None,
        moved_look: Look | None,
        known: str,
        token: str,
        settings: Settings,
        work: Batch,
    ) -> _Verdict:
        shown, shown_new = quoting.name(path), quoting.name(new_path or "")
        if kind == "deleted":
            note = f"{shown} was deleted."
            return _Verdict(FileChange(path, kind, "", False, note=note), token, None)
        assert new_path is not None
        assert moved_look is not None
        before = self._snapshot(path, known)
        if moved_look.digest is not None and f"={moved_look.digest}" == known:
            note = f"{shown} was moved to {shown_new}, with the content you read."
            change = FileChange(path, kind, "", False, new_path, moved_look.total_lines, note)
            return _Verdict(change, token, None)
        if before is None or moved_look.text is None:
            note = (
                f"{shown} was moved to {shown_new} and changed{lines_phrase(moved_look)}. "
                f"Read {shown_new} to see it."
            )
            change = FileChange(path, kind, "", True, new_path, moved_look.total_lines, note)
            return _Verdict(change, token, None)
        diff, truncated = self._diff(path, known, token, before, moved_look.text, settings, work)
        note = f"{shown} was moved to {shown_new}; the diff is from what you read to it."
        change = FileChange(path, kind, diff, truncated, new_path, moved_look.total_lines, note)
        return _Verdict(change, token, None)

    def _diff(
        self,
        path: str,
        known: str,
        token: str,
        before: str,
        after: str,
        settings: Settings,
        work: Batch,
    ) -> tuple[str, bool]:
        key = (path, known, token)
        if key not in work.diffs:
            work.before_diff(len(before) + len(after))
            cap = settings.changes_max_tokens
            work.diffs[key] = bounded_diff(before, after, path, cap, work.budget, self._count)
        return work.diffs[key]

    def _same_content_elsewhere(
        self, path: str, known: str, size: int | None, work: Batch
    ) -> tuple[str, Look] | None:
        """A file that appeared lately with exactly the content the session knows of
        `path`, which is gone: `path` was moved there. (The backends pair the two
        halves of a rename themselves, but only within a moment; this covers a move
        seen as a delete plus a create.)"""
        if not known.startswith("=") or known == _EMPTY or not size:
            return None
        with self._lock:
            candidates = [p for _, p in reversed(self._appeared) if p != path]
        for candidate in dict.fromkeys(candidates):
            try:
                if os.stat(candidate).st_size != size:  # only a same-size file is read
                    continue
            except OSError:
                continue
            look = self._look(candidate, work)
            if look.exists and f"={look.digest}" == known:
                return candidate, look
        return None

    def _snapshot(self, path: str, known: str) -> str | None:
        if not known.startswith("="):
            return None
        return self._snapshots.get(path, known[1:])

    def _look(self, path: str, work: Batch) -> Look:
        look = work.looks.get(path)
        if look is None:
            where = self._locate(path)
            max_bytes = self._settings().max_size_bytes
            look = work.looks[path] = (
                look_at(where, max_bytes) if where is not None else Look(True, why_no_text=_OUT)
            )
        return look


_OUT = "it is outside the workspace now"
