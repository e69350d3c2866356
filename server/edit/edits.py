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

The diffs shown with a `stale` refusal or a merge are diffs.py; the commit itself (atomic
replacement that loses no other program's write) is atomic.py.
"""

from __future__ import annotations

import bisect
import errno
import os
import re
import stat
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar, runtime_checkable

from ..errors import ReadkeeperError
from ..files import atomic
from ..files.beneath import Moved
from ..files.encodings import NotText, TextEncoding, decode, detect, line_ending
from ..files.fileio import digest, is_directory, moved, read_at_most
from ..files.locks import lock_for
from ..files.paths import Location, Workspace, real_path
from ..protocol import (
    EditParams,
    EditResult,
    ReadStateInfo,
    WriteParams,
    WriteResult,
)
from ..read import numbering
from ..read.diffs import bounded_diff, common_ends, external_change, text_hunks
from ..settings import Settings
from ..state.readstate import ReadRecord

if TYPE_CHECKING:
    from ..attachments.diagnostics import Key
    from ..core import Buffer, Readkeeper

SNIPPET_CONTEXT_LINES = 3
SNIPPET_MAX_LINES = 40
SNIPPET_LINE_CHARS = 500
LISTED_LINES = 20  # line numbers named in a message (data carries them all)
# Times a commit is retried when the file changes under it; each retry re-decides (and
# usually ends as `stale`), so this only bounds a file rewritten continuously.
COMMIT_ATTEMPTS = 5
# Lines of `old_string` compared when looking for a near miss.
NEAR_MISS_LINES = 20
NEAR_MISS_WINDOWS = 50_000

_Result = TypeVar("_Result")
_CRLF = re.compile(r"\r\n")
# A line as readkeeper/read prints it, in either style of numbers: spaces (padded, as
# `cat -n` does), the number, a tab.
_LINE_NUMBER_PREFIX = re.compile(r"^ *\d+\t")

Target = Literal["disk", "buffer"]


@dataclass(frozen=True)
class TextChange:
    """Replace text[start:end] with `text` (offsets in the text the change applies to)."""

    start: int
    end: int
    text: str


@runtime_checkable
class BufferEditor(Protocol):
    """A front end that can change an open editor buffer (LSP: `workspace/applyEdit`)."""

    def apply_edits(
        self, real_path: str, version: int | None, text: str, changes: Sequence[TextChange]
    ) -> str | None:
        """Apply `changes` (offsets in `text`, the buffer at `version`); None when the
        editor applied them, else why not."""
        ...


# --- entry points ------------------------------------------------------------------------


def edit(core: Readkeeper, params: EditParams) -> EditResult:
    """`readkeeper/edit` of a text file: replace `old_string` with `new_string` by the
    rules above."""
    if params.old_string == "":
        raise ReadkeeperError(
            "bad_params",
            "old_string is empty, so it would match everywhere. To create a file or replace "
            "all of it, use readkeeper/write with file_path and content; to insert text, put "
            "a neighbouring line in old_string and repeat it in new_string with the new text.",
            field="old_string",
        )
    old, new = _lf(params.old_string), _lf(params.new_string)
    if old == new:
        what = "identical" if params.old_string == params.new_string else "the same text"
        raise ReadkeeperError(
            "no_change",
            f"old_string and new_string are {what} (line endings follow the file), so the "
            "edit would change nothing. Put the text you want in new_string.",
            file_path=params.file_path,
        )
    candidate, where = resolve_for_change(core.workspace, params.file_path, "edit")
    return committed(where.path, lambda: _edit_once(core, params, candidate, where, old, new))


def write(core: Readkeeper, params: WriteParams) -> WriteResult:
    """`readkeeper/write`: create a file, or replace all of one the session has read."""
    _, where = resolve_for_change(core.workspace, params.file_path, "write")
    return committed(where.path, lambda: _write_once(core, params, where))


def committed(path: str, attempt: Callable[[], _Result | None]) -> _Result:
    """The result of the first `attempt` that commits (returns a result), made under the
    file's lock so that our own changes of one file take turns. An attempt returns None
    when the file changed between its decision and its commit, and the next one decides
    again; a file rewritten on every attempt is refused as `stale`."""
    with lock_for(path):
        for _ in range(COMMIT_ATTEMPTS):
            result = attempt()
            if result is not None:
                return result
    raise _kept_changing(path)


# --- paths -------------------------------------------------------------------------------


def resolve_for_change(workspace: Workspace, file_path: str, verb: str) -> tuple[str, Location]:
    """The absolute path as given and where it really is (symlinks followed, so a write
    through a link updates its target), or `bad_params`/`outside_workspace`.

    Only the roots and `allowed_paths` count: a read the user allowed when asked does
    not extend to changing the file.
    """
    if not file_path or "\x00" in file_path:
        raise ReadkeeperError(
            "bad_params",
            "file_path must be a non-empty path without NUL characters.",
            field="file_path",
        )
    candidate = workspace.absolute(file_path)
    real = real_path(candidate)
    where = workspace.locate(real, grants=False)
    if where is None:
        shown = candidate if real == candidate else f"{candidate} (real path {real})"
        raise ReadkeeperError(
            "outside_workspace",
            f"{shown} is outside the workspace roots ({', '.join(workspace.roots) or 'none'}), "
            f"and readkeeper does not {verb} files there. Ask the user to add its folder to "
            f"the readkeeper.allowed_paths setting, or {verb} a file inside the workspace.",
            file_path=candidate,
            real_path=real,
            roots=list(workspace.roots),
        )
    return candidate, where


# --- one attempt -------------------------------------------------------------------------


def _edit_once(
    core: Readkeeper, params: EditParams, candidate: str, where: Location, old: str, new: str
) -> EditResult | None:
    real = where.path
    reported = core.diagnostics.reported(real)  # before the change: see remember_change
    record = core.read_states.get(params.session, real)
    entry = _entry(where)
    if entry is None:
        if record is not None:
            raise _deleted(real, "edit")
        raise core.workspace.not_found(candidate)
    if stat.S_ISDIR(entry.st_mode):
        raise is_directory(real, to_write=True)
    if record is None:
        raise not_read(real, params.session)
    settings = core.settings
    with hold_for_change(where) as held:
        loaded = _load(held, settings)
        buffer = _dirty_buffer(core, real, loaded.text, settings)
        base_text = buffer.text if buffer else loaded.text
        seen = _digests(base_text, loaded if buffer is None else None)
        base = Normalized(base_text)
        merged_from: str | None = None
        if record.scope == "file" and record.digest in seen:
            hits = _hits(base, old, params, real, settings.number_width)
        else:
            hits, merged_from = _merge_or_refuse(core, record, base, old, params, held.leased)
        planned = plan(base, hits, old, new, _dominant_eol(base_text, settings))
        data = b""
        new_stat: os.stat_result | None = None
        if buffer is None:
            data = _encode(planned.text, loaded.encoding, real, "new_string")
            new_stat = _replace(held, data, loaded.data)
            if new_stat is None:
                return None  # changed under us: look again
    target: Target = "disk" if buffer is None else "buffer"
    # Its own edit of content it held whole: the agent holds the result whole (not so
    # after a merge over a change it has only been told about).
    whole = record.holds_whole() and merged_from is None
    if buffer is not None:
        # Outside the hold: the lease is not kept while the editor answers.
        _apply_to_buffer(core, real, buffer, planned.changes)
        state = remember_change(
            core, params.session, real, planned.text, None, None, "edit", reported, whole=whole
        )
    else:
        state = remember_change(
            core, params.session, real, planned.text, data, new_stat, "edit", reported, whole=whole
        )
    snippet, start_line = numbered_snippet(
        planned.text, *planned.spans[0], width=settings.number_width
    )
    first_lines = _line_numbers(planned.text, [start for start, _ in planned.spans])
    external = None
    note = None
    if merged_from is not None:
        external = external_change(merged_from, base_text, real)
        note = (
            f"{real} had changed since you read it (see external_change); the change does "
            "not touch the text you replaced, so the edit was applied to the current content."
        )
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
        lines=first_lines,
        applied_to=target,
        encoding=loaded.encoding.label,
        line_ending=line_ending(planned.text),
        read_state=state,
        merged=merged_from is not None,
        external_change=external,
        note=note,
    )


def _write_once(core: Readkeeper, params: WriteParams, where: Location) -> WriteResult | None:
    settings = core.settings
    real = where.path
    reported = core.diagnostics.reported(real)  # before the change: see remember_change
    entry = _entry(where)
    if entry is None:
        return _create(core, params, where, settings)
    if stat.S_ISDIR(entry.st_mode):
        raise is_directory(real, to_write=True)
    record = core.read_states.get(params.session, real)
    if record is None:
        raise ReadkeeperError(
            "not_read",
            f"{real} already exists and this session has not read it, so writing it could "
            "overwrite what it has not seen. Read it (readkeeper/read), then write it "
            "(or edit just the parts to change).",
            file_path=real,
            session=params.session,
        )
    with hold_for_change(where) as held:
        loaded = _load(held, settings)
        buffer = _dirty_buffer(core, real, loaded.text, settings)
        base_text = buffer.text if buffer else loaded.text
        if record.scope != "file" or record.digest not in _digests(
            base_text, loaded if buffer is None else None
        ):
            raise _stale(core, record, base_text, real, "write", None)
        text = _with_eol(params.content, _dominant_eol(base_text, settings))
        data = b""
        new_stat: os.stat_result | None = None
        if buffer is None:
            data = _encode(text, loaded.encoding, real, "content")
            changed = data != loaded.data
            if changed:
                new_stat = _replace(held, data, loaded.data)
                if new_stat is None:
                    return None  # changed under us: look again
            else:
                new_stat = os.fstat(held.opened.fd)
    target: Target = "disk" if buffer is None else "buffer"
    size: int | None = None
    if buffer is not None:
        changed = text != buffer.text
        if changed:
            _apply_to_buffer(core, real, buffer, [_whole_change(buffer.text, text)])
        state = remember_change(
            core, params.session, real, text, None, None, "write", reported, whole=True
        )
    else:
        state = remember_change(
            core, params.session, real, text, data, new_stat, "write", reported, whole=True
        )
        size = len(data)
    note = None if changed else f"{real} already had exactly this content; it was not touched."
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
        total_lines=_count_lines(text),
        encoding=loaded.encoding.label,
        line_ending=line_ending(text),
        read_state=state,
        size=size,
        note=note,
    )


def _create(
    core: Readkeeper, params: WriteParams, where: Location, settings: Settings
) -> WriteResult | None:
    real = where.path
    reported = core.diagnostics.reported(real)  # before the change: see remember_change
    if core.buffers.get(real) is not None:
        # Open in the editor but never saved: the buffer is all unsaved changes.
        raise _dirty(real, None)
    text = _with_eol(params.content, _eol_setting(settings))
    data = _encode(text, TextEncoding("utf-8"), real, "content")
    folder = os.path.dirname(real)
    try:
        where.anchor.make_folders(where.folder)
        new_stat = atomic.create(where, data)
    except Moved:
        raise moved(real) from None
    except (FileExistsError, NotADirectoryError):
        raise ReadkeeperError(
            "bad_params",
            f"Cannot create {real}: a file stands where one of its folders should be "
            f"({_deepest_existing(folder)}). Write it under another path.",
            field="file_path",
        ) from None
    except OSError as exc:
        raise _os_error(real, exc) from None
    if new_stat is None:
        return None  # someone created it meanwhile: the next attempt asks for a read
    state = remember_change(
        core, params.session, real, text, data, new_stat, "write", reported, whole=True
    )
    return WriteResult(
        file_path=real,
        created=True,
        changed=True,
        applied_to="disk",
        total_lines=_count_lines(text),
        encoding="utf-8",
        line_ending=line_ending(text),
        read_state=state,
        size=len(data),
    )


# --- loading the file exactly ------------------------------------------------------------


@dataclass(frozen=True)
class Loaded:
    """A file's bytes as they are on disk, and the text they decode to and back from
    exactly."""

    data: bytes
    text: str
    encoding: TextEncoding


def _load(held: atomic.Held, settings: Settings) -> Loaded:
    path = held.opened.path
    limit = settings.max_size_bytes
    data = read_at_most(held.opened.fd, limit + 1) if held.opened.size <= limit else b""
    if held.opened.size > limit or len(data) > limit:
        size = max(held.opened.size, len(data))
        raise ReadkeeperError(
            "too_large",
            f"{path} is {size:,} bytes, over the {limit:,}-byte limit for files readkeeper "
            "edits (the limit for reading a file whole). Change it with a command (e.g. "
            "sed -i on the lines you found with grep), or ask the user to raise "
            "max_size_bytes (READKEEPER_MAX_SIZE_BYTES), read it whole, and edit it.",
            file_path=path,
            size=size,
            max_size_bytes=limit,
        )
    try:
        encoding = detect(data, complete=True)
        text = decode(data, encoding)
    except NotText as exc:
        raise _not_text(path, exc.reason) from None
    except UnicodeDecodeError as exc:
        raise _not_text(path, f"it is not valid {exc.encoding} at byte {exc.start}") from None
    try:
        exact = encoding.bom + text.encode(encoding.name) == data
    except UnicodeEncodeError:
        exact = False
    if not exact:
        raise ReadkeeperError(
            "unsupported",
            f"{path} decodes as {encoding.label}, but not back to the same bytes, so "
            "readkeeper will not edit it (the edit would change bytes you never touched). "
            "Change it with a command that works on bytes, or ask the user to convert it "
            "to UTF-8.",
            file_path=path,
            encoding=encoding.label,
        )
    return Loaded(data, text, encoding)


def _digests(text: str, loaded: Loaded | None) -> tuple[str, ...]:
    """Digests a read of this content may have recorded: of the bytes on disk, and of
    the text as UTF-8 (how a read of an editor buffer records it)."""
    if loaded is not None and loaded.encoding == TextEncoding("utf-8"):
        return (digest(loaded.data),)  # the same bytes either way
    as_utf8 = digest(text.encode("utf-8", "surrogatepass"))
    if loaded is None:
        return (as_utf8,)
    return (digest(loaded.data), as_utf8)


def _encode(text: str, encoding: TextEncoding, path: str, field: str) -> bytes:
    try:
        return encoding.bom + text.encode(encoding.name)
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start]
        line = exc.object.count("\n", 0, exc.start) + 1
        if encoding.name.startswith("utf"):  # only a lone surrogate fails here
            advice = "Remove it (a lone surrogate is not a character any file can hold)."
        else:
            advice = (
                f"Use characters {encoding.name} has (or an escape the language allows), "
                "or ask the user to convert the file to UTF-8."
            )
        raise ReadkeeperError(
            "unsupported",
            f"{path} is {encoding.label}, which cannot hold {bad!r} (U+{ord(bad):04X}, line "
            f"{line} of the result). {advice}",
            file_path=path,
            encoding=encoding.label,
            field=field,
        ) from None


# --- matching ----------------------------------------------------------------------------


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


class Normalized:
    """A text with CRLF seen as LF, and the way back to offsets in the original."""

    def __init__(self, text: str) -> None:
        self.text = text
        if "\r\n" in text:
            self.norm = text.replace("\r\n", "\n")
            # The normalized offset of each LF that stands for a CRLF.
            self._crlf = [m.start() - i for i, m in enumerate(_CRLF.finditer(text))]
        else:
            self.norm = text
            self._crlf = []

    def original(self, offset: int) -> int:
        """The original offset of normalized `offset` (a CRLF's LF maps to its CR)."""
        return offset + bisect.bisect_left(self._crlf, offset)


def find_all(haystack: str, needle: str) -> list[int]:
    """Offsets of `needle`, left to right, not overlapping (as `str.replace` sees them)."""
    hits: list[int] = []
    at = haystack.find(needle)
    while at != -1:
        hits.append(at)
        at = haystack.find(needle, at + len(needle))
    return hits


@dataclass(frozen=True)
class Planned:
    """An edit worked out on a text: the new text, and where it changes the old one and
    the new one."""

    text: str  # the whole new text
    changes: list[TextChange]  # in the base text's offsets, in order
    spans: list[tuple[int, int]]  # where each change's new text is, in the new text


def plan(base: Normalized, hits: Sequence[int], old: str, new: str, eol: str) -> Planned:
    """Replace `old` (LF-normalized) at each normalized offset in `hits` with `new`,
    changing only the part of `old` that differs from `new`."""
    keep_head, keep_tail = common_ends(old, new)
    inserted = new[keep_head : len(new) - keep_tail]
    if eol != "\n":
        inserted = inserted.replace("\n", eol)
    pieces: list[str] = []
    changes: list[TextChange] = []
    spans: list[tuple[int, int]] = []
    last = 0
    shift = 0
    for hit in hits:
        start = base.original(hit + keep_head)
        end = base.original(hit + len(old) - keep_tail)
        pieces += [base.text[last:start], inserted]
        changes.append(TextChange(start, end, inserted))
        spans.append((start + shift, start + shift + len(inserted)))
        shift += len(inserted) - (end - start)
        last = end
    pieces.append(base.text[last:])
    return Planned("".join(pieces), changes, spans)


def _hits(base: Normalized, old: str, params: EditParams, path: str, width: int) -> list[int]:
    hits = find_all(base.norm, old)
    if not hits:
        raise _no_match(base.norm, old, path, width)
    if len(hits) > 1 and not params.replace_all:
        lines = _line_numbers(base.norm, hits)
        shown = ", ".join(map(str, lines[:LISTED_LINES])) + (
            f" and {len(lines) - LISTED_LINES} more" if len(lines) > LISTED_LINES else ""
        )
        raise ReadkeeperError(
            "ambiguous_match",
            f"old_string matches {len(hits)} places in {path} (starting on lines {shown}). "
            "Add surrounding lines to old_string so it matches one place, or set "
            "replace_all=true to change every one.",
            file_path=path,
            lines=lines,
            matches=len(hits),
        )
    return hits


def _line_numbers(text: str, offsets: Sequence[int]) -> list[int]:
    numbers: list[int] = []
    line, last = 1, 0
    for offset in offsets:
        line += text.count("\n", last, offset)
        last = offset
        numbers.append(line)
    return numbers


def _no_match(text: str, old: str, path: str, width: int) -> ReadkeeperError:
    data: dict[str, object] = {"file_path": path}
    lines = old.split("\n")
    numbered = [ln for ln in lines if ln.strip()]
    if numbered and all(_LINE_NUMBER_PREFIX.match(ln) for ln in numbered):
        stripped = "\n".join(_LINE_NUMBER_PREFIX.sub("", ln) for ln in lines)
        hits = find_all(text, stripped)
        where = (
            f" Without them it matches once, at line {_line_numbers(text, hits)[0]}."
            if len(hits) == 1
            else f" Without them it matches {len(hits)} places."
            if hits
            else ""
        )
        data["line_number_prefixes"] = True
        return ReadkeeperError(
            "no_match",
            f"old_string was not found in {path}: its lines start with line numbers as "
            f"readkeeper/read shows them (e.g. {numbered[0].split(chr(9))[0].strip()!r} and a "
            f"tab), which are not in the file.{where} Drop the number and the tab from the "
            "start of each line of old_string and new_string.",
            **data,
        )
    miss = near_miss(text, old, width)
    if miss is None:
        return ReadkeeperError(
            "no_match",
            f"old_string was not found in {path}, and nothing in it comes close. Read the "
            "file again and copy old_string from what it says now.",
            **data,
        )
    first, last, excerpt, hint = miss
    data.update(closest_lines=[first, last], closest=excerpt)
    where = f"line {first}" if first == last else f"lines {first}-{last}"
    return ReadkeeperError(
        "no_match",
        f"old_string was not found in {path}. The closest text is at {where}{hint}:\n"
        f"{excerpt}\nCopy old_string exactly from the file (read those lines again with "
        f"offset={first}, limit={last - first + 1} if unsure).",
        **data,
    )


def near_miss(
    text: str, old: str, number_width: int = numbering.PADDED
) -> tuple[int, int, str, str] | None:
    """The lines of `text` closest to `old`: (first, last, numbered excerpt, hint)."""
    from rapidfuzz import fuzz, process  # deferred: only needed on a miss

    lines = text.split("\n")
    wanted = old.strip("\n").split("\n")[:NEAR_MISS_LINES]
    width = len(wanted)
    windows = ["\n".join(lines[i : i + width]) for i in range(min(len(lines), NEAR_MISS_WINDOWS))]
    scorer = fuzz.partial_ratio if width == 1 else fuzz.ratio
    best = process.extractOne("\n".join(wanted), windows, scorer=scorer, score_cutoff=60)
    if best is None:
        return None
    index = best[2]
    shown = lines[index : index + width]
    excerpt = "\n".join(numbering.numbered(map(_cut, shown[:8]), index + 1, number_width)) + (
        "\n" + numbering.gap("…", number_width) if len(shown) > 8 else ""
    )
    return index + 1, index + len(shown), excerpt, _difference(wanted, shown)


def _difference(wanted: list[str], found: list[str]) -> str:
    """A short hint at how `wanted` and `found` differ, when it is a common slip."""
    squeeze = re.compile(r"\s+")

    def flat(lines: list[str]) -> str:
        return squeeze.sub(" ", " ".join(lines)).strip()

    if flat(wanted) == flat(found):
        if any("\t" in ln[: len(ln) - len(ln.lstrip())] for ln in found) and not any(
            "\t" in ln for ln in wanted
        ):
            return " (it differs only in whitespace: the file indents with tabs)"
        return " (it differs only in whitespace: indentation or line breaks)"
    if flat(wanted).lower() == flat(found).lower():
        return " (it differs only in upper/lower case)"
    return ""


# --- disjoint merge ----------------------------------------------------------------------


def _merge_or_refuse(
    core: Readkeeper,
    record: ReadRecord,
    current: Normalized,
    old: str,
    params: EditParams,
    leased: bool,
) -> tuple[list[int], str]:
    """The hits to edit in the changed file, and the snapshot it was read as; or the
    `stale` error when the change cannot be proven disjoint from the edit."""
    path = record.path
    snapshot = core.snapshots.get(path, record.digest) if record.scope == "file" else None
    if snapshot is None:
        raise _stale(core, record, current.text, path, "edit", None)
    hits_or_why = disjoint_hits(snapshot, current, old, params.replace_all, leased)
    if isinstance(hits_or_why, str):
        raise _stale(core, record, current.text, path, "edit", hits_or_why)
    return hits_or_why, snapshot


def disjoint_hits(
    snapshot: str, current: Normalized, old: str, replace_all: bool, leased: bool
) -> list[int] | str:
    """Where to apply the edit in `current`, if the change from `snapshot` (what the
    agent read) to `current` provably does not touch it; else why not.

    Proof: with a line diff of the two, every match of `old` in `current` must lie in
    lines the diff leaves alone, and map there to a match in `snapshot`, one to one,
    covering all of them (or the single one without `replace_all`). Then editing
    `current` gives what the agent's edit of `snapshot` followed by the other change
    would: the two commute.
    """
    before = Normalized(snapshot)
    was = find_all(before.norm, old)
    now = find_all(current.norm, old)
    if not now:
        return "old_string is no longer in the file"
    if not was:
        return "old_string was not in the file you read either"
    if not replace_all and (len(was) > 1 or len(now) > 1):
        return "old_string matches more than one place"
    if len(was) != len(now):
        return f"the change made old_string match {len(now)} places instead of {len(was)}"
    hunks, a_lines, b_lines = text_hunks(snapshot, current.text)
    if not leased and any(i2 == a_lines or j2 == b_lines for _, i2, _, j2 in hunks):
        # Without a lease, a file still being written looks like this: refuse.
        return "the change reaches the end of the file (it may still be being written)"
    was_at = set(zip(_line_numbers(before.norm, was), _columns(before.norm, was), strict=True))
    # A match spans its first line and as many more as it has line breaks before its
    # last character (a final LF belongs to the line it ends).
    extra_lines = old[:-1].count("\n")
    for line, column in zip(
        _line_numbers(current.norm, now), _columns(current.norm, now), strict=True
    ):
        first = line - 1  # 0-based, as the hunks count
        last = first + extra_lines
        shift = 0
        for i1, i2, j1, j2 in hunks:
            touches = (j1 <= last and first < j2) if j1 < j2 else first < j1 <= last
            if touches:
                return (
                    f"the change touches lines {j1 + 1}-{max(j1 + 1, j2)}, which the edit "
                    f"spans (lines {first + 1}-{last + 1})"
                )
            if j2 <= first:
                shift += (i2 - i1) - (j2 - j1)
        if (line + shift, column) not in was_at:
            return f"the match at line {line} is not where it was when you read the file"
    return now


def _columns(text: str, offsets: Sequence[int]) -> list[int]:
    return [offset - (text.rfind("\n", 0, offset) + 1) for offset in offsets]


# --- staleness ---------------------------------------------------------------------------


def _stale(
    core: Readkeeper,
    record: ReadRecord,
    current: str,
    path: str,
    verb: str,
    why_not_merged: str | None,
) -> ReadkeeperError:
    snapshot = core.snapshots.get(path, record.digest) if record.scope == "file" else None
    data: dict[str, object] = {"file_path": path, "read_source": record.source}
    if snapshot is None:
        detail = (
            " (what it said then is no longer kept, so no diff can be shown)"
            if record.scope == "file"
            else " (you read part of it when it was too large to read whole)"
        )
        return ReadkeeperError(
            "stale",
            f"{path} changed since this session read it{detail}, so the {verb} could "
            f"overwrite someone's work. Read it again, then redo the {verb} on what it says "
            "now.",
            **data,
        )
    diff, truncated = bounded_diff(snapshot, current, path)
    data.update(diff=diff, diff_truncated=truncated)
    reason = f" The edit was not merged: {why_not_merged}." if why_not_merged else ""
    if verb == "write":
        reason = " A whole-file write is never merged with other changes."
    return ReadkeeperError(
        "stale",
        f"{path} changed since this session read it, so the {verb} could overwrite "
        f"someone's work.{reason} Read it again, then redo the {verb} on what it says now. "
        f"What changed:\n{diff}",
        **data,
    )


# --- results -----------------------------------------------------------------------------


def numbered_snippet(
    text: str, start: int, end: int, width: int = numbering.PADDED
) -> tuple[str, int]:
    """Numbered lines (as readkeeper/read shows them) around text[start:end]; and the
    number of the first line shown. Only the lines shown are looked at."""
    if not text:
        return "", 1
    last_char = max(start, end - 1)
    first = text.count("\n", 0, start)  # 0-based line of the change's start
    low, begin = first, text.rfind("\n", 0, start) + 1
    while low > first - SNIPPET_CONTEXT_LINES and begin > 0:
        begin = text.rfind("\n", 0, begin - 1) + 1
        low -= 1
    stop = text.find("\n", last_char)  # the end of the change's last line
    for _ in range(SNIPPET_CONTEXT_LINES):
        if stop == -1:
            break
        stop = text.find("\n", stop + 1)
    lines = (text[begin:] if stop == -1 else text[begin:stop]).split("\n")
    if stop == -1 and text.endswith("\n"):
        lines.pop()  # nothing after the final line break
    rows = numbering.numbered(map(_cut, lines), low + 1, width)
    hidden = len(rows) - SNIPPET_MAX_LINES
    if hidden > 0:
        half = SNIPPET_MAX_LINES // 2
        gap = numbering.gap(f"… ({hidden} lines not shown)", width)
        rows = [*rows[:half], gap, *rows[len(rows) - half :]]
    return "\n".join(rows), low + 1


def _cut(line: str) -> str:
    line = line.removesuffix("\r")
    if len(line) <= SNIPPET_LINE_CHARS:
        return line
    return line[:SNIPPET_LINE_CHARS] + f" … [line cut: {len(line) - SNIPPET_LINE_CHARS} more]"


def _count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def not_read(real: str, session: str) -> ReadkeeperError:
    """The `not_read` refusal of a change to a file the session has not read."""
    return ReadkeeperError(
        "not_read",
        f"This session has not read {real}, so an edit could overwrite what it has not "
        "seen. Read it (readkeeper/read), then make the edit.",
        file_path=real,
        session=session,
    )


def remember_change(
    core: Readkeeper,
    session: str,
    path: str,
    text: str,
    data: bytes | None,
    new_stat: os.stat_result | None,
    origin: Literal["edit", "write"],
    reported: Counter[Key],
    *,
    whole: bool = False,
) -> ReadStateInfo:
    """Record what the edit or write left as the session's read-state (see the module
    docstring for why it is partial), and keep it as a snapshot for later merges.

    `reported` is what the editor reported for the file before the change was made:
    taken then, because a report made while the change lands (before this runs) is
    the change's own, and must count as new. `whole`: the agent holds all of the new
    content (it wrote it, or edited content it held whole), so a re-read of it is a
    stub, or a diff once it changes (delta.py)."""
    in_buffer = data is None
    content_digest = digest(text.encode("utf-8", "surrogatepass") if data is None else data)
    core.read_states.put(
        session,
        ReadRecord(
            path=path,
            digest=content_digest,
            scope="file",
            mtime_ns=new_stat.st_mtime_ns if new_stat else 0,
            size=new_stat.st_size if new_stat else 0,
            offset=1,
            limit=None,
            partial=True,
            tokens=0,
            source="buffer" if in_buffer else "disk",
            origin=origin,
            whole=whole,
        ),
    )
    core.snapshots.put(path, content_digest, text)
    # Diagnostics reported since `reported` was taken are this edit's.
    core.diagnostics.set_baseline(session, path, reported)
    return ReadStateInfo(
        digest=content_digest,
        total_lines=_count_lines(text),
        source="buffer" if in_buffer else "disk",
        size=new_stat.st_size if new_stat else None,
        mtime_ns=new_stat.st_mtime_ns if new_stat else None,
        next_read="stub" if whole else "full",
    )


def _join(first: str | None, second: str) -> str:
    return f"{first} {second}" if first else second


# --- line endings ------------------------------------------------------------------------


def _eol_setting(settings: Settings) -> str:
    choice = settings.new_file_line_ending
    if choice == "crlf" or (choice == "native" and os.linesep == "\r\n"):
        return "\r\n"
    return "\n"


def _with_eol(text: str, eol: str) -> str:
    text = _lf(text)
    return text.replace("\n", eol) if eol != "\n" else text


def _dominant_eol(text: str, settings: Settings) -> str:
    """The line ending most lines of `text` use (the setting's, when it has none)."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    if crlf > lf:
        return "\r\n"
    if lf:
        return "\n"
    return _eol_setting(settings)


# --- editor buffers ----------------------------------------------------------------------


def _dirty_buffer(core: Readkeeper, path: str, disk_text: str, settings: Settings) -> Buffer | None:
    """The editor's buffer of `path` when it has unsaved changes we may edit; raises
    `dirty_buffer` when it has them and we may not."""
    buffer = core.buffers.get(path)
    if buffer is None or buffer.text == disk_text:
        return None  # a clean document: the file is written, and the editor reloads it
    if not buffer.edited:
        raise _not_reloaded(path, buffer.version)
    if settings.edit_open_buffers != "apply" or not isinstance(core.buffers, BufferEditor):
        raise _dirty(path, buffer.version)
    return buffer


def _apply_to_buffer(
    core: Readkeeper, path: str, buffer: Buffer, changes: Sequence[TextChange]
) -> None:
    editor = core.buffers
    assert isinstance(editor, BufferEditor)  # checked by _dirty_buffer
    why_not = editor.apply_edits(path, buffer.version, buffer.text, changes)
    if why_not is not None:
        raise ReadkeeperError(
            "dirty_buffer",
            f"{path} has unsaved changes in the editor, and the editor did not apply the "
            f"edit to them ({why_not}). Read it again (you will see the editor's text), "
            "then redo the edit.",
            file_path=path,
            buffer_version=buffer.version,
        )


def _whole_change(before: str, after: str) -> TextChange:
    """`before` -> `after` as one change, trimmed to the part that differs."""
    head, tail = common_ends(before, after)
    return TextChange(head, len(before) - tail, after[head : len(after) - tail])


def lsp_position(text: str, offset: int, encoding: str = "utf-16") -> tuple[int, int]:
    """The LSP (line, character) of `offset` in `text`: lines end at LF, CRLF or CR, and
    characters are counted in the negotiated position encoding's code units."""
    line_start = 0
    line = 0
    for match in _LSP_BREAK.finditer(text, 0, offset):
        line += 1
        line_start = match.end()
    column = text[line_start:offset]
    if encoding == "utf-8":
        return line, len(column.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return line, len(column)
    return line, len(column) + sum(1 for ch in column if ord(ch) > 0xFFFF)


_LSP_BREAK = re.compile(r"\r\n|\r|\n")


# --- errors ------------------------------------------------------------------------------


def _entry(where: Location) -> os.stat_result | None:
    """What is at the path now, or None; a symlink planted since it was resolved is
    refused (it could lead out of the workspace)."""
    try:
        entry = where.lstat()
    except Moved:
        raise moved(where.path) from None
    except OSError as exc:
        raise _os_error(where.path, exc) from None
    if entry is not None and stat.S_ISLNK(entry.st_mode):
        raise moved(where.path)
    return entry


@contextmanager
def hold_for_change(where: Location) -> Iterator[atomic.Held]:
    """`atomic.hold`, with readkeeper's errors: busy, and set-id files refused."""
    path = where.path
    try:
        with atomic.hold(where) as held:
            if held.mode & (stat.S_ISUID | stat.S_ISGID):
                raise _set_id(path, held.mode)
            yield held
    except atomic.Busy:
        raise ReadkeeperError(
            "stale",
            f"{path} is open for writing in another program right now (a save or a "
            "formatter in progress), so it may be changing. Read it again once that is "
            "done, then redo the change.",
            file_path=path,
            busy=True,
        ) from None
    except OSError as exc:
        raise _os_error(path, exc) from None


def _replace(held: atomic.Held, data: bytes, expected: bytes) -> os.stat_result | None:
    try:
        return atomic.replace(held, data, expected)
    except OSError as exc:
        raise _os_error(held.opened.path, exc) from None


def _set_id(path: str, mode: int) -> ReadkeeperError:
    # New bytes under a set-id program's name would run with its owner's rights, and
    # dropping the bits would break it: neither is an agent's call to make.
    return ReadkeeperError(
        "unsupported",
        f"{path} is a set-user-ID or set-group-ID program (mode {mode:04o}); readkeeper "
        "does not change privileged programs. Ask the user to change it by hand.",
        file_path=path,
        mode=f"{mode:04o}",
    )


def _dirty(path: str, version: int | None) -> ReadkeeperError:
    return ReadkeeperError(
        "dirty_buffer",
        f"{path} is open in the editor with unsaved changes, and readkeeper never writes a "
        "file underneath them. Ask the user to save or revert it, then read it again and "
        'redo the change (or the user can set readkeeper.edit_open_buffers to "apply" to '
        "let edits go into the editor's buffer).",
        file_path=path,
        buffer_version=version,
    )


def _not_reloaded(path: str, version: int | None) -> ReadkeeperError:
    return ReadkeeperError(
        "dirty_buffer",
        f"{path} changed on disk, and the editor's copy, which has no unsaved changes, "
        "has not been reloaded yet. readkeeper never writes underneath an open document "
        "that disagrees with the disk. Ask the user to reload it (or wait for the editor "
        "to), then read it again and redo the change.",
        file_path=path,
        buffer_version=version,
        unsaved=False,
    )


def _deleted(path: str, verb: str) -> ReadkeeperError:
    return ReadkeeperError(
        "stale",
        f"{path} was deleted or moved since this session read it. List its folder to find "
        "where it went, or create it again with readkeeper/write.",
        file_path=path,
        deleted=True,
        verb=verb,
    )


def _kept_changing(path: str) -> ReadkeeperError:
    return ReadkeeperError(
        "stale",
        f"{path} kept changing while readkeeper tried to commit (another program is "
        "rewriting it continuously). Read it again once it settles, then redo the change.",
        file_path=path,
    )


def _not_text(path: str, reason: str) -> ReadkeeperError:
    return ReadkeeperError(
        "binary",
        f"{path} is not a text file ({reason}), and readkeeper only edits text, exactly. "
        "Change it with a tool made for its format.",
        file_path=path,
    )


def _deepest_existing(folder: str) -> str:
    probe = folder
    while not os.path.lexists(probe) and probe != os.path.dirname(probe):
        probe = os.path.dirname(probe)
    return probe


def _os_error(path: str, exc: OSError) -> ReadkeeperError:
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        advice = "Ask the user to make it (and its folder) writable, then try again."
    elif exc.errno in (errno.ENOSPC, errno.EDQUOT):
        advice = "Ask the user to free disk space, then try again."
    else:
        advice = "Ask the user to check the file and its folder, then try again."
    return ReadkeeperError(
        "unsupported",
        f"Cannot write {path}: {exc.strerror or exc}. Nothing was changed. {advice}",
        file_path=path,
        errno=exc.errno,
    )
