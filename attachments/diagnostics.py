"""Diagnostics the editor forwards from every language server, kept per file and versioned.

The editor sends `readkeeper/didChangeDiagnostics` with `{items: [{uri, diagnostics,
version?}]}`; each item replaces what was known for that file (an empty list clears it).
For each session, the diagnostics present when it last read or edited a file are its
baseline: anything not in the baseline is *new*, which usually means "your edit did
this", so new ones come first and are kept longest. Diagnostics computed for an older
version of a document than the editor now holds are not shown: they are *pending*.
A baseline goes with the read it was taken at: `forget` drops it, and a session keeps
those of its `MAX_BASELINES_PER_SESSION` most recently read or edited files, as it
keeps their read-state.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from readkeeper import quoting, words
from readkeeper.files.paths import uri_path
from readkeeper.state.readstate import MAX_RECORDS_PER_SESSION

from .cut_notes import attachments_call

SEVERITY = {1: "error", 2: "warning", 3: "info", 4: "hint"}

# What makes two reports "the same problem": not its position, since an edit above it
# moves it without making it new. Equal keys are matched up by count.
Key = tuple[int, str, str, str]

# What the store keeps of what the editor pushes, so that a client sending without end
# cannot grow the server without end: the files with diagnostics (the least recently
# reported dropped first, beyond the count or the characters held), the diagnostics of
# one file (errors first, so those dropped are the least severe), and each text field.
# Far beyond what an agent's listing shows, which is cut to its token budget anyway.
MAX_FILES = 5_000
MAX_PER_FILE = 200
MAX_CHARS = 8_000_000  # every kept message, source and code together
MAX_MESSAGE_CHARS = 2_000
MAX_FIELD_CHARS = 200  # source and code
# A diagnostic whose message, source or code was over its cap is shown `(cut)` among
# readkeeper's marks, before the language server's words: a mark after them (it was
# " … [cut]") was one a message could end with (attack round 23).
CUT_MARK = " (cut)"
MAX_POSITION = 2**31 - 1  # LSP's own integer range

# The baselines a session keeps, the oldest dropped first: as many as the read-state
# records it keeps, beyond which its reads are forgotten anyway.
MAX_BASELINES_PER_SESSION = MAX_RECORDS_PER_SESSION


@dataclass(frozen=True)
class Diagnostic:
    """One problem a language server reported, as much of it as the listing shows."""

    line: int  # 0-based, as LSP sends it
    character: int
    severity: int  # 1 error .. 4 hint; LSP leaves a missing one to the client: error
    message: str
    source: str = ""
    code: str = ""
    cut: bool = False  # the message, source or code was longer than its cap

    @property
    def key(self) -> Key:
        """What makes two reports the same problem (see `Key`)."""
        return (self.severity, self.message, self.source, self.code)

    def render(self, new: bool) -> str:
        """Its line in a listing (1-based position): its kind, readkeeper's marks
        (`(new)` when `new`, `(cut)` when a field was over its cap), its source and code,
        then after a colon the language server's words, which end the line: so no
        message can pose as a mark, whether it ends with one (a message ending in
        "(new)" did, attack round 22; one in " … [cut]", round 23) or begins with one
        where no source or code stands between (`1:1 error (new) x`)."""
        origin = " ".join(quoting.name(p) for p in (self.source, self.code) if p)
        origin = f" [{origin}]" if origin else ""
        # The language server's words: one line each, nothing unseen (quoting.phrase),
        # a cut marker's `[` of theirs escaped (a linter may print a file's line).
        message = quoting.phrase(quoting.marks(self.message))
        mark = (" (new)" if new else "") + (CUT_MARK if self.cut else "")
        kind = SEVERITY.get(self.severity, "error")
        return f"  {self.line + 1}:{self.character + 1} {kind}{mark}{origin}: {message}"


@dataclass(frozen=True)
class FileDiagnostics:
    """What the editor last reported for one file, and for which version of it."""

    path: str
    uri: str
    version: int | None
    items: tuple[Diagnostic, ...]  # sorted: errors first, then by position
    received_ns: int


def _parse_diagnostic(raw: Mapping[str, Any]) -> Diagnostic:
    start = raw.get("range", {}).get("start", {})
    code = raw.get("code", "")
    if isinstance(code, Mapping):  # LSP 3.16 code descriptions
        code = code.get("value", "")
    severity = raw.get("severity") or 1
    message = str(raw.get("message", ""))
    source = str(raw.get("source") or "")
    code = str(code if code is not None else "")
    return Diagnostic(
        line=_position(start.get("line", 0)),
        character=_position(start.get("character", 0)),
        severity=int(severity) if int(severity) in SEVERITY else 1,
        message=message[:MAX_MESSAGE_CHARS],
        source=source[:MAX_FIELD_CHARS],
        code=code[:MAX_FIELD_CHARS],
        cut=len(message) > MAX_MESSAGE_CHARS or max(len(source), len(code)) > MAX_FIELD_CHARS,
    )


def _position(value: Any) -> int:
    """A line or column as LSP sends it (0-based), clamped to what a file can have: a
    client's -5 is the first, never shown as line -4."""
    return min(max(0, int(value)), MAX_POSITION)


def _chars(entry: FileDiagnostics) -> int:
    """What `MAX_CHARS` counts of a file's report: its path, URI and texts, and a fixed
    share for each diagnostic's other fields."""
    texts = sum(len(d.message) + len(d.source) + len(d.code) + 32 for d in entry.items)
    return len(entry.path) + len(entry.uri) + texts


class DiagnosticsStore:
    """Thread-safe: the LSP front end writes, attachment and edit requests read."""

    def __init__(self) -> None:
        # least recently reported first: the first dropped past MAX_FILES or MAX_CHARS
        self._files: OrderedDict[str, FileDiagnostics] = OrderedDict()
        self._chars = 0
        # what was cut or dropped, by kind, since `take_dropped` last said
        self._dropped: Counter[str] = Counter()
        # session -> path -> the keys it saw reported (a tuple: most are empty, and the
        # empty tuple is shared), least recently set first
        self._baselines: dict[str, OrderedDict[str, tuple[Key, ...]]] = {}
        self._changed = threading.Condition()

    def update(
        self, items: Iterable[Mapping[str, Any]], within: Callable[[str], bool] | None = None
    ) -> int:
        """Apply a `didChangeDiagnostics` payload; returns how many files it touched.
        Malformed entries raise ValueError naming the problem. A file whose real path is
        not `within` the workspace (a file the editor has open elsewhere, a link out of
        it, `ws/../other`) is not kept: no agent may read it, so none is told of it."""
        parsed: list[FileDiagnostics] = []
        cut = 0  # diagnostics past MAX_PER_FILE
        now = time.time_ns()
        for index, item in enumerate(items):
            if not isinstance(item, Mapping) or not isinstance(item.get("uri"), str):
                raise ValueError(f"items[{index}] needs a string uri")
            path = uri_path(item["uri"])  # untitled:, git:, ... have no file
            if path is None or (within is not None and not within(path)):
                continue
            raw = item.get("diagnostics") or []
            if not isinstance(raw, list):
                raise ValueError(f"items[{index}].diagnostics must be a list")
            try:
                diagnostics = tuple(_parse_diagnostic(d) for d in raw)
            except (AttributeError, TypeError, ValueError) as exc:
                raise ValueError(f"items[{index}].diagnostics: {exc}") from None
            version = item.get("version")
            ordered = tuple(sorted(diagnostics, key=lambda d: (d.severity, d.line, d.character)))
            if len(ordered) > MAX_PER_FILE:
                cut += len(ordered) - MAX_PER_FILE
                ordered = ordered[:MAX_PER_FILE]
            parsed.append(
                FileDiagnostics(
                    path, item["uri"], version if isinstance(version, int) else None, ordered, now
                )
            )
        with self._changed:
            if cut:
                self._dropped["diagnostics"] += cut
            for entry in parsed:
                before = self._files.pop(entry.path, None)
                if before is not None:
                    self._chars -= _chars(before)
                if entry.items:
                    self._files[entry.path] = entry
                    self._chars += _chars(entry)
            while len(self._files) > MAX_FILES or self._chars > MAX_CHARS:
                _, oldest = self._files.popitem(last=False)
                self._chars -= _chars(oldest)
                self._dropped["diagnostics_files"] += 1
            self._changed.notify_all()
        return len(parsed)

    def take_dropped(self) -> Counter[str]:
        """What the caps cut or dropped since the last call, by kind (for the stats)."""
        with self._changed:
            dropped, self._dropped = self._dropped, Counter()
        return dropped

    def mark_seen(self, session: str, path: str) -> None:
        """The session just read `path`: what is reported now is not new to it."""
        self.set_baseline(session, path, self.reported(path))

    def reported(self, path: str) -> Counter[Key]:
        """What the editor reports for `path` now (an edit takes it before it changes
        anything, so that a report made while it lands counts as the edit's)."""
        with self._changed:
            current = self._files.get(path)
            return Counter(d.key for d in (current.items if current else ()))

    def set_baseline(self, session: str, path: str, seen: Counter[Key]) -> None:
        """What `session` has seen reported for `path`; anything beyond it is new."""
        keys = tuple(seen.elements())
        with self._changed:
            held = self._baselines.setdefault(session, OrderedDict())
            held[path] = keys
            held.move_to_end(path)
            while len(held) > MAX_BASELINES_PER_SESSION:
                held.popitem(last=False)

    def forget(self, session: str, paths: Iterable[str] | None = None) -> None:
        """Drop the session's baselines (of `paths`, or all): it no longer holds what it
        read there, so nothing reported for those files is new to it until it reads
        them again."""
        with self._changed:
            if paths is None:
                self._baselines.pop(session, None)
                return
            held = self._baselines.get(session)
            if held is not None:
                for path in paths:
                    held.pop(path, None)

    def get(self, path: str) -> FileDiagnostics | None:
        """The latest report for `path`, or None when it has no diagnostics."""
        with self._changed:
            return self._files.get(path)

    def files(self) -> list[FileDiagnostics]:
        """The latest report of every file that has diagnostics."""
        with self._changed:
            return list(self._files.values())

    def baseline(self, session: str, path: str) -> Counter[Key] | None:
        """What `session` has seen reported for `path`; None if it never read or edited it
        (then nothing there is new to it)."""
        with self._changed:
            held = self._baselines.get(session)
            keys = None if held is None else held.get(path)
        return None if keys is None else Counter(keys)

    def wait_for(self, path: str, since_ns: int, timeout: float) -> FileDiagnostics | None:
        """Diagnostics for `path` received after `since_ns`, waiting up to `timeout`
        seconds; None if the editor sent none in time."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                entry = self._files.get(path)
                if entry is not None and entry.received_ns >= since_ns:
                    return entry
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._changed.wait(left)


def split_new(
    items: Sequence[Diagnostic], baseline: Counter[Key]
) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(new, known): a report is known while the baseline still has one like it."""
    left = Counter(baseline)
    fresh: list[Diagnostic] = []
    known: list[Diagnostic] = []
    for diagnostic in items:
        if left[diagnostic.key] > 0:
            left[diagnostic.key] -= 1
            known.append(diagnostic)
        else:
            fresh.append(diagnostic)
    return fresh, known


@dataclass
class Section:
    """One file's diagnostics in one list (new, or the rest). The header is only built
    for the sections that get listed."""

    order: tuple[int, str]  # files with errors first, then by path
    entry: FileDiagnostics
    items: Sequence[Diagnostic]
    new: bool
    pending_since: int | None = None  # the document's version, when results are stale

    def header(self, display: Callable[[str], str]) -> str:
        """The line that opens the section: the file and its version, or why it is pending."""
        name, version = quoting.name(display(self.entry.path)), self.entry.version
        if self.pending_since is not None:
            return (
                f"{name}: pending (diagnostics were computed for version {version}; "
                f"the document is now at version {self.pending_since})"
            )
        return f"{name} (version {version}):" if version is not None else f"{name}:"


@dataclass
class Listing:
    """The rendered lines of a diagnostics attachment, and what its cap left out."""

    lines: list[str]
    omitted: int  # diagnostics left out to stay within the budget
    omitted_files: int


def sections(
    store: DiagnosticsStore,
    session: str,
    buffer_version: Callable[[str], int | None],
    only: set[str] | None = None,
) -> tuple[list[Section], list[Section]]:
    """The session's new diagnostics, and the rest (pre-existing ones and pending files),
    each a list of per-file sections, errors first."""
    new: list[Section] = []
    other: list[Section] = []
    for entry in store.files():
        if only is not None and entry.path not in only:
            continue
        current = buffer_version(entry.path)
        if entry.version is not None and current is not None and current > entry.version:
            other.append(Section((9, entry.path), entry, (), False, pending_since=current))
            continue
        baseline = store.baseline(session, entry.path)
        if baseline is None:  # never read or edited by this session: nothing is new to it
            fresh: Sequence[Diagnostic] = ()
            known: Sequence[Diagnostic] = entry.items
        else:
            fresh, known = split_new(entry.items, baseline)
        for group, target, is_new in ((fresh, new, True), (known, other, False)):
            if group:  # items are sorted on arrival: group[0] is the worst
                target.append(Section((group[0].severity, entry.path), entry, group, is_new))
    new.sort(key=lambda s: s.order)
    other.sort(key=lambda s: s.order)
    return new, other


def listing(found: list[Section], max_chars: int, display: Callable[[str], str]) -> Listing:
    """Render sections in order until `max_chars`; only count what does not fit, so a
    10,000-diagnostic workspace costs about what its first screenful does."""
    lines: list[str] = []
    used = 0
    for index, section in enumerate(found):
        header = section.header(display)
        if used + len(header) > max_chars:
            return _omitting(lines, found, index, 0)
        lines.append(header)
        used += len(header) + 1
        for position, diagnostic in enumerate(section.items):
            line = diagnostic.render(section.new)
            if used + len(line) > max_chars:
                return _omitting(lines, found, index, position)
            lines.append(line)
            used += len(line) + 1
    return Listing(lines, 0, 0)


def _omitting(lines: list[str], found: list[Section], index: int, position: int) -> Listing:
    rest = found[index:]  # the file cut short (if any) still has diagnostics left out
    omitted = sum(len(s.items) for s in rest) - position
    return Listing(lines, omitted, len(rest))


def skip(found: list[Section], count: int) -> tuple[list[Section], int]:
    """`found` without its first `count` diagnostics, and how many of `count` are left
    to skip in the next list."""
    kept: list[Section] = []
    for section in found:
        if count >= len(section.items) and section.items:
            count -= len(section.items)
            continue
        kept.append(dataclasses.replace(section, items=section.items[count:]) if count else section)
        count = 0
    return kept, count


def after_edit(
    store: DiagnosticsStore,
    session: str,
    path: str,
    since_ns: int,
    wait: float,
    editor_has_it_open: bool,
    max_lines: int = 40,
) -> dict[str, Any] | str | None:
    """The edited file's diagnostics, as the editor reports them after the edit.

    Waits up to `wait` seconds for a report received after `since_ns`. Returns None when
    no report is to be expected (the editor neither has the file open nor has ever sent
    diagnostics for it), "pending" when none came in time, else the new and pre-existing
    problems (each list capped at `max_lines`, with a count of the rest).
    """
    if store.get(path) is None and not editor_has_it_open:
        return None
    entry = store.wait_for(path, since_ns, wait)
    if entry is None:
        return "pending"
    fresh, known = split_new(entry.items, store.baseline(session, path) or Counter())
    result: dict[str, Any] = {
        "version": entry.version,
        "new": [d.render(True).strip() for d in fresh[:max_lines]],
        "existing": [d.render(False).strip() for d in known[:max_lines]],
    }
    omitted = max(0, len(fresh) - max_lines) + max(0, len(known) - max_lines)
    if omitted:
        result["note"] = (
            f"{words.count(omitted, 'more diagnostic')} not shown; "
            f"{attachments_call(types=['diagnostics'], mentions=[path])} lists them all."
        )
    return result
