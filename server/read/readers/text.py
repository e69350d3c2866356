"""Text files as numbered lines, fitted to the line, byte and token caps.

Two ways in, one way out:
- `decode_text` + `view` for files read whole (at most `max_size_bytes`): the caller
  has the bytes (and their digest) already, so it can answer a re-read with a stub
  before any of this work is done.
- `stream_range` (text_stream.py) for ranged reads of larger files, decoded only up to
  the last line asked for.

Both number and cap their lines here (`number_lines`, `cut_line`; `fit_tokens`, in
text_fit.py, beside the room of what is sent with them: read/room.py). Lines are
numbered as `numbering.py` says (by default as `cat -n` prints them: the number
right-aligned in six columns, a tab, the line), one trailing CR dropped (the result's
`line_ending` says what the file uses). Lines over `max_line_chars` are cut with a
marker saying how much was cut.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass

from ... import quoting, words
from ...errors import ReadkeeperError
from ...files.encodings import NotText, TextEncoding, decode, detect, line_ending
from ...hints import again, call
from ...protocol import TextFile
from ...settings import Settings
from .. import numbering
from ..room import NO_ROOM, Room
from ..tokens import TokenCounter, estimate_tokens
from .text_fit import Window as Window
from .text_fit import fit_tokens as fit_tokens
from .text_past_end import end_that_fits, past_the_end


def default_cut(window: Window, last: int, total: int | None = None, why: str | None = None) -> str:
    """The note of a read from an offset that the default limit (or `why`: the token
    cap) cut at line `last` (the caller chose where it starts, not where it ends): the
    lines shown (of `total`, when known) and the way on."""
    of = f" of {total}" if total is not None else ""
    why = why or f"a read returns at most {window.limit} lines unless it asks for more"
    return (
        f"Showing lines {window.offset}-{last}{of} ({why}). Continue with {again(offset=last + 1)}."
    )


@dataclass(frozen=True)
class TextView:
    """A text read's answer, and what its caps kept from the agent."""

    file: TextFile
    tokens_left_out: int  # estimate of what the caps kept from the agent
    # How many tokens under its cap the lines left, when the cap did not cut them (None
    # when it did): the same view answers a read whose room is larger by at most that.
    spare: int | None = None
    room: Room = NO_ROOM  # the room it was made with
    rest: bool = False  # lines follow those asked for: its way on's room applied

    def fits(self, room: Room) -> bool:
        """Whether this view, made for another read's room, is also the view of a read
        with `room` (the same lines, within that read's cap)."""
        if room == self.room:
            return True
        if self.spare is None or quoting.sent_chars(self.file.content) > room.chars:
            return False  # cut by its own cap, or over the characters that read has left
        more = (room.cut - self.room.cut) if self.rest else (room.whole - self.room.whole)
        return more <= self.spare


def not_text(path: str, reason: str) -> ReadkeeperError:
    """The `binary` refusal of a file that is not text, saying why."""
    return ReadkeeperError(
        "binary",
        f"{path} is not a text file ({reason}): readkeeper reads text, images, PDFs and "
        f"notebooks, and this is none of them. Its folder's listing shows its kind and size "
        f"({call('list', path=os.path.dirname(path))}).",
        file_path=path,
        detail=reason,
    )


def decode_text(data: bytes, path: str) -> tuple[str, TextEncoding]:
    """A whole file's text and its encoding; `binary` when it is not text."""
    try:
        encoding = detect(data, complete=True)
        return decode(data, encoding), encoding
    except NotText as exc:
        raise not_text(path, exc.reason) from None
    except UnicodeDecodeError as exc:
        raise not_text(path, f"invalid {exc.encoding} at byte {exc.start}") from None


def split_lines(text: str) -> list[str]:
    """The lines of `text`, without their LF (a CR before it stays, for `cut_line`)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # "a\nb\n" has two lines, and "" has none
    return lines


def leading_lines(text: str, count: int) -> list[str]:
    """`split_lines(text)[:count]`, without splitting the lines after them (an outline's
    first lines, a range near the top of a long file)."""
    lines = text.split("\n", count)
    if len(lines) > count:
        lines.pop()  # the rest of the text, unsplit
    elif lines[-1] == "":
        lines.pop()
    return lines


def line_count(text: str) -> int:
    """`len(split_lines(text))`, without making the lines."""
    return text.count("\n") + (not text.endswith("\n") if text else 0)


def cut_line(line: str, settings: Settings) -> tuple[str, bool]:
    """A line as shown, one trailing CR dropped and cut at `max_line_chars`, and
    whether it was cut (its inner line breaks are escaped by `escape_lines`)."""
    if line.endswith("\r"):
        line = line[:-1]
    excess = len(line) - settings.max_line_chars
    if excess <= 0:
        return line, False
    return cut_at(line, excess, settings), True


def cut_at(line: str, excess: int, settings: Settings) -> str:
    """`line` cut at `max_line_chars`, with a marker saying how many characters
    (`excess`) were cut."""
    return line[: settings.max_line_chars] + f"{CUT_MARKER}{words.count(excess, 'more character')}]"


CUT_MARKER = " … [line cut: "  # how readkeeper's marker at the end of a cut line begins


def escape_lines(shown: list[str], cut: list[int] | None = None) -> tuple[list[str], list[bool]]:
    """`shown` with their inner line breaks escaped, in one pass over them all (a pass
    per line would double a read's time), and a cut marker's `[` of the file's own
    (quoting.marks; of a line readkeeper `cut`, up to the marker it added); and which of
    them held either."""
    joined = "\n".join(shown)
    breaks, marked = quoting.has_break(joined), quoting.has_marks(joined)
    if not breaks and not marked:
        return shown, []
    escaped = quoting.line(joined).split("\n") if breaks else list(shown)
    if marked:
        cuts = set(cut or ())
        escaped = [_marked(line, i in cuts) for i, line in enumerate(escaped)]
    return escaped, [a != b for a, b in zip(shown, escaped, strict=True)]


def _marked(line: str, was_cut: bool) -> str:
    if not was_cut:
        return quoting.marks(line)
    kept, marker, count = line.rpartition(CUT_MARKER)
    return quoting.marks(kept) + marker + count


def has_own_marks(text: str) -> bool:
    """Whether a file's `text` holds what `escape_lines` escapes."""
    return quoting.has_inner_break(text) or quoting.has_marks(text)


LISTED_LINES = 20  # line numbers named in a note


def marks_note(start: int, held: list[bool], cut: list[int], count: int) -> str | None:
    """The note naming, of the `count` lines shown from line `start`, those that hold a
    line break shown escaped (`held`, by index) and those cut (`cut`, indexes): a file's
    own `\\r` or `[line cut: ...]` looks just like readkeeper's, so only the lines named
    here hold readkeeper's."""
    escaped = [start + i for i, was in enumerate(held[:count]) if was]
    cuts = [start + i for i in cut if i < count]
    parts = []
    if escaped:
        parts.append(
            f"{_lines(escaped)} text shown escaped: line breaks other than LF "
            "(a lone CR, U+2028, ...) as \\r, \\u2028, ..., and a '[' opening cut-marker "
            "words such as '[line cut:' as \\x5b; in any other line such text is the "
            "file's own. An edit's old_string may give them as shown."
        )
    if cuts:
        parts.append(
            f"{_lines(cuts, 'was', 'were')} cut, ending in readkeeper's "
            "'… [line cut: N more characters]'; in any other line such text is the file's own."
        )
    return " ".join(parts) or None


def _lines(numbers: list[int], one: str = "holds", many: str = "hold") -> str:
    """ "Line 3 holds" or "Lines 3, 5 hold": the lines `numbers` names and its verb."""
    if len(numbers) == 1:
        return f"Line {numbers[0]} {one}"
    return f"Lines {_listed(numbers)} {many}"


def _listed(numbers: list[int]) -> str:
    shown = ", ".join(map(str, numbers[:LISTED_LINES]))
    more = len(numbers) - LISTED_LINES
    return f"{shown} and {more} more" if more > 0 else shown


# "     1\t", "     2\t", ...: formatting numbers is most of the cost of numbering a
# file, and the same first few thousand come up on every read.
_PREFIXES: dict[int, list[str]] = {width: [] for width in numbering.STYLES.values()}
_PREFIXES_LOCK = threading.Lock()
_PREFIX_CACHE_LINES = 1 << 16


def _prefixes(start: int, count: int, width: int) -> list[str]:
    end = start + count
    if end > _PREFIX_CACHE_LINES:
        return [numbering.prefix(n, width) for n in range(start, end)]
    cached = _PREFIXES[width]
    if len(cached) < end:
        with _PREFIXES_LOCK:
            cached.extend(numbering.prefix(n, width) for n in range(len(cached), end))
    return cached[start:end]


def _shown(
    lines: list[str], settings: Settings, has_cr: bool = True
) -> tuple[list[str], list[int]]:
    """Each line as shown (one trailing CR dropped, a long line cut; inner line breaks
    are left to `escape_lines`), and the indexes of those cut. `has_cr`: whether the text
    holds a CR."""
    if not has_cr and max(map(len, lines), default=0) <= settings.max_line_chars:
        return lines, []  # the common case: no line to cut, no CR to drop
    shown: list[str] = []
    cut: list[int] = []
    for index, line in enumerate(lines):
        line, was_cut = cut_line(line, settings)
        if was_cut:
            cut.append(index)
        shown.append(line)
    return shown, cut


def number_lines(shown: list[str], start: int, width: int) -> list[str]:
    """The lines numbered from `start`, as the `line_numbers` setting says."""
    return list(map(str.__add__, _prefixes(start, len(shown), width), shown))


# The last few views, by content digest and everything else a view depends on: a
# forced re-read of an unchanged file (an agent's after a context compaction, the
# editor's and the terminal agent's of the same file) is answered without numbering
# and counting its lines again. A view holds at most `max_size_bytes` of text and its
# numbers, so a few of them stay within a few MB.
_VIEWS: OrderedDict[tuple[object, ...], TextView] = OrderedDict()
_VIEWS_LOCK = threading.Lock()
_VIEWS_KEPT = 8


def view(
    text: str,
    path: str,
    encoding: TextEncoding,
    window: Window,
    content_digest: str,
    settings: Settings,
    counter: TokenCounter,
) -> TextView:
    """The numbered, capped view of `window` in a text held in memory."""
    key = (
        content_digest,
        path,
        encoding,
        dataclasses.replace(window, room=NO_ROOM),  # a view fits other rooms (`fits`)
        settings.max_line_chars,
        settings.max_tokens,
        settings.default_limit,
        settings.line_numbers,
        counter.encoding_name,
    )
    with _VIEWS_LOCK:
        kept = _VIEWS.get(key)
        if kept is not None and kept.fits(window.room):
            _VIEWS.move_to_end(key)
            return kept
    made = _view(text, path, encoding, window, settings, counter)
    with _VIEWS_LOCK:
        _VIEWS[key] = made
        if len(_VIEWS) > _VIEWS_KEPT:
            _VIEWS.popitem(last=False)
    return made


def _view(
    text: str,
    path: str,
    encoding: TextEncoding,
    window: Window,
    settings: Settings,
    counter: TokenCounter,
) -> TextView:
    first = window.offset - 1
    # A range (an outline's first lines, a window of a long file) splits only the lines
    # up to its end; the rest are split only if a cap cuts it (the note's next lines).
    ranged = window.ranged
    lines = leading_lines(text, first + window.limit) if ranged else split_lines(text)
    total = line_count(text) if ranged else len(lines)
    if window.offset > max(total, 1):
        tail, _ = _shown(lines[max(0, total - window.limit) : total], settings, "\r" in text)
        end = end_that_fits(tail, total, window.cap(settings, True), settings, counter)
        raise past_the_end(path, window.offset, total, end)
    chosen = lines[first : first + window.limit]
    shown, cut = _shown(chosen, settings, has_cr="\r" in text)
    held: list[bool] = []  # which lines hold a line break shown escaped
    if has_own_marks(text):
        shown, held = escape_lines(shown, cut)
    numbered = number_lines(shown, window.offset, settings.number_width)
    content = "\n".join(numbered)
    note: str | None = None
    # Sent beside the lines: the note on marks (as long as it can be: fewer lines shown
    # name fewer), the way on when lines follow those asked for and the caller did not
    # choose where the read ends (a range it chose names none).
    marks = marks_note(window.offset, held, cut, len(numbered))
    extra = counter.count(marks) if marks else 0
    chosen_range = window.ranged and not window.defaulted
    rest = not chosen_range and first + len(chosen) < total
    # A range the caller chose, read with fewer lines, names no rest: the file's length
    # is known.
    fitted = fit_tokens(path, window, shown, content, settings, counter, rest, extra, False)
    if fitted.kept is not None:
        numbered = numbered[: fitted.kept]
        content = "\n".join(numbered)
        size = (
            f"{len(text):,} characters"
            if fitted.by_chars
            else f"about {_approx(estimate_tokens(text))} tokens"
        )
        note = f"the file is {size}, {fitted.cut_by}"
    shown_end = window.offset + len(numbered) - 1
    # Partial: the agent got less than it asked for (a whole read asks for everything).
    partial = (not window.ranged and shown_end < total) or len(numbered) < len(chosen)
    next_offset = shown_end + 1 if shown_end < total else None
    if partial:
        # The way on names the offset alone: a read from there is cut where the default
        # count or the cap cuts it, never refused (`_over_cap`), and goes on the same way
        # (round 33: a limit that fit, named here, ended the way on: a range the caller
        # asked for names no rest).
        why = note or f"a read returns at most {window.limit} lines unless it asks for more"
        note = (
            f"Showing lines {window.offset}-{shown_end} of {total} ({why}). "
            f"Continue with {again(offset=next_offset)}."
        )
    elif window.defaulted and next_offset is not None and len(numbered) == window.limit:
        note = default_cut(window, shown_end, total)
    elif total == 0:
        note = "The file is empty."
    escaped = sum(held[: len(numbered)])
    marks = marks_note(window.offset, held, cut, len(numbered))  # of the lines shown
    if marks:
        note = f"{note} {marks}" if note else marks
    left_out = estimate_tokens("\n".join(lines[shown_end:])) if partial else 0
    return TextView(
        TextFile(
            file_path=path,
            content=content,
            start_line=window.offset,
            num_lines=len(numbered),
            total_lines=total,
            tokens=fitted.tokens,
            encoding=encoding.label,
            line_ending=line_ending(text),
            partial=partial,
            next_offset=next_offset,
            note=note,
            truncated_lines=len(cut) or None,
            escaped_lines=escaped or None,
        ),
        left_out,
        fitted.spare,
        window.room,
        rest,
    )


def _approx(n: int) -> str:
    return f"{round(n, -3):,}" if n >= 10_000 else f"{n:,}"
