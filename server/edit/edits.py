"""Edits and writes that never clobber anyone's work.

The rules (DESIGN.md, "Read-state: the rules" and "Editor buffers"):

- Editing or replacing a file needs a read of it in the same session (`not_read`).
- Changed since that read means the content digest differs; a `touch` or an identical
  rewrite is no change. A changed file is refused with `stale` and a bounded diff of what
  changed, except for an edit whose change is provably disjoint from the edited text:
  with the snapshot of what was read, if `old_string` matches exactly where it did
  (once, or the same set of places for `replace_all`) and no changed line touches the
  lines it spans, the edit is applied to the current content and the result says so.
  Whole-file writes are never merged.
- Matching sees CRLF as LF, so an `old_string` written with LF matches a CRLF file. The
  replacement is trimmed to the part of `old_string` that really changes, and inserted
  line breaks take the file's dominant ending, so every other byte (mixed endings, tabs,
  trailing spaces) stays as it was. Encoding and BOM are kept; a file that does not
  decode to text and back to the same bytes is never edited.
- A document open in the editor with unsaved changes is never written underneath: the
  edit is refused with `dirty_buffer`, or applied to the buffer when the client allows.
- After an edit or write, the session's read-state is the new content, recorded as
  partial: the agent may edit again without reading, and a change by anyone else is
  still caught, but its next read returns the file whole (never a `file_unchanged`
  stub), since the agent has not seen the file whole in that form. The exception is
  content the agent holds all of (it wrote it, or edited a file it held whole): a
  re-read of it is a stub, or a diff once it changes (delta.py).

This module is the way in (`edit`, `write`) and decides one attempt of each. The parts:
matching.py (finding `old_string`, near misses), merge.py (the disjoint merge),
commit.py (holding, loading and committing the file), buffers.py (editor buffers),
remember.py (the read-state left), refusals.py, snippets.py, endings.py; services.py is
what they need of the core. The diffs shown with a `stale` refusal or a merge are
diffs.py; the commit itself (atomic replacement that loses no other program's write) is
atomic.py.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Literal

from .. import quoting
from ..errors import ReadkeeperError
from ..files import atomic
from ..files.beneath import Moved
from ..files.encodings import TextEncoding, line_ending
from ..files.fileio import is_directory, moved
from ..files.paths import Location
from ..hints import call
from ..message_cap import MAX_MESSAGE_BYTES
from ..protocol import EditParams, EditResult, ExternalChange, WriteParams, WriteResult
from ..read.diffs import external_change
from ..settings import Settings
from ..state.buffers import Buffer
from ..state.readstate import ReadRecord
from . import journal
from .buffers import apply_to_buffer, dirty_buffer, whole_change
from .commit import (
    Loaded,
    check_buffer,
    check_growth,
    check_new,
    committed,
    digests,
    encode,
    entry,
    hold_for_change,
    load,
    read_record,
    record_to_edit,
    replace,
    resolve_for_change,
    unread,
)
from .endings import dominant_eol, eol_setting, lf, with_eol
from .forgiving import Forgiven, meant, said_forgiven
from .matching import Normalized, Planned, as_shown, find_hits, line_numbers, listed, plan
from .merge import merge_or_refuse
from .notebook_seen import check_text_change, check_text_view
from .refusals import dirty, folder_blocked, os_error, refuse_unsaved_where_created, stale
from .remember import Landed, Written, remember_change
from .search_budget import SearchBudget, noted
from .seen_lines import check_seen, shown_lines
from .services import EditServices
from .snippets import count_lines, numbered_snippet

Target = Literal["disk", "buffer"]


# --- entry points ------------------------------------------------------------------------


def edit(core: EditServices, params: EditParams, exact: bool = False) -> EditResult:
    """`readkeeper/edit` of a text file: replace `old_string` with `new_string` by the
    rules above; `exact`: `old_string` is the file's text (patch.py's fold), not a copy
    of a view that may hold escapes (matching.as_shown)."""
    old, new = _checked(params)
    candidate, where = resolve_for_change(core.workspace, params.file_path, "edit")
    return committed(
        where.path, lambda: _edit_once(core, params, candidate, where, old, new, exact)
    )


def _checked(params: EditParams) -> tuple[str, str]:
    """old_string and new_string as LF text, refused when empty or the same."""
    if params.old_string == "":
        raise ReadkeeperError(
            "bad_params",
            "old_string is empty, so it would match everywhere. To create a file or replace "
            f"all of it, use {call('write', file_path=params.file_path, content='...')}; to "
            "insert text, put "
            "a neighbouring line in old_string and repeat it in new_string with the new text.",
            field="old_string",
        )
    old, new = lf(params.old_string), lf(params.new_string)
    if old == new:
        what = "identical" if params.old_string == params.new_string else "the same text"
        raise ReadkeeperError(
            "no_change",
            f"old_string and new_string are {what} (line endings follow the file), so the "
            "edit would change nothing. Put the text you want in new_string.",
            file_path=params.file_path,
        )
    return old, new


def write(core: EditServices, params: WriteParams) -> WriteResult:
    """`readkeeper/write`: create a file, or replace all of one the session has read.
    Content over the one cap on a message (message_cap.py) is refused before any work:
    no front end takes a larger message, and a caller of the core is held to it too."""
    if len(params.content) > MAX_MESSAGE_BYTES:
        raise ReadkeeperError(
            "too_large",
            f"The content is {len(params.content):,} characters, over the "
            f"{MAX_MESSAGE_BYTES:,}-byte limit of one message: a file that large is not "
            "written in one call. Write it from a program instead, and tell the user.",
            field="content",
        )
    _, where = resolve_for_change(core.workspace, params.file_path, "write")
    return committed(where.path, lambda: _write_once(core, params, where))


# --- one attempt -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Decided:
    """What an edit of a text file would do, every check passed: the real call commits
    it, a dry run only says it."""

    loaded: Loaded
    buffer: Buffer | None
    base_text: str
    hits: list[int]
    planned: Planned
    merged_from: str | None
    forgiven: Forgiven | None
    unescaped: bool


def _decide(
    core: EditServices,
    params: EditParams,
    record: ReadRecord,
    where: Location,
    held: atomic.Held,
    old: str,
    new: str,
    exact: bool = False,
) -> _Decided:
    """Every check of an edit (read-state, stale or merged, lines seen, editor buffer,
    encoding), on the file as `held` holds it: the refusal the call gets, or the plan."""
    real = where.path
    settings = core.settings
    loaded = load(held, settings)
    buffer = dirty_buffer(core, real, loaded.text, settings)
    base_text = buffer.text if buffer else loaded.text
    check_text_view(record, _bytes_of(base_text, loaded, buffer), real, "edit")
    seen = digests(base_text, loaded if buffer is None else None)
    base = Normalized(base_text)
    old, new, unescaped = (
        (old, new, False) if exact else as_shown(base.norm, old, new, real, params.replace_all)
    )
    merged_from: str | None = None
    forgiven: Forgiven | None = None
    if record.scope == "file" and record.digest in seen:
        # The file is as the session read it: a mismatch is the agent's slip.
        budget = SearchBudget()
        if not params.replace_all:
            forgiven = meant(base.norm, old, new, real, budget)
            if forgiven is not None:
                old, new = forgiven.old, forgiven.new
        try:
            hits = find_hits(base, old, params, real, settings.number_width)
        except ReadkeeperError as exc:
            raise noted(exc, budget) from None
    else:
        hits, merged_from = merge_or_refuse(core, record, base, old, params, held.leased)
    check_seen(record, base.norm, hits, old, real)
    # Refused before the new text is made when even its characters (each a byte or more)
    # pass the cap: replace_all of one character by 10,000 in a file of 200,000 took the
    # server to 4 GB before its too_large (round 39).
    grown = len(base_text) + len(hits) * (len(new) - len(old))
    check_growth(real, len(base_text), grown, loaded.cap)
    planned = plan(base, hits, old, new, dominant_eol(base_text, settings))
    if buffer is None:
        encode(planned.text, loaded.encoding, real, "new_string", loaded.data)
    return _Decided(loaded, buffer, base_text, hits, planned, merged_from, forgiven, unescaped)


def preview(core: EditServices, params: EditParams, exact: bool = False) -> ExternalChange | None:
    """Every check `edit` makes, writing and recording nothing (a dry run): raises the
    refusal the real call would get; else the other program's change the real call
    would be merged over (None when the file is as the session read it)."""
    old, new = _checked(params)
    candidate, where = resolve_for_change(core.workspace, params.file_path, "edit")
    record = record_to_edit(core, params.session, where, candidate)
    with hold_for_change(where) as held:
        decided = _decide(core, params, record, where, held, old, new, exact)
    if decided.merged_from is None:
        return None
    return external_change(decided.merged_from, decided.base_text, where.path)


def _edit_once(
    core: EditServices,
    params: EditParams,
    candidate: str,
    where: Location,
    old: str,
    new: str,
    exact: bool,
) -> EditResult | None:
    real = where.path
    reported = core.diagnostics.reported(real)  # before the change: see remember_change
    record = record_to_edit(core, params.session, where, candidate)
    settings = core.settings
    with hold_for_change(where) as held:
        decided = _decide(core, params, record, where, held, old, new, exact)
        loaded, buffer = decided.loaded, decided.buffer
        base_text, hits, planned = decided.base_text, decided.hits, decided.planned
        merged_from, forgiven, unescaped = decided.merged_from, decided.forgiven, decided.unescaped
        landed: Landed = "buffer"
        if buffer is None:
            data = encode(planned.text, loaded.encoding, real, "new_string", loaded.data)
            new_stat = replace(held, data, loaded.data, loaded.cap)
            if new_stat is None:
                return None  # changed under us: look again
            landed = Written(data, new_stat)
    target: Target = "disk" if buffer is None else "buffer"
    # Its own edit of content it held whole: the agent holds the result whole (not so
    # after a merge over a change it has only been told about).
    whole = record.holds_whole() and merged_from is None
    if buffer is not None:
        check_buffer(real, buffer.text, planned.text, loaded.cap)
        # Outside the hold: the lease is not kept while the editor answers.
        apply_to_buffer(core, real, buffer, planned.changes)
    state = remember_change(
        core,
        params.session,
        real,
        planned.text,
        landed,
        "edit",
        reported,
        whole=whole,
        before=base_text,
        merged_over=merged_from is not None,
        known=merged_from,
    )
    snippet, start_line = numbered_snippet(
        planned.text, *planned.spans[0], width=settings.number_width
    )
    first_lines = line_numbers(planned.text, [start for start, _ in planned.spans])
    external = None
    note = None
    if merged_from is not None:
        external = external_change(merged_from, base_text, real)
        note = (
            f"{quoting.name(real)} had changed since you read it (the change, which you have "
            "not seen, comes with this answer); it does not touch the text you replaced, so "
            "the edit was applied to the current content."
        )
    if unescaped:
        note = _join(
            note,
            "old_string matched once its escapes (\\r, \\u2028, ...) were read as the line "
            "breaks a read shows that way; new_string's were read the same way.",
        )
    if forgiven is not None:
        note = _join(note, said_forgiven(forgiven))
    if target == "buffer":
        note = _join(
            note,
            "The file has unsaved changes in the editor, so the edit was applied to the "
            "editor's buffer; the user saves it.",
        )
    return EditResult(
        file_path=real,
        replacements=len(hits),
        snippet=snippet,
        start_line=start_line,
        lines=listed(first_lines),
        applied_to=target,
        encoding=loaded.encoding.label,
        line_ending=line_ending(planned.text),
        read_state=state,
        merged=merged_from is not None,
        external_change=external,
        note=note,
    )


def _write_once(core: EditServices, params: WriteParams, where: Location) -> WriteResult | None:
    settings = core.settings
    real = where.path
    reported = core.diagnostics.reported(real)  # before the change: see remember_change
    found = entry(where)
    if found is None:
        return _create(core, params, where, settings)
    if stat.S_ISDIR(found.st_mode):
        raise is_directory(real, to_write=True)
    record = read_record(core.read_states, core.workspace, params.session, real, "write")
    if record is not None and shown_lines(record) is not None:
        raise ReadkeeperError(
            "not_read",
            f"This session has seen {quoting.name(real)} only through search, and a write "
            f"replaces every line of it. Read it ({call('read', file_path=real)}), then "
            "write it (or edit just the lines the search showed).",
            file_path=real,
            session=params.session,
        )
    if record is None:
        raise unread(
            where,
            settings,
            ReadkeeperError(
                "not_read",
                f"{quoting.name(real)} already exists and this session has not read it, so "
                "writing it could overwrite what it has not seen. Read it "
                f"({call('read', file_path=real)}), then write it (or edit just the parts "
                "to change).",
                file_path=real,
                session=params.session,
            ),
            core.tokens,
        )
    check_text_change(record, real, "write")
    with hold_for_change(where) as held:
        loaded = load(held, settings)
        buffer = dirty_buffer(core, real, loaded.text, settings)
        base_text = buffer.text if buffer else loaded.text
        check_text_view(record, _bytes_of(base_text, loaded, buffer), real, "write")
        if record.scope != "file" or record.digest not in digests(
            base_text, loaded if buffer is None else None
        ):
            raise stale(core, record, base_text, real, "write", None)
        text = with_eol(params.content, dominant_eol(base_text, settings))
        landed: Landed = "buffer"
        if buffer is None:
            data = encode(text, loaded.encoding, real, "content", loaded.data)
            changed = data != loaded.data
            if changed:
                new_stat = replace(held, data, loaded.data, loaded.cap)
                if new_stat is None:
                    return None  # changed under us: look again
            else:
                new_stat = os.fstat(held.opened.fd)
            landed = Written(data, new_stat)
    target: Target = "disk" if buffer is None else "buffer"
    if buffer is not None:
        changed = text != buffer.text
        if changed:
            check_buffer(real, buffer.text, text, loaded.cap)
            apply_to_buffer(core, real, buffer, [whole_change(buffer.text, text)])
    state = remember_change(core, params.session, real, text, landed, "write", reported, whole=True)
    size = len(landed.data) if isinstance(landed, Written) else None
    same = f"{quoting.name(real)} already had exactly this content; it was not touched."
    note = None if changed else same
    if target == "buffer":
        note = _join(
            note,
            "The file has unsaved changes in the editor, so the content was put in the "
            "editor's buffer; the user saves it.",
        )
    return WriteResult(
        file_path=real,
        created=False,
        changed=changed,
        applied_to=target,
        total_lines=count_lines(text),
        encoding=loaded.encoding.label,
        line_ending=line_ending(text),
        read_state=state,
        size=size,
        note=note,
    )


def _create(
    core: EditServices, params: WriteParams, where: Location, settings: Settings
) -> WriteResult | None:
    real = where.path
    reported = core.diagnostics.reported(real)  # before the change: see remember_change
    if core.buffers.get(real) is not None:
        # Open in the editor but never saved: the buffer is all unsaved changes.
        raise dirty(real, None)
    # The folders it makes, too: none may stand where the editor holds a document.
    refuse_unsaved_where_created(core, os.path.dirname(real), where.anchor.path)
    text = with_eol(params.content, eol_setting(settings))
    data = encode(text, TextEncoding("utf-8"), real, "content")
    check_new(real, data, settings)
    try:
        with where.anchor.make_folders(where.folder):  # taken back if the create fails
            new_stat = atomic.create(where, data)
    except Moved as exc:
        raise moved(real, exc) from None
    except (FileExistsError, NotADirectoryError):
        raise folder_blocked(real) from None
    except OSError as exc:
        raise os_error(real, exc) from None
    if new_stat is None:
        return None  # someone created it meanwhile: the next attempt asks for a read
    journal.note(real, None, data)
    state = remember_change(
        core, params.session, real, text, Written(data, new_stat), "write", reported, whole=True
    )
    return WriteResult(
        file_path=real,
        created=True,
        changed=True,
        applied_to="disk",
        total_lines=count_lines(text),
        encoding="utf-8",
        line_ending=line_ending(text),
        read_state=state,
        size=len(data),
    )


def _bytes_of(text: str, loaded: Loaded, buffer: Buffer | None) -> bytes:
    """The bytes a change applies to: the file's, or its editor buffer's as UTF-8."""
    return loaded.data if buffer is None else text.encode("utf-8", "surrogatepass")


def _join(first: str | None, second: str) -> str:
    return f"{first} {second}" if first else second
