"""The lines a read asks for (`Window`), and their fit under the token cap beside what is
sent with them (read/room.py): counted exactly, a whole read or one from an offset
alone cut to what fits, a range the caller chose refused naming the most lines its read
may show (`fit_tokens`)."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ReadkeeperError
from ...hints import again, call
from ...quoting import sent_chars
from ...settings import Settings
from ..numbered_tokens import NumberedLines
from ..room import LINES_MAX_CHARS, NO_ROOM, Room, chars_words, lines_cap
from ..tokens import TokenCounter


@dataclass(frozen=True)
class Window:
    """The lines asked for: `offset` is 1-based; `ranged` when offset or limit was given;
    `defaulted` when the limit is the default, not the caller's (an offset alone): lines
    left after it are then named, as a whole read's are."""

    offset: int
    limit: int
    ranged: bool
    defaulted: bool = False
    symbol: bool = False  # a symbol's lines: over the cap, read on from its first line
    room: Room = NO_ROOM  # what the read sends besides its lines (read/room.py)

    def cap(self, settings: Settings, rest: bool, extra: int = 0) -> int:
        """The tokens its lines may take: `max_tokens` less the room of what is sent
        with them (its way on's, when `rest`: lines follow the shown ones) and `extra`
        (a note on the lines themselves); half of it at least (read/room.py)."""
        return lines_cap(settings.max_tokens, (self.room.cut if rest else self.room.whole) + extra)


def _over_cap(
    path: str,
    window: Window,
    counts: NumberedLines,
    lines: int,
    settings: Settings,
    within: int,
    by_chars: int,
) -> int:
    """How many of the `lines` fit in `within` tokens (the token cap less the room of what
    is sent with them when they are cut: Window.cap) and in the characters its room
    leaves them (the first `by_chars` of them); raises for a range the caller chose."""
    cap = settings.max_tokens
    # A range the caller chose is refused; from an offset alone (the caller chose where
    # it starts, not where it ends) it is cut, as a whole read is (round 33: the default
    # count's way on, `offset=2001`, was refused, then the next, and so on), unless not
    # even its first line fits (round 34: 0 lines, and the same offset named again). The
    # limit a refusal names fits beside the way on its read may name, as sent.
    chosen = window.ranged and not window.defaulted
    by_tokens = counts.longest_fit(within)
    fits = min(by_tokens, by_chars)
    if fits and not chosen:
        return fits
    # What the range costs, for the refusal: counted as far as the cap, the rest
    # scaled (a range may be many times the cap; its count would be the costliest
    # part of a refusal).
    tokens = counts.about()
    about = "" if counts.counted_all else "about "
    last = window.offset + lines - 1
    if fits and window.symbol:  # from its first line on, each read naming the next
        start = again(offset=window.offset)
        advice = f"Read it from its first line ({start}): each read is cut at the cap."
    elif fits:
        fewer = again(offset=window.offset, limit=fits)  # its other options kept
        advice = f"Read fewer lines: {fewer}."
    elif by_chars == 0 and window.room.chars < LINES_MAX_CHARS:  # late in a readMany
        advice = f"Read the file alone ({call('read', file_path=path)})."
    elif by_chars == 0:  # its characters, not its tokens (round 37)
        advice = (
            f"Line {window.offset} alone is over {chars_words(window.room.chars)}; search "
            "the file instead "
            f"({call('grep', pattern='<what you look for>', path=path)}), or ask the user to "
            "lower max_line_chars (READKEEPER_MAX_LINE_CHARS), where reads cut long lines."
        )
    else:
        advice = (
            f"Line {window.offset} alone is over the cap; raise the max_tokens setting "
            "(READKEEPER_MAX_TOKENS) or search the file instead "
            f"({call('grep', pattern='<what you look for>', path=path)})."
        )
    if not fits and lines > 1:  # the line alone is over: the lines after it still read
        advice += f" The lines after it: {again(offset=window.offset + 1)}."
    over = f"over the {cap:,}-token cap"
    if by_chars < lines <= by_tokens:  # its characters alone (as JSON writes them)
        over = f"within the {cap:,}-token cap but over {chars_words(window.room.chars)}"
    elif by_chars < lines:
        over = f"{over}, and over {chars_words(window.room.chars)}"
    elif tokens <= cap:  # over with what is sent beside them (read/room.py)
        over = (
            f"over the {cap:,}-token cap with the {cap - within:,} kept for what is sent "
            "beside them (the file's name, the calls for the rest)"
        )
    raise ReadkeeperError(
        "token_limit",
        f"Lines {window.offset}-{last} of {path} come to {about}{tokens:,} tokens, {over}. "
        f"{advice}",
        file_path=path,
        tokens=tokens,
        max_tokens=cap,
        largest_limit=fits,
    )


@dataclass(frozen=True)
class TokenFit:
    """What the numbered lines of a read cost, after the token cap."""

    tokens: int
    kept: int | None  # the lines a whole read over the cap was cut to; None: all of them
    spare: int | None = None  # the tokens left under the cap, when it did not cut
    cut_by: str = ""  # the cap that cut them, as a note names it ("over the ...")
    by_chars: bool = False  # the characters cut them, not the tokens


def fit_tokens(
    path: str,
    window: Window,
    shown: list[str],
    content: str,
    settings: Settings,
    counter: TokenCounter,
    rest: bool = True,
    extra: int = 0,
    fewer_rest: bool = True,
) -> TokenFit:
    """The tokens of `content`, the numbered `shown` lines, counted exactly: by the token
    table's index when the table has not loaded yet and the text's bytes are under the
    cap (tokens.py `early_count`), else with the table. The cap is what the window's room
    leaves (`Window.cap`; `rest`: the read names a way on even uncut, `extra`: a note on
    the lines). Over it a range the caller chose is refused (`token_limit`), naming the
    most lines its read may show beside the way on that read names (`fewer_rest`: it
    names one; a streamed range's ends before the end of a file of unknown length); a
    whole read, or one from an offset alone, is cut to the lines that fit beside its way
    on."""
    cap = window.cap(settings, rest, extra)
    by_chars = _within_chars(shown, content, window.room.chars)
    if by_chars == len(shown):
        early = counter.early_count(content, cap)
        if early is not None:
            return TokenFit(early, None, cap - early)
    counts = counter.numbered(shown, window.offset, settings.number_width)
    if by_chars == len(shown):
        tokens = counts.tokens_within(cap)
        if tokens is not None:
            return TokenFit(tokens, None, cap - tokens)
    chosen = window.ranged and not window.defaulted
    cut_cap = window.cap(settings, fewer_rest or not chosen, extra)
    kept = _over_cap(path, window, counts, len(shown), settings, cut_cap, by_chars)
    cut_by = f"over the {settings.max_tokens:,}-token cap"
    chars_cut = kept == by_chars < len(shown)  # its characters, not its tokens
    if chars_cut:
        cut_by = f"over {chars_words(window.room.chars)}"
    return TokenFit(counts.tokens(kept), kept, cut_by=cut_by, by_chars=chars_cut)


# What numbering adds to a line at most: its number, a tab, the line break.
_NUMBER_CHARS = 12


def _within_chars(shown: list[str], content: str, most: int) -> int:
    """How many of the `shown` lines fit in `most` characters numbered, as JSON writes
    them (quoting.sent_chars; all, at once, for the `content` they make when it does)."""
    if sent_chars(content) <= most:
        return len(shown)
    used = 0
    for count, line in enumerate(shown):
        used += sent_chars(line) + _NUMBER_CHARS
        if used > most:
            return count
    return len(shown)
