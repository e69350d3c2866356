"""Fitting attachments into a token budget: cap each, keep the most valuable, say what was cut.

1. Each text item is capped at its type's `max_tokens`; a cut ends with a note saying
   what was left out and which call gets the rest.
2. Items are taken by priority (the user's own input first). Once a droppable item does
   not fit, it and every lower-priority item are dropped, so a lower priority never
   survives at the expense of a higher one. An item that does not fit but has room for
   a useful part is cut to the room left instead.
3. The user's own input is never dropped while its note alone can fit: it is cut instead.

Beside the tokens, the characters: the answer keeps to `ANSWER_CHARS` of its items' text
(of the 500,000 one answer sends, read/room.py; a token may hold 128 spaces, and six
mentions of space lines made an answer of 1,446,288 characters within its tokens: round
37), each item taken or cut by both.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Protocol

from readkeeper import quoting, render, words
from readkeeper.quoting import json_text
from readkeeper.read.room import ANSWER_MAX_CHARS

from .cut_notes import read_call, unclosed_fence
from .model import HEADER_TOKENS, Attachment, Dropped, Fitted

# Below this, a cut item is more note than content: drop it instead.
MIN_USEFUL_TOKENS = 200


class Counter(Protocol):
    """What the budgeter needs of a token counter (`tokens.TokenCounter` in the server)."""

    def count(self, text: str) -> int:
        """The exact tokens of `text`."""
        ...

    def count_lines(self, lines: Sequence[str]) -> list[int]:
        """The tokens of each line as it will be joined with newlines: where to cut."""
        ...


# Which limit a cut was made for, as its note names it.
BUDGET = "the token budget"
# The characters of the items' text and frames; the rest of the answer (its header, the
# drops listed, each within its own bound) keeps the others.
ANSWER_CHARS = ANSWER_MAX_CHARS - 50_000
CHARS = f"the {ANSWER_MAX_CHARS:,} characters one answer sends"


def type_cap(item: Attachment) -> str:
    """The limit of a cut at `item`'s own type cap."""
    return f"its {item.max_tokens:,}-token cap (each {item.type} attachment's)"


def _note(item: Attachment, kept_lines: int, lines: Sequence[str], why: str = BUDGET) -> str:
    total_lines = len(lines)
    if item.cut_note is not None:
        what = item.cut_note(lines[:kept_lines], lines)
        return f"\n[{item.type} cut to fit {why}: {what}.]"
    what = (
        f"showing {kept_lines} of {words.count(total_lines, 'line')}"
        if kept_lines
        else f"none of its {words.count(total_lines, 'line')} fit"
    )
    hint = item.rest_hint
    if item.file_path is not None:
        rest = read_call(file_path=item.file_path, offset=item.first_line + kept_lines)
        hint = f"Read the rest with {rest}."
    return f"\n[{item.type} cut to fit {why}: {what}. {hint}]".replace(" ]", "]")


def truncate(
    item: Attachment,
    limit: int,
    counter: Counter,
    why: str = BUDGET,
    chars: int = ANSWER_CHARS,
) -> bool:
    """Cut `item`'s text to at most `limit` tokens and `chars` characters, note included,
    the note naming the limit (`why`, or `CHARS` when the characters cut it). False if
    even the note does not fit (the item is left unchanged)."""
    if not isinstance(item.content, str):
        return False
    lines = item.content.split("\n")
    frame: tuple[list[str], list[str]] = ([], [])  # readkeeper's lines around the file's
    if item.fenced and len(lines) >= 3:
        fence = lines[1]
        closing = len(lines) - 1 - lines[::-1].index(fence)
        frame = (lines[:2], [fence])
        lines = lines[2:closing]  # the file's lines; a note after them gives way to ours
    widest_note = _note(item, len(lines), lines, why)
    room = limit - counter.count(widest_note)
    noted = max(len(widest_note), len(_note(item, len(lines), lines, CHARS)))
    room_chars = chars - noted - len("\n".join([*frame[0], *frame[1], ""])) - 16
    if room < 0 or room_chars < 0:
        return False
    room -= counter.count("\n".join([*frame[0], *frame[1], ""])) if item.fenced else 0
    per_line = counter.count_lines(lines)
    kept = used = used_chars = 0
    for tokens, line in zip(per_line, lines, strict=True):
        used_chars += quoting.sent_chars(line) + 1
        if used_chars > room_chars:
            why = CHARS
            break
        if used + tokens > room:
            break
        used += tokens
        kept += 1
    while True:
        shown = [*frame[0], *lines[:kept], *frame[1]]
        if not item.fenced:  # a cut inside a fenced page or cell closes that fence
            shown += unclosed_fence(lines[:kept])
        text = "\n".join(shown) + _note(item, kept, lines, why)
        sent = quoting.sent_chars(quoting.fence(text))  # its escapes lengthen it, and JSON's
        if sent > chars and kept > 0:
            kept, why = kept * chars // sent, CHARS
            continue
        tokens = counter.count(text)
        if tokens <= limit or kept == 0:
            break
        kept -= 1  # per-line counts can undercount where lines merge into one token
    if tokens > limit or sent > chars:
        return False
    item.content = text.lstrip("\n") if kept == 0 else text
    item.tokens = counter.count(item.content)
    item.truncated = True
    return True


def measure(item: Attachment, counter: Counter) -> bool:
    """Count `item` and cap it at its type's own limit; False if it cannot be capped."""
    if isinstance(item.content, str):
        item.tokens = counter.count(item.content)
    return item.tokens <= item.max_tokens or truncate(
        item, item.max_tokens, counter, type_cap(item)
    )


# What an answer sends besides its attachments and the drops it lists one by one, set
# aside before any attachment is kept: its header line ("288 of 300 tokens") and the
# `dropped:` label (model.HEADER_TOKENS), and for each type dropped its summary of the
# drops not listed one by one (model.py `_counted`: 57 tokens at its widest, with its
# separator in the list; tests/attachments/test_budget_as_sent.py counts each type's).
SUMMARY_TOKENS = 60
ANSWER_TOKENS = HEADER_TOKENS + SUMMARY_TOKENS  # one type dropped


def _headers(item: Attachment) -> tuple[str, str]:
    """`item`'s header line as each door sends it, counted as cut (so a cut made to fit
    cannot outgrow it): its source cut in the middle when long (render.attachments: MCP
    and the CLI), and whole, as JSON writes it (the LSP answer's `source`, which the VS
    Code extension shows: 4,000-character sources were counted cut, and 434 of them sent
    1,623,195 characters within a 60,000-token budget, found beside round 47)."""
    cut = render.attachment_header(item.type, item.source, True)
    if not item.source:
        return cut, cut
    return cut, f"{render.attachment_header(item.type, None, True)} {json_text(item.source)}"


def frame(item: Attachment, counter: Counter) -> int:
    """What `item` takes as sent besides its content, at the door that sends the most:
    its header line (its source named, a hostile name escaped) and the fence lines
    around it (render.attachments)."""
    return max(counter.count(f"{header}\n```\n```") for header in _headers(item)) + 1


def _chars(item: Attachment) -> int:
    """The characters of `item`'s text as sent, fenced (render.attachments) and as JSON
    writes it (quoting.sent_chars); an image's facts are a few hundred (its payload is
    sent as an image)."""
    content = item.content
    return quoting.sent_chars(quoting.fence(content)) if isinstance(content, str) else 1_000


def _frame_chars(item: Attachment) -> int:
    """The characters of `item`'s header line at the door that sends the most (`frame`)."""
    return max(quoting.sent_chars(header) for header in _headers(item)) + 1


def fit(
    items: Sequence[Attachment], budget: int, counter: Counter, failed: Sequence[Dropped] = ()
) -> Fitted:
    """Fit `items` into `budget` tokens by the rules above: what is kept (cut to fit
    or whole), and what is dropped and why, `failed` first (the sources that failed
    before the fit). The answer's header line is set aside first (`HEADER_TOKENS`),
    and the room of the summary of the drops (`SUMMARY_TOKENS` a type dropped): of
    each type in `failed` from the start, and when the fit drops another type, they
    are fitted again until the types dropped are those set aside for (at most once a
    type). So every drop, however made, is in the count."""
    # Each item counted and capped at its type's cap once (what each pass began with,
    # the same in every pass); each pass starts from copies of those.
    measured = [copy.copy(item) for item in items]
    capped = [measure(item, counter) for item in measured]
    frames: dict[int, int] = {}  # an item's frame, counted once (`frame`)
    kinds = {item.type for item in failed}
    while True:
        trial = [copy.copy(item) for item in measured]
        space = budget - HEADER_TOKENS - SUMMARY_TOKENS * len(kinds)
        fitted = _fitted(trial, capped, frames, space, budget, counter)
        dropped = kinds | {item.type for item in fitted.dropped}
        if dropped == kinds:
            break
        kinds = dropped
    kept = {id(item) for item in fitted.attachments}
    for item, tried in zip(items, trial, strict=True):
        item.__dict__.update(tried.__dict__)  # what the trial measured and cut
    fitted.attachments = [i for i, t in zip(items, trial, strict=True) if id(t) in kept]
    fitted.dropped[:0] = failed
    return fitted


def _least(item: Attachment, frames: dict[int, int], index: int, counter: Counter) -> int:
    """The fewest tokens `item` is sent in: whole, or its frame and the widest note of a
    cut, the fewer."""
    if index not in frames:
        frames[index] = frame(item, counter)
    lines = item.content.split("\n") if isinstance(item.content, str) else []
    fence = 2 * counter.count(lines[1]) if item.fenced and len(lines) >= 3 else 0
    cut = counter.count(_note(item, len(lines), lines)) + fence + 2
    return frames[index] + min(item.tokens, cut)


def _fitted(
    items: Sequence[Attachment],
    capped: Sequence[bool],
    frames: dict[int, int],
    space: int,
    budget: int,
    counter: Counter,
) -> Fitted:
    """`items` (measured: `capped` says which are within their type's cap) fitted into
    `space` tokens of a `budget`-token answer; `frames` keeps each one's `frame`."""
    dropped: list[Dropped] = []
    uncappable = set()
    for index, item in enumerate(items):
        if not capped[index] and not item.protected:
            uncappable.add(index)
            dropped.append(
                Dropped(
                    item.type,
                    item.source,
                    f"{item.tokens} tokens, over its {item.max_tokens}-token cap, which is too "
                    "small to hold even a note about the cut",
                    item.tokens,
                )
            )
    order = sorted(
        (i for i in range(len(items)) if i not in uncappable),
        key=lambda i: (not items[i].protected, -items[i].priority, i),
    )
    # What each protected item after one being cut must keep: its frame and a cut note
    # (the first took all the room it could use, and the next, protected too, was
    # dropped: a counterexample hypothesis found).
    least = {i: _least(items[i], frames, i, counter) for i in order if items[i].protected}
    kept: set[int] = set()
    remaining = space
    chars_left = ANSWER_CHARS
    missed: Attachment | None = None  # the first droppable item that did not fit
    for index in order:
        item = items[index]
        if not item.protected and missed is not None:
            dropped.append(
                Dropped(
                    item.type,
                    item.source,
                    f"ranked after the {missed.type} attachment (priority {missed.priority}) "
                    "that did not fit",
                    item.tokens,
                )
            )
            continue
        if index not in frames:
            frames[index] = frame(item, counter)  # its header and fences, sent with it
        framed = frames[index]
        least.pop(index, None)
        room = remaining - framed - sum(least.values())  # the protected after it kept room
        worth_cutting = item.protected or room >= MIN_USEFUL_TOKENS
        room_chars = chars_left - _frame_chars(item)
        fits = (item.tokens <= room and _chars(item) <= room_chars) or (
            worth_cutting and truncate(item, room, counter, chars=room_chars)
        )
        if not fits:
            reason = (
                f"needs {item.tokens} tokens; {remaining} of the {budget}-token budget were left"
                if item.tokens > room
                else f"needs {_chars(item):,} characters; {max(0, room_chars):,} of {CHARS} "
                "were left"
            )
            if item.type == "file":  # an image, which is sent whole or not at all
                reason += f". Read it with {read_call(file_path=item.source)}"
            dropped.append(Dropped(item.type, item.source, reason, item.tokens))
            if not item.protected:
                missed = item
            continue
        kept.add(index)
        item.frame_tokens = framed
        remaining -= item.tokens + framed
        chars_left -= _chars(item) + _frame_chars(item)
    return Fitted(
        attachments=[items[i] for i in range(len(items)) if i in kept],
        dropped=dropped,
        budget_tokens=budget,
    )
