"""One budget for the searches an edit makes beyond the exact match of `old_string`.

When `old_string` is not in the file as written, the edit looks for a slipped copy of it
(forgiving.py, whitespace and quotes set aside). That search scans the file's lines once
per place it tries, so a file of many alike lines and a long `old_string` could cost
minutes of CPU per call. Every such scan spends from one budget, per edit call (a batch
of `edits` and each file of a multi-file edit share their call's): the characters
scanned. When it runs out, the search stops and the edit answers its usual `no_match`
(never a guess), saying the search was cut (`noted`).
"""

from __future__ import annotations

from ..errors import ReadkeeperError

# Characters one call's forgiving searches may scan (each line's key made, each place
# tried): about a second of CPU; an honest slip needs one or two scans of its file.
MAX_SCANNED = 40_000_000


class SearchBudget:
    """What is left of one edit call's budget, and whether a search was cut by it."""

    def __init__(self, chars: int = MAX_SCANNED) -> None:
        self.left = chars
        self.cut = False

    def spend(self, chars: int) -> bool:
        """Take `chars` from the budget; False (and `cut` set) when they are not left."""
        if chars > self.left:
            self.left = 0
            self.cut = True
            return False
        self.left -= chars
        return True


def noted(exc: ReadkeeperError, budget: SearchBudget) -> ReadkeeperError:
    """`exc`, with a `no_match` saying so when the search for a slipped copy was cut."""
    if exc.kind != "no_match" or not budget.cut:
        return exc
    return ReadkeeperError(
        "no_match",
        f"{exc.message} (The search for text matching old_string with whitespace and "
        "quotes set aside was cut at its budget, so it may have missed one: copy "
        "old_string exactly from a read of the lines.)",
        **{**exc.data, "search_cut": True},
    )
