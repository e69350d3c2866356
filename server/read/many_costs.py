"""What a readMany answer costs as sent, and the words of the files it leaves unread
(many.py's rules): each entry counted as render_many shows it, with the room a front
end's words may take, and the least each entry sends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import quoting, render_many
from ..errors import ReadkeeperError
from ..hints import call
from ..protocol.batch import ReadManyParams
from .many_chars import OVER as OVER_CHARS
from .many_chars import note as chars_note
from .many_chars import shared
from .tokens import bytes_bound

# What joins two entries, and what a front end's words may add to an entry's count
# (MCP's "the read tool", a header's count of tokens recounted as sent).
SEP = 1
SLACK = 3
WIDEST_LEFT = 10**9
# A bound on a read's header line beside its file's name: lines, of how many, tokens,
# where to go on, an unsaved buffer's version.
HEADER = 40


def said(item: dict[str, Any], params: ReadManyParams) -> str:
    """An entry as render_many.many shows it."""
    return render_many.many_entry(item, shared=shared(params))


def cost(
    count: Callable[[str], int],
    item: dict[str, Any],
    params: ReadManyParams,
    shown: str | None = None,
) -> int:
    """What an entry sends, as render_many.many shows it (`shown`, when made already),
    with the room a front end's words may take."""
    shown = said(item, params) if shown is None else shown
    return _tokens(count, shown, item) + in_session(count, params, shown) + SEP + SLACK


# Content shorter than this is counted with its entry's words (a second count's setup
# would cost more than it spares).
_OWN_COUNT_CHARS = 2048


def _tokens(count: Callable[[str], int], shown: str, item: dict[str, Any]) -> int:
    """The tokens of `shown`: its read's content by the count that read made of it (its
    `tokens`), the rest by `count`, when the content is shown as it is (a join's token or
    two is in `SLACK`); else all of it by `count`. Counting each read twice took a
    readMany of ten first reads half as long again as the reads."""
    result = item.get("result")
    file = result.get("file") if isinstance(result, dict) else None
    content = file.get("content") if isinstance(file, dict) else None
    tokens = file.get("tokens") if isinstance(file, dict) else None
    if not isinstance(content, str) or not isinstance(tokens, int):
        return count(shown)
    if len(content) < _OWN_COUNT_CHARS or content not in shown:
        return count(shown)
    return count(shown.replace(content, "", 1)) + tokens


def in_session(count: Callable[[str], int], params: ReadManyParams, said: str) -> int:
    """The room for the call's session in each call `said` names: MCP names each in the
    caller's session (hints.for_mcp; round 34: a 256-character session, uncounted, sent
    1,692 tokens at a budget of 1,500)."""
    session = shared(params).get("session")
    if not session:
        return 0
    return said.count(quoting.CALL_PREFIX) * count(f', "session": {quoting.json_text(session)}')


def over_cost(count: Callable[[str], int], path: str, over: str, chars: bool) -> int:
    """The sentence of a file over the budget (`over`), or (`chars`) over the answer's
    characters."""
    whys = (over, OVER_CHARS) if chars else (over,)
    said = max(count(render_many.refusal(path, "token_limit", why)) for why in whys)
    return said + SEP + SLACK


def header(count: Callable[[str], int], path: str, params: ReadManyParams, rest: bool) -> int:
    """A bound on a read's header line: its file's name, and when it names one (`rest`),
    the read to go on (round 35: counted for every read, a range that names none was
    left unread beside 149 tokens of budget, 60 more than it took)."""
    way_on = count(call("read", file_path=path, **shared(params))) if rest else 0
    return count(quoting.name(path)) + way_on + HEADER + SEP + SLACK


def names_rest(estimated: Any, params: ReadManyParams) -> bool:
    """Whether the read estimated names a way on (its header's rest, a note's): cut, or
    of a file whose end it did not reach (its total unknown), or of the lines after a
    default count (only a range with a limit names none)."""
    file = estimated.get("file") if isinstance(estimated, dict) else None
    if not isinstance(file, dict) or estimated.get("type") == "file_unchanged":
        return False
    total, shown = file.get("total_lines"), file.get("num_lines") or 0
    if file.get("partial") or (total is None and estimated.get("type") == "estimate"):
        return True
    reached = (params.offset or 1) - 1 + shown
    return params.limit is None and isinstance(total, int) and reached < total


def cost_of_note(
    count: Callable[[str], int], params: ReadManyParams, chars: bool, budget: int, given: bool
) -> int:
    """The most the note may cost, whichever files it names (`note`, and with `chars`
    the one over the answer's characters: many_chars.note)."""
    names = [path for path in params.file_paths if isinstance(path, str)] or ["<file>"]
    if count is bytes_bound:  # the most bytes: the name of the most bytes quoted
        names = [max(names, key=lambda name: bytes_bound(quoting.json_text(name)))]
    said = max(one_each(params, names, chars, budget, given), key=count)
    return count(said) + in_session(count, params, said) + SEP + SLACK


def too_small(budget: int, least: int, files: int, given: bool) -> ReadkeeperError:
    if not given:  # max_tokens bounds it: only fewer files help
        return ReadkeeperError(
            "token_limit",
            f"The max_tokens cap ({budget:,}) cannot hold even a line for each of the {files} "
            f"files (their refusals and notes take {least:,} tokens): none was read. Call "
            f"again with fewer files ({call('readMany')}).",
            tokens=least,
            max_tokens=budget,
        )
    return ReadkeeperError(
        "token_limit",
        f"budget_tokens {budget} cannot hold even a line for each of the {files} files "
        f"(their refusals and notes take {least:,} tokens): none was read. Call again with "
        f"budget_tokens of at least {least}, or with fewer files ({call('readMany')}).",
        field="budget_tokens",
        tokens=least,
    )


# A file the budget cannot hold: one short sentence (its cost is in its data); the
# answer's note names the calls that get such files, once.
OVER = "Over budget_tokens: not read."
OVER_CAP = "Over max_tokens: not read."  # without budget_tokens, max_tokens bounds the call


def one_each(
    params: ReadManyParams, names: list[str], chars: bool, budget: int, given: bool
) -> list[str]:
    """The note naming each of `names`, with (`chars`) its sentence on the answer's
    characters (the longest name by its characters need not be the costliest)."""
    return [
        f"note: {quoting.line(note(params, name, budget, given))}"
        + (f" {quoting.line(chars_note(params, name))}" if chars else "")
        for name in names
    ]


def note(params: ReadManyParams, first: str, budget: int, given: bool) -> str:
    """The calls that get the files the budget could not hold, with the lines or pages
    asked for: the read of the `first` of them, each other's the same with its path (a
    placeholder path was named, which, followed, read a file named `<file>`)."""
    each = call("read", file_path=first, **shared(params))
    what = (
        f"{OVER!r} did not fit what budget_tokens had left"
        if given
        else f"{OVER_CAP!r} did not fit the max_tokens cap ({budget:,}), which bounds a "
        "readMany without budget_tokens"
    )
    return (
        f"The files marked {what}: read each on its own (the first: {each}; the others the "
        f"same with their paths), or in calls of fewer files ({call('readMany')})."
    )
