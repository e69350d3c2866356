"""`readkeeper/patch`: several replacements in one file, applied in order, all or none,
or only previewed (`dry_run`) as a unified diff.

Each `old_string` must occur exactly once in the text as the replacements before it
left it (with CRLF seen as LF, as edits match); one that is missing or occurs more than
once refuses the whole patch before anything is written, naming which one and why.
The replacements are then folded into one edit, the lines from the first changed to
the last, and committed by `edits.edit`, with every rule of an edit: the session must
have seen those lines (by a read or a search), a file changed since is `stale` (or
merged when the change is disjoint), unsaved editor changes are never written under,
and the write is one atomic replacement. So the file takes all the replacements or
none. A dry run computes the same diff from the file (or the editor's buffer) as it is
now, writes nothing and records nothing.
"""

from __future__ import annotations

import stat
from typing import Any, Protocol

from .. import quoting
from ..errors import ReadkeeperError
from ..files.fileio import is_directory
from ..hints import call
from ..protocol import EditParams, unstructure
from ..protocol.files import PatchParams
from ..read.diffs import bounded_diff
from .commit import entry, resolve_for_change
from .edits import edit
from .endings import lf
from .matching import find_all, line_numbers, no_match
from .notebook_seen import check_text_change
from .services import EditServices

MAX_REPLACEMENTS = 100


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
    given, where = resolve_for_change(core.workspace, params.file_path, "edit")
    real = where.path
    found = entry(where)
    if found is None:
        raise core.workspace.not_found(given)
    if stat.S_ISDIR(found.st_mode):
        raise is_directory(real, to_write=True)
    before = _current_text(core, real)
    after = _replaced(before, params, real, core.settings.number_width)
    diff = _labelled(bounded_diff(before, after, real)[0], real)
    result: dict[str, Any] = {"file_path": real, "diff": diff, "replacements": len(params.edits)}
    if params.dry_run:
        result["dry_run"] = True
        record = core.read_states.get(params.session, real)
        if record is None:
            read = call("read", file_path=real)
            result["note"] = (
                "Nothing was written. This session has not read the file, so the same "
                f"call without dry_run will be refused until it does ({read})."
            )
            return result
        result["note"] = "Nothing was written (dry run)."
        try:
            check_text_change(record, real, "edit")
        except ReadkeeperError as exc:
            result["note"] = (
                f"Nothing was written. The same call without dry_run will be refused: {exc.message}"
            )
        return result
    old, new = _folded(before, after)
    try:
        done = edit(
            core, EditParams(file_path=real, old_string=old, new_string=new, session=params.session)
        )
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


def _labelled(diff: str, real: str) -> str:
    """The diff with its file lines saying before and after (not "as you read it"), the
    name quoted when odd as in every diff (quoting.name): a name holding a line break
    would otherwise add lines to the diff."""
    lines = diff.split("\n")
    if len(lines) > 2 and lines[0].startswith("--- ") and lines[1].startswith("+++ "):
        shown = quoting.name(real)
        lines[:2] = [f"--- {shown} (before)", f"+++ {shown} (after)"]
    return "\n".join(lines)


def _current_text(core: PatchServices, real: str) -> str:
    """The file's text as an edit would see it: the editor's buffer when it holds
    unsaved changes, else the disk (an edit reads it again when it commits)."""
    buffer = core.buffers.get(real)
    if buffer is not None and buffer.edited:
        return lf(buffer.text)
    text = core.disk_text(real)
    if text is None:
        raise ReadkeeperError(
            "unsupported",
            f"{quoting.name(real)} "
            f"cannot be patched: it is not a text file readkeeper can edit exactly, "
            f"or it is larger than the read cap. See what it is ({call('stat', path=real)}).",
            file_path=real,
        )
    return lf(text)


def _replaced(text: str, params: PatchParams, real: str, width: int) -> str:
    """`text` with every replacement applied in order, or the refusal of the first that
    cannot be (nothing is written then)."""
    current = text
    for index, one in enumerate(params.edits):
        old = lf(one.old_string)
        new = lf(one.new_string)
        where = f"edits[{index}]"
        if not old:
            raise ReadkeeperError(
                "bad_params",
                f"{where}.old_string is empty; put the lines to replace in it (to insert, "
                "a neighbouring line, repeated in new_string with the new text). Nothing "
                "was written.",
                field="edits",
                index=index,
            )
        hits = find_all(current, old)
        earlier = " as the replacements before it left it" if index else ""
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
