"""`readkeeper/patch`: several replacements in one file, applied in order, all or none,
or only previewed (`dry_run`) as a unified diff.

Each `old_string` must occur exactly once in the text as the replacements before it
left it (with CRLF seen as LF, as edits match), starting from the file as the session
last saw it (its snapshot, when another program changed the file since); one that is
missing or occurs more than once refuses the whole patch before anything is written,
naming which one and why. The replacements are then folded into one edit, the lines
from the first changed to the last, and committed by `edits.edit`, with every rule of
an edit: the session must have seen those lines (by a read or a search), a file
changed since is `stale` (or merged when the change is disjoint), unsaved editor
changes are never written under, and the write is one atomic replacement. So the file
takes all the replacements or none. A dry run makes every check the real call makes
(edits.preview) and writes and records nothing: the diff of the file (or the editor's
buffer) as the call would leave it, or, when the real call would be refused, no diff
but the refusal's kind and why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .. import quoting
from ..errors import ReadkeeperError
from ..files.fileio import moved
from ..files.paths import Location
from ..hints import call
from ..protocol import EditParams, unstructure
from ..protocol.files import PatchParams
from ..read.diffs import bounded_diff
from ..state.readstate import ReadRecord
from .commit import record_to_edit, resolve_for_change, unread
from .edits import edit, preview
from .endings import lf
from .matching import Normalized, as_shown, find_all, line_numbers, no_match
from .merge import disjoint_hits
from .refusals import stale
from .services import EditServices

MAX_REPLACEMENTS = 100
_BOM = "\ufeff"


class PatchServices(EditServices, Protocol):
    """What a patch needs: an edit's services, and the text as it is now."""

    def disk_text(self, real_path: str) -> str | None:
        """The file's text on disk (`Readkeeper.disk_text`), or None."""
        ...


def patch(core: PatchServices, params: PatchParams) -> dict[str, Any]:
    """Serve `readkeeper/patch` by the rules above."""
    if not params.edits or len(params.edits) > MAX_REPLACEMENTS:
        raise ReadkeeperError(
            "bad_params",
            f"edits must hold 1 to {MAX_REPLACEMENTS} replacements; split a longer list.",
            field="edits",
        )
    _check_edits(params)
    given, where = resolve_for_change(core.workspace, params.file_path, "edit")
    real = where.path
    width = core.settings.number_width
    # Gone, a folder, never read (or not a file readkeeper changes, set-id...): refused
    # before any text is matched, so no answer about the text tells of lines never read.
    try:
        record_to_edit(core, params.session, where, given)
    except ReadkeeperError as exc:
        if not params.dry_run:
            raise
        return _refused({"file_path": real, "replacements": len(params.edits)}, exc)
    before = _current_text(core, where)
    record = core.read_states.get(params.session, real)
    seen = _seen_text(core, record, before)
    # The replacements name text as the session saw it: folded there, so the edit is
    # merged over another program's change only where it provably leaves them alone.
    try:
        after_seen = _replaced(seen if seen is not None else before, params, real, width)
    except ReadkeeperError as exc:
        if seen is None or record is None or exc.kind not in ("no_match", "ambiguous_match"):
            raise
        # Not as the session read it, though the file changed since: stale, with the change.
        index = exc.data.get("index", 0)
        why = f"edits[{index}].old_string does not occur once in the file as you read it"
        raise stale(core, record, before, real, "edit", why) from None
    old, new = _folded(seen, after_seen) if seen is not None else _folded(before, after_seen)
    after = after_seen if seen is None else _merged_text(before, old, new)

    def checks() -> None:
        if seen is not None and record is not None:
            _check_disjoint(core, record, seen, before, old, real)

    diff = _labelled(bounded_diff(before, after, real)[0], real)
    result: dict[str, Any] = {"file_path": real, "diff": diff, "replacements": len(params.edits)}
    single = EditParams(file_path=real, old_string=old, new_string=new, session=params.session)
    if params.dry_run:
        return _dry_run(core, single, result, checks)
    checks()
    try:
        done = edit(core, single, exact=True)
    except ReadkeeperError as exc:
        if exc.kind in ("no_match", "ambiguous_match"):
            raise ReadkeeperError(
                "stale",
                f"{quoting.name(real)} "
                f"changed while the replacements were being applied, so none was. "
                f"Read it again ({call('read', file_path=real)}), then redo them.",
                file_path=real,
            ) from None
        raise
    result["edit"] = unstructure(done)
    result["applied_to"] = done.applied_to
    if done.note:
        result["note"] = done.note
    return result


def _dry_run(
    core: PatchServices, single: EditParams, result: dict[str, Any], checks: Callable[[], None]
) -> dict[str, Any]:
    """The dry run: every check the real call makes (edits.preview), nothing written.
    A call that would be refused says so, why, and shows no diff: never a clean preview
    of a change the real call would not make."""
    result["dry_run"] = True
    try:
        checks()
        unseen = preview(core, single, exact=True)
    except ReadkeeperError as exc:
        return _refused(result, exc)
    result["note"] = "Nothing was written (dry run)."
    if unseen is not None:
        result["external_change"] = unstructure(unseen)
        result["note"] = (
            f"Nothing was written (dry run). {quoting.name(single.file_path)} changed since "
            "you read it (the change, which you have not seen, comes with this answer); the "
            "same call without dry_run will be merged over it, as it leaves your "
            "replacements alone."
        )
    return result


def _refused(result: dict[str, Any], exc: ReadkeeperError) -> dict[str, Any]:
    """The dry run of a call that will be refused: no diff, the refusal's kind and why."""
    result.update(dry_run=True, diff="", refused=exc.kind)
    result["note"] = (
        "Nothing was written (dry run). The same call without dry_run will be refused "
        f"({exc.kind}): {exc.message}"
    )
    return result


def _seen_text(core: PatchServices, record: ReadRecord | None, current: str) -> str | None:
    """The file as the session last saw it whole, when that differs from `current` and
    is still kept; else None (the replacements then name the current text)."""
    if record is None or record.scope != "file":
        return None
    kept = core.snapshots.get(record.path, record.digest)
    if kept is None:
        return None
    # A BOM is the file's encoding, not its text (the current text may come without it).
    seen = lf(kept)
    if not current.startswith(_BOM) and seen.startswith(_BOM):
        seen = seen[1:]
    return None if seen == current else seen


def _merged_text(current: str, old: str, new: str) -> str:
    """`current` with the folded replacement made, where it occurs once (else as it is:
    the edit is refused, and the dry run says so)."""
    hits = find_all(current, old)
    if len(hits) != 1:
        return current
    return current[: hits[0]] + new + current[hits[0] + len(old) :]


def _check_disjoint(
    core: PatchServices, record: ReadRecord, seen: str, current: str, old: str, real: str
) -> None:
    """Refuse as `stale`, with a reason true of the replacements (not of the whole lines
    they were folded into), a patch whose lines another program changed since."""
    why = disjoint_hits(seen, Normalized(current), old, False, leased=True)
    if not isinstance(why, str):
        return
    first = seen.count("\n", 0, seen.find(old)) + 1
    last = first + old[:-1].count("\n")
    lines = f"line {first}" if first == last else f"lines {first}-{last}"
    if "no longer in the file" in why:
        why = f"another program changed {lines} as you read it, which your replacements change"
    elif "more than one place" in why:
        why = f"{lines} as you read it, which your replacements change, now occurs more than once"
    raise stale(core, record, current, real, "edit", why)


def _labelled(diff: str, real: str) -> str:
    """The diff with its file lines saying before and after (not "as you read it"), the
    name quoted when odd as in every diff (quoting.name): a name holding a line break
    would otherwise add lines to the diff."""
    lines = diff.split("\n")
    if len(lines) > 2 and lines[0].startswith("--- ") and lines[1].startswith("+++ "):
        shown = quoting.name(real)
        lines[:2] = [f"--- {shown} (before)", f"+++ {shown} (after)"]
    return "\n".join(lines)


def _current_text(core: PatchServices, where: Location) -> str:
    """The file's text as an edit would see it: the editor's buffer when it holds
    unsaved changes, else the disk (an edit reads it again when it commits); a file
    that is not text readkeeper edits is refused saying why (commit.unread)."""
    real = where.path
    buffer = core.buffers.get(real)
    if buffer is not None and buffer.edited:
        return lf(buffer.text)
    text = core.disk_text(real)
    if text is None:
        refusal = ReadkeeperError(
            "unsupported",
            f"{quoting.name(real)} cannot be patched: it is not a text file readkeeper "
            "can edit exactly, or it is larger than the read cap. See what it is "
            f"({call('stat', path=real)}).",
            file_path=real,
        )
        found = unread(where, core.settings, refusal, core.tokens)
        # A file that reads as text a moment later, or could not be looked at again (a
        # folder on its way swapped for a link), changed as it was read: not "not text"
        # (round 48: the drop-in's edit_file said so of a 7-byte text file in a race).
        raise moved(real) if found is refusal else found
    return lf(text)


def _check_edits(params: PatchParams) -> None:
    """Refuse a replacement no file could take (an empty old_string), before the file."""
    for index, one in enumerate(params.edits):
        if not one.old_string:
            raise ReadkeeperError(
                "bad_params",
                f"edits[{index}].old_string is empty; put the lines to replace in it (to "
                "insert, a neighbouring line, repeated in new_string with the new text). "
                "Nothing was written.",
                field="edits",
                index=index,
            )


def _replaced(text: str, params: PatchParams, real: str, width: int) -> str:
    """`text` with every replacement applied in order, or the refusal of the first that
    cannot be (nothing is written then)."""
    current = text
    for index, one in enumerate(params.edits):
        old = lf(one.old_string)
        new = lf(one.new_string)
        where = f"edits[{index}]"
        earlier = " as the replacements before it left it" if index else ""
        try:  # copied from a view: the file's text it stands for, if one
            old, new, _ = as_shown(current, old, new, real)
        except ReadkeeperError as exc:
            raise ReadkeeperError(
                exc.kind, f"{where}: {exc.message} Nothing was written.", **exc.data, index=index
            ) from None
        hits = find_all(current, old)
        if not hits:
            missing = no_match(current, old, real, width)
            raise ReadkeeperError(
                "no_match",
                f"{where}: {missing.message} (Matched against the text{earlier}.) Nothing "
                "was written: the replacements apply all or none.",
                **{**missing.data, "index": index},
            )
        if len(hits) > 1:
            lines = line_numbers(current, hits)
            raise ReadkeeperError(
                "ambiguous_match",
                f"{where}: old_string occurs {len(hits)} times in {quoting.name(real)}{earlier} "
                f"(lines "
                f"{', '.join(map(str, lines[:20]))}). Add lines around it until it occurs "
                "once. Nothing was written: the replacements apply all or none.",
                file_path=real,
                index=index,
                lines=lines,
            )
        current = current[: hits[0]] + new + current[hits[0] + len(old) :]
    if current == text:
        raise ReadkeeperError(
            "no_change",
            f"The replacements leave {quoting.name(real)} "
            f"as it is; nothing was written. Put the text you "
            "want in new_string.",
            file_path=real,
        )
    return current


def _folded(before: str, after: str) -> tuple[str, str]:
    """One replacement with the effect of them all: the whole lines from the first
    changed one to the last, widened a line at a time until they occur once."""
    start = 0
    most = min(len(before), len(after))
    while start < most and before[start] == after[start]:
        start += 1
    end = 0
    while end < most - start and before[-1 - end] == after[-1 - end]:
        end += 1
    start = before.rfind("\n", 0, start) + 1
    stop = len(before) - end
    stop = len(before) if before.find("\n", stop) == -1 else before.find("\n", stop) + 1
    tail = len(before) - stop
    while True:
        old = before[start:stop]
        if old and len(find_all(before, old)) == 1:
            return old, after[start : len(after) - tail]
        if start == 0 and stop == len(before):
            return before, after  # the whole text occurs once in itself
        if start > 0:
            start = before.rfind("\n", 0, start - 1) + 1
        if stop < len(before):
            nxt = before.find("\n", stop)
            stop = len(before) if nxt == -1 else nxt + 1
            tail = len(before) - stop
