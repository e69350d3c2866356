"""`readkeeper/edit` with `files`: edits of several files in one call, landing in every
file or in none, taken back by one `readkeeper/undo`.

Why a `files` list on `readkeeper/edit` (and not a new method): DESIGN.md lets the
contract grow fields, never rename; an agent already knows the edit call, and each
entry is exactly the body of a one-file edit (old_string/new_string, `edits` or
`anchor_edits`), checked and applied by the same code (edits.py, batch.py), so a file
of a multi-file edit obeys every rule a single edit does.

How all-or-none holds:
1. The shape is checked first: at most `MAX_FILES` entries, each with one form, no file
   named twice (two entries for one real path would make their order decide the
   result: `bad_params`).
2. Every file is checked before any is written: inside the workspace, still there, read
   by this session, no unsaved changes in the editor (a multi-file edit writes disk
   only: a buffer the editor holds cannot be put back by readkeeper).
3. Then each file is edited in turn, atomically, through the one-file commit path
   (its own checks again: stale, matching, anchors). What each commit wrote is noted
   (journal.py). When a later file fails, for any reason (a refusal, a full disk, a
   folder the server may not write, a file swapped in the meantime), the files already
   written go back to their bytes before (undo.put_back: each only while it still holds
   what this call wrote), their read-state goes back to what it was, and the failure is
   reported with its index: nothing is left changed.
"""

from __future__ import annotations

from typing import Any, Protocol

from .. import quoting
from ..errors import ReadkeeperError
from ..protocol import EditBatchParams, EditFilesParams, EditParams, FileEdit, unstructure
from ..state.readstate import ReadRecord
from . import journal
from .batch import BatchServices, edit_batch
from .commit import entry, read_record, resolve_for_change, unread
from .edits import edit
from .matching import MAX_DATA_LINES
from .notebook_seen import check_text_change
from .refusals import deleted, not_read
from .undo import put_back, squashed

MAX_FILES = 50  # files in one multi-file edit


class MultiServices(BatchServices, Protocol):
    """The core as a multi-file edit sees it: a batch's services, and the disk's text."""

    def disk_text(self, real_path: str) -> str | None:
        """The file's text on disk (None when it cannot be read as text)."""
        ...


def edit_files(core: MultiServices, params: EditFilesParams) -> dict[str, Any]:
    """Apply each file's edits, all files or none (see the module docstring)."""
    calls = [_one_call(item, index, params.session) for index, item in enumerate(_listed(params))]
    paths: dict[str, int] = {}
    for index, one in enumerate(calls):
        _, where = resolve_for_change(core.workspace, one.file_path, "edit")
        if where.path in paths:
            raise ReadkeeperError(
                "bad_params",
                f"files[{paths[where.path]}] and files[{index}] both name "
                f"{quoting.name(where.path)}. Put all of that file's edits in one entry "
                "(its edits or its anchor_edits), then send the call again. Nothing "
                "was written.",
                field="files",
                files=[paths[where.path], index],
            )
        paths[where.path] = index
        _check_ahead(core, params.session, where.path, index)
    before: dict[str, ReadRecord | None] = {
        path: core.read_states.get(params.session, path) for path in paths
    }
    results: list[Any] = []
    for index, one in enumerate(calls):
        try:
            result = edit(core, one) if isinstance(one, EditParams) else edit_batch(core, one)
        except BaseException as exc:
            left = _roll_back(core, params.session, before)
            if not isinstance(exc, ReadkeeperError):
                raise
            said = (
                "Nothing was written: the files before it were put back as they were."
                if left is None
                else f"The files before it could not all be put back: {left}"
            )
            raise ReadkeeperError(
                exc.kind,
                f"files[{index}] ({quoting.name(one.file_path)}): {exc.message} {said}",
                **{**exc.data, "files_index": index, "put_back": left is None},
            ) from None
        results.append(unstructure(result))
    total = sum(r["replacements"] for r in results)
    # The files share one answer's lines listed (matching.MAX_DATA_LINES): 50 files of
    # 1,000 each made 381,269 characters of structured content (round 39).
    share = max(1, MAX_DATA_LINES // len(results))
    for one in results:
        one["lines"] = one["lines"][:share]
    return {
        "file_path": results[0]["file_path"],
        "replacements": total,
        "files": results,
        "note": f"All {len(results)} files were edited ({total} replacements); "
        "readkeeper/undo takes them all back.",
    }


def _listed(params: EditFilesParams) -> list[FileEdit]:
    if not params.files:
        raise ReadkeeperError(
            "bad_params",
            'files is empty. Give each file with its edits, e.g. [{"file_path": "a.py", '
            '"old_string": "...", "new_string": "..."}].',
            field="files",
        )
    if len(params.files) > MAX_FILES:
        raise ReadkeeperError(
            "bad_params",
            f"files names {len(params.files):,} files; at most {MAX_FILES} in one call. "
            "Split them into calls (each all or none).",
            field="files",
        )
    return params.files


def _one_call(item: FileEdit, index: int, session: str) -> EditParams | EditBatchParams:
    """The one-file edit an entry of `files` stands for."""
    old, new = item.old_string, item.new_string
    plain = old is not None or new is not None
    forms = [
        name
        for name, present in (
            ("old_string/new_string", plain),
            ("edits", item.edits is not None),
            ("anchor_edits", item.anchor_edits is not None),
        )
        if present
    ]
    if len(forms) != 1 or (plain and (old is None or new is None)):
        raise ReadkeeperError(
            "bad_params",
            f"files[{index}] must give exactly one of old_string with new_string, edits, "
            f"or anchor_edits (it gives {', '.join(forms) or 'none'}). Send each file with "
            "one form. Nothing was written.",
            field=f"files[{index}]",
        )
    if old is not None and new is not None:
        return EditParams(item.file_path, old, new, item.replace_all, session)
    return EditBatchParams(item.file_path, item.edits, item.anchor_edits, session)


def _check_ahead(core: MultiServices, session: str, real: str, index: int) -> None:
    """What can be known of a file before any is written: there, read, no unsaved
    changes in the editor."""
    try:
        record = read_record(core.read_states, core.workspace, session, real, "edit")
        where = core.workspace.locate(real, grants=False)
        if where is None or entry(where) is None:
            if record is not None:
                raise deleted(real, "edit")
            raise core.workspace.not_found(real)
        if record is None:
            raise unread(where, core.settings, not_read(real, session), core.tokens)
        check_text_change(record, real, "edit")
        buffer = core.buffers.get(real)
        if buffer is not None and buffer.text != core.disk_text(real):
            raise ReadkeeperError(
                "dirty_buffer",
                f"{quoting.name(real)} has unsaved changes in the editor, and a "
                "multi-file edit writes only to disk (it could not take a buffer "
                "back). Ask the user to save it, or edit that file in its own call.",
                file_path=real,
            )
    except ReadkeeperError as exc:
        raise ReadkeeperError(
            exc.kind,
            f"files[{index}]: {exc.message} Nothing was written.",
            **{**exc.data, "files_index": index},
        ) from None


def _roll_back(
    core: MultiServices, session: str, before: dict[str, ReadRecord | None]
) -> str | None:
    """Put back the files this call wrote, and the session's read-state of them; None,
    or why they could not be (one changed again meanwhile: it is not overwritten)."""
    written = squashed(journal.noted())
    if not written:
        return None
    try:
        put_back(core, written)
    except ReadkeeperError as exc:
        return exc.message
    for one in written:
        record = before.get(one.path)
        if record is not None:
            core.read_states.put(session, record)
        core.shown_lines.forget(session, [one.path])
    return None


__all__ = ["MAX_FILES", "MultiServices", "edit_files"]
