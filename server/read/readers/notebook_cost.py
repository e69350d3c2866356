"""What a notebook view costs in tokens, and a cell cut down to a cap (notebook.py): its
tokens and its characters (read/room.py: a read's body takes `Room.chars` at most, what
a token cap does not bound: a token may hold 128 spaces).

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
from ...quoting import sent_chars
from ...settings import Settings
from ..room import LINES_MAX_CHARS
from ..tokens import TokenCounter, bytes_bound
from ..within import count_until, count_within

CUT_MARK = "[cell cut: over the cap]"


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


def _text_fits(data: list[dict[str, Any]], counter: TokenCounter, cap: int, chars: int) -> bool:
    """Whether the cells as MCP and the CLI show them (render.py) are at most `cap`
    tokens and `chars` characters: counted only when their bytes (`bytes_bound`, never
    under the count) are over the cap, which spares most views a second count."""
    shown = render.notebook_cells(data)
    if sent_chars(shown) > chars:
        return False
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
    chars: int = LINES_MAX_CHARS,
) -> int | None:
    """`total_cost` when it and (with `text`) the cells' text (`_text_fits`) are at most
    `cap` tokens and `chars` characters, else None, found without counting far past the
    cap (within.py): a cell of megabytes over it is not counted whole."""
    images = _image_tokens(cells)
    if images > cap:
        return None
    data = _sent(cells)
    sent = _as_json(data)
    if len(sent) > chars:
        return None
    tokens = count_within(counter, sent, cap - images)
    if tokens is None or (text and not _text_fits(data, counter, cap - images, chars)):
        return None
    return tokens + images


def chars_of(cell: NotebookCell) -> int:
    """The characters of `cell` as sent, the larger of its two forms (`_text_fits`)."""
    data = _sent([cell])
    return max(len(_as_json(data)), sent_chars(render.notebook_cells(data)))


def cut_cell(
    cell: NotebookCell,
    cap: int,
    counter: TokenCounter,
    settings: Settings,
    chars: int = LINES_MAX_CHARS,
) -> NotebookCell:
    """A lone cell over the cap (`cap` tokens, `chars` characters), without its outputs
    and with its source cut to fit. A shorter source is tried until one fits; one whose
    JSON starts with a text already found over the cap is over too, and is not counted."""
    source = cell.source
    trimmed = attrs.evolve(cell, outputs=[] if cell.outputs is not None else None, note=CUT_MARK)
    over = None  # the longest start of a candidate's JSON known to be over the cap
    while True:
        candidate = attrs.evolve(trimmed, source=source)
        if not source:
            return candidate
        data = _sent([candidate])
        text = _as_json(data)
        if len(text) <= chars and (over is None or not text.startswith(over)):
            tokens, at = count_until(counter, text, cap)
            if tokens is None:
                over = text[:at]
            elif _text_fits(data, counter, cap, chars):
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
    chars: int = LINES_MAX_CHARS,
) -> int:
    """The number (from 1) of the first of a notebook's last cells (`count` of them, each
    as `views` shows it by index) that fit `cap` tokens and `chars` characters together,
    `most` of them at most; the last cell when even it alone is over (a read of it alone
    is cut to fit)."""
    first, used = count, 0
    for index in range(count - 1, max(-1, count - 1 - most), -1):
        view = views(index)
        cost = cost_within([view], counter, settings, cap - used, text=False)
        chars -= chars_of(view) + 1
        if cost is None or chars < 0:
            break
        used += cost + _CELL_JOINT_TOKENS
        first = index
    return max(1, min(first + 1, count))


def images_within(cells: list[NotebookCell], chars: int) -> tuple[list[NotebookCell], bool]:
    """`cells` with their images' payloads within what `chars` leaves beside the cells'
    own characters: 299 images of 4.9 KB each made one answer of 2 MB, which the SDK's
    HTTP client drops (round 38). The first image is sent whatever its size (one image
    may be up to `image_max_base64_bytes`); each after it only while the payloads fit,
    the others sent as size placeholders that say why (their tokens stay counted); and
    whether any was."""
    payloads = (i.base64 for c in cells for o in c.outputs or [] for i in o.images or [])
    if not any(payloads):  # no image sent (no include_images): nothing to weigh
        return cells, False
    left = chars - sum(chars_of(cell) + 1 for cell in cells)
    first, held_back = True, False
    kept: list[NotebookCell] = []
    for cell in cells:
        outputs = []
        for output in cell.outputs or []:
            images = []
            for image in output.images or []:
                size = len(image.base64 or "")
                if size and not first and size > left:
                    image, held_back = attrs.evolve(image, base64=None, note=_IMAGES_FULL), True
                elif size:
                    first, left = False, left - size
                images.append(image)
            outputs.append(attrs.evolve(output, images=images) if output.images else output)
        kept.append(attrs.evolve(cell, outputs=outputs) if cell.outputs else cell)
    return kept, held_back


_IMAGES_FULL = (
    "Not sent: the images before it fill the characters one answer sends; read from this "
    "cell on (offset) for it."
)
