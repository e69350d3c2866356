"""Text files as numbered lines, fitted to the line, byte and token caps.

Two ways in, one way out:
- `decode_text` + `view` for files read whole (at most `max_size_bytes`): the caller
  has the bytes (and their digest) already, so it can answer a re-read with a stub
  before any of this work is done.
- `stream_range` for ranged reads of larger files: the lines before the range are
  skipped by counting newline bytes (where a newline is one byte: UTF-8 and single-byte
  code pages), and lines are decoded incrementally, only up to the last line asked
  for, so a 2 GB log can be read in pieces.

Lines are numbered as `numbering.py` says (by default as `cat -n` prints them: the
number right-aligned in six columns, a tab, the line), one trailing CR dropped (the
result's `line_ending` says what the file uses). Lines over `max_line_chars` are cut
with a marker saying how much was cut.
"""

from __future__ import annotations

import functools
import io
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

from ...errors import ReadkeeperError
from ...files.encodings import NotText, TextEncoding, decode, detect, line_ending
from ...files.fileio import OpenedFile, digest, peek
from ...protocol import TextFile
from ...settings import Settings
from .. import numbering
from ..tokens import NumberedLines, TokenCounter, estimate_tokens

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


def _shown(lines: list[str], settings: Settings, has_cr: bool = True) -> tuple[list[str], int]:
    """Each line as shown (one trailing CR dropped, a long line cut), and how many were cut."""
    if not has_cr and max(map(len, lines), default=0) <= settings.max_line_chars:
        return lines, 0  # the common case: no line to cut, no CR to drop
    shown: list[str] = []
    cut_count = 0
    for line in lines:
        line, was_cut = _cut(line, settings)
        cut_count += was_cut
        shown.append(line)
    return shown, cut_count


def _number(shown: list[str], start: int, width: int) -> list[str]:
    return list(map(str.__add__, _prefixes(start, len(shown), width), shown))


def _over_cap(
    path: str, window: Window, counts: NumberedLines, tokens: int, settings: Settings
) -> int:
    """How many of the lines fit under the token cap; raises for a ranged read."""
    cap = settings.max_tokens
    if window.ranged:
        fits = counts.longest_fit(cap)
        last = window.offset + len(counts.per_line) - 1
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
    return counts.longest_fit(cap - _NOTE_ALLOWANCE)


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
        window,
        settings.max_line_chars,
        settings.max_tokens,
        settings.default_limit,
        settings.line_numbers,
        counter.encoding_name,
        # Views made before the token table loaded may carry a bound: once it has
        # loaded, they are made again, counted.
        counter.loaded,
    )
    with _VIEWS_LOCK:
        kept = _VIEWS.get(key)
        if kept is not None:
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
    shown, cut_count = _shown(chosen, settings, has_cr="\r" in text)
    numbered = _number(shown, window.offset, settings.number_width)
    content = "\n".join(numbered)
    note: str | None = None
    # Under the cap by its bound, the text is sent whole: no need to wait for the count.
    bound = counter.upper_bound(content, settings.max_tokens)
    if bound is not None:
        tokens = bound
    else:
        counts = counter.numbered(shown, window.offset, settings.number_width)
        tokens = counts.tokens()
        if tokens > settings.max_tokens:
            fits = _over_cap(path, window, counts, tokens, settings)
            numbered = numbered[:fits]
            content = "\n".join(numbered)
            tokens = counts.tokens(fits)
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
            tokens_upper_bound=True if bound is not None else None,
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
    """Each line (with its newline) cut to `keep` characters, and the characters dropped
    (a CR that ends the line, before its LF, is not one of them).

    Reading stays bounded per line: a 2 GB line is skimmed through, never held.
    """
    while True:
        head = stream.readline(keep)
        if not head:
            return
        dropped = 0
        if not head.endswith("\n") and len(head) == keep:
            last = ""  # the last character dropped so far
            while True:
                rest = stream.readline(1 << 16)
                if not rest:
                    break
                if rest.endswith("\n"):
                    dropped += len(rest) - 1
                    if (rest[-2] if len(rest) > 1 else last) == "\r":
                        dropped -= 1
                    head += "\n"
                    break
                dropped += len(rest)
                last = rest[-1]
        yield head, dropped


_SEEK_CHUNK = 256 * 1024


@functools.lru_cache(maxsize=32)
def _newline_is_one_byte(name: str) -> bool:
    """Whether in `name` a newline is the byte 0x0A and that byte is never part of
    another character: UTF-8 and the single-byte code pages whose bytes each decode
    alone, whatever came before (not UTF-16 or UTF-32, not EBCDIC, where 0x0A is not a
    newline, and not codecs with shift states such as UTF-7 or ISO-2022)."""
    if name == "utf-8":
        return True
    try:
        alone = [bytes([b]).decode(name, "replace") for b in range(256)]
        if bytes(range(256)).decode(name, "replace") != "".join(alone):
            return False
        # Shift sequences (HZ's "~{", ISO-2022's escapes) are made of ASCII bytes.
        pairs = (bytes([a, b]) for a in range(128) for b in range(128))
        if any(pair.decode(name, "replace") != alone[pair[0]] + alone[pair[1]] for pair in pairs):
            return False
    except LookupError:
        return False
    return all(len(c) == 1 for c in alone) and alone.index("\n") == 0x0A


def _line_start(fd: int, offset: int, encoding: TextEncoding) -> tuple[int, int]:
    """Where line `offset` (1-based) starts, found by counting newline bytes without
    decoding, and how many lines come before it: (byte position, lines). At the end
    of a file with fewer lines, the start of its last unterminated line or its end.
    (0, 0) where a newline is not one byte of its own."""
    if offset == 1 or not _newline_is_one_byte(encoding.name):
        return 0, 0
    wanted = offset - 1  # newlines to pass
    passed = 0
    position = 0
    line_start = 0  # after the last newline passed
    while True:
        chunk = os.pread(fd, _SEEK_CHUNK, position)
        if not chunk:
            return line_start, passed  # fewer lines: the last one, unterminated, or the end
        newlines = chunk.count(b"\n")
        if passed + newlines >= wanted:
            return position + _after_newline(chunk, wanted - passed), wanted
        if newlines:
            line_start = position + chunk.rindex(b"\n") + 1
        passed += newlines
        position += len(chunk)


def _after_newline(chunk: bytes, count: int) -> int:
    """The position just after the `count`-th newline of `chunk` (which has that many)."""
    begin = 0
    while True:  # whole blocks first: counting is far cheaper than a find per line
        in_block = chunk.count(b"\n", begin, begin + 4096)
        if in_block >= count:
            break
        count -= in_block
        begin += 4096
    end = begin - 1
    for _ in range(count):
        end = chunk.index(b"\n", end + 1)
    return end + 1


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
    # Lines before the window are skipped by counting newline bytes, not decoded.
    start, seen = _line_start(opened.fd, window.offset, encoding)  # seen: lines read so far
    raw = io.FileIO(opened.fd, closefd=False)
    raw.seek(start)
    stream = io.TextIOWrapper(
        io.BufferedReader(raw, 1 << 20),
        encoding=_stream_codec(encoding) if start == 0 else encoding.name,
        errors="replace",
        newline="\n",
    )
    keep = settings.max_line_chars + 2  # the line, its CR and LF
    chosen: list[str] = []
    cut_count = 0
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
    content = "\n".join(_number(chosen, window.offset, settings.number_width))
    range_digest = digest(content.encode("utf-8", "surrogatepass"))
    bound = counter.upper_bound(content, settings.max_tokens)
    if bound is not None:
        tokens = bound
    else:
        counts = counter.numbered(chosen, window.offset, settings.number_width)
        tokens = counts.tokens()
        if tokens > settings.max_tokens:
            _over_cap(path, window, counts, tokens, settings)
    replaced = content.count("\ufffd")
    note = None
    if replaced:
        note = (
            f"{replaced} bytes in these lines are not valid {encoding.name} "
            "and are shown as U+FFFD."
        )
    last = window.offset + len(chosen) - 1
    return (
        TextView(
            TextFile(
                file_path=path,
                content=content,
                start_line=window.offset,
                num_lines=len(chosen),
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
                tokens_upper_bound=True if bound is not None else None,
            ),
            0,
        ),
        range_digest,
    )
