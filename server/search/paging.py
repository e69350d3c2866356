"""One rule for a page asked past the end of a search or listing (grep, glob, list):
it is refused, `bad_params` naming `offset` and the last offset that shows something,
never answered as an empty page ("No matches." would claim the search found nothing).

Offset 0 is always a valid page: nothing found there is the search's own answer.
"""

from __future__ import annotations

from ..errors import ReadkeeperError
from ..hints import again
from ..words import count


def refuse_past_end(offset: int, total: int, noun: str, so_far: bool = False) -> None:
    """Refuse `offset` when it is past the `total` items (`noun`s) of a search's answer;
    `so_far`: the walk stopped early, so `total` is what it found before it stopped."""
    if offset == 0 or offset < total:
        return
    found = f"{count(total, noun)}{' found before the walk stopped' if so_far else ''}"
    # Said as the same search (each front end names its own flag or argument for it).
    last = (
        f"offsets 0-{total - 1}: the same search with {again(offset=total - 1)} shows the last"
        if total
        else f"the same search with {again(offset=0)} answers it"
    )
    raise ReadkeeperError(
        "bad_params",
        f"offset {offset} is past the end: there {'is' if total == 1 else 'are'} {found} ({last}).",
        field="offset",
        last_offset=max(total - 1, 0),
    )
