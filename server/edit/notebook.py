"""`readkeeper/edit` on a notebook cell: replace its source, insert a cell after it, or
delete it, by `cell_id` (as `readkeeper/read` of the notebook names cells).

The rules are those of text edits (edits.py), and one more: the session must have seen
the cell (notebook_seen.py), not only read some of the notebook. If the notebook changed
since, the edit is refused with `stale` and a bounded diff, unless the change provably
leaves the target alone (the read's snapshot shows the target cell, and every cell
before it when cells are named by position, exactly as they are now), in which case it
is applied to the notebook as it is now and the result says so. The new notebook is
validated with nbformat, then written atomically (atomic.py) only if the file still
holds the bytes it was made from, under the file's lock and retried when the file
changes under it, as text edits are (commit.py).

Only the edit's own spans of the text change (notebook_splice.py): every other byte,
a BOM, odd numbers, duplicated keys and any layout included, is the file's own, and what
is new follows the layout around it, so a cell edit is a small diff in version control.
Cells are named as the read names them (notebook_ids.py); a name two cells share is
`ambiguous_match`. Outputs of a code cell whose source is replaced are kept, as Jupyter
keeps them until the cell runs again; the result's note says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import quoting
from ..errors import ReadkeeperError, is_diff, library_detail, library_words, shown_name
from ..files.encodings import UTF8
from ..files.fileio import digest, read_at_most
from ..hints import call
from ..protocol import (
    NotebookEditParams,
    NotebookEditResult,
)
from ..read.diffs import bounded_diff, external_change
from ..read.readers.notebook_ids import by_position, cell_names, claimants, positional
from ..read.readers.notebook_parse import parse, read_as_text
from ..state.readstate import ReadRecord
from . import notebook_splice
from .commit import (
    committed,
    encode,
    entry,
    hold_for_change,
    read_record,
    replace,
    resolve_for_change,
    unread,
)
from .notebook_seen import Seen, held_after, seen_for
from .refusals import not_read
from .remember import Written, remember_change
from .services import EditServices

if TYPE_CHECKING:
    from ..files.paths import Location


def edit_cell(core: EditServices, params: NotebookEditParams) -> NotebookEditResult:
    """`readkeeper/edit` of a notebook cell, by the rules above."""
    _check(params)
    candidate, where = resolve_for_change(core.workspace, params.file_path, "edit")
    return committed(where.path, lambda: _edit_once(core, params, candidate, where))


def _check(params: NotebookEditParams) -> None:
    if params.edit_mode != "delete" and params.new_source is None:
        raise ReadkeeperError(
            "bad_params",
            f'edit_mode "{params.edit_mode}" needs new_source, the cell\'s new text.',
            field="new_source",
        )
    if params.new_source is not None:  # a lone surrogate: not even an escape may hold it
        encode(params.new_source, UTF8, params.file_path, "new_source")
    if params.edit_mode != "insert" and not params.cell_id:
        raise ReadkeeperError(
            "bad_params",
            f'edit_mode "{params.edit_mode}" needs cell_id, as a read of the notebook names '
            f"the cells ({call('read', file_path=params.file_path)}).",
            field="cell_id",
        )


def _edit_once(
    core: EditServices, params: NotebookEditParams, candidate: str, where: Location
) -> NotebookEditResult | None:
    real = where.path
    reported = core.diagnostics.reported(real)  # before the change: see remember_change
    if entry(where) is None:  # a FIFO or device is refused here, before the read-state
        raise core.workspace.not_found(candidate)
    if not any(p.lower().endswith(".ipynb") for p in (candidate, real)):
        # A notebook is what a read reads as one (readers.sniff: an .ipynb name).
        raise ReadkeeperError(
            "bad_params",
            f"cell_id applies to notebooks (.ipynb), and {quoting.name(real)} is none: "
            "edit its text with old_string and new_string instead "
            f"({call('edit', file_path=real, old_string='...', new_string='...')}).",
            field="cell_id",
        )
    record = read_record(core.read_states, core.workspace, params.session, real, "edit")
    if record is None:
        # Bytes (a NUL) or a path no read shows get their refusal, not the read that is
        # refused too (attack rounds 27, 37); any other waits for the read's.
        refused = unread(where, core.settings, not_read(real, params.session), core.tokens)
        shown = refused.kind not in ("binary", "token_limit")
        raise not_read(real, params.session) if shown else refused
    settings = core.settings
    # What the system refuses inside the hold is hold_for_change's error, as for text.
    with hold_for_change(where) as held:
        data = read_at_most(held.opened.fd, settings.max_document_bytes + 1)
        if len(data) > settings.max_document_bytes:
            raise ReadkeeperError(
                "too_large",
                f"{real} is over the {settings.max_document_bytes:,}-byte limit for "
                "notebooks (max_document_bytes).",
                file_path=real,
            )
        buffer = core.buffers.get(real)
        if buffer is not None and buffer.text.encode("utf-8", "surrogatepass") != data:
            raise ReadkeeperError(
                "dirty_buffer",
                f"{real} is open in the editor with unsaved changes, and readkeeper never "
                "writes a notebook underneath them. Ask the user to save or revert it, "
                "then read it again and redo the edit.",
                file_path=real,
                buffer_version=buffer.version,
            )
        notebook = parse(data, real)  # a clear error for what is not a notebook
        text = data.decode("utf-8-sig")
        merged_from = None
        if record.scope != "file" or record.digest != digest(data):
            merged_from = _disjoint_or_refuse(core, record, params, text, real)
        seen = _seen(record, params, notebook, merged_from, real)
        old_cells = list(notebook.get("cells") or [])
        index, note = _apply(notebook, params, real)
        new_text = _spliced(text, params, index, old_cells, notebook, real)
        _validate(notebook, lambda: parse(data, real), real)
        bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
        new_data = bom + encode(new_text, UTF8, real, "new_source")
        cap = settings.max_document_bytes, "max_document_bytes"  # as its read was held
        new_stat = replace(held, new_data, data, cap)
        if new_stat is None:
            return None  # changed under us: look again

    # Like a text edit: the agent knows this content but never read it whole in this
    # form, so the record is partial and the next read is a full one.
    cells = notebook["cells"]
    document = held_after(seen, params.edit_mode, index, len(cells), merged_from is not None)
    state = remember_change(
        core,
        params.session,
        real,
        new_text,
        Written(new_data, new_stat),
        "edit",
        reported,
        document=document,
        before=text if merged_from is not None else None,
        merged_over=merged_from is not None,
        known=merged_from,
    )
    external = None
    if merged_from is not None:
        external = external_change(merged_from, text, real)
        note = (
            f"{quoting.name(real)} had changed since you read it (the change, which you have "
            "not seen, comes with this answer), but not in the cell you edited, so the edit "
            "was applied to the current notebook. " + (note or "")
        ).strip()
    kind = cells[index]["cell_type"] if params.edit_mode != "delete" else None
    names = cell_names(cells)
    return NotebookEditResult(
        file_path=real,
        edit_mode=params.edit_mode,
        cell_id=names[index] if params.edit_mode != "delete" else str(params.cell_id),
        index=index,
        total_cells=len(cells),
        read_state=state,
        cell_type=kind,
        merged=merged_from is not None,
        external_change=external,
        note=note,
    )


# --- the change -------------------------------------------------------------------------


def _apply(
    notebook: dict[str, Any], params: NotebookEditParams, path: str
) -> tuple[int, str | None]:
    """Change `notebook` in place; returns the index of the cell changed, inserted or
    deleted, and a note."""
    cells = _cells(notebook, path)
    has_ids = notebook.get("nbformat_minor", 0) >= 5
    index = find(cells, params.cell_id, path) if params.cell_id else -1
    if params.edit_mode == "delete":
        cells.pop(index)
        return index, None
    assert params.new_source is not None  # checked in _check
    if params.edit_mode == "insert":
        cell = _new_cell(params.cell_type or "code", params.new_source, has_ids, cells)
        cells.insert(index + 1, cell)
        return index + 1, None
    cell = cells[index]
    note = None
    if params.cell_type is not None and params.cell_type != cell.get("cell_type"):
        _retype(cell, params.cell_type)
    cell["source"] = _like(cell.get("source"), params.new_source)
    if cell.get("cell_type") == "code" and cell.get("outputs"):
        note = "The cell's outputs are from its previous source; they stay until it runs again."
    return index, note


def _cells(notebook: dict[str, Any], path: str) -> list[dict[str, Any]]:
    if notebook.get("nbformat") != 4:  # a version past 4 no Jupyter opens: its text can
        version = str(notebook.get("nbformat"))[:20]  # be edited (round 28, B3)
        raise ReadkeeperError(
            "unsupported",
            f"{quoting.name(path)} is nbformat {version}; readkeeper edits nbformat 4 "
            "notebooks' cells only. Change its lines as text instead (old_string/new_string "
            "on its JSON, e.g. its version), or ask the user to save it in a current Jupyter.",
            file_path=path,
        )
    cells = notebook.get("cells")
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        raise ReadkeeperError(
            "corrupt",
            f'{quoting.name(path)} has no "cells" list of cells, so no cell can be edited. '
            f"{read_as_text(path)} Or ask the user to re-save it from Jupyter.",
            file_path=path,
        )
    return cells


def find(cells: Sequence[Mapping[str, Any]], wanted: str | None, path: str) -> int:
    """The index of the cell `wanted` names (notebook_ids.py); `ambiguous_match` when
    it names more than one, `no_match` when none."""
    names = cell_names(cells)
    if wanted in names:
        return names.index(str(wanted))
    at = by_position(wanted or "", len(cells))
    if at is not None:
        return at
    shared = claimants(cells, wanted or "")
    if len(shared) > 1:
        choices = " or ".join(f'"@{i}"' for i in shared[:10])
        raise ReadkeeperError(
            "ambiguous_match",
            f"{len(shared)} cells of {quoting.name(path)} are named {shown_name(wanted or '')} "
            f"(at indexes {', '.join(map(str, shared[:10]))}), so the edit could change the "
            "wrong one; a read names each of them by its position instead. Name the one you "
            f"mean by its index: cell_id {choices}.",
            file_path=path,
            cell_indexes=shared[:200],
        )
    shown = ", ".join(map(shown_name, names[:20])) + (" …" if len(names) > 20 else "")
    raise ReadkeeperError(
        "no_match",
        f"{quoting.name(path)} has no cell with cell_id {shown_name(wanted or '')}. Its "
        f"cells are: {shown or 'none'}. "
        "Read the notebook again to see the current ids.",
        file_path=path,
        cell_ids=names[:200],
    )


def _seen(
    record: ReadRecord,
    params: NotebookEditParams,
    notebook: dict[str, Any],
    merged_from: str | None,
    path: str,
) -> Seen:
    """The run of cells the session saw holding the edit's target (notebook_seen.py),
    in the content it saw: the notebook now, or the snapshot of its read."""
    seen = json.loads(merged_from) if merged_from is not None else notebook
    cells = _cells(seen, path)
    index = find(cells, params.cell_id, path) if params.cell_id else -1
    return seen_for(record, cell_names(cells), index, params.edit_mode, path)


def _spliced(
    text: str,
    params: NotebookEditParams,
    index: int,
    old_cells: list[dict[str, Any]],
    notebook: dict[str, Any],
    path: str,
) -> str:
    """The notebook's text with only the edit's spans changed (notebook_splice.py)."""
    try:
        where = notebook_splice.layout(text)
        if len(where.cells) != len(old_cells):
            raise notebook_splice.Uncertain("the cells found are not the cells parsed")
        if params.edit_mode == "delete":
            new_text = notebook_splice.deleted(where, index)
        elif params.edit_mode == "insert":
            new_text = notebook_splice.inserted(where, index, notebook["cells"][index])
        else:
            old = json.loads(text[where.cells[index].start : where.cells[index].end])
            new_text = notebook_splice.replaced(where, index, old, notebook["cells"][index])
        notebook_splice.proved(new_text, notebook)
    except notebook_splice.Uncertain as exc:
        raise ReadkeeperError(
            "unsupported",
            f"readkeeper could not find where the cell is in the text of {quoting.name(path)} "
            f"with certainty ({library_words(exc)}), and never rewrites the rest of a notebook "
            "to make an edit; nothing was written. Change the cell's lines as text instead "
            "(old_string/new_string on the notebook's JSON).",
            file_path=path,
            detail=library_detail(exc),
        ) from None
    return new_text


def _new_cell(kind: str, source: str, has_ids: bool, cells: list[dict[str, Any]]) -> dict[str, Any]:
    from nbformat import v4

    makers: dict[str, Any] = {
        "code": v4.new_code_cell,
        "markdown": v4.new_markdown_cell,
        "raw": v4.new_raw_cell,
    }
    made = json.loads(json.dumps(makers[kind](source=source)))
    if not has_ids:
        made.pop("id", None)
    cell: dict[str, Any] = dict(sorted(made.items()))  # Jupyter sorts keys
    # Follow the notebook's own style for sources (Jupyter writes lists of lines).
    sample = next((c.get("source") for c in cells if "source" in c), None)
    cell["source"] = _like(sample, source)
    return cell


def _retype(cell: dict[str, Any], kind: str) -> None:
    cell["cell_type"] = kind
    if kind == "code":
        cell.setdefault("outputs", [])
        cell.setdefault("execution_count", None)
    else:
        cell.pop("outputs", None)
        cell.pop("execution_count", None)


def _like(example: Any, source: str) -> str | list[str]:
    """`source` in the form `example` has: a list of lines (ends kept), or one string."""
    if isinstance(example, list):
        return source.splitlines(keepends=True)
    return source


# --- staleness --------------------------------------------------------------------------


def _disjoint_or_refuse(
    core: EditServices, record: ReadRecord, params: NotebookEditParams, current: str, path: str
) -> str:
    """The snapshot the session read, when the notebook's change since leaves the target
    alone; else a `stale` error with a bounded diff of what changed."""
    snapshot = core.snapshots.get(path, record.digest) if record.scope == "file" else None
    if snapshot is None:
        raise ReadkeeperError(
            "stale",
            f"{path} changed since this session read it (what it said then is no longer "
            "kept, so no diff can be shown), so the edit could overwrite someone's work. "
            "Read it again, then redo the edit on what it says now.",
            file_path=path,
            read_source=record.source,
        )
    why = _why_not_disjoint(snapshot, current, params, path)
    if why is None:
        return snapshot
    diff, truncated = bounded_diff(snapshot, current, path)
    # A diff is the file's text, in data.diff; one too costly to make is readkeeper's
    # sentence saying so, in the message.
    shown = {"diff": diff} if is_diff(diff) else {}
    said = " The diff (as read -> as it is now) is in data.diff." if shown else f" {diff}"
    raise ReadkeeperError(
        "stale",
        f"{path} changed since this session read it, and {why}, so the edit was not "
        f"applied.{said} Read the notebook again, then redo the edit.",
        file_path=path,
        read_source=record.source,
        diff_truncated=truncated,
        **shown,
    )


def _json_of(text: str) -> Any:
    """`text`'s JSON, None when it is none Python's parser takes (notebook_parse.parse)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _why_not_disjoint(
    snapshot: str, current: str, params: NotebookEditParams, path: str
) -> str | None:
    before, now = _json_of(snapshot), _json_of(current)
    if not isinstance(before, dict):  # read as its text (read/damaged.py)
        return "it was not a valid notebook when it was read (it was shown as its text)"
    if not isinstance(now, dict):
        return "it is not a valid notebook now"
    if before.get("nbformat_minor") != now.get("nbformat_minor"):
        return "its format version changed"
    old_cells, new_cells = before.get("cells"), now.get("cells")
    if not isinstance(old_cells, list) or not isinstance(new_cells, list):
        return 'it has no "cells" list'
    if not params.cell_id:  # insert at the top: disjoint if the first cell stayed
        return None if old_cells[:1] == new_cells[:1] else "its first cell changed"
    try:
        old_index = find(old_cells, params.cell_id, path)
        new_index = find(new_cells, params.cell_id, path)
    except ReadkeeperError:
        return f"cell {shown_name(params.cell_id)} is not in both versions, once"
    if old_cells[old_index] != new_cells[new_index]:
        return f"cell {shown_name(params.cell_id)} itself changed"
    if positional(params.cell_id) and old_cells[: old_index + 1] != new_cells[: new_index + 1]:
        return "cells before it changed, and its id is its position"
    return None


# --- writing ----------------------------------------------------------------------------


def _validate(notebook: dict[str, Any], before: Callable[[], dict[str, Any]], path: str) -> None:
    """nbformat's schema check of the new notebook. A notebook that was already invalid
    before the edit is let through (the edit did not make it so); one the edit broke is
    refused."""
    import nbformat

    def problem(candidate: dict[str, Any]) -> str | None:
        try:
            nbformat.validate(nbformat.from_dict(candidate))  # type: ignore[no-untyped-call]
        except nbformat.ValidationError as exc:
            return library_detail(str(exc.message))
        return None

    broken = problem(notebook)
    if broken is not None and problem(before()) is None:
        raise ReadkeeperError(
            "bad_params",
            f"The edit would make {path} an invalid notebook ({library_words(broken)}); nothing "
            "was written. Check cell_type and new_source.",
            file_path=path,
            detail=broken,
        )
