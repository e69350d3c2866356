"""The characters of a readMany answer: at most `room.ANSWER_MAX_CHARS`, whatever its
tokens (a token may hold 128 spaces: six files of space lines, each within the 400,000
characters one read sends, made an answer of 1,446,142 characters, where the MCP tool
declares 500,000 and the SDK's HTTP client drops a server-sent event over 1 MiB: round
37).

Each read is made within what is left (`room.chars_within`): its lines, cells or pages
stop there, cut as a read at its cap is, with its way on. Before a file is read, room is
kept for every file after it (its short refusal, `OVER`), for the refusals' words
(`MAX_REFUSALS_CHARS`) and for the note; a file whose body would get fewer than
`LEAST_BODY_CHARS` is not read, and the note names its read. Past `MAX_REFUSALS_CHARS`
a refusal is shown in short (`Said`). Counted on the text as sent (render_many.many_entry,
with the session MCP repeats in each call), in characters, which cost nothing to count."""

from __future__ import annotations

from typing import Any

from .. import quoting, render_many
from ..errors import MAX_CALL_NAME_CHARS, cut_name, shown_name
from ..hints import call
from ..protocol.batch import ReadManyParams
from ..state import sessions
from .room import ANSWER_MAX_CHARS

# A file the answer's characters cannot hold: one short sentence; the note names the
# calls that get such files, once.
OVER = f"Over the {ANSWER_MAX_CHARS:,} characters one answer sends: not read."
# The least characters a file's lines, cells or pages are read with; fewer, and the file
# is left for a read of its own.
LEAST_BODY_CHARS = 2_000
# What an entry sends besides its body and its name: its header's words and numbers,
# its notes and calls' words (the name itself is counted as shown, three times).
_ENTRY_CHARS = 1_500
# The note, the last line, the separators: besides the longest name the note repeats.
_ANSWER_CHARS = 2_000
# A refusal's words as the rest of the answer keeps room for them (`Said` shows them in
# full up to its bound, then in short).
_REFUSAL_CHARS = 400
# The most characters a token holds (cl100k's longest are runs of 128 spaces; twice
# that for a table of longer ones): a budget of fewer tokens than the characters left
# over this cannot reach their end.
_MOST_CHARS_PER_TOKEN = 256


class AnswerChars:
    """What is left of an answer's characters as its files are answered in order."""

    def __init__(self, params: ReadManyParams, refusals_chars: int) -> None:
        self.params = params
        self.session = _session_chars(params)
        paths = [path if isinstance(path, str) else "" for path in params.file_paths]
        self.least = [_REFUSAL_CHARS + 2 * _name_chars(path) + self.session for path in paths]
        longest = max((_name_chars(path) for path in paths), default=0)
        reserved = sum(self.least) + refusals_chars + _ANSWER_CHARS + 2 * longest
        self.left = ANSWER_MAX_CHARS - reserved
        self.besides = _ENTRY_CHARS + 3 * longest + 2 * self.session

    def may_run_out(self, budget: int) -> bool:
        """Whether entries of `budget` tokens in all may leave a file too few characters
        (a budget that cannot keeps no room for the note that names such files)."""
        return budget * _MOST_CHARS_PER_TOKEN + self.besides + LEAST_BODY_CHARS >= self.left

    def for_body(self, done: int, path: str) -> int:
        """The characters file number `done`'s lines, cells or pages may take."""
        return self.left + self.least[done] - self.besides

    def took(self, done: int, entry: dict[str, Any], said: str | None = None) -> None:
        """File number `done` was answered with `entry` (shown as `said`, when made
        already): its room is now what it took."""
        if said is None:
            said = render_many.many_entry(entry, shared=shared(self.params))
        sent = quoting.sent_chars(said) + said.count(quoting.CALL_PREFIX) * self.session
        self.left += self.least[done] - sent - len(render_many.MANY_SEPARATOR)


def note(params: ReadManyParams, first: str) -> str:
    """The sentence naming the reads of the files marked `OVER`, the `first` of them."""
    each = call("read", file_path=first, **shared(params))
    return (
        f"The files marked {OVER!r} did not fit the characters left of this answer: read "
        f"each on its own (the first: {each}; the others the same with their paths)."
    )


def _name_chars(path: str) -> int:
    """The most characters a path takes as one entry names it (its name; a call's JSON,
    where a name is cut past MAX_CALL_NAME_CHARS), as JSON writes them."""
    called = quoting.json_text(cut_name(path, MAX_CALL_NAME_CHARS))
    return max(quoting.sent_chars(shown_name(path)), quoting.sent_chars(called))


def _session_chars(params: ReadManyParams) -> int:
    """What MCP adds to each call an entry names: the caller's session (hints.for_mcp)."""
    session = shared(params).get("session")
    return len(f', "session": {quoting.json_text(session)}') if session else 0


def shared(params: ReadManyParams) -> dict[str, Any]:
    """The options of the call that each file's read shares, as a way on names them:
    the session by the name its caller gave (a caller other than the editor has its
    sessions under a key of its own, which no call may name: state/sessions.py)."""
    given = {"offset": params.offset, "limit": params.limit, "pages": params.pages}
    given |= {"force": params.force, "line_format": params.line_format}
    return render_many.shared_options({**given, "session": sessions.name_of(params.session)})


# The most characters the refusals of one call show in full: past it, each further
# refusal says its kind and how to get its words, not its words (a refusal names its
# path and a guess, each cut at errors.MAX_NAME_CHARS: 100 of them are still big).
MAX_REFUSALS_CHARS = 16_000


class Said:
    """The refusals of one call so far, and what they take."""

    def __init__(self) -> None:
        self.size = 0

    def bounded(self, entry: dict[str, Any]) -> dict[str, Any]:
        """`entry` as it is, or past `MAX_REFUSALS_CHARS` a refusal in short."""
        error = entry.get("error")
        if not isinstance(error, dict):
            return entry
        if self.size > MAX_REFUSALS_CHARS:
            kind = (error.get("data") or {}).get("kind", "internal")
            path = entry.get("file_path")
            alone = call("read", file_path=path) if isinstance(path, str) else call("read")
            message = (
                f"Refused ({kind}); its words are left out, the refusals before it took "
                f"{self.size:,} characters: read this file alone for them ({alone})."
            )
            entry = {**entry, "error": {**error, "message": message}}
        self.size += quoting.sent_chars(render_many.many_entry(entry))
        return entry
