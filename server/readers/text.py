"""Text files as numbered lines, fitted to the line, byte and token caps.

Two ways in, one way out:
- `decode_text` + `view` for files read whole (at most `max_size_bytes`): the caller
  has the bytes (and their digest) already, so it can answer a re-read with a stub
  before any of this work is done.
- `stream_range` for ranged reads of larger files: lines are decoded incrementally and
  only up to the last line asked for, so a 2 GB log can be read in pieces.

Lines are numbered as `cat -n` prints them: the number right-aligned in six columns, a
tab, the line (one trailing CR dropped; the result's `line_ending` says what the file
uses). Lines over `max_line_chars` are cut with a marker saying how much was cut.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from ..encodings import NotText, TextEncoding, decode, detect, line_ending
from ..errors import ReadkeeperError
from ..fileio import OpenedFile, digest, peek
from ..protocol import TextFile
from ..settings import Settings
from ..tokens import TokenCounter, estimate_tokens

_SAMPLE_BYTES = 64 * 1024
# Room kept under the token cap for the note that says where to continue.
_NOTE_ALLOWANCE = 64


@dataclass(frozen=True)
class Window:
    """The lines asked for: `offset` is 1-based; `ranged` when offset or limit was given."""

    offset: int
    limit: int
    ranged: bool


@dataclass(frozen=True)
class TextView:
    file: TextFile
    tokens_left_out: int  # estimate of what the caps kept from the agent


def not_text(path: str, reason: str) -> ReadkeeperError:
    return ReadkeeperError(
        "binary",
        f"{path} is not a text file ({reason}). Use a tool made for its format "
        "(e.g. `file` to identify it, `xxd | head` to inspect bytes).",
        file_path=path,
    )


def decode_text(data: bytes, path: str) -> tuple[str, TextEncoding]:
    try:
        encoding = detect(data, complete=True)
        return decode(data, encoding), encoding
    except NotText as exc:
        raise not_text(path, exc.reason) from None
    except UnicodeDecodeError as exc:
        raise not_text(path, f"invalid {exc.encoding} at byte {exc.start}") from None


def split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # "a\nb\n" has two lines, and "" has none
    return lines


def _cut(line: str, settings: Settings) -> tuple[str, bool]:
    if line.endswith("\r"):
        line = line[:-1]
    excess = len(line) - settings.max_line_chars
    if excess <= 0:
        return line, False
    return line[: settings.max_line_chars] + f" … [line cut: {excess} more characters]", True


# "     1\t", "     2\t", ...: formatting numbers is most of the cost of numbering a
# file, and the same first few thousand come up on every read.
_PREFIXES: list[str] = []
_PREFIXES_LOCK = threading.Lock()
_PREFIX_CACHE_LINES = 1 << 16


def _prefixes(start: int, count: int) -> list[str]:
    end = start + count
    if end > _PREFIX_CACHE_LINES:
        return [f"{n:>6}\t" for n in range(start, end)]
    if len(_PREFIXES) < end:
        with _PREFIXES_LOCK:
            _PREFIXES.extend(f"{n:>6}\t" for n in range(len(_PREFIXES), end))
    return _PREFIXES[start:end]


def _number(
    lines: list[str], start: int, settings: Settings, has_cr: bool = True
) -> tuple[list[str], int]:
    if not has_cr and max(map(len, lines), default=0) <= settings.max_line_chars:
        # The common case: no line to cut, no CR to drop.
        return list(map(str.__add__, _prefixes(start, len(lines)), lines)), 0
    numbered: list[str] = []
    cut_count = 0
    for number, line in enumerate(lines, start):
        shown, was_cut = _cut(line, settings)
        cut_count += was_cut
        numbered.append(f"{number:>6}\t{shown}")
    return numbered, cut_count


def _longest_fit(per_line: list[int], budget: int) -> int:
    used = 0
    for count, tokens in enumerate(per_line):
        used += tokens
        if used > budget:
            return count
    return len(per_line)


def _over_cap(
    path: str,
    window: Window,
    numbered: list[str],
    tokens: int,
    settings: Settings,
    counter: TokenCounter,
) -> int:
    """How many of `numbered` fit under the token cap; raises for a ranged read."""
    cap = settings.max_tokens
    per_line = counter.count_lines(numbered)
    if window.ranged:
        fits = _largest_exact_fit(numbered, _longest_fit(per_line, cap), cap, counter)
        last = window.offset + len(numbered) - 1
        if fits:
            advice = f"Read fewer lines: offset={window.offset}, limit={fits}."
        else:
            advice = (
                f"Line {window.offset} alone is over the cap; raise the max_tokens setting "
                "(READKEEPER_MAX_TOKENS) or search the file instead (e.g. grep)."
            )
        raise ReadkeeperError(
            "token_limit",
            f"Lines {window.offset}-{last} of {path} come to {tokens:,} tokens, over the "
            f"{cap:,}-token cap. {advice}",
            file_path=path,
            tokens=tokens,
            max_tokens=cap,
            largest_limit=fits,
        )
    return _longest_fit(per_line, cap - _NOTE_ALLOWANCE)


def _largest_exact_fit(numbered: list[str], guess: int, cap: int, counter: TokenCounter) -> int:
    """The most leading lines of `numbered` whose joined text is at most `cap` tokens,
    counted exactly: the limit an error advises must be the true largest. `guess` (from
    per-line counts, which overstate a little) starts a binary search; all of
    `numbered` is known to be over the cap."""

    def fits(count: int) -> bool:
        return count == 0 or counter.count("\n".join(numbered[:count])) <= cap

    low, high = 0, len(numbered)  # fits(low), not fits(high)
    if fits(guess):
        low = guess
    else:
        high = guess
    while high - low > 1:
        middle = (low + high) // 2
        if fits(middle):
            low = middle
        else:
            high = middle
    return low


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
    lines = split_lines(text)
    total = len(lines)
    if window.offset > max(total, 1):
        raise ReadkeeperError(
            "bad_params",
            f"offset {window.offset} is past the end of {path}, which has {total} lines. "
            f"Read from offset={max(1, total - settings.default_limit + 1)} to see its end.",
            field="offset",
            total_lines=total,
        )
    first = window.offset - 1
    chosen = lines[first : first + window.limit]
    numbered, cut_count = _number(chosen, window.offset, settings, has_cr="\r" in text)
    content = "\n".join(numbered)
    tokens = counter.measure(
        content, settings.max_tokens, key=(content_digest, window.offset, len(numbered))
    )
    note: str | None = None
    if tokens > settings.max_tokens:
        fits = _over_cap(path, window, numbered, tokens, settings, counter)
        numbered = numbered[:fits]
        content = "\n".join(numbered)
        tokens = counter.count(content)
        note = (
            f"the file is about {_approx(estimate_tokens(text))} tokens, over the "
            f"{settings.max_tokens:,}-token cap"
        )
    shown_end = window.offset + len(numbered) - 1
    # Partial: the agent got less than it asked for (a whole read asks for everything).
    partial = (not window.ranged and shown_end < total) or len(numbered) < len(chosen)
    next_offset = shown_end + 1 if shown_end < total else None
    if partial:
        why = note or f"reads return at most {window.limit} lines unless a limit is given"
        # The lines shown fitted the budget, so as many again should fit the next read.
        more = f", limit={len(numbered)}" if note else ""
        note = (
            f"Showing lines {window.offset}-{shown_end} of {total} ({why}). "
            f"Continue with offset={next_offset}{more}."
        )
    elif total == 0:
        note = "The file is empty."
    left_out = estimate_tokens("\n".join(lines[shown_end:])) if partial else 0
    return TextView(
        TextFile(
            file_path=path,
            content=content,
            start_line=window.offset,
            num_lines=len(numbered),
            total_lines=total,
            tokens=tokens,
            encoding=encoding.label,
            line_ending=line_ending(text),
            partial=partial,
            next_offset=next_offset,
            note=note,
            truncated_lines=cut_count or None,
        ),
        left_out,
    )


def _approx(n: int) -> str:
    return f"{round(n, -3):,}" if n >= 10_000 else f"{n:,}"


# --- large files, read in ranges --------------------------------------------------------


def _stream_codec(encoding: TextEncoding) -> str:
    """A codec that consumes the byte-order mark itself."""
    if not encoding.bom:
        return encoding.name
    return {"utf-8": "utf-8-sig"}.get(encoding.name, encoding.name.rsplit("-", 1)[0])


def _lines(stream: io.TextIOWrapper, keep: int) -> Iterator[tuple[str, int]]:
    """Each line (with its newline) cut to `keep` characters, and the characters dropped.

    Reading stays bounded per line: a 2 GB line is skimmed through, never held.
    """
    while True:
        head = stream.readline(keep)
        if not head:
            return
        dropped = 0
        if not head.endswith("\n") and len(head) == keep:
            while True:
                rest = stream.readline(1 << 16)
                if not rest:
                    break
                if rest.endswith("\n"):
                    dropped += len(rest) - 1
                    head += "\n"
                    break
                dropped += len(rest)
        yield head, dropped


def _decode_sample(sample: bytes, encoding: TextEncoding) -> str:
    return sample[len(encoding.bom) :].decode(encoding.name, "ignore")


def stream_range(
    opened: OpenedFile, window: Window, settings: Settings, counter: TokenCounter
) -> tuple[TextView, str]:
    """Lines `window` of a file too large to read whole; returns the view and the digest
    of the lines shown (the read-state of a ranged view of a huge file)."""
    path = opened.path
    sample = peek(opened.fd, _SAMPLE_BYTES)
    try:
        encoding = detect(sample, complete=len(sample) < _SAMPLE_BYTES)
    except NotText as exc:
        raise not_text(path, exc.reason) from None
    raw = io.FileIO(opened.fd, closefd=False)
    raw.seek(0)
    stream = io.TextIOWrapper(
        io.BufferedReader(raw, 1 << 20),
        encoding=_stream_codec(encoding),
        errors="replace",
        newline="\n",
    )
    keep = settings.max_line_chars + 2  # the line, its CR and LF
    chosen: list[str] = []
    cut_count = 0
    seen = 0  # lines read so far
    at_eof = True
    for line, dropped in _lines(stream, keep):
        if len(chosen) == window.limit:
            at_eof = False  # a line follows the window
            break
        seen += 1
        if seen < window.offset:
            continue
        body = line[:-1] if line.endswith("\n") else line
        if dropped:
            excess = len(body) + dropped - settings.max_line_chars
            body = body[: settings.max_line_chars] + f" … [line cut: {excess} more characters]"
            was_cut = True
        else:
            body, was_cut = _cut(body, settings)
        cut_count += was_cut
        chosen.append(body)
    stream.detach()
    if not chosen and seen < window.offset:
        raise ReadkeeperError(
            "bad_params",
            f"offset {window.offset} is past the end of {path}, which has {seen} lines. "
            f"Read from offset={max(1, seen - settings.default_limit + 1)} to see its end.",
            field="offset",
            total_lines=seen,
        )
    numbered = [f"{n:>6}\t{line}" for n, line in enumerate(chosen, window.offset)]
    content = "\n".join(numbered)
    range_digest = digest(content.encode("utf-8", "surrogatepass"))
    tokens = counter.measure(
        content, settings.max_tokens, key=(range_digest, window.offset, len(numbered))
    )
    if tokens > settings.max_tokens:
        _over_cap(path, window, numbered, tokens, settings, counter)
    replaced = content.count("\ufffd")
    note = None
    if replaced:
        note = (
            f"{replaced} bytes in these lines are not valid {encoding.name} "
            "and are shown as U+FFFD."
        )
    last = window.offset + len(numbered) - 1
    return (
        TextView(
            TextFile(
                file_path=path,
                content=content,
                start_line=window.offset,
                num_lines=len(numbered),
                total_lines=seen if at_eof else None,
                tokens=tokens,
                encoding=encoding.label,
                line_ending=line_ending(
                    sample[len(encoding.bom) :].decode(encoding.name, "ignore")
                ),
                partial=False,
                next_offset=None if at_eof else last + 1,
                note=note,
                truncated_lines=cut_count or None,
            ),
            0,
        ),
        range_digest,
    )
