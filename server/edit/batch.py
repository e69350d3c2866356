"""`readkeeper/edit` of several places of one file in one call: all of them, or none.

Two forms (DESIGN.md's `edits` and `anchor_edits`), one commit path:
- `edits`: old_string/new_string pairs, each matched once exactly as a single edit is
  (matching.py; merged over another program's disjoint change, merge.py), none of them
  overlapping another;
- `anchor_edits`: lines named by the anchors an anchored read showed (anchors.py).

Everything is checked before anything is written: the shape of the call, each edit
against the file and against what the session saw, that no two edits overlap, and, for
a notebook, that the result is still a valid notebook. Then the changes go to the file
in one atomic replacement (commit.py: encoding, BOM, line endings and mode kept) or to
the editor's buffer, exactly as a single edit's do (edits.py).
"""

from __future__ import annotations

import itertools
import json
from typing import Any, Protocol

from .. import quoting
from ..errors import ReadkeeperError, shown_name
from ..files import atomic
from ..files.encodings import line_ending
from ..protocol import EditBatchParams, EditParams, EditResult
from ..read.anchors import seen_lines, shown_rows
from ..read.diffs import external_change
from ..state.readstate import ReadRecord
from ..state.shown_lines import ShownLines, moved
from ..words import count
from .anchors import MAX_EDITS, Checked, Stale, Step, apply, check_shape, locate
from .buffers import apply_to_buffer, dirty_buffer
from .commit import (
    check_buffer,
    committed,
    digests,
    encode,
    hold_for_change,
    load,
    record_to_edit,
    replace,
    resolve_for_change,
)
from .endings import dominant_eol, lf
from .forgiving import meant, said_forgiven
from .matching import Normalized, Planned, as_shown, find_hits, line_numbers, listed, plan
from .merge import merge_or_refuse
from .notebook_seen import check_text_view
from .remember import Landed, Written, remember_change
from .search_budget import SearchBudget, noted
from .seen_lines import check_seen
from .services import EditServices, TextChange
from .snippets import numbered_snippet

# The lines the session holds once an anchored edit lands (`shown_lines.moved`).
MovedLines = dict[int, int]
CONTEXT = 2  # lines shown around each stale anchor and each anchored change
MAX_SHOWN = 60  # lines shown in all, in a refusal or an anchored edit's snippet


class BatchServices(EditServices, Protocol):
    """The core as a batch edit sees it: an edit's services and the shown lines."""

    @property
    def shown_lines(self) -> ShownLines:
        """Which lines each session was shown, at which content."""
        ...


def edit_batch(core: BatchServices, params: EditBatchParams) -> EditResult:
    """Apply `edits` or `anchor_edits` to one file, all or none."""
    if (params.edits is None) == (params.anchor_edits is None):
        raise ReadkeeperError(
            "bad_params",
            "Give one of edits (old_string/new_string pairs) and anchor_edits (lines named "
            "by anchors) per call: send each form in its own call.",
            field="edits",
        )
    if params.anchor_edits is not None:
        checked = check_shape(params.anchor_edits, params.file_path)
        pairs: list[tuple[str, str]] = []
    else:
        pairs = _check_pairs(params)
    candidate, where = resolve_for_change(core.workspace, params.file_path, "edit")
    real = where.path

    def attempt() -> EditResult | None:
        reported = core.diagnostics.reported(real)
        record = record_to_edit(core, params.session, where, candidate)
        with hold_for_change(where) as held:
            loaded = load(held, core.settings)
            buffer = dirty_buffer(core, real, loaded.text, core.settings)
            text = buffer.text if buffer else loaded.text
            data = loaded.data if buffer is None else text.encode("utf-8", "surrogatepass")
            check_text_view(record, data, real, "edit")
            base = Normalized(text)
            eol = dominant_eol(text, core.settings)
            unchanged = record.scope == "file" and record.digest in digests(
                text, loaded if buffer is None else None
            )
            extra: dict[str, Any] = {}
            moved_lines: MovedLines | None = None
            if params.anchor_edits is not None:
                planned, firsts, extra, moved_lines = _anchored(
                    core, params.session, real, base, checked, eol
                )
            else:
                planned, firsts, notes = _plain(
                    core, record, base, pairs, params, unchanged, eol, held
                )
                if notes:
                    extra["note"] = " ".join(notes)
            if planned.text == text:
                raise ReadkeeperError(
                    "no_change",
                    f"The edits would leave {quoting.name(real)} exactly as it is. Put the "
                    "lines you want in lines (or new_string), then send the call again.",
                    file_path=real,
                )
            _still_a_notebook(real, text, planned.text)
            landed: Landed = "buffer"
            if buffer is None:
                data = encode(planned.text, loaded.encoding, real, "edits", loaded.data)
                new_stat = replace(held, data, loaded.data, loaded.cap)
                if new_stat is None:
                    return None  # changed under us: look again
                landed = Written(data, new_stat)
        if buffer is not None:
            check_buffer(real, buffer.text, planned.text, loaded.cap)
            apply_to_buffer(core, real, buffer, planned.changes)
        if moved_lines is not None:  # landed: the lines the session holds move with it
            core.shown_lines.replace(params.session, real, moved_lines)
        whole = record.holds_whole() and unchanged
        state = remember_change(
            core,
            params.session,
            real,
            planned.text,
            landed,
            "edit",
            reported,
            whole=whole,
            before=text,
            merged_over=not unchanged,
            known=_snapshot(core, record) if not unchanged else None,
        )
        if "snippet" not in extra:
            snippet, start = numbered_snippet(
                planned.text, *planned.spans[0], width=core.settings.number_width
            )
            extra.update(snippet=snippet, start_line=start)
        if not unchanged:
            extra.update(_merged(core, record, text, real, extra.get("note")))
        return EditResult(
            file_path=real,
            replacements=len(firsts),
            lines=listed(firsts),
            applied_to="disk" if buffer is None else "buffer",
            encoding=loaded.encoding.label,
            line_ending=line_ending(planned.text),
            read_state=state,
            merged=not unchanged,
            **extra,
        )

    return committed(real, attempt)


def _merged(
    core: BatchServices, record: ReadRecord, text: str, real: str, note: Any
) -> dict[str, Any]:
    """What the answer says of a file that had changed since the session read it: the
    change (when what was read is still kept), and that the edits left it alone."""
    snapshot = _snapshot(core, record)
    said = (
        f"{quoting.name(real)} had changed since you read it; every edit named text as you "
        "saw it, still there, so the edits were applied to the current content."
    )
    found: dict[str, Any] = {"note": f"{note} {said}" if note else said}
    if snapshot is not None:
        found["external_change"] = external_change(snapshot, text, real)
    return found


def _snapshot(core: BatchServices, record: ReadRecord) -> str | None:
    """The content the session last knew of the file, when it is still kept."""
    return core.snapshots.get(record.path, record.digest) if record.scope == "file" else None


# --- plain pairs -------------------------------------------------------------------------


def _check_pairs(params: EditBatchParams) -> list[tuple[str, str]]:
    edits = params.edits or []
    if not edits:
        raise ReadkeeperError(
            "bad_params",
            'edits is empty. Give at least one pair, e.g. [{"old_string": "...", '
            '"new_string": "..."}].',
            field="edits",
        )
    if len(edits) > MAX_EDITS:
        raise ReadkeeperError(
            "bad_params",
            f"edits has {len(edits):,} pairs; at most {MAX_EDITS:,} in one call. Split them "
            "into calls.",
            field="edits",
        )
    pairs = []
    for index, pair in enumerate(edits):
        old, new = lf(pair.old_string), lf(pair.new_string)
        if not old:
            raise ReadkeeperError(
                "bad_params",
                f"edits[{index}].old_string is empty. Put a line next to where the new text "
                "goes in old_string, and repeat it in new_string with the new text.",
                field=f"edits[{index}].old_string",
            )
        if old == new:
            raise ReadkeeperError(
                "no_change",
                f"edits[{index}] has the same old_string and new_string; drop it or put the "
                "text you want in new_string, then send the call again.",
                field=f"edits[{index}]",
            )
        pairs.append((old, new))
    return pairs


def _plain(
    core: BatchServices,
    record: ReadRecord,
    base: Normalized,
    pairs: list[tuple[str, str]],
    params: EditBatchParams,
    unchanged: bool,
    eol: str,
    held: atomic.Held,
) -> tuple[Planned, list[int], list[str]]:
    """Every pair matched once (in the file as the session read it, or merged over a
    disjoint change), none overlapping another; the planned text."""
    real = record.path
    found: list[tuple[int, int, str, str, int]] = []  # start, end, old, new, index
    notes: list[str] = []
    budget = SearchBudget()  # one for all the pairs: a batch is one call
    for index, (old, new) in enumerate(pairs):
        old, new, _ = as_shown(base.norm, old, new, real)
        single = EditParams(params.file_path, old, new, session=params.session)
        try:
            if unchanged:
                forgiven = meant(base.norm, old, new, real, budget)
                if forgiven is not None:
                    old, new = forgiven.old, forgiven.new
                    notes.append(f"edits[{index}]: {said_forgiven(forgiven)}")
                    single = EditParams(params.file_path, old, new, session=params.session)
                hits = find_hits(base, old, single, real, core.settings.number_width)
            else:
                hits, _ = merge_or_refuse(core, record, base, old, single, held.leased)
        except ReadkeeperError as exc:
            exc = noted(exc, budget)
            raise ReadkeeperError(
                exc.kind, f"edits[{index}]: {exc.message} Nothing was written.", **exc.data
            ) from None
        check_seen(record, base.norm, hits, old, real)
        found.append((hits[0], hits[0] + len(old), old, new, index))
    found.sort()
    for (_, end, _, _, a), (o_start, _, _, _, b) in itertools.pairwise(found):
        if o_start < end:
            first, second = sorted((a, b))
            line = line_numbers(base.norm, [o_start])[0]
            raise ReadkeeperError(
                "bad_params",
                f"edits[{first}] and edits[{second}] overlap in {real} (at line {line}), so "
                "their order would decide the result. Merge them into one pair, then send "
                "the call again. Nothing was written.",
                field="edits",
                edits=[first, second],
            )
    changes: list[TextChange] = []
    for start, _, old, new, _ in found:
        changes += plan(base, [start], old, new, eol).changes
    firsts = line_numbers(base.norm, [start for start, *_ in found])
    return _applied(base, changes), firsts, notes


def _applied(base: Normalized, changes: list[TextChange]) -> Planned:
    pieces, last, spans, shift = [], 0, [], 0
    for change in changes:
        pieces += [base.text[last : change.start], change.text]
        spans.append((change.start + shift, change.start + shift + len(change.text)))
        shift += len(change.text) - (change.end - change.start)
        last = change.end
    pieces.append(base.text[last:])
    return Planned("".join(pieces), changes, spans)


# --- anchors -----------------------------------------------------------------------------


def _anchored(
    core: BatchServices,
    session: str,
    real: str,
    base: Normalized,
    checked: list[Checked],
    eol: str,
) -> tuple[Planned, list[int], dict[str, Any], MovedLines]:
    """The anchor edits located and planned, and the lines the session holds once they
    land (`shown_lines.moved`); `stale` (with the lines as they are now around
    each stale anchor, anchored) when any anchor is not one the session saw."""
    current = [line.removesuffix("\r") for line in _lines(base.norm)]
    shown = seen_lines(core, session, real)
    steps, relocated, problems = locate(checked, current, shown)
    max_chars = core.settings.max_line_chars
    if problems:
        raise _stale(core, session, real, current, problems, max_chars)
    planned, firsts = apply(base, steps, eol)
    new_lines = [line.removesuffix("\r") for line in _lines(lf(planned.text))]
    rows, whole = _around(new_lines, _new_ranges(steps, firsts), max_chars)
    spans = [(s.first + 1, s.end + 1, len(s.lines)) for s in steps]
    held = moved(shown, spans, whole)
    extra: dict[str, Any] = {"snippet": "\n".join(rows), "start_line": firsts[0]}
    if relocated:
        extra["relocated"] = relocated
        extra["note"] = (
            "Anchors found where their line had moved to: "
            + ", ".join(f"{m.anchor} is now line {m.line}" for m in relocated)
            + ". The snippet shows the lines as they are now, with their anchors."
        )
    return planned, firsts, extra, held


def _lines(norm: str) -> list[str]:
    lines = norm.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _new_ranges(steps: list[Step], firsts: list[int]) -> list[tuple[int, int]]:
    return [
        (first, first + max(len(s.lines), 1) - 1) for s, first in zip(steps, firsts, strict=True)
    ]


def _around(
    lines: list[str], ranges: list[tuple[int, int]], max_chars: int
) -> tuple[list[str], dict[int, int]]:
    """The lines of `ranges` (1-based, inclusive) with CONTEXT around them, anchored,
    at most MAX_SHOWN; and those shown whole."""
    wanted: list[int] = []
    for first, last in ranges:
        for number in range(max(1, first - CONTEXT), min(len(lines), last + CONTEXT) + 1):
            if number not in wanted:
                wanted.append(number)
    wanted = sorted(wanted)[:MAX_SHOWN]
    rows: list[str] = []
    whole: dict[int, int] = {}
    previous = 0
    for number in wanted:
        if previous and number != previous + 1:
            rows.append("…")
        row, seen = shown_rows([(number, lines[number - 1])], max_chars)
        rows += row
        whole.update(seen)
        previous = number
    return rows, whole


def _stale(
    core: BatchServices,
    session: str,
    real: str,
    current: list[str],
    problems: list[Stale],
    max_chars: int,
) -> ReadkeeperError:
    ranges = [(p.near, p.near) for p in problems]
    rows, whole = _around(current, ranges, max_chars)
    core.shown_lines.saw(session, real, whole)  # shown now: the retry may name them
    listed = "; ".join(f"{shown_name(p.anchor)} (line {p.near}): {p.why}" for p in problems[:10])
    return ReadkeeperError(
        "stale",
        f"{count(len(problems), 'anchor')} {'does' if len(problems) == 1 else 'do'} not name "
        f"lines of {quoting.name(real)} as this "
        f"session was shown them: {listed}. Nothing was written. The lines there now, with "
        "their anchors:\n" + "\n".join(rows) + "\nSend the edits again with these anchors.",
        file_path=real,
        stale=[{"anchor": p.anchor, "line": p.near, "why": p.why} for p in problems],
        current="\n".join(rows),
    )


def _still_a_notebook(path: str, before: str, after: str) -> None:
    """`bad_params` when the edits would turn a notebook into one that is not."""
    if not path.endswith(".ipynb"):
        return
    try:
        was = json.loads(before)
    except ValueError:
        return  # it was no notebook before: the edits did not break one
    try:
        now = json.loads(after)
        ok = isinstance(now, dict) and isinstance(now.get("cells"), list)
    except ValueError:
        ok = False
    if not ok:
        raise ReadkeeperError(
            "bad_params",
            f"The edits would leave {quoting.name(path)} an invalid notebook (not JSON with "
            "a cells list); nothing was written. Edit its cells with cell_id/new_source/"
            "edit_mode instead.",
            file_path=path,
        )
    from .notebook import _validate

    if isinstance(was, dict):
        _validate(now, lambda: was, path)
