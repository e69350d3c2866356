"""LSP's base protocol framing: a byte stream cut into `Content-Length` framed bodies, so
that no input can leave the server alive and deaf, and the header a frame is written
with.

`FrameReader` is sans-IO (bytes in, events out), so it is tested and fuzzed in-process.
A header block must be CRLF-terminated `Name: value` lines with one `Content-Length`
(0 <= length <= `MAX_BODY`). Once its Content-Length is seen, a block is read by that
length whatever other lines it holds (a line without a colon is passed over: the body
is where the length says). A block of header lines that breaks the rest (LF-only line
ends, a length that is not digits, more than `MAX_HEADER` bytes) is read as a block
without a usable length: the JSON value after it is a `BadFrame`, so the id it carries
is answered (a block past `MAX_HEADER` is dropped up to its blank line, never held).
Anything that is no header block at all is junk: it carries no request, and is skipped
up to the next `Content-Length` header (resynchronising), with the reason logged.

Resynchronising rests on one fact: `Content-Length: <digits>` followed by a raw CR LF
never occurs inside valid JSON (outside strings JSON has no letters but in true, false
and null, and inside a string a raw CR is not allowed). So a frame whose declared body
contains such a header is certainly mis-framed, and the header is where the next
message starts: a too-long length is caught as soon as the next message arrives, with
no timeout, and a too-short one leaves junk that ends at the next header.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..message_cap import MAX_MESSAGE_BYTES
from .messages import json_end

# The largest body read into memory. A longer frame is skipped (its id, when it is near
# the start, still gets an error reply); junk longer than this cannot be the tail of a
# frame we would have read, so the stream is given up.
MAX_BODY = MAX_MESSAGE_BYTES  # the one cap of every front end (message_cap.py)
MAX_JUNK = MAX_BODY
# A header block longer than this is junk (real ones are under 100 bytes).
MAX_HEADER = 8 * 1024
# Of a frame too large to read, the start kept to find its id.
KEEP_HEAD = 64 * 1024

# The header a frame is written with (pygls' framing). The length is in bytes: orjson
# writes UTF-8 (pygls' json.dumps wrote ASCII, with escapes, so its length in characters
# was the same).
FRAME_HEADER = (
    b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
)

# A header that starts a frame (see the module docstring for why it cannot occur inside
# a valid body). Bounded, so a match is never longer than `_OVERLAP`.
_FRAME_START = re.compile(rb"content-length:[ \t]{0,8}\d{1,32}[ \t]{0,8}\r\n", re.IGNORECASE)
_OVERLAP = 96
# A Content-Length header name after other bytes on a line: a frame starts there.
_LENGTH_NAME = re.compile(rb"content-length:", re.IGNORECASE)
# What every client sends; the general parser handles the rest.
_USUAL_HEADER = re.compile(
    rb"Content-Length: (\d{1,9})\r\n(?:Content-Type: [^\r\n]{0,200}\r\n)?\r\n"
)
_TOKEN = rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]"
# A value may hold any byte but the line ends (a control character in a Content-Length
# makes the block one without a usable length, whose body is still answered).
_HEADER_LINE = re.compile(rb"(%s+):[ \t]*([^\r\n]*?)[ \t]*" % _TOKEN)
# A header's name and colon: a line so begun, past `MAX_HEADER`, is a long header block's.
_HEADER_NAME = re.compile(rb"%s+:" % _TOKEN)
# The blank line that ends a header block (CR LF or, in a bad block, LF alone).
_BLANK_LINE = re.compile(rb"\n\r?\n")
# The start of a line that may still become a header once the rest arrives.
_HEADER_PREFIX = re.compile(rb"%s*(?::[^\r\n]*)?\r?" % _TOKEN)
# Header lines ended by LF alone: read as a block, so the body after it (and its id) is
# answered, with this reason.
_LF_ONLY = "its header lines end in LF alone (LSP's end in CR LF)"


class Frame(NamedTuple):
    """A body as its header declared it (not yet known to be JSON)."""

    body: bytes


class BadFrame(NamedTuple):
    """A frame that cannot be read as declared. `body` is what there is of it (its start,
    when it was too large), from which the request id may be recovered."""

    reason: str
    body: bytes
    too_large: bool = False


class Junk(NamedTuple):
    """Bytes that are not part of any frame, skipped up to the next header."""

    reason: str
    size: int


Event = Frame | BadFrame | Junk


class StreamBroken(Exception):
    """The stream cannot be resynchronised: the connection must end."""


class FrameReader:
    """Cuts a byte stream into frames. `feed` returns what the new bytes complete;
    `give_up` ends an unfinished frame (no more bytes are coming for it)."""

    def __init__(self, max_body: int = MAX_BODY, max_junk: int = MAX_JUNK) -> None:
        self._max_body = max_body
        self._max_junk = max_junk
        self._buf = bytearray()
        # "headers", "body" (`_length` bytes), "unknown" (a header block without a usable
        # length: up to the next header or the end of a JSON value), "skip" (a body over
        # `max_body`) or "junk" (up to the next header).
        self._mode = "headers"
        self._length = 0
        self._reason = ""
        self._scanned = 0  # how much of `_buf` is known to hold no frame start
        self._head = bytearray()  # "skip": the start of the body
        self._skipped = 0  # "skip": bytes of the body consumed; "junk": bytes dropped
        self._steps = {
            "headers": self._headers,
            "body": self._body,
            "unknown": self._unknown,
            "skip": self._skip,
            "junk": self._junk,
            "long_header": self._long_header,
        }

    @property
    def pending(self) -> bool:
        """In the middle of a frame (or of junk)."""
        return self._mode != "headers" or bool(self._buf)

    def feed(self, data: bytes) -> list[Event]:
        """Take the next bytes of the stream: the events they complete."""
        self._buf += data
        events: list[Event] = []
        while self._steps[self._mode](events):
            pass
        return events

    def give_up(self) -> list[Event]:
        """The rest of the frame in progress is not coming: report what there is of it."""
        buf, mode = self._buf, self._mode
        events: list[Event] = []
        if mode == "body":
            reason = f"Content-Length says {self._length} bytes, but only {len(buf)} came"
            events.append(BadFrame(reason, bytes(buf)))
        elif mode == "unknown":
            events.append(BadFrame(self._reason, bytes(buf)))
        elif mode == "skip":
            events.append(self._too_large())
        elif mode in ("junk", "long_header"):
            events.append(Junk(self._reason, self._skipped + len(buf)))
        elif buf:
            events.append(Junk("an unfinished header", len(buf)))
        buf.clear()
        self._enter("headers")
        return events

    # --- the modes: each returns True when it made progress ---

    def _headers(self, events: list[Event]) -> bool:
        buf = self._buf
        if not buf:
            return False
        usual = _USUAL_HEADER.match(buf)
        if usual:
            length = int(usual[1])  # before the `del`: the match reads the buffer
            del buf[: usual.end()]
            self._start_body(length)
            return True
        pos, declared, problem, lf_only = 0, None, "", False
        while True:
            eol = buf.find(b"\n", pos)
            if eol < 0:
                if len(buf) > MAX_HEADER and (pos or _HEADER_NAME.match(buf)):
                    return self._to_long_header(pos)
                length_seen = declared is not None or bool(problem)
                if len(buf) > MAX_HEADER or not (length_seen or _HEADER_PREFIX.fullmatch(buf, pos)):
                    return self._to_junk(pos, "bytes that are not an LSP header")
                return False  # the rest of the line is still coming
            end = eol - 1 if eol > pos and buf[eol - 1] == 0x0D else eol  # before CR LF
            bare_lf = end == eol
            if end == pos:  # the blank line that ends the block
                del buf[: eol + 1]
                if pos == 0:
                    return True  # a stray blank line between frames: harmless
                if lf_only or bare_lf:
                    problem = problem or _LF_ONLY
                if problem or declared is None:
                    self._enter("unknown", problem or "a message without a Content-Length header")
                else:
                    self._start_body(declared)
                return True
            line = buf[pos:end]
            later = _LENGTH_NAME.search(line, 1)
            if later:  # a frame starts in the middle of the line: what precedes is junk
                start = pos + later.start()
                events.append(Junk("bytes before a Content-Length header", start))
                del buf[:start]
                return True
            header = _HEADER_LINE.fullmatch(line)
            if eol > MAX_HEADER and (pos or _HEADER_NAME.match(line)):
                return self._to_long_header(pos)
            if header is None and (eol > MAX_HEADER or (declared is None and not problem)):
                return self._to_junk(pos, f"not an LSP header line: {bytes(line[:40])!r}")
            if header is None:  # a block that has its Content-Length is read by it
                lf_only = lf_only or bare_lf
                pos = eol + 1
                continue
            if header[1].lower() == b"content-length":
                if declared is not None or problem:
                    # A second Content-Length: the block before it never ended.
                    events.append(Junk("a header block without its blank line", pos))
                    del buf[:pos]
                    return True
                value = header[2]
                if not value.isdigit():
                    problem = f"Content-Length {bytes(value[:40])!r} is not a number of bytes"
                else:
                    # Longer than 18 digits is over any cap (and `int` refuses 4,300).
                    declared = int(value) if len(value) <= 18 else 10**18
            lf_only = lf_only or bare_lf
            pos = eol + 1

    def _start_body(self, length: int) -> None:
        if length > self._max_body:
            self._head.clear()
            self._skipped = 0
            self._enter("skip")
        else:
            self._enter("body")
        self._length = length

    def _body(self, events: list[Event]) -> bool:
        buf, length = self._buf, self._length
        if len(buf) >= length:
            # A frame that starts before the declared end (with the overlap: it may end
            # after it) means the declared length was wrong.
            start = self._frame_start(0, min(len(buf), length + _OVERLAP))
            if start is not None and start < length:
                events.append(BadFrame(self._stopped(start, length), bytes(buf[:start])))
                del buf[:start]
            else:
                events.append(Frame(bytes(buf[:length])))
                del buf[:length]
            self._enter("headers")
            return True
        # Still coming: a frame starting in what came so far means it never will.
        start = self._frame_start(max(0, self._scanned - _OVERLAP))
        self._scanned = len(buf)
        if start is None:
            return False
        events.append(BadFrame(self._stopped(start, length), bytes(buf[:start])))
        del buf[:start]
        self._enter("headers")
        return True

    def _unknown(self, events: list[Event]) -> bool:
        buf = self._buf
        start = self._frame_start(max(0, self._scanned - _OVERLAP))
        self._scanned = len(buf)
        if start is None and len(buf) <= KEEP_HEAD and buf.endswith(b"}"):
            start = json_end(buf)  # a whole JSON object with no next frame behind it yet
        if start is None:
            if len(buf) > self._max_body:
                return self._to_junk(0, self._reason)
            return False
        events.append(BadFrame(self._reason, bytes(buf[:start])))
        del buf[:start]
        self._enter("headers")
        return True

    def _skip(self, events: list[Event]) -> bool:
        buf = self._buf
        remaining = self._length - self._skipped
        start = self._frame_start(0)
        if start is not None and start < remaining:
            self._consume(start)
        elif len(buf) >= remaining:
            self._consume(remaining)
        else:
            # Keep a tail that may hold the start of a frame header.
            self._consume(max(0, len(buf) - _OVERLAP))
            return False
        events.append(self._too_large())
        self._enter("headers")
        return True

    def _long_header(self, events: list[Event]) -> bool:
        """A header block past `MAX_HEADER`: its lines are dropped up to the blank line
        that ends it, and what follows is read as after a block without a usable length
        (a `BadFrame` answering the id it holds). A frame starting first ends it."""
        buf = self._buf
        scan = max(0, self._scanned - _OVERLAP)
        blank = _BLANK_LINE.search(buf, scan)
        start = self._frame_start(scan, blank.end() if blank else None)
        if start is not None:
            events.append(Junk(self._reason, self._skipped + start))
            del buf[:start]
            self._enter("headers")
            return True
        if blank is not None:
            del buf[: blank.end()]
            self._enter("unknown", self._reason)
            return True
        cut = len(buf) - _OVERLAP
        if cut > 0:
            del buf[:cut]
            self._skipped += cut
        self._scanned = len(buf)
        if self._skipped > self._max_junk:
            raise StreamBroken(f"{self._skipped} bytes of one header block: not LSP")
        return False

    def _junk(self, events: list[Event]) -> bool:
        buf = self._buf
        start = self._frame_start(self._scanned)
        if start is not None:
            events.append(Junk(self._reason, self._skipped + start))
            del buf[:start]
            self._enter("headers")
            return True
        # No frame starts before the last `_OVERLAP` bytes: drop what precedes them.
        cut = len(buf) - _OVERLAP
        if cut > self._scanned:
            del buf[:cut]
            self._skipped += cut
            self._scanned = 0
        if self._skipped > self._max_junk:
            raise StreamBroken(
                f"{self._skipped} bytes without a Content-Length header ({self._reason}): "
                "the client is not speaking LSP"
            )
        return False

    # --- helpers ---

    def _enter(self, mode: str, reason: str = "") -> None:
        self._mode = mode
        self._reason = reason
        self._scanned = 0

    def _to_junk(self, pos: int, reason: str) -> bool:
        """Junk from `pos`: scan for a frame after it (never at it, or we loop)."""
        del self._buf[:pos]
        self._enter("junk", reason)
        self._skipped = pos
        self._scanned = 1
        return True

    def _to_long_header(self, pos: int) -> bool:
        """A header block from `pos` that is past `MAX_HEADER` (`_long_header`)."""
        del self._buf[:pos]
        self._enter(
            "long_header",
            f"a header block over {MAX_HEADER} bytes (send it again with Content-Length "
            "and Content-Type alone)",
        )
        self._skipped = pos
        return True

    def _frame_start(self, start: int, end: int | None = None) -> int | None:
        """Where a frame header starts in `_buf[start:end]`. The pattern ends in CR LF,
        so bodies without one (most) cost one `find`."""
        buf = self._buf
        stop = len(buf) if end is None else end
        if buf.find(b"\r\n", start, stop) < 0:
            return None
        found = _FRAME_START.search(buf, start, stop)
        return found.start() if found else None

    def _consume(self, size: int) -> None:
        keep = KEEP_HEAD - len(self._head)
        if keep > 0:
            self._head += self._buf[: min(size, keep)]
        del self._buf[:size]
        self._skipped += size

    def _too_large(self) -> BadFrame:
        reason = f"a message of {self._length} bytes, over the {self._max_body}-byte limit"
        return BadFrame(reason, bytes(self._head), too_large=True)

    @staticmethod
    def _stopped(got: int, length: int) -> str:
        return f"Content-Length says {length} bytes, but the message ended after {got}"
