"""The refusal of a read from an offset past a file's last line, and the offset its way
on names: the same read from where the file's last lines show whole, as many as the read
asked for, fewer when those are over the token cap (round 33: "To see its end" named
2,000 long lines, refused `token_limit`)."""

from __future__ import annotations

from ... import quoting, words
from ...errors import ReadkeeperError
from ...hints import again
from ...settings import Settings
from ..tokens import TokenCounter


def past_the_end(path: str, offset: int, total: int, end: int) -> ReadkeeperError:
    """The `bad_params` refusal of `offset` past the last of the file's `total` lines:
    its way on is the same read from `end` (`end_that_fits`), its other params as they
    were (round 28: a call naming the offset alone dropped the agent's limit, and was
    refused `token_limit`)."""
    return ReadkeeperError(
        "bad_params",
        f"offset {offset} is past the end of {quoting.name(path)}, which has "
        f"{words.count(total, 'line')}. To see its end: {again(offset=end)}.",
        field="offset",
        total_lines=total,
    )


# What a line may cost more in the anchors format than numbered as `cat -n` (its two
# letters beside the number: a line of a few characters), so the way on fits either.
_FORMAT_TOKENS = 1


def end_that_fits(
    tail: list[str], total: int, cap: int, settings: Settings, counter: TokenCounter
) -> int:
    """The offset of the longest run of the file's last lines within `cap` (the token cap
    less what is sent with them: Window.cap) in either line format: `tail`, its last
    lines as a read shows them (as many as the read asked for), of `total`. At least the
    last line (cut to the line cap, it fits)."""
    first = total - len(tail) + 1
    counts = counter.numbered(tail, first, settings.number_width)
    fits = counts.longest_tail(cap, _FORMAT_TOKENS)
    return max(1, total - max(1, fits) + 1)
