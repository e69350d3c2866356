"""The room a read keeps under `max_tokens` for what every front end sends besides its
lines, cells or pages (one budget, counted on what is sent, as listings and grep pages
are: search/priced.py): the header line that names the file, and when the read is cut,
the call for the rest in the header and again in the note, which says why it stopped.
Each way on is the caller's whole call changed (hints.changed: MCP's `the read tool
with {...}`, the drop-in's, the CLI's command), so it repeats the caller's own strings:
the path, the session, a symbol. A cut read over MCP sent 25,013 tokens at the default
cap of 25,000 (an MCP client holding tool results to 25,000 tokens refuses it), and
2,529 at a cap of 2,000 with a session of 256 characters.

The room is set aside before anything is fitted (`Room`), half the cap at most: below
a cap of about twice the room (a few hundred tokens for a usual path and session) the
lines keep half of it and the whole may pass it. It is counted from the strings as shown
(quoting.json_text: JSON-quoted, controls, look-alikes and cut-marker openings escaped;
the CLI's shell words and the LSP's JSON escape no more of these values), by their
bytes: a token is a byte or more, so the room is never short, and it costs no count (a
path and a session are a few dozen bytes, a few dozen tokens more than their count)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from .. import quoting
from ..errors import ReadkeeperError, shown_name
from ..protocol import ReadParams
from ..settings import Settings
from ..state import sessions
from .tokens import TokenCounter

# The header's words and numbers besides the path ("PATH: lines 1-2000 of 61,234,
# 24,880 tokens"; a notebook's cells or a PDF's pages; an editor buffer's "UNSAVED
# editor buffer (version N)") and a short note ("The file is empty.").
WHOLE_TOKENS = 48
# What a cut read sends more, besides the call's own strings: the note's words ("Showing
# lines 1-1584 of 6,000 (the file is about 75,000 tokens, over the 25,000-token cap).
# Continue with"), the header's "; the rest:", and the two calls' words, keys, offset and
# punctuation ("the read tool with {"file_path": , "offset": 1585, "session": }").
CUT_TOKENS = 96
# How many times a cut read repeats the caller's call: the header's rest and the note's.
COPIES = 2

# The most characters one answer sends, whatever its tokens: what the MCP tools that send
# files' text declare (mcp/tools.py RESULT_SIZE_META; Claude Code keeps a result to it),
# and under the 1 MiB a server-sent event may take in the Python SDK's HTTP client (an
# answer past it never reached the agent: round 37). A token may hold 128 spaces: a read
# of lines of 4,000 spaces within the token cap sent 1,624,547 characters (round 36).
ANSWER_MAX_CHARS = 500_000
# The most characters a read's lines, cells or pages take: the answer's less room for
# the rest of it (its header, notes and calls, each a few hundred characters).
LINES_MAX_CHARS = 400_000

# The options a way on repeats as the caller gave them; offset, limit and pages are the
# way on's own (a number or a short range), counted in CUT_TOKENS.
_REPEATED = ("file_path", "session", "symbol", "line_format", "include_images", "render", "force")


@dataclass(frozen=True)
class Room:
    """What a read of one file sends besides its body, in tokens: `whole` when it shows
    all it was asked for, `cut` when it names a way on (twice); `call`: the caller's own
    values in one call named (a reader whose notes name more calls sets that much more
    aside for each). `chars`: the most characters its body may take (`LINES_MAX_CHARS`,
    or what is left of an answer of several reads: `chars_within`)."""

    whole: int = 0
    cut: int = 0
    call: int = 0
    chars: int = LINES_MAX_CHARS


NO_ROOM = Room()  # a read whose body is all it sends (the first lines of an outline)


def of_read(params: ReadParams, shown_path: str) -> Room:
    """The room of a read made with `params` of the file shown as `shown_path`."""
    whole = WHOLE_TOKENS + _bytes(quoting.name(shown_path))
    asked = _asked(params)
    call = _bytes(quoting.json_text(asked)) if asked else 0
    left = _CHARS_LEFT.get()
    chars = LINES_MAX_CHARS if left is None else min(left, LINES_MAX_CHARS)
    return Room(whole, whole + CUT_TOKENS + COPIES * call, call, chars)


# What is left of the characters of an answer of several reads (readMany) for the read
# made now; None outside one.
_CHARS_LEFT: ContextVar[int | None] = ContextVar("readkeeper_chars_left", default=None)


@contextmanager
def chars_within(left: int) -> Iterator[None]:
    """A block whose reads keep their bodies to `left` characters (`LINES_MAX_CHARS` at
    most): the rest of an answer that sends several."""
    token = _CHARS_LEFT.set(max(0, left))
    try:
        yield
    finally:
        _CHARS_LEFT.reset(token)


def chars_words(chars: int) -> str:
    """The limit of `chars` characters as a note or refusal names it."""
    if chars >= LINES_MAX_CHARS:
        return f"the {LINES_MAX_CHARS:,} characters a read sends at most"
    return (
        f"the {chars:,} characters left for it in an answer of several files (of the "
        f"{ANSWER_MAX_CHARS:,} one answer sends)"
    )


# The most of max_tokens a file's path may take as shown: an eighth (a cut read names it
# three times: its header and two calls for the rest; a quarter let a path of 6,223
# tokens through at the default cap, and a read of 31,207: round 37), and never less
# than PATH_LEAST tokens, so that a small cap still reads files of usual paths (the room
# is then kept in part only: `lines_cap`).
PATH_SHARE = 8
PATH_LEAST = 256


def refuse_long_path(counter: TokenCounter, shown_path: str, settings: Settings) -> None:
    """Refuse the read of a file whose path as shown (its characters escaped) costs more
    than an eighth of `max_tokens` (`PATH_SHARE`, `PATH_LEAST` at least): each answer
    repeats it in its header and in each call for the rest, and past half the cap the
    room is not kept whole (`lines_cap`). A repository's 18 folders of 250 control
    characters each made a read of 48,628 tokens at a cap of 25,000, 36,143 of them its
    path (round 36)."""
    most = max(settings.max_tokens // PATH_SHARE, PATH_LEAST)
    shown = quoting.name(shown_path)
    if _bytes(shown) <= most:
        return  # a token is a byte or more
    tokens = counter.count(shown)
    if tokens <= most:
        return
    raise ReadkeeperError(
        "token_limit",
        f"The path of {shown_name(shown_path)} is {tokens:,} tokens as shown (its characters "
        f"escaped), over the {most:,} a read may repeat at the {settings.max_tokens:,}-token "
        "cap: each answer names it in its header and in each call for the rest, and would "
        "be mostly its path. Ask the user to move the file to a shorter path (a link to it "
        "does not help: answers name the file's real path), or to raise max_tokens "
        "(READKEEPER_MAX_TOKENS).",
        tokens=tokens,
        max_tokens=settings.max_tokens,
    )


def lines_cap(max_tokens: int, room: int) -> int:
    """The tokens a read's body may take beside `room`: half of `max_tokens` at least."""
    return max_tokens - min(room, max_tokens // 2)


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _asked(params: ReadParams) -> dict[str, Any]:
    """The caller's own values a way on repeats, as it repeats them."""
    asked: dict[str, Any] = {}
    for field in _REPEATED:
        value = getattr(params, field, None)
        if field == "session":
            value = sessions.name_of(value or "")
        if value not in (None, False, ""):
            asked[field] = value
    return asked
