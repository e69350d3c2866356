"""Jupyter notebooks as cells, with their outputs summarised to fit the token cap.

Each cell comes back with its id, position, type, source and execution count; outputs
are summarised for an agent: stream text and text/plain kept (each cut to
`notebook_max_output_chars`, keeping its head and tail, with a note; a cell's outputs
cut to half the token cap, with a note), errors as
ename/evalue and the end of the traceback without terminal colours, images as sized
placeholders (or, with `include_images`, fitted to the image budget), and every other
form of an output (HTML, JavaScript, widgets, a second text form, any MIME type) named
with its size as not shown, as are an output of an unknown type and a cell's
attachments. That summary is the view: its placeholders never make it `partial`, which
says that cells, outputs or characters of the view were cut.

`offset`/`limit` count cells from 1, as they count lines in text: a notebook over the
token cap comes back partially, with `next_offset` saying where to continue.

nbformat parses every version and upgrades v3 (and older) notebooks to v4 for the view.
A notebook no version of which nbformat reads, or whose content cannot be shown as cells
(no "cells" list, an upgrade that fails), is refused `corrupt`: the read shows it as its
text instead, for an edit to repair it (read/damaged.py).
Cells are named as notebook_ids.py says: their own id, `cell-N` without one, `#N` when
two would share a name.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ... import quoting, words
from ...errors import ReadkeeperError, library_words
from ...hints import again, call
from ...protocol import NotebookCell, NotebookFile, NotebookImage, NotebookOutput
from ...settings import Settings
from ..room import chars_words
from ..tokens import TokenCounter, estimate_tokens
from . import image as image_reader
from .decode_budget import READ_DECODE_BYTES, Allowance
from .image_open import probe
from .image_scan import Steps
from .notebook_cost import (
    CUT_MARK,
    chars_of,
    cost_within,
    cut_cell,
    end_that_fits,
    images_within,
    total_cost,
)
from .notebook_ids import cell_names
from .notebook_parse import corrupt as _corrupt
from .notebook_parse import parse
from .notebook_text import ANSI_RE, capped, joined
from .text import Window

# The words of a notebook read's note besides its way on (Window.cap sets that aside):
# a cell over the cap on its own, outputs cut, images as placeholders, not sent, an
# upgraded version; and the two calls it may name more (the images', a search's).
_NOTE_TOKENS = 112
_NOTE_CALLS = 2
_OUTPUT_OVERHEAD_TOKENS = 40  # an output's fields and the JSON around its text
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp")
_FORMS = "PNG, JPEG, GIF, WebP, BMP"
# An SVG is named with its size, never sent as an image (nor run through a renderer).
_SVG = f"SVG is not sent as an image (readkeeper sends {_FORMS})."
# The first of these present is shown as the output's text.
_TEXT_TYPES = ("text/plain", "text/markdown", "text/latex", "application/json")
_OUTPUT_CUT = "Cut:"
# Notebooks up to this size are kept as read-snapshots, for cell edits' disjoint merges.
SNAPSHOT_MAX_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class NotebookView:
    """A notebook read's `file`, and an estimate of what the caps kept from the agent."""

    file: NotebookFile
    tokens_left_out: int  # estimate of what the caps kept from the agent


def read_notebook(
    data: bytes,
    path: str,
    window: Window,
    include_images: bool,
    settings: Settings,
    counter: TokenCounter,
) -> NotebookView:
    """The `notebook` result for a notebook's bytes (from disk or an editor buffer)."""
    raw = parse(data, path)
    major, minor = raw.get("nbformat"), raw.get("nbformat_minor", 0)
    cells, language = _cells_of(raw, path)
    total = len(cells)
    names = cell_names(cells, major == 4)
    cap = window.cap(settings, True, _NOTE_TOKENS + _NOTE_CALLS * window.room.call)
    chars = window.room.chars  # and the characters the cells may take (read/room.py)
    if window.offset > max(total, 1):
        # Its way on: the last cells that fit the cap, as many as asked for at most
        # (round 35: the count asked for, 2,000 by default, named cells 1001-1498 of 3,000).
        summarise = _Summariser(path, include_images, settings)
        views = lambda index: summarise.cell(cells[index], index, names[index])  # noqa: E731
        end = end_that_fits(views, total, window.limit, counter, settings, cap, chars)
        raise ReadkeeperError(
            "bad_params",
            f"offset {window.offset} is past the last cell of {quoting.name(path)}, "
            f"which has {total} cells (counted from 1). To see its end: "
            f"{again(offset=end)}.",
            field="offset",
            total_cells=total,
        )
    first = window.offset - 1
    chosen = cells[first : first + window.limit]
    summarise = _Summariser(path, include_images, settings)
    shown: list[NotebookCell] = []
    used = used_chars = 0
    for index, cell in enumerate(chosen, first):
        view = summarise.cell(cell, index, names[index])
        cost = cost_within([view], counter, settings, cap - used, text=False)
        used_chars += chars_of(view) + 1
        if cost is None or used_chars > chars:
            if shown:
                break
            shown.append(view)
            break  # the first cell alone is over the cap: cut below
        shown.append(view)
        used += cost
    within = cost_within(shown, counter, settings, cap, chars=chars)
    if within is None and len(shown) > 1:  # the cells' text (or their JSON) ran over
        fits, over = 0, len(shown)  # the most cells known to fit, the fewest known over
        while over - fits > 1:
            middle = (fits + over) // 2
            if cost_within(shown[:middle], counter, settings, cap, chars=chars) is None:
                over = middle
            else:
                fits = middle
        shown = shown[: max(fits, 1)]
        within = cost_within(shown, counter, settings, cap, chars=chars) if fits else None
    if within is None:  # one cell alone is over the cap: cut it down to fit
        shown = [cut_cell(shown[0], cap, counter, settings, chars)]
    tokens = within if within is not None else total_cost(shown, counter, settings)
    shown, held_back = images_within(shown, chars)  # images the characters could not hold
    shown_end = first + len(shown)  # cell number (1-based) of the last cell shown
    capped = len(shown) < len(chosen) or (bool(shown) and shown[-1].note == CUT_MARK)
    asked_cut = capped or (not window.ranged and shown_end < total)
    # Partial whenever anything asked for is not shown: cells, a cell's outputs past the
    # cap, an output's characters (attack round 22: 304 of 300,000 outputs said false).
    partial = asked_cut or summarise.outputs_left > 0 or summarise.chars_cut > 0 or held_back
    # A read from an offset gets the default count of cells: those after it are named
    # too (round 30: the way on of a cut read, followed, said nothing of the rest).
    cells_cut = asked_cut or (window.defaulted and shown_end < total)
    next_offset = shown_end + 1 if shown_end < total and cells_cut else None
    notes: list[str] = []
    if cells_cut:
        why = (
            f"the notebook is over the {settings.max_tokens:,}-token cap"
            + (f" or {chars_words(chars)}" if used_chars > chars else "")
            if capped
            else f"a read returns at most {words.count(window.limit, 'cell')} unless it asks "
            "for more"
        )
        notes.append(f"Showing cells {window.offset}-{shown_end} of {total} ({why}).")
        if next_offset is not None:
            # The same view goes on: with the images, when they were asked for.
            images = True if include_images else None
            notes.append(f"Continue with {again(offset=next_offset, include_images=images)}.")
    if shown and shown[-1].note == CUT_MARK:  # no read shows the rest (round 34)
        search = call("grep", pattern="<what you look for>", path=path)
        notes.append(
            f"Cell {shown_end} is over the cap on its own: its outputs and the end of its "
            f"source are not shown by any read; search them ({search}), or ask the user to "
            "raise max_tokens (READKEEPER_MAX_TOKENS)."
        )
    outputs = [o for cell in shown for o in cell.outputs or []]
    cut = sum(1 for o in outputs if o.note and _OUTPUT_CUT in o.note)
    if cut:
        notes.append(
            f"{cut} output{'s were' if cut > 1 else ' was'} cut to "
            f"{settings.notebook_max_output_chars:,} characters."
        )
    unsent = [i for o in outputs for i in o.images or [] if i.base64 is None]
    placeholders = sum(1 for i in unsent if i.note is None)
    if placeholders:
        many = "s" if placeholders > 1 else ""
        notes.append(
            f"{placeholders} image{many} shown as size placeholder{many}; "
            f"{again(include_images=True)} shows {'them' if many else 'it'}."
        )
    if len(unsent) > placeholders:
        many = "s" if len(unsent) - placeholders > 1 else ""
        notes.append(f"{len(unsent) - placeholders} image{many} not sent (each says why).")
    if major != 4:
        notes.append(
            f"Upgraded from nbformat {quoting.name(f'{major}.{minor}')} to 4 for this view."
        )
    if total == 0:
        notes.append("The notebook has no cells.")
    left_out = summarise.chars_cut // 4 + sum(
        estimate_tokens(_source(c)) for c in cells[shown_end:]
    )
    return NotebookView(
        NotebookFile(
            file_path=path,
            cells=shown,
            total_cells=total,
            nbformat=f"{major}.{minor}",
            tokens=tokens,
            language=language,
            partial=partial,
            next_offset=next_offset,
            note=" ".join(notes) or None,
            include_images=True if include_images else None,
        ),
        left_out if partial or summarise.chars_cut else 0,
    )


def shows_as_cells(data: bytes, path: str) -> bool:
    """Whether a read would show these bytes as cells (else as their text, with a note:
    read/damaged.py). An edit asks this of a notebook the session saw only as text
    (edit/notebook_seen.py)."""
    try:
        _cells_of(parse(data, path), path)
    except ReadkeeperError:
        return False
    return True


def _cells_of(raw: dict[str, Any], path: str) -> tuple[list[dict[str, Any]], str | None]:
    """v4 cells (upgraded when needed) with their ids, and the kernel's language."""
    import nbformat

    major = raw["nbformat"]
    if major == 4:
        notebook: Mapping[str, Any] = raw
    else:
        try:
            node = nbformat.versions[major].to_notebook_json(
                raw, minor=raw.get("nbformat_minor", 0)
            )
            notebook = nbformat.convert(node, 4)  # type: ignore[no-untyped-call]
        except KeyError:
            # Content no reader of cells takes, like any other: read as its text, whose
            # edit can set the version right (read/damaged.py; attack round 28, B3).
            version = str(major) if len(str(major)) <= 20 else f"{str(major)[:20]}…"
            raise _corrupt(path, f"nbformat {version} is a version nbformat cannot read") from None
        except Exception as exc:  # nbformat's converters fail in many ways on bad input
            raise _corrupt(path, f"nbformat could not upgrade it ({library_words(exc)})") from None
    cells = notebook.get("cells")
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        raise _corrupt(path, '"cells" is not a list of cells')
    metadata = notebook.get("metadata") or {}
    language = None
    if isinstance(metadata, dict):
        for key, field in (("kernelspec", "language"), ("language_info", "name")):
            section = metadata.get(key)
            if isinstance(section, dict) and isinstance(section.get(field), str):
                language = section[field]
                break
    return cells, language


def _source(cell: Mapping[str, Any]) -> str:
    return joined(cell.get("source", ""))


# --- summaries ------------------------------------------------------------------------


class _Summariser:
    """Turns raw cells into their views, counting what it cut along the way."""

    def __init__(self, path: str, include_images: bool, settings: Settings) -> None:
        self.path = path
        self.include_images = include_images
        self.settings = settings
        # Every image of the read is decoded under one total, besides the server's budget.
        self.allowance = Allowance(READ_DECODE_BYTES)
        self.steps = Steps()
        self.chars_cut = 0
        self.outputs_left = 0  # outputs past a cell's share of the cap, not shown
        self.number = 1  # the cell being summarised, counted from 1

    def cell(self, cell: dict[str, Any], index: int, name: str) -> NotebookCell:
        cell_type = cell.get("cell_type")
        kind = cell_type if isinstance(cell_type, str) else "unknown"
        self.number = index + 1
        note = None
        attachments = cell.get("attachments")
        if isinstance(attachments, dict) and attachments:
            names = ", ".join(sorted(quoting.name(key) for key in attachments))
            note = f"Attachments not shown: {names}."
        outputs = count = None
        if kind == "code":
            raw = cell.get("outputs")
            outputs, more = self.outputs(raw if isinstance(raw, list) else [])
            note = f"{note} {more}" if note and more else note or more
            count = cell.get("execution_count")
        return NotebookCell(
            cell_id=name,
            index=index,
            cell_type=kind,
            source=_source(cell),
            execution_count=count if isinstance(count, int) else None,
            outputs=outputs,
            note=note,
        )

    def outputs(self, raw: list[Any]) -> tuple[list[NotebookOutput], str | None]:
        """A cell's outputs, as many as half the token cap holds by estimate (a cell of
        150,000 one-line outputs is not summarised and costed whole), and a note."""
        budget, shown = self.settings.max_tokens // 2, list[NotebookOutput]()
        for output in raw:
            view = self.output(output)
            text = (view.text or "") + (view.traceback or "") + (view.note or "")
            budget -= _OUTPUT_OVERHEAD_TOKENS + estimate_tokens(text)
            if budget < 0 and shown:
                self.outputs_left += len(raw) - len(shown)
                more = f"Outputs 1-{len(shown)} of {len(raw):,} shown; the rest are over the cap."
                return shown, more
            shown.append(view)
        return shown, None

    def output(self, output: Any) -> NotebookOutput:
        if not isinstance(output, dict):
            return NotebookOutput(output_type="unknown", note="An unreadable output.")
        kind = output.get("output_type")
        if kind == "stream":
            text, note = self.capped(output.get("text"), keep="both")
            name = output.get("name")
            return NotebookOutput(
                output_type="stream",
                name=name if isinstance(name, str) else None,
                text=text,
                note=note,
            )
        if kind == "error":
            trace, note = self.capped(output.get("traceback"), keep="tail", separator="\n")
            return NotebookOutput(
                output_type="error",
                ename=str(output.get("ename", "")),
                evalue=quoting.marks(ANSI_RE.sub("", str(output.get("evalue", "")))),
                traceback=trace or None,
                note=note,
            )
        if kind in ("execute_result", "display_data", "update_display_data"):
            return self.rich(str(kind), output)
        shown = quoting.name(kind)
        return NotebookOutput(output_type=str(kind), note=f"An output of type {shown}, not shown.")

    def rich(self, kind: str, output: dict[str, Any]) -> NotebookOutput:
        data = output.get("data")
        data = data if isinstance(data, dict) else {}
        text = None
        notes: list[str] = []
        shown_text = next((m for m in _TEXT_TYPES if m in data), None)
        if shown_text is not None:
            value = data[shown_text]
            body = value if shown_text != "application/json" else json.dumps(value)
            text, note = self.capped(body, keep="both")
            if note:
                notes.append(note)
        images: list[NotebookImage] = []
        for mime, value in data.items():
            if mime in _IMAGE_TYPES:
                images.append(self.image(mime, joined(value)))
            elif mime == "image/svg+xml":
                images.append(NotebookImage(mime, None, None, _size(value), note=_SVG))
            elif mime != shown_text:  # every form but the one shown is named, never dropped
                size = _size(value)
                notes.append(f"{quoting.name(mime)} output ({size:,} bytes) not shown.")
        count = output.get("execution_count")
        return NotebookOutput(
            output_type=kind,
            text=text,
            execution_count=count if isinstance(count, int) else None,
            images=images or None,
            note=" ".join(notes) or None,
        )

    def image(self, mime: str, encoded: str) -> NotebookImage:
        try:
            data = base64.b64decode(encoded, validate=False)
        except (binascii.Error, ValueError):
            return NotebookImage(mime, None, None, 0, note="Its data is not base64.")
        try:
            size = probe(data, self.path, self.steps)
        except ReadkeeperError as exc:
            return NotebookImage(mime, None, None, len(data), note=self.not_shown(exc))
        if size is None:
            note = f"Its bytes are not an image of a form readkeeper reads ({_FORMS})."
            return NotebookImage(mime, None, None, len(data), note=note)
        width, height = size
        if not self.include_images:
            return NotebookImage(mime, width, height, len(data))
        try:
            fitted = image_reader.fit_image(
                data, self.path, self.settings, self.allowance, self.steps
            )
        except ReadkeeperError as exc:
            return NotebookImage(mime, width, height, len(data), note=self.not_shown(exc))
        return NotebookImage(
            media_type=fitted.media_type,
            width=fitted.original_width,
            height=fitted.original_height,
            bytes=len(data),
            base64=fitted.base64,
            display_width=fitted.width,
            display_height=fitted.height,
            tokens=fitted.tokens,
        )

    def not_shown(self, error: ReadkeeperError) -> str:
        """An image's note for `error`; one over what the whole read may spend on its
        images names reading its cell alone."""
        note = f"Not shown ({error.kind}): {error.message}"
        if {"max_read_decode_bytes", "max_read_structure_steps"} & error.data.keys():
            images = True if self.include_images else None
            note += f" Its cell alone: {again(offset=self.number, limit=1, include_images=images)}."
        return note

    def capped(self, value: Any, keep: str, separator: str = "") -> tuple[str, str | None]:
        """An output's text without terminal colours, cut to the output cap (head and
        tail, or the tail alone for tracebacks, whose end says what went wrong), never
        joined whole (notebook_text.py)."""
        text, cut = capped(value, self.settings.notebook_max_output_chars, keep, separator)
        if not cut:
            return text, None
        self.chars_cut += cut
        if keep == "tail":
            return text, f"{_OUTPUT_CUT} the first {cut:,} characters."
        return text, f"{_OUTPUT_CUT} {cut:,} characters from the middle."


def _size(value: Any) -> int:
    """The bytes of an output field in UTF-8 (a list's items one at a time, never joined)."""
    if isinstance(value, list):
        return sum(len(str(v).encode()) for v in value)
    return len(value.encode()) if isinstance(value, str) else 0
