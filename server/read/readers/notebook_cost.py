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
from collections.abc import Callable
from typing import Any

import attrs

from ... import render
from ...protocol import NotebookCell, unstructure
from ...settings import Settings
from ..tokens import TokenCounter, bytes_bound
from ..within import count_until, count_within

CUT_MARK = "[cell cut: over the token cap]"


def _sent(cells: list[NotebookCell]) -> list[dict[str, Any]]:
    """The cells as sent (absent fields left out), without image payloads (which models
    count by pixels, in the images' own `tokens`)."""
    data: list[dict[str, Any]] = unstructure(cells)
    for cell in data:
        for output in cell.get("outputs") or []:
            for image in output.get("images") or []:
                image.pop("base64", None)
    return data


def _as_json(data: list[dict[str, Any]]) -> str:
    """What the cells cost as the LSP front end sends them: their compact JSON."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _text_fits(data: list[dict[str, Any]], counter: TokenCounter, cap: int) -> bool:
    """Whether the cells as MCP and the CLI show them (render.py) are at most `cap`
    tokens: counted only when their bytes (`bytes_bound`, never under the count) are
    over it, which spares most views a second count."""
    shown = render.notebook_cells(data)
    return bytes_bound(shown) <= cap or count_within(counter, shown, cap) is not None


def _image_tokens(cells: list[NotebookCell]) -> int:
    return sum(
        image.tokens or 0
        for cell in cells
        for output in cell.outputs or []
        for image in output.images or []
    )


def total_cost(cells: list[NotebookCell], counter: TokenCounter, settings: Settings) -> int:
    """The tokens of the cells' JSON, and their images'."""
    return counter.count(_as_json(_sent(cells))) + _image_tokens(cells)


def cost_within(
    cells: list[NotebookCell],
    counter: TokenCounter,
    settings: Settings,
    cap: int,
    text: bool = True,
) -> int | None:
    """`total_cost` when it and (with `text`) the cells' text (`_text_fits`) are at most
    `cap`, else None, found without counting far past it (within.py): a cell of
    megabytes over the cap is not counted whole."""
    images = _image_tokens(cells)
    if images > cap:
        return None
    data = _sent(cells)
    tokens = count_within(counter, _as_json(data), cap - images)
    if tokens is None or (text and not _text_fits(data, counter, cap - images)):
        return None
    return tokens + images


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
        data = _sent([candidate])
        text = _as_json(data)
        if over is None or not text.startswith(over):
            tokens, at = count_until(counter, text, cap)
            if tokens is None:
                over = text[:at]
            elif _text_fits(data, counter, cap):
                return candidate
        source = source[: int(len(source) * 0.8)]


# What a cell costs more beside others than alone (the JSON between them), by estimate.
_CELL_JOINT_TOKENS = 2


def end_that_fits(
    views: Callable[[int], NotebookCell],
    count: int,
    most: int,
    counter: TokenCounter,
    settings: Settings,
    cap: int,
) -> int:
    """The number (from 1) of the first of a notebook's last cells (`count` of them, each
    as `views` shows it by index) that fit `cap` together, `most` of them at most; the
    last cell when even it alone is over (a read of it alone is cut to fit)."""
    first, used = count, 0
    for index in range(count - 1, max(-1, count - 1 - most), -1):
        cost = cost_within([views(index)], counter, settings, cap - used, text=False)
        if cost is None:
            break
        used += cost + _CELL_JOINT_TOKENS
        first = index
    return max(1, min(first + 1, count))
