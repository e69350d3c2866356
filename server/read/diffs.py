"""Diffs: one format for telling what changed between two texts, shared by stale
edits, merges and change notices.

`bounded_diff` is the unified diff an agent reads (in a `stale` refusal, in the external
change a merged edit reports, in a change notice): numbered as in the whole file, and
cut to a token budget. `text_hunks` are the changed line ranges: the disjoint-merge
proof checks an edit against them, and a merge reports where the change is.

difflib does the diffing. The unchanged ends are found first, on characters (in C), so
difflib, which compares line by line in Python, sees only the changed middle. difflib is
quadratic or worse on some rewrites (40,000 lines of 400 values in a new order: a
minute of CPU), so each diff runs under a budget: it is not started when the middle's
lines pair up more than `MAX_LINE_PAIRS` times (what one of difflib's longest-match
passes costs), and it stops at `DIFF_SECONDS`. Diffs made together (a batch of change
notices, one `readkeeper/changes`) share one `Budget` as well, so ten costly files cost
one budget, not ten. Past its budget a diff is never guessed: the agent is told the file
changed, how much, and the ranged read that shows it.
"""

from __future__ import annotations

import difflib
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .. import quoting, words
from ..errors import DIFF_HEADER
from ..files.encodings import line_ending
from ..hints import call
from ..protocol import ExternalChange
from .tokens import estimate_tokens

# A stale edit's diff, and an external change reported with a merge, are cut here.
DIFF_MAX_TOKENS = 2_000
# The budget of one diff: line pairs difflib may consider in one pass (about a second of
# Python at most), and seconds in all.
MAX_LINE_PAIRS = 2_000_000
DIFF_SECONDS = 1.0


class TooCostly(Exception):
    """The diff was over its budget (MAX_LINE_PAIRS or DIFF_SECONDS), or its shared
    `Budget` was spent (`spent`: then it was not tried at all)."""

    def __init__(self, why: str, spent: bool = False) -> None:
        super().__init__(why)
        self.spent = spent


class Budget:
    """Time shared by the diffs made together: each diff gets what is left (at most
    its own DIFF_SECONDS), and its pairs of equal lines in proportion."""

    def __init__(self, seconds: float = DIFF_SECONDS) -> None:
        self.deadline = time.monotonic() + seconds

    def left(self) -> float:
        """Seconds left, never less than 0."""
        return max(0.0, self.deadline - time.monotonic())


class Bounded(difflib.SequenceMatcher):  # type: ignore[type-arg]
    """difflib's matcher, refused up front when its first pass alone would be too
    costly, and stopped between passes at its deadline (`TooCostly`). Every line-by-line
    comparison readkeeper makes goes through it (an edit's lines a search showed kept
    after it: 42 s for a one-line edit among 16,000 alike lines; a forgiven old_string's
    new lines re-indented: 38 s for 1,000 alike lines)."""

    def __init__(self, a: list[str], b: list[str], budget: Budget | None = None) -> None:
        seconds = DIFF_SECONDS if budget is None else min(DIFF_SECONDS, budget.left())
        if seconds <= 0:
            raise TooCostly("the time for diffs of these changes went to other files", True)
        self._seconds = seconds
        self._deadline = time.monotonic() + seconds
        # A pass cannot be stopped inside: with less time left, smaller passes only.
        max_pairs = int(MAX_LINE_PAIRS * seconds / DIFF_SECONDS)
        super().__init__(None, a, b)
        # What one longest-match pass over the whole middle walks: each line of `a`
        # against every line of `b` equal to it (difflib has already dropped lines too
        # common in `b` to be worth matching).
        # Counted per distinct line (Counter counts in C): a tenth of a normal diff's
        # time when counted line by line.
        index: dict[str, list[int]] = self.b2j  # type: ignore[attr-defined]
        pairs = sum(n * len(index.get(line, ())) for line, n in Counter(a).items())
        if pairs > max_pairs:
            raise TooCostly(f"over {max_pairs:,} pairs of equal lines")

    def find_longest_match(
        self, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None
    ) -> difflib.Match:
        if time.monotonic() > self._deadline:
            raise TooCostly(f"over {self._seconds:.2g} s")
        return super().find_longest_match(alo, ahi, blo, bhi)


# --- diffs shown to the agent ------------------------------------------------------------


# The most characters of a diff, as JSON writes them (quoting.sent_chars): what a read
# sends at most (room.LINES_MAX_CHARS, which a test keeps equal), so a diff fits one
# answer (500,000) beside what is sent with it.
DIFF_MAX_CHARS = 400_000


def bounded_diff(
    before: str,
    after: str,
    path: str,
    max_tokens: int = DIFF_MAX_TOKENS,
    budget: Budget | None = None,
    count: Callable[[str], int] | None = None,
) -> tuple[str, bool]:
    """A unified diff of `before` -> `after`, cut to `max_tokens` with a note: by their
    count when `count` is given (a change notice's cap), else by the estimate; within
    `budget` too when given; and always within `DIFF_MAX_CHARS` as JSON writes them
    (round 42: a notice of control-character lines at a cap raised to 1,000,000 tokens
    was 3,002,684 characters on the wire)."""
    crs = "\r" in before or "\r" in after  # without one, no replace can make them equal
    if crs and before != after and before.replace("\r\n", "\n") == after.replace("\r\n", "\n"):
        return (
            f"Only line endings changed ({line_ending(before)} -> {line_ending(after)}); "
            "the text is the same.",
            False,
        )
    # Only the part that changed, with room for the context lines, goes to difflib.
    start, a_end, b_end = _unchanged_ends(before, after)
    for _ in range(3):
        if start > 0:
            start = before.rfind("\n", 0, start - 1) + 1
    a_end, b_end = _lines_after(before, a_end, 3), _lines_after(after, b_end, 3)
    head = before.count("\n", 0, start)
    a = [ln.rstrip("\n").removesuffix("\r") for ln in _keepends(before[start:a_end])]
    b = [ln.rstrip("\n").removesuffix("\r") for ln in _keepends(after[start:b_end])]
    try:
        matcher = Bounded(a, b, budget)
        matcher.get_opcodes()  # the matching, done here (and kept) so its budget is caught
    except TooCostly as exc:
        return _too_costly(before, after, path, head, len(b), exc), True
    lines = _unified(matcher, a, b, path)
    kept: list[str] = []
    used = used_chars = 0
    for line in lines:
        if line.startswith("@@"):
            line = _renumber_hunk(line, head)
        # A line's count with its newline: the pieces of the joined text end there.
        cost = count(line + "\n") if count is not None else estimate_tokens(line) + 1
        used_chars += quoting.sent_chars(line) + 2
        if used + cost > max_tokens or used_chars > DIFF_MAX_CHARS:
            rest = sum(1 for _ in lines) + 1
            while count is not None and kept and count("\n".join(kept)) > max_tokens:
                kept.pop()  # where lines merge across a newline: never over the cap
                rest += 1
            cap = (
                f"its {max_tokens:,}-token cap"
                if used + cost > max_tokens
                else f"the {DIFF_MAX_CHARS:,} characters a diff sends at most"
            )
            kept.append(
                f"... diff cut at {cap}: "
                f"{words.count(rest, 'more diff line', grouped=True)} not shown. "
                "Read the file to see all of it."
            )
            return "\n".join(kept), True
        used += cost
        kept.append(line)
    return "\n".join(kept), False


def _unified(matcher: Bounded, a: list[str], b: list[str], path: str) -> Iterator[str]:
    """The unified diff (2 lines of context) of the matcher's two line lists."""
    groups = matcher.get_grouped_opcodes(2)
    # Lines are matched as they are and shown escaped, the name quoted when odd
    # (quoting.py): each file line is one diff line, and none poses as a header or holds
    # a cut marker of readkeeper's (quoting.diff_line).
    shown = quoting.name(path)
    yield f"{DIFF_HEADER}{shown} (as you read it)"
    yield f"+++ {shown} (now)"
    for group in groups:
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (quoting.diff_line(" ", line) for line in a[i1:i2])
                continue
            yield from (quoting.diff_line("-", line) for line in a[i1:i2])
            yield from (quoting.diff_line("+", line) for line in b[j1:j2])


def _range(start: int, stop: int) -> str:
    """A hunk's range as unified diffs write it: 1-based, the length left out when 1."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _too_costly(before: str, after: str, path: str, head: int, changed: int, why: TooCostly) -> str:
    """What a diff over its budget says instead: that the file changed, how much, and
    the read that shows it."""
    lines_before = _count_lines_of(before, 0, len(before))
    lines_after = _count_lines_of(after, 0, len(after))
    outcome = "it was not diffed" if why.spent else "the change is too costly to diff"
    return (
        f"{quoting.name(path)} changed ({words.count(lines_before, 'line', grouped=True)} as "
        "you read it, "
        f"{lines_after:,} now), and {outcome} ({why}). It starts at line {head + 1} and "
        f"spans about {words.count(max(changed, 1), 'line', grouped=True)} now; read them: "
        f"{call('read', file_path=path, offset=head + 1, limit=min(max(changed, 1), 2000))}."
    )


def _lines_after(text: str, offset: int, count: int) -> int:
    """The offset `count` line starts past `offset` (a line start), or the end."""
    for _ in range(count):
        after = text.find("\n", offset)
        if after == -1:
            return len(text)
        offset = after + 1
    return offset


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def _renumber_hunk(line: str, offset: int) -> str:
    if not offset:
        return line
    match = _HUNK.match(line)
    if match is None:
        return line
    a, a_len, b, b_len = match.groups()
    return f"@@ -{int(a) + offset}{a_len or ''} +{int(b) + offset}{b_len or ''} @@"


def external_change(snapshot: str, current: str, path: str) -> ExternalChange:
    """What a merged edit reports of the change it was merged over: the diff from
    `snapshot` to `current`, and the first and last changed line of `current`."""
    budget = Budget()  # the two share one budget: a costly change costs it once
    diff, truncated = bounded_diff(snapshot, current, path, budget=budget)
    try:
        hunks, _, _ = text_hunks(snapshot, current, budget)
    except TooCostly:
        hunks = []  # the diff says why; no lines rather than wrong ones
    lines = [hunks[0][2] + 1, max(hunks[-1][2] + 1, hunks[-1][3])] if hunks else []
    return ExternalChange(diff=diff, truncated=truncated, lines=lines)


# --- changed line ranges -----------------------------------------------------------------


def text_hunks(
    a: str, b: str, budget: Budget | None = None
) -> tuple[list[tuple[int, int, int, int]], int, int]:
    """The changed line ranges (i1, i2, j1, j2) of two texts split at LF, lines a[i1:i2]
    having become b[j1:j2]; and how many lines `a` and `b` have. Raises TooCostly past
    the diff's budget."""
    start, a_end, b_end = _unchanged_ends(a, b)
    head = a.count("\n", 0, start)
    a_tail, b_tail = _count_lines_of(a, a_end, len(a)), _count_lines_of(b, b_end, len(b))
    a_mid, b_mid = _keepends(a[start:a_end]), _keepends(b[start:b_end])
    matcher = Bounded(a_mid, b_mid, budget)
    hunks = [
        (i1 + head, i2 + head, j1 + head, j2 + head)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]
    return hunks, head + len(a_mid) + a_tail, head + len(b_mid) + b_tail


def _unchanged_ends(a: str, b: str) -> tuple[int, int, int]:
    """Where the lines `a` and `b` share at both ends stop: the offset (the same in
    both) where the first differing line starts, and the offsets in `a` and in `b`
    where the identical last lines start. Found on characters, in C, not line by line."""
    head, tail = common_ends(a, b)
    start = a.rfind("\n", 0, head) + 1
    a_tail, b_tail = len(a) - tail, len(b) - tail
    # Move the shared tail forward to a line start in both texts: by as much as the one
    # that needs more (the characters after the tail's start are the same in both).
    step = max(_to_line_start(a, a_tail), _to_line_start(b, b_tail))
    return start, a_tail + step, b_tail + step


def _to_line_start(text: str, offset: int) -> int:
    if offset == 0 or text[offset - 1] == "\n":
        return 0
    after = text.find("\n", offset)
    return (len(text) if after == -1 else after + 1) - offset


def _count_lines_of(text: str, begin: int, end: int) -> int:
    """Lines (split at LF, endings kept) of text[begin:end], which begins a line."""
    breaks = text.count("\n", begin, end)
    return breaks + (1 if end > begin and text[end - 1] != "\n" else 0)


def _keepends(text: str) -> list[str]:
    """Lines with their endings, split at LF only (CRs stay part of the line)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def common_ends(a: str, b: str) -> tuple[int, int]:
    """Lengths of the common prefix and of the common suffix of `a` and `b`, never
    overlapping (so a[head:len(a)-tail] -> b[head:len(b)-tail] is the whole change)."""
    head = _agreeing(a, b, lambda n: a[:n] == b[:n])
    most = min(len(a), len(b)) - head
    tail = _agreeing(a, b, lambda n: a[len(a) - n :] == b[len(b) - n :], most)
    return head, tail


def common_line_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """`common_ends` of two lists of lines: how many lines they share from their starts,
    and from their ends, never overlapping."""
    head = _agreeing(a, b, lambda n: a[:n] == b[:n])
    most = min(len(a), len(b)) - head
    tail = _agreeing(a, b, lambda n: a[len(a) - n :] == b[len(b) - n :], most)
    return head, tail


def _agreeing(
    a: Sequence[Any], b: Sequence[Any], same: Callable[[int], bool], most: int | None = None
) -> int:
    """The largest n <= most with same(n), by bisection (slices compare in C)."""
    low, high = 0, min(len(a), len(b)) if most is None else most
    while low < high:
        middle = (low + high + 1) // 2
        if same(middle):
            low = middle
        else:
            high = middle - 1
    return low
