"""Which cells of a notebook a session has seen, so a cell edit changes only those.

A text edit names the text it replaces (`old_string`), so it can only replace what the
agent knows; a cell edit names a cell by its id, and replaces or deletes the whole cell
unseen. So a cell edit needs its cell shown to the session: by a read of the notebook
whose cells covered it (each of the session's views of that content counts), a write of
the whole notebook, or the session's own cell edit, whose record carries on the cells it
had seen (and the one it wrote). Lines of the notebook's JSON that a search showed never
count: they are not a cell. A cell shown cut short by the token cap was not seen whole,
so it may not be replaced or deleted. An insert needs the cell it goes after shown (at
the top, the first cell), so the agent knows where it puts it.

That the cell is unchanged since it was seen is the stale check's (notebook.py): it
compares the cell as read with the cell now.

A text edit of a file the session read as a notebook (old_string, edits, anchor edits, a
patch, a multi-file edit) or a write of it needs every cell shown first: its
`old_string` is matched against the whole JSON, so after a read of one cell it could
still reach a cell never shown (`check_text_change`). A whole read, or ranged reads that
add up to all the cells, lifts this; a cell shown cut by the token cap counts as shown.

A notebook readkeeper cannot show as cells is read as its numbered text, and that view
licenses edits (the repair its note invites) only while the file stays that way. Once
the file, as it is at the edit or write, shows as cells again (the session's repair, or
another program's), a session that saw it only through a partial text view must read
it as a notebook before any text edit or write (`check_text_view`): else an `old_string`
quoting a cell it never saw would reach it (attack round 29, B5). Lines the text view
showed are no exception: the rule is the file's state, not the lines, so no edit is
left that reaches past it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import quoting
from ..errors import ReadkeeperError
from ..hints import call
from ..read.readers import SNIFF_BYTES, sniff
from ..read.readers.notebook import shows_as_cells
from ..state.held import HeldDocument
from ..state.readstate import ReadRecord


@dataclass(frozen=True)
class Seen:
    """The cells (indexes of the content the session saw) one run of its views showed
    whole and in order, and the one among them shown cut."""

    run: range
    cut: int | None


def _views(record: ReadRecord, total: int) -> tuple[list[range], set[int], bool]:
    runs: list[range] = []
    cut: set[int] = set()
    notebook_view = False
    for view in record.views():
        document = view.document
        if document is not None and document.kind == "notebook":
            notebook_view = True
            first = (document.first_cell or 1) - 1
            runs.append(range(first, first + (document.num_cells or 0)))
            if document.cut_cell is not None:
                cut.add(document.cut_cell - 1)
        elif view.whole:  # it wrote the notebook, or edited it as text, holding it whole
            notebook_view = True
            runs.append(range(total))
    return runs, cut, notebook_view


def seen_for(record: ReadRecord, names: Sequence[str], index: int, mode: str, path: str) -> Seen:
    """The run of seen cells holding cell `index` (-1: an insert at the top) of the
    content the session saw (`names`: its cells' names); `not_read` when the session
    has not seen that cell (or, to replace or delete it, saw it cut)."""
    total = len(names)
    runs, cut, notebook_view = _views(record, total)
    wanted = max(index, 0)
    if total == 0 and notebook_view:
        return Seen(range(0), None)
    merged = _merged(runs)
    run = next((r for r in merged if wanted in r), None)
    if run is None:
        raise _unseen(record, names, wanted, mode, path, notebook_view, merged)
    cuts = sorted(c for c in cut if c in run)
    if mode != "insert" and index in cuts:
        raise ReadkeeperError(
            "not_read",
            f"Cell {quoting.name(names[index])} of {quoting.name(path)} was shown cut short "
            "by the token cap, so its source was never seen whole, and "
            f"{'replacing' if mode == 'replace' else 'deleting'} it could lose what was not "
            "shown. Once every cell has been shown (read it whole, "
            f"{call('read', file_path=path)}, or in ranges that add up to all of it), change "
            "the cell's lines as text instead (old_string/new_string on the notebook's JSON, "
            "quoted exactly), or insert a new cell after it and delete nothing.",
            file_path=path,
            cell_id=names[index],
            index=index,
        )
    return Seen(run, cuts[0] if len(cuts) == 1 else None)


def check_text_change(record: ReadRecord, path: str, verb: str) -> None:
    """Refuse (`not_read`) a text edit or write (`verb`) of a file the session read as a
    notebook unless its views of that content showed every cell."""
    documents = [
        view.document
        for view in record.views()
        if view.document is not None and view.document.kind == "notebook"
    ]
    if not documents or record.holds_whole():
        return
    total = max(document.total_cells or 0 for document in documents)
    runs, _, _ = _views(record, total)
    merged = _merged(runs)
    if total == 0 or (merged and merged[0].start == 0 and merged[0].stop >= total):
        return
    shown = ", ".join(f"{r.start + 1}-{r.stop}" for r in merged) or "none"
    missing = _gaps(merged, total)
    change = (
        "a write replaces all of it" if verb == "write" else "a text edit matches its whole JSON"
    )
    raise ReadkeeperError(
        "not_read",
        f"This session's reads of {quoting.name(path)} as a notebook showed cells {shown} of "
        f"{total}, and {change}, so it could change a cell the session has not seen "
        f"(cells {missing}). Read every cell ({call('read', file_path=path)}; if that "
        "stops at a cap, read on from the offset it names until all have been shown), "
        f"then redo the {verb}; or change a shown cell by its cell_id (a cell edit).",
        file_path=path,
        cells_shown=shown,
        total_cells=total,
    )


def check_text_view(record: ReadRecord, data: bytes, path: str, verb: str) -> None:
    """Refuse (`not_read`) a text edit or write (`verb`) of `path`, whose content is now
    `data`, when the session saw it only as part of its text (a damaged notebook's view,
    or what its edit of one left: ReadRecord.notebook_text) and it now shows as cells.
    A session holding it whole, or that read it as a notebook (`check_text_change` then
    rules), is not asked; nor is a file no view of which was such text (no parse)."""
    views = record.views()
    if not any(view.notebook_text for view in views) or record.holds_whole():
        return
    if any(view.document is not None for view in views):
        return
    if sniff(data[:SNIFF_BYTES], path) != "notebook" or not shows_as_cells(data, path):
        return
    change = (
        "a write replaces all of it" if verb == "write" else "a text edit matches its whole JSON"
    )
    raise ReadkeeperError(
        "not_read",
        f"This session has seen {quoting.name(path)} only as some of the lines of its JSON "
        "(read as text while it was not a valid notebook), and it is a notebook again, "
        f"so {change} and could change a cell the session has not seen. Read it as a "
        f"notebook ({call('read', file_path=path)}; if that stops at a cap, read on from "
        f"the offset it names until every cell has been shown), then redo the {verb}; or "
        "change a shown cell by its cell_id (a cell edit).",
        file_path=path,
    )


def _gaps(merged: list[range], total: int) -> str:
    gaps: list[str] = []
    start = 0
    for run in [*merged, range(total, total)]:
        if run.start > start:
            gaps.append(f"{start + 1}-{run.start}" if run.start - start > 1 else f"{start + 1}")
        start = max(start, run.stop)
    return ", ".join(gaps)


def _merged(runs: list[range]) -> list[range]:
    found: list[range] = []
    for run in sorted((r for r in runs if r), key=lambda r: r.start):
        if found and run.start <= found[-1].stop:
            found[-1] = range(found[-1].start, max(found[-1].stop, run.stop))
        else:
            found.append(run)
    return found


def _unseen(
    record: ReadRecord,
    names: Sequence[str],
    index: int,
    mode: str,
    path: str,
    notebook_view: bool,
    runs: list[range],
) -> ReadkeeperError:
    name = quoting.name(path)
    what = "the first cell" if index == 0 and mode == "insert" else "cell"
    if mode == "insert" and index >= 0 and what == "cell":
        what = "the cell the new one goes after,"
    target = f"{what} {quoting.name(names[index])}" if index < len(names) else what
    if not notebook_view:
        how = (
            "only through search, whose lines of the notebook's JSON never show a cell"
            if record.view.startswith("grep:")
            else "only as lines of its JSON, never as cells"
        )
        said = f"This session has seen {name} {how}"
    else:
        shown = ", ".join(f"{r.start + 1}-{r.stop}" for r in runs) or "none"
        said = f"This session's reads of {name} showed cells {shown} of {len(names)}, not {target}"
    verb = {"replace": "replacing a cell", "delete": "deleting a cell"}.get(mode, "inserting")
    return ReadkeeperError(
        "not_read",
        f"{said}, so {verb} could overwrite or misplace what it has not seen. Read it "
        f"({call('read', file_path=path, offset=index + 1, limit=1)}), then redo the edit.",
        file_path=path,
        index=index,
    )


def held_after(seen: Seen, mode: str, index: int, total_after: int, merged: bool) -> HeldDocument:
    """What the session has seen of the notebook its cell edit left: the run it had seen
    (moved by the cell inserted or deleted), or, when another program's change was
    merged (cells it never saw may have come in), only the cells the edit shows it."""
    run, cut = seen.run, seen.cut
    if merged:
        if mode == "delete":
            run, cut = range(0), None
        elif mode == "insert":
            run, cut = range(max(index - 1, 0), index + 1), None
        else:
            run, cut = range(index, index + 1), None
    elif mode == "insert":  # the new cell is at `index`, inside or right after the run
        run = range(min(run.start, index), max(run.stop, index) + 1)
        cut = cut + 1 if cut is not None and cut >= index else cut
    elif mode == "delete":
        run = range(run.start, max(run.stop - 1, run.start))
        cut = cut - 1 if cut is not None and cut > index else cut
    return HeldDocument(
        "notebook",
        0,
        first_cell=run.start + 1,
        num_cells=len(run),
        total_cells=total_after,
        cut_cell=cut + 1 if cut is not None else None,
    )
