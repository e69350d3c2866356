"""What an edit's result and refusals show of the text: numbered lines around a change
(as readkeeper/read shows them), long lines cut, and line counts."""

from __future__ import annotations

from .. import quoting, words
from ..read import numbering

SNIPPET_CONTEXT_LINES = 3
SNIPPET_MAX_LINES = 40
SNIPPET_LINE_CHARS = 500


def numbered_snippet(
    text: str, start: int, end: int, width: int = numbering.PADDED
) -> tuple[str, int]:
    """Numbered lines (as readkeeper/read shows them) around text[start:end]; and the
    number of the first line shown. Only the lines shown are looked at."""
    if not text:
        return "", 1
    last_char = max(start, end - 1)
    first = text.count("\n", 0, start)  # 0-based line of the change's start
    low, begin = first, text.rfind("\n", 0, start) + 1
    while low > first - SNIPPET_CONTEXT_LINES and begin > 0:
        begin = text.rfind("\n", 0, begin - 1) + 1
        low -= 1
    stop = text.find("\n", last_char)  # the end of the change's last line
    for _ in range(SNIPPET_CONTEXT_LINES):
        if stop == -1:
            break
        stop = text.find("\n", stop + 1)
    lines = (text[begin:] if stop == -1 else text[begin:stop]).split("\n")
    if stop == -1 and text.endswith("\n"):
        lines.pop()  # nothing after the final line break
    rows = numbering.numbered(map(cut, lines), low + 1, width)
    hidden = len(rows) - SNIPPET_MAX_LINES
    if hidden > 0:
        half = SNIPPET_MAX_LINES // 2
        gap = numbering.gap(f"… ({words.count(hidden, 'line')} not shown)", width)
        rows = [*rows[:half], gap, *rows[len(rows) - half :]]
    return "\n".join(rows), low + 1


def cut(line: str) -> str:
    """`line` as a snippet shows it: without its CR, a cut marker's `[` of the file's own
    escaped (quoting.marks), and cut when very long, with readkeeper's marker."""
    line = line.removesuffix("\r")
    if len(line) <= SNIPPET_LINE_CHARS:
        return quoting.marks(line)
    kept = quoting.marks(line[:SNIPPET_LINE_CHARS])
    return kept + f" … [line cut: {len(line) - SNIPPET_LINE_CHARS} more]"


def count_lines(text: str) -> int:
    """The number of lines of `text` (a last line without a line break counts)."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)
