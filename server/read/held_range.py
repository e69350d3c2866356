"""Range-level stubs: the file changed, but not the lines the agent holds of it.

A read of numbered lines that did not give the agent the whole file (a range, a symbol,
a read cut at the line default or the token cap) records the digest of the lines it
showed. When the file's digest has changed since, a re-read with the same parameters
(or of the same symbol) checks whether those lines are still there, byte for byte: at
the same numbers (the file changed after them, or before without moving them), or moved
by a change before them. If so, the answer is a stub naming the lines as numbered now
and what changed around them, not the lines again. `force` always sends the text.

Finding them costs a hash of the held lines at one or two places (where they were, and
where a change before them would have moved them), plus, when the text the agent read
is still kept (state/snapshots.py), a search for their first line near where they were:
never a diff of the file.
"""

from __future__ import annotations

import dataclasses
import time

from ..files.fileio import digest
from ..protocol import UnchangedResult
from ..state.readstate import ReadRecord
from . import partial_seen
from .readers.text import split_lines
from .services import ReadServices
from .stub_rule import STUB_TOKENS, Content, Request
from .unchanged import Around, unchanged_file

# Places checked for the held lines' first line when the text the agent read is kept.
_MAX_CANDIDATES = 64


def lines_digest(lines: list[str]) -> str:
    """The digest of lines as the file has them (without their LF)."""
    return digest("\n".join(lines).encode("utf-8", "surrogatepass"))


def answer(
    services: ReadServices, request: Request, symbol: str | None, text: str, content: Content
) -> UnchangedResult | None:
    """The stub of a re-read whose held lines are unchanged in a file that changed, or
    None to read as usual. `symbol`: the symbol the read asked for (its `request` is
    then the ranged read of where that symbol is now)."""
    params, window, path = request.params, request.window, request.opened.path
    if params.force or params.estimate:
        return None
    latest = services.read_states.get(params.session, path)
    if latest is None or latest.scope != "file" or latest.source != content.source:
        return None
    caps = hash(services.settings)
    lines: list[str] | None = None
    # The views held of this content (seen_before answered for them) and of the content
    # before the session's own edits or writes.
    views = [view for kept in latest.views() for view in (kept, *kept.superseded)]
    for view in views:
        if view.origin != "read" or view.caps != caps or view.view != "" or view.symbol != symbol:
            continue
        if view.digest == content.digest or view.source != content.source:
            continue
        if view.lines_digest is None or not view.shown_lines or view.total_lines is None:
            continue
        if symbol is None and not (
            view.same_view(window.offset, window.limit) and view.ranged == window.ranged
        ):
            continue
        lines = split_lines(text) if lines is None else lines
        found = _find(services, path, view.digest, view, lines)
        if found is None or (symbol is not None and found.start_line != window.offset):
            continue
        return _stub(services, request, view, content, found, text)
    return None


def _find(
    services: ReadServices, path: str, held_digest: str, view: ReadRecord, lines: list[str]
) -> Around | None:
    """Where the lines `view` showed are in `lines` now, and what changed around them."""
    count, total = view.shown_lines or 0, view.total_lines or 0
    first = view.offset - 1
    before = services.snapshots.get(path, held_digest)
    if before is not None:
        found = _find_in(split_lines(before), first, count, lines)
        # What the session knows may not be the file that read showed (a change above
        # the lines it never saw, partial_seen.py): only the lines it showed are held.
        start = found.start_line - 1 if found else 0
        if found is None or lines_digest(lines[start : start + count]) == view.lines_digest:
            return found
    for shift in dict.fromkeys((0, len(lines) - total)):
        start = first + shift
        if start >= 0 and lines_digest(lines[start : start + count]) == view.lines_digest:
            where = "after" if shift == 0 and first == 0 else "before" if shift else "outside"
            return Around(start + 1, len(lines), where)
    return None


def _find_in(old: list[str], first: int, count: int, lines: list[str]) -> Around | None:
    """Where `old[first:first + count]` is in `lines`, nearest its old place first."""
    held = old[first : first + count]
    if len(held) != count:
        return None
    places = (i for i, line in enumerate(lines) if line == held[0])
    nearest = sorted(places, key=lambda i: abs(i - first))[:_MAX_CANDIDATES]
    for start in nearest:
        if lines[start : start + count] == held:
            changed_before = old[:first] != lines[:start]
            changed_after = old[first + count :] != lines[start + count :]
            where = {
                (True, True): "before and after",
                (True, False): "before",
                (False, True): "after",
            }.get((changed_before, changed_after), "outside")
            return Around(start + 1, len(lines), where)
    return None


def _stub(
    services: ReadServices,
    request: Request,
    view: ReadRecord,
    content: Content,
    found: Around,
    text: str,
) -> UnchangedResult:
    """Answer with the stub, and record that the agent holds those lines of the new
    content (where they are now)."""
    session, opened = request.params.session, request.opened
    now = time.time_ns()
    # The lines are the same, but the file changed around them: what the session knows
    # of the rest stays what it knew (partial_seen.py).
    known = partial_seen.known_after_read(
        services,
        session,
        opened.path,
        content.digest,
        text,
        found.start_line - 1,
        view.shown_lines or 0,
    )
    held = dataclasses.replace(
        view,
        digest=content.digest if known is None else known.digest,
        mtime_ns=opened.mtime_ns if known is None else 0,
        size=opened.size if known is None else 0,
        offset=found.start_line,
        total_lines=found.total_lines,
        buffer_version=content.version,
        recorded_ns=now,
        stamp=opened.stamp if content.source == "disk" and known is None else None,
        earlier=(),
    )
    services.read_states.put(session, held)
    services.diagnostics.mark_seen(session, opened.path)
    saved = max(0, view.tokens - STUB_TOKENS)
    services.stats.add(session, reads=1, dedup_hits=1, tokens_saved_by_stubs=saved)
    return UnchangedResult(unchanged_file(opened.path, view, found, content.version))
