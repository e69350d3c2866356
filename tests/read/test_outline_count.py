"""Whether a whole read is over `outline_over_tokens` is settled by counting only as far
as the threshold (issue 34): the lines past it are not counted, and the outline's
`file_tokens` (about what the file costs read whole) is scaled from those counted."""

from __future__ import annotations

from helpers import stdlib_text_files
from readkeeper.read.numbered_tokens import BLOCK_LINES
from readkeeper.read.readers.outline_read import whole_tokens
from readkeeper.read.readers.text import split_lines
from readkeeper.read.tokens import TokenCounter
from readkeeper.settings import Settings

COUNTER = TokenCounter(keep_counts=False)


def numbered_count(text: str) -> int:
    lines = split_lines(text)
    return COUNTER.count("\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, 1)))


def modules() -> list[str]:
    found = []
    for path in stdlib_text_files():
        if path.suffix == ".py" and 20_000 < path.stat().st_size < 60_000:
            found.append(path.read_text(encoding="utf-8", errors="replace"))
    return found[::7][:30]


def test_a_count_past_the_threshold_stops_there() -> None:
    text = max(modules(), key=len)
    lines = split_lines(text)
    counts = TokenCounter(keep_counts=False).numbered(lines, 1)
    assert counts.tokens_within(2_000) is None
    counted = (len(counts._blocks) - 1) * BLOCK_LINES
    assert counted < len(lines) // 2  # the rest was never counted
    assert counts.about() > 2_000


def test_about_is_exact_when_all_was_counted_and_close_when_scaled() -> None:
    settings = Settings()
    for text in modules():
        exact = numbered_count(text)
        whole = whole_tokens(text, settings, COUNTER)
        if exact <= settings.outline_over_tokens:
            assert whole is None
            continue
        assert whole is not None
        assert abs(whole - exact) <= exact * 0.2, (whole, exact)
        lines = split_lines(text)
        counts = COUNTER.numbered(lines, 1)
        assert counts.tokens_within(10**9) == exact == counts.about()


def test_about_scales_short_lines_by_their_characters_and_newlines() -> None:
    # A file of short lines (a data table, a closing brace a line): each newline weighs
    # as much as the few characters before it, in the lines counted and in the rest.
    for line in ("x = 1", "pass", "}"):
        lines = [line] * 20_000
        counts = TokenCounter(keep_counts=False).numbered(lines, 1)
        assert counts.tokens_within(2_000) is None
        exact = COUNTER.numbered(lines, 1).tokens_within(10**9)
        assert exact is not None
        assert abs(counts.about() - exact) <= exact * 0.15, (line, counts.about(), exact)
