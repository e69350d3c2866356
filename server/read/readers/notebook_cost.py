"""What a notebook view costs in tokens, and a cell cut down to a cap (notebook.py).

A view over the cap is known to be over without counting it whole (within.py): a cell
of megabytes costs a count of about the cap, not of the cell.

The cells go out in two forms: their JSON (the LSP front end, `--json`) and render.py's
text (MCP, the CLI), whose fences around a long run of backticks can cost more than the
JSON. The core cannot tell which front end an answer is for (an attached MCP server's
call comes through the editor's), so a view costs the larger of the two, and the cap
holds for either; `tokens` says the JSON's count, and MCP and the CLI say their text's
(rendered_tokens.py).
"""

from __future__ import annotations

import json

import attrs

from ... import render
from ...protocol import NotebookCell, unstructure
from ...settings import Settings
from ..tokens import TokenCounter
from ..within import count_until, count_within

CUT_MARK = "[cell cut: over the token cap]"


def _as_json(cells: list[NotebookCell]) -> str:
    """What the cells cost as text: their JSON as sent (absent fields left out), without
    image payloads (which models count by pixels, in the images' own `tokens`)."""
    data = unstructure(cells)
    for cell in data:
        for output in cell.get("outputs") or []:
            for image in output.get("images") or []:
                image.pop("base64", None)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _as_text(cells: list[NotebookCell]) -> str:
    """The cells as MCP and the CLI show them (render.py)."""
    return render.notebook_cells(unstructure(cells))


def _image_tokens(cells: list[NotebookCell]) -> int:
    return sum(
        image.tokens or 0
        for cell in cells
        for output in cell.outputs or []
        for image in output.images or []
    )


def total_cost(cells: list[NotebookCell], counter: TokenCounter, settings: Settings) -> int:
    """The tokens of the cells' JSON, and their images'."""
    return counter.count(_as_json(cells)) + _image_tokens(cells)


def cost_within(
    cells: list[NotebookCell], counter: TokenCounter, settings: Settings, cap: int
) -> int | None:
    """`total_cost` when it and the cells' text (`_as_text`) are at most `cap`, else
    None, found without counting far past it (within.py): a cell of megabytes over the
    cap is not counted whole."""
    images = _image_tokens(cells)
    if images > cap:
        return None
    text = count_within(counter, _as_json(cells), cap - images)
    if text is None or count_within(counter, _as_text(cells), cap - images) is None:
        return None
    return text + images


def cut_cell(
    cell: NotebookCell, cap: int, counter: TokenCounter, settings: Settings
) -> NotebookCell:
    """A lone cell over the cap, without its outputs and with its source cut to fit. A
    shorter source is tried until one fits; one whose JSON starts with a text already
    found over the cap is over too, and is not counted."""
    source = cell.source
    trimmed = attrs.evolve(cell, outputs=[] if cell.outputs is not None else None, note=CUT_MARK)
    over = None  # the longest start of a candidate's JSON known to be over the cap
    while True:
        candidate = attrs.evolve(trimmed, source=source)
        if not source:
            return candidate
        text = _as_json([candidate])
        if over is None or not text.startswith(over):
            tokens, at = count_until(counter, text, cap)
            if tokens is None:
                over = text[:at]
            elif count_within(counter, _as_text([candidate]), cap) is not None:
                return candidate
        source = source[: int(len(source) * 0.8)]
