"""Ranged reads of text files too large to hold whole (over `max_size_bytes`).

The lines before the range are skipped by counting newline bytes, without decoding them
(where a newline is one byte of its own: UTF-8 and single-byte code pages; from where
the file's line index says, line_index.py, when it was counted before), and lines
are decoded incrementally, only up to the last line asked for, each cut as it is read,
so a 2 GB log, or a 2 GB line, can be read in pieces. The lines shown are numbered and
capped as a whole read's are (text.py); the read-state records the digest of the lines
shown, since the file's is never computed.
"""

from __future__ import annotations

import functools
import io
import os
from collections.abc import Iterator

from ...files.encodings import NotText, TextEncoding, detect, line_ending
from ...files.fileio import OpenedFile, digest, peek
from ...protocol import TextFile
from ...settings import Settings
from ..tokens import TokenCounter
from .line_index import INDEXES, Index
from .text import (
    TextView,
    Window,
    cut_at,
    cut_line,
    default_cut,
    escape_lines,
    fit_tokens,
    marks_note,
    not_text,
    number_lines,
)
from .text_past_end import end_that_fits, past_the_end

_SAMPLE_BYTES = 64 * 1024
_ENDING_SAMPLE = 16 * 1024  # of it, judged for the line endings (a few hundred lines)


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


_SEEK_CHUNK = 64 * 1024


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


def _line_start(
    fd: int, offset: int, encoding: TextEncoding, index: Index | None
) -> tuple[int, int]:
    """Where line `offset` (1-based) starts, and how many lines come before it: (byte
    position, lines). Remembered by the file's line index when a read found it lately,
    else found by counting newline bytes without decoding, from the nearest boundary
    the index knows (line_index.py). At the end of a file with fewer lines, the start
    of its last unterminated line or its end. (0, 0) where a newline is not one byte of
    its own."""
    if offset == 1 or not _newline_is_one_byte(encoding.name):
        return 0, 0
    wanted = offset - 1  # newlines to pass
    if index is not None:
        start = index.starts.get(wanted)
        if start is not None:
            return start, wanted
    position, passed = index.resume(wanted) if index is not None else (0, 0)
    line_start = 0 if position == 0 else None  # after the last newline passed
    while True:
        chunk = os.pread(fd, _SEEK_CHUNK, position)
        if not chunk:
            if line_start is None:  # counted from a boundary past the last newline
                return _line_start(fd, offset, encoding, None)
            return line_start, passed  # fewer lines: the last one, unterminated, or the end
        newlines = chunk.count(b"\n")
        if passed + newlines >= wanted:
            start = position + _after_newline(chunk, wanted - passed)
            if index is not None:
                index.found(wanted, start)
            return start, wanted
        if newlines:
            line_start = position + chunk.rindex(b"\n") + 1
        passed += newlines
        position += len(chunk)
        if index is not None and len(chunk) == _SEEK_CHUNK:
            index.passed(position, passed)


def _after_newline(chunk: bytes, count: int) -> int:
    """The position just after the `count`-th newline of `chunk` (which has that many)."""
    begin = 0
    for block in (32768, 4096):  # whole blocks first: counting is far cheaper than a find
        while True:
            in_block = chunk.count(b"\n", begin, begin + block)
            if in_block >= count:
                break
            count -= in_block
            begin += block
    end = begin - 1
    for _ in range(count):
        end = chunk.index(b"\n", end + 1)
    return end + 1


def _sniff(fd: int, path: str) -> tuple[TextEncoding, str]:
    """The encoding and line ending of a file, judged from its first bytes."""
    sample = peek(fd, _SAMPLE_BYTES)
    try:
        encoding = detect(sample, complete=len(sample) < _SAMPLE_BYTES)
    except NotText as exc:
        raise not_text(path, exc.reason) from None
    ending = sample[len(encoding.bom) : _ENDING_SAMPLE].decode(encoding.name, "ignore")
    return encoding, line_ending(ending)


def stream_range(
    opened: OpenedFile, window: Window, settings: Settings, counter: TokenCounter
) -> tuple[TextView, str]:
    """Lines `window` of a file too large to read whole; returns the view and the digest
    of the lines shown (the read-state of a ranged view of a huge file)."""
    path = opened.path
    index = INDEXES.for_file(opened.fd, _SEEK_CHUNK)
    encoding, ending = index.sniffed if index and index.sniffed else _sniff(opened.fd, path)
    if index is not None:
        index.sniffed = (encoding, ending)
    # Lines before the window are skipped by counting newline bytes, not decoded.
    chosen, cut, seen, at_eof = _window(
        opened, index, encoding, window.offset, window.limit, settings
    )
    if not chosen and seen < window.offset:
        first = max(1, seen - window.limit + 1)
        tail = _window(opened, index, encoding, first, window.limit, settings)[0]
        end = end_that_fits(tail, seen, window.cap(settings, True), settings, counter)
        raise past_the_end(path, window.offset, seen, end)
    chosen, held = escape_lines(chosen, cut)
    escaped = sum(held)
    content = "\n".join(number_lines(chosen, window.offset, settings.number_width))
    # Over the cap, a range the caller chose is refused; from an offset alone, cut. The
    # notes on the lines are counted as long as they can be (fewer lines name fewer).
    said = [_replaced_note(content, encoding), marks_note(window.offset, held, cut, len(chosen))]
    extra = sum(counter.count(words) for words in said if words)
    fitted = fit_tokens(path, window, chosen, content, settings, counter, not at_eof, extra)
    capped = fitted.kept is not None
    if fitted.kept is not None:
        chosen, held, at_eof = chosen[: fitted.kept], held[: fitted.kept], False
        cut, escaped = [at for at in cut if at < fitted.kept], sum(held)
        content = "\n".join(number_lines(chosen, window.offset, settings.number_width))
    range_digest = digest(content.encode("utf-8", "surrogatepass"))
    note = _replaced_note(content, encoding)
    marks = marks_note(window.offset, held, cut, len(chosen))
    if marks:
        note = f"{note} {marks}" if note else marks
    last = window.offset + len(chosen) - 1
    if window.defaulted and not at_eof:
        over = fitted.cut_by if capped else None
        cut_note = default_cut(window, last, why=over)
        note = f"{cut_note} {note}" if note else cut_note
    return (
        TextView(
            TextFile(
                file_path=path,
                content=content,
                start_line=window.offset,
                num_lines=len(chosen),
                total_lines=seen if at_eof else None,
                tokens=fitted.tokens,
                encoding=encoding.label,
                line_ending=ending,
                partial=capped,
                next_offset=None if at_eof else last + 1,
                note=note,
                truncated_lines=len(cut) or None,
                escaped_lines=escaped or None,
            ),
            0,
        ),
        range_digest,
    )


def _replaced_note(content: str, encoding: TextEncoding) -> str | None:
    """The note on the bytes of `content` not valid in its encoding, if any."""
    replaced = content.count("\ufffd")
    if not replaced:
        return None
    return f"{replaced} bytes in these lines are not valid {encoding.name} and are shown as U+FFFD."


def _window(
    opened: OpenedFile,
    index: Index | None,
    encoding: TextEncoding,
    offset: int,
    limit: int,
    settings: Settings,
) -> tuple[list[str], list[int], int, bool]:
    """Lines `offset` on, at most `limit`, each as a read shows it (a long one cut);
    which of them were cut; how many lines the file has up to the last one read; and
    whether the file ends there."""
    start, seen = _line_start(opened.fd, offset, encoding, index)  # seen: lines passed
    raw = io.FileIO(opened.fd, closefd=False)
    raw.seek(start)
    stream = io.TextIOWrapper(
        # A page of lines is a few KB: a larger buffer only copies bytes never shown.
        io.BufferedReader(raw, _SEEK_CHUNK),
        encoding=_stream_codec(encoding) if start == 0 else encoding.name,
        errors="replace",
        newline="\n",
    )
    keep = settings.max_line_chars + 2  # the line, its CR and LF
    chosen: list[str] = []
    cut: list[int] = []
    at_eof = True
    for line, dropped in _lines(stream, keep):
        if len(chosen) == limit:
            at_eof = False  # a line follows the window
            break
        seen += 1
        if seen < offset:
            continue
        body = line[:-1] if line.endswith("\n") else line
        if dropped:
            body = cut_at(body, len(body) + dropped - settings.max_line_chars, settings)
            was_cut = True
        else:
            body, was_cut = cut_line(body, settings)
        if was_cut:
            cut.append(len(chosen))
        chosen.append(body)
    stream.detach()
    return chosen, cut, seen, at_eof
