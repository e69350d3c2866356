"""The stub rule, and what a read leaves in the session's read-state (DESIGN.md,
"Read-state: the rules").

A read's answer depends on what the session already holds of the file. The same content
read before with the same parameters (after defaults) and settings is answered with a
`file_unchanged` stub (`seen_before`, `stub`); a whole re-read of a file the session
holds whole is a stub when it is unchanged and a diff when the diff is much smaller than
the file (`held_whole`, delta.py). Every other read leaves a record (`record`): what the
session now holds, what a later stub of it will say it holds, and what it cost.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..files.fileio import OpenedFile
from ..hints import again
from ..protocol import ChangedResult, ReadParams, UnchangedResult
from ..state.held import HeldDocument
from ..state.readstate import ReadRecord, Scope, Source
from . import delta
from .readers.text import Window
from .services import ReadServices
from .unchanged import unchanged_file

# What a `file_unchanged` stub costs the agent, roughly: {"type":"file_unchanged",...}.
STUB_TOKENS = 12


@dataclass(frozen=True)
class Request:
    """One read as the stub rule sees it: the params, the lines they ask for (after
    defaults), and the file they opened."""

    params: ReadParams
    window: Window
    opened: OpenedFile
    notebook_text: bool = False  # a damaged notebook read as text (read/damaged.py)


@dataclass(frozen=True)
class Content:
    """What a read shows of a file, and where it came from: what a stub is checked
    against."""

    digest: str  # of the whole file (scope "file") or of the lines shown (scope "range")
    scope: Scope = "file"
    source: Source = "disk"
    version: int | None = None  # the editor's, when the source is its buffer
    # The digest is of what the session knows, not of the file: a partial read left a
    # change outside its lines unseen (partial_seen.py). Its stat is then not recorded,
    # so every later look compares the content.
    known: bool = False


@dataclass(frozen=True)
class Shown:
    """What one read gave the agent: what its record and the counters keep of it."""

    tokens: int
    partial: bool  # the agent got less than it asked for
    view: str = ""  # what beyond offset/limit shaped it (PDF pages, an outline)
    left_out: int = 0  # estimate of what the caps and budgets kept from the agent
    held: str | None = None  # what a stub of a cut view says the agent holds
    whole: bool = False  # a complete read from line 1, no line cut: all of the content
    # Numbered lines shown (None for other views), the file's lines, and the digest of
    # the lines shown when the view is not the whole file (held_range.py).
    num_lines: int | None = None
    total_lines: int | None = None
    lines_digest: str | None = None
    symbol: str | None = None  # the symbol a symbol read asked for
    document: HeldDocument | None = None  # an image's, PDF's or notebook's view


def seen_before(
    services: ReadServices, request: Request, content: Content, views: tuple[str, ...] = ("",)
) -> ReadRecord | None:
    """The session's earlier read of this same content with the same parameters
    (after defaults) and settings: the condition for a `file_unchanged` stub
    (DESIGN.md, "Read-state: the rules"). Such a read showed exactly what this one
    would, even when a cap cut it. What an edit or write left never stubs: the
    agent never read it as a read shows it. `views`: what beyond offset/limit the
    read may have shown (readers.view_key), the first that matches answering."""
    params, window = request.params, request.window
    latest = services.read_states.get(params.session, request.opened.path)
    if params.force or latest is None:
        return None
    if (latest.scope, latest.source, latest.digest) != (
        content.scope,
        content.source,
        content.digest,
    ):
        return None
    caps = hash(services.settings)
    # Views read as this read asks (whole or ranged) first: a whole re-read cut at the
    # line default is answered by the whole read's view, whose stub says what is held,
    # before a ranged view of the same lines.
    held = sorted(latest.views(), key=lambda previous: previous.ranged != window.ranged)
    for view in views:
        for previous in held:
            if previous.origin != "read" or previous.caps != caps:
                continue
            if previous.partial and previous.ranged != window.ranged:
                continue  # over the token cap a whole read is cut, a ranged one refused
            if previous.same_view(window.offset, window.limit, view):
                return previous
    return None


def stub(
    services: ReadServices,
    request: Request,
    previous: ReadRecord,
    version: int | None = None,
    answered: ReadRecord | None = None,
) -> UnchangedResult:
    """Answer a re-read with `file_unchanged`. The read counts as a read: its record
    is renewed (same content and views, the file's stat as it is now). `answered` is
    the view the stub stands for when it is not the newest (a whole re-read of a file
    read whole, then in a range): its tokens are what the stub saved."""
    session, opened = request.params.session, request.opened
    answered = answered or previous
    stamp = opened.stamp if previous.source == "disk" else None
    renewed = previous.renewed(opened.mtime_ns, opened.size, version, time.time_ns(), stamp)
    services.read_states.put(session, renewed)
    services.diagnostics.mark_seen(session, previous.path)
    saved = max(0, answered.tokens - STUB_TOKENS)
    services.stats.add(session, reads=1, dedup_hits=1, tokens_saved_by_stubs=saved)
    return UnchangedResult(unchanged_file(previous.path, answered, version=version))


def proven_unchanged(
    services: ReadServices, request: Request, views: tuple[str, ...], *, text: bool = False
) -> UnchangedResult | None:
    """The stub of a re-read of a file whose stamp proves it unchanged since the session
    last read it from disk (files/stamps.py), found without reading a byte of it: what
    the read would answer after reading and hashing the file, when that is a stub.
    `views` are the views such a read may match (`seen_before`), in the order it tries
    them; `text` for a text file, which a session holding it whole re-reads whole as a
    stub (`held_whole`). None when the stamp proves nothing, an editor buffer is open
    for the file, or the read may not be a stub: it goes the usual way."""
    params, opened = request.params, request.opened
    if params.force or params.estimate or params.symbol is not None or opened.stamp is None:
        return None
    latest = services.read_states.get(params.session, opened.path)
    if latest is None or latest.stamp != opened.stamp:
        return None
    if services.buffers.get(opened.path) is not None:
        return None  # the buffer may stand in for the disk
    if text:  # kept as long as when each read put it (a later diff is made from it)
        services.snapshots.touch(opened.path, latest.digest)
    if text and not request.window.ranged and latest.holds_whole():
        return _stub_of_whole(services, request, latest)
    previous = seen_before(services, request, Content(latest.digest, latest.scope), views)
    return None if previous is None else stub(services, request, previous)


def held_whole(
    services: ReadServices, request: Request, text: str, content: Content
) -> UnchangedResult | ChangedResult | None:
    """A whole re-read of text the session holds all of (a complete read, a write, or
    its own edit of such): a stub when unchanged, else the diff when much smaller
    than the file (delta.py); None to read as usual."""
    params, path = request.params, request.opened.path
    if params.force or request.window.ranged or params.symbol is not None:
        return None
    previous = services.read_states.get(params.session, path)
    if previous is None or not previous.holds_whole() or previous.source != content.source:
        return None
    if previous.digest == content.digest:
        return _stub_of_whole(services, request, previous, content.version)
    before = services.snapshots.get(path, previous.digest)
    if before is None:
        return None
    changed = delta.changed_view(before, text, path, services.settings, services.tokens)
    if changed is None:
        return None
    lines = changed.total_lines
    shown = Shown(changed.tokens, partial=False, whole=True, num_lines=lines, total_lines=lines)
    record(services, request, content, shown)
    # The diff stands for the whole file sent again: the tokens of the view it replaces.
    whole = next(view for view in previous.views() if view.whole)
    saved = max(0, whole.tokens - changed.tokens)
    services.stats.add(params.session, tokens_saved_by_diffs=saved)
    return ChangedResult(changed)


def _stub_of_whole(
    services: ReadServices, request: Request, held: ReadRecord, version: int | None = None
) -> UnchangedResult:
    """The stub of a whole re-read of content the session holds whole (`held` has a view
    that holds it): it stands for that view."""
    whole = next(view for view in held.views() if view.whole)
    return stub(services, request, held, version, answered=whole)


def record(services: ReadServices, request: Request, content: Content, shown: Shown) -> None:
    """What the session now has seen (its read-state) and what that cost it."""
    session, window, opened = request.params.session, request.window, request.opened
    services.read_states.put(
        session,
        ReadRecord(
            path=opened.path,
            digest=content.digest,
            scope=content.scope,
            mtime_ns=0 if content.known else opened.mtime_ns,
            size=0 if content.known else opened.size,
            offset=window.offset,
            limit=window.limit,
            partial=shown.partial,
            tokens=shown.tokens,
            source=content.source,
            buffer_version=content.version,
            view=shown.view,
            ranged=window.ranged,
            caps=hash(services.settings),
            held=shown.held,
            whole=shown.whole,
            shown_lines=shown.num_lines,
            total_lines=shown.total_lines,
            lines_digest=shown.lines_digest,
            symbol=shown.symbol,
            stamp=opened.stamp if content.source == "disk" and not content.known else None,
            document=shown.document,
            notebook_text=request.notebook_text,
        ),
    )
    services.diagnostics.mark_seen(session, opened.path)
    services.stats.add(
        session, reads=1, tokens_returned=shown.tokens, tokens_saved_by_budgets=shown.left_out
    )
    services.stats.served(session, opened.path, shown.tokens)


def held_lines(start_line: int, num_lines: int, total_lines: int | None) -> str:
    """What the stub of a text read cut at the line default or a cap says it holds."""
    last = start_line + num_lines - 1
    return (
        f"Lines {start_line}-{last} of {total_lines:,}, unchanged since your "
        f"read ({again(force=True)} sends them again); the rest starts at {again(offset=last + 1)}."
    )
