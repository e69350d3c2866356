"""`readkeeper/readMany`: several reads in one call, each answered as `readkeeper/read`
answers it (a stub, a diff, lines, or its own error), in the order asked.

With `budget_tokens`, the reads share one budget, and it bounds the whole answer as
text (render_many.many: each file as `read` shows it, header line and notes included, each
refusal with its kind, the note, the line saying what is left; the MCP front end sends
that text and says what is left as it sends it: mcp/render.with_left_as_sent). Every
file is estimated first (no content, nothing recorded): a file that cannot be read is
known then, with its refusal; then, in order, a file is read only when its estimate and
a bound of its header line fit what is left beside the room kept for every file after
it (its refusal, or the short sentence of a file over the budget, `many_costs.OVER`),
for the note that names the calls that get those (`many_costs.note`) and for the last
line. A read
whose text came out larger than it was estimated at (a note the estimate did not see)
is sent all the same (it is recorded as read), and every file after it is then left
unread, so it takes only the room kept for reading. When the budget cannot hold even
the refusals, no file is read and the call is refused (`token_limit`) with the budget
that would hold them: a refusal of about 60 tokens, the one answer a smaller budget
gets. The least budget a refusal names holds the next call when its files are as they
were: with a budget, a missing file's refusal makes no did-you-mean guess (looked for
within a time budget, so a loaded machine may find one call's guess and not the next's,
and a file that appears meanwhile would lengthen it) and names the list and glob calls
that find the file instead. `budget_tokens_left` is the budget less the count of the
text. No number in the words is negative.

Without `budget_tokens`, `max_tokens` bounds the answer (six files of 3,000 lines sent
149,291 tokens in one answer: round 36), with no estimates (an estimate costs about a
read: the first reads of ten modules took three times as long): the files are read in
order, each entry kept while it fits what is left beside the least of every file after
it (`many_costs.OVER_CAP`, its short sentence). One that does not is said in that
sentence instead, the note naming its read, and a file read for it is forgotten (the
session does not hold what it was not sent). Refusals make their guesses; no line says
what is left. With a budget or without, the answer keeps to its characters
(many_chars.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from .. import quoting, render_many
from ..errors import (
    MAX_CALL_NAME_CHARS,
    ReadkeeperError,
    cut_name,
    fault_reason,
    shown_content,
    shown_name,
)
from ..files import guesses
from ..hint_walks import notes
from ..hints import call, changed, rewrite
from ..progress import step
from ..protocol import ReadParams, unstructure
from ..protocol.batch import ReadManyParams
from ..protocol.convert import LONE_SURROGATE, NOT_A_STRING, check_budget_tokens, check_entry
from . import many_costs as costs
from . import pipeline, room
from .anchors import AnchorServices
from .anchors import read as read_in_format
from .many_chars import LEAST_BODY_CHARS, MAX_REFUSALS_CHARS, AnswerChars, Said, shared
from .many_chars import OVER as OVER_CHARS
from .many_chars import note as chars_note
from .services import ReadServices
from .tokens import bytes_bound

MAX_FILES = 100

log = logging.getLogger("readkeeper")


def read_many(services: AnchorServices, params: ReadManyParams) -> dict[str, Any]:
    """Serve `readkeeper/readMany` by the rules above."""
    if not params.file_paths or len(params.file_paths) > MAX_FILES:
        raise ReadkeeperError(
            "bad_params",
            f"file_paths must name 1 to {MAX_FILES} files; split a longer list into calls.",
            field="file_paths",
        )
    check_budget_tokens(params.budget_tokens)
    if params.budget_tokens is not None:
        with guesses.none():  # its refusals as counted, call after call (the module's rule)
            return _budgeted(services, params, params.budget_tokens)
    return _capped(services, params)


def _capped(services: AnchorServices, params: ReadManyParams) -> dict[str, Any]:
    """The reads within `max_tokens`, without a budget (the module's rule), measured by
    their bytes (never under their tokens: tokens.bytes_bound) until that bound no longer
    fits, then counted (`_Measure`): most such calls send less, and count nothing."""
    cap, paths = services.settings.max_tokens, params.file_paths
    chars = AnswerChars(params, MAX_REFUSALS_CHARS)
    measure = _Measure(services.tokens.count, params, cap, chars.may_run_out(cap))
    kept = measure.kept(0)
    if kept > cap:
        measure.exactly()
        kept = measure.kept(0)
        if kept > cap:
            raise costs.too_small(cap, kept, len(paths), False)
    left, said = cap, Said()
    first_over: str | None = None  # the note's example: the first file left unread
    over_chars: str | None = None  # the first file the answer's characters left unread
    results: list[dict[str, Any]] = []
    for done, path in enumerate(paths):
        kept = measure.kept(done + 1)
        entry, short = _bad_entry(path, done), False
        if entry is None:
            entry, short = _within_chars(services, params, done, chars)
            if entry is None:
                results.extend(_none_read(paths[done:]))
                break
        entry = said.bounded(entry)
        shown = costs.said(entry, params)
        cost = measure.cost(entry, shown)
        sent: str | None = shown
        if cost > left - kept and not measure.exact:
            measure.exactly()
            left, kept = cap - measure.spent(), measure.kept(done + 1)
            cost = measure.cost(entry, shown)
        if cost > left - kept and isinstance(path, str):
            file = (entry.get("result") or {}).get("file")
            if isinstance(file, dict):  # read, and not sent: not held either
                services.read_states.forget(params.session, [str(file.get("file_path"))])
            entry = _failed(path, ReadkeeperError("token_limit", costs.OVER_CAP, file_path=path))
            first_over, short, sent = first_over or path, False, None
            cost = measure.least[done]
        over_chars = over_chars or (path if short else None)
        left -= cost
        measure.took(entry, sent)
        chars.took(done, entry, sent)
        results.append(entry)
    answer: dict[str, Any] = {"results": results}
    sentences = [costs.note(params, first_over, cap, False)] if first_over is not None else []
    sentences += [chars_note(params, over_chars)] if over_chars is not None else []
    if sentences:
        answer["note"] = " ".join(sentences)
    return answer


class _Measure:
    """What a readMany without a budget takes of `max_tokens`: each entry, the least of
    each file (its short sentence, `many_costs.OVER_CAP`) and the note, by their bytes
    until `exactly` is called, then by `count` (what was sent so far counted again)."""

    def __init__(
        self, count: Callable[[str], int], params: ReadManyParams, cap: int, run_out: bool
    ) -> None:
        self.count, self.params, self.cap, self.run_out = count, params, cap, run_out
        self.exact = False
        self.sent: list[tuple[dict[str, Any], str | None]] = []
        self._reserve(bytes_bound)

    def _reserve(self, measure: Callable[[str], int]) -> None:
        named = [p if isinstance(p, str) else "" for p in self.params.file_paths]
        self.least = [costs.over_cost(measure, p, costs.OVER_CAP, self.run_out) for p in named]
        self.note = costs.cost_of_note(measure, self.params, self.run_out, self.cap, False)

    def exactly(self) -> None:
        """Count from now on, the reservations again too."""
        self.exact = True
        self._reserve(self.count)

    def kept(self, after: int) -> int:
        """What the files from number `after` on, the note and the joins keep."""
        return sum(self.least[after:]) + self.note + costs.SEP

    def cost(self, entry: dict[str, Any], shown: str) -> int:
        """What `entry`, shown as `shown`, takes."""
        measure = self.count if self.exact else bytes_bound
        return costs.cost(measure, entry, self.params, shown)

    def took(self, entry: dict[str, Any], shown: str | None) -> None:
        """The next file was answered with `entry` (None for `shown`: its short sentence)."""
        self.sent.append((entry, shown))

    def spent(self) -> int:
        """What the entries so far take, measured now."""
        spent = 0
        for done, (entry, shown) in enumerate(self.sent):
            spent += self.least[done] if shown is None else self.cost(entry, shown)
        return spent


def _within_chars(
    services: AnchorServices, params: ReadManyParams, done: int, chars: AnswerChars
) -> tuple[dict[str, Any] | None, bool]:
    """The entry of file number `done` read within the characters left (`chars`), or its
    short refusal when too few are (many_chars.py), and whether it is that refusal."""
    path = params.file_paths[done]
    body = chars.for_body(done, path)
    if body < LEAST_BODY_CHARS:
        return _failed(path, ReadkeeperError("token_limit", OVER_CHARS, file_path=path)), True
    with room.chars_within(body):
        return _entry(services, params, done), False


def _budgeted(services: AnchorServices, params: ReadManyParams, budget: int) -> dict[str, Any]:
    """The reads within the caller's `budget` (the module's rule)."""
    count = services.tokens.count
    paths = params.file_paths
    # Each entry as estimated: its refusal (known now), or what its read would cost.
    planned: list[dict[str, Any] | int] = []
    said = Said()
    for done, path in enumerate(paths):
        refused = _bad_entry(path, done)
        if refused is None:
            step(f"estimating {shown_name(path)}", done, len(paths))
            try:
                estimated = _estimated(services, _one(params, path))
                rest = costs.names_rest(estimated, params)
                planned.append(
                    sent_cost(services, estimated) + costs.header(count, path, params, rest)
                )
                continue
            except ReadkeeperError as exc:
                refused = _failed(path, exc, params)
            except Exception as exc:
                if not _cancelled(exc):
                    refused = _failed(path, _fault(path, exc))
                else:  # cancelled while a PDF was estimated: nothing is read
                    return {"results": _none_read(paths)}
        planned.append(said.bounded(refused))
    # The least each entry sends: its refusal, or the sentence of a file over the budget.
    chars = AnswerChars(params, MAX_REFUSALS_CHARS)
    # The last line as its number's digits may spell it whatever the budget: the least
    # this call asks for is then enough when it is the budget given (its digits differ).
    last = count(render_many.left_line(max(budget, costs.WIDEST_LEFT)))

    def kept_for(run_out: bool) -> tuple[list[int], int]:
        """What each entry and the answer keep, with (`run_out`) the room of the files the
        answer's characters may leave unread."""
        least = [
            costs.cost(count, p, params)
            if isinstance(p, dict)
            else costs.over_cost(count, q, costs.OVER, run_out)
            for p, q in zip(planned, paths, strict=True)
        ]
        note = costs.cost_of_note(count, params, run_out, budget, True)
        return least, sum(least) + note + last + costs.SEP

    least, kept = kept_for(chars.may_run_out(budget))
    if kept > budget:  # the least it names holds the next call, whichever room that keeps
        fewest = kept_for(False)[1]
        raise costs.too_small(budget, kept_for(chars.may_run_out(fewest))[1], len(paths), True)
    left = budget
    spilled = False
    first_over: str | None = None  # the note's example: the first file left unread
    over_chars: str | None = None  # the first file the answer's characters left unread
    results: list[dict[str, Any]] = []
    for done, (path, plan) in enumerate(zip(paths, planned, strict=True)):
        kept -= least[done]
        if isinstance(plan, dict):
            results.append(plan)
        elif spilled or plan > left - kept:
            first_over = first_over or path
            results.append(
                _failed(
                    path, ReadkeeperError("token_limit", costs.OVER, file_path=path, tokens=plan)
                )
            )
        else:
            entry, short = _within_chars(services, params, done, chars)
            if entry is None:
                results.extend(_none_read(paths[done:]))
                break
            over_chars = over_chars or (path if short else None)
            results.append(entry)
            cost = costs.cost(count, results[-1], params)
            if cost > left - kept and not isinstance(results[-1].get("result"), dict):
                # A refusal the estimate did not foresee (the file changed): the short one.
                first_over = first_over or path
                results[-1] = _failed(
                    path, ReadkeeperError("token_limit", costs.OVER, file_path=path)
                )
                cost = least[done]
            elif cost > left - kept:
                spilled = True  # larger than estimated: the files after it are not read
            left -= cost
            chars.took(done, results[-1])
            continue
        left -= costs.cost(count, results[-1], params)
        chars.took(done, results[-1])
    answer: dict[str, Any] = {"results": results}
    sentences = [costs.note(params, first_over, budget, True)] if first_over is not None else []
    sentences += [chars_note(params, over_chars)] if over_chars is not None else []
    if sentences:
        answer["note"] = " ".join(sentences)
    return render_many.settled_left(
        answer, {**answer, "budget_tokens_left": budget}, budget, count, shared=shared(params)
    )


def _entry(services: AnchorServices, params: ReadManyParams, done: int) -> dict[str, Any] | None:
    """The read of the call's file number `done` as its entry: the read's result, or its
    refusal. None when the request was cancelled as it was read (a PDF's render): the
    caller then refuses it and every file after it as not read (`_none_read`)."""
    path = params.file_paths[done]
    step(f"reading {shown_name(path)}", done, len(params.file_paths))
    try:
        result = _read(services, params, path)
    except ReadkeeperError as exc:
        return _failed(path, exc, params)
    except Exception as exc:
        if not _cancelled(exc):
            return _failed(path, _fault(path, exc))
        return None
    return {"file_path": path, "result": notes(result, _as_read(params, path))}


def _fault(path: str, exc: Exception) -> ReadkeeperError:
    """A fault of readkeeper's in one file's read (logged): that file's entry, `internal`;
    the other files are answered (one bad entry is refused alone)."""
    log.error("reading %s in a batch failed unexpectedly", path, exc_info=exc)
    reason = fault_reason(exc)
    return ReadkeeperError(
        "internal",
        f"{quoting.name(path)} was not read: a fault in readkeeper ({reason}); it is not "
        "something the call did wrong, and the server's log has the details. Each other "
        "file has its own entry.",
        file_path=path,
        reason=reason,
    )


def _read(services: AnchorServices, params: ReadManyParams, path: str) -> Any:
    return unstructure(read_in_format(services, _one(params, path)))


def _bad_entry(path: Any, done: int) -> dict[str, Any] | None:
    """The refusal of an entry no file name can be (a NUL, not a string), which fails
    alone."""
    try:
        check_entry(path, f"file_paths[{done}]")
    except ReadkeeperError as exc:
        return _failed(_given(path), exc)
    return None


def _one(params: ReadManyParams, path: str) -> ReadParams:
    """The read of one file of the call."""
    return ReadParams(
        file_path=path,
        offset=params.offset,
        limit=params.limit,
        pages=params.pages,
        session=params.session,
        force=params.force,
        line_format=params.line_format,
    )


def _given(path: str) -> Any:
    """An entry no file name can be, as the call gave it: a value that is not a string
    as its JSON, a string with what cannot be a name escaped (`quoting.printable`)."""
    for marker in (NOT_A_STRING, LONE_SURROGATE):
        if path.startswith(marker):
            return path[len(marker) :]
    return quoting.printable(path)


def _failed(
    path: Any, exc: ReadkeeperError, params: ReadManyParams | None = None
) -> dict[str, Any]:
    """A file's refusal as its entry (`params`: the call, whose ways on its message names
    as reads of the file, `_as_read`)."""
    data = exc.to_data()
    message = exc.message
    if params is not None and isinstance(path, str):
        message = _as_read(params, path)(message, shown_content(data))
    # The name as the call gave it, cut as a call's names are: 100 missing names of
    # 4,000 controls each came back whole, 2,457,225 characters (round 43).
    named = cut_name(path, MAX_CALL_NAME_CHARS) if isinstance(path, str) else path
    return {"file_path": named, "error": {"message": message, "data": data}}


def _as_read(params: ReadManyParams, path: str) -> Callable[[str, Any], str]:
    """The words of a file's entry: each way on `again` wrote in its read's notes (the
    read just answered, options changed) said as the call of that read, since readMany
    takes none of them (`offset=2001` named an option of a call the agent had not made);
    a call, as every front end says one, and counted by the budget as it is sent."""
    asked = {"file_path": path, **shared(params)}
    return lambda message, keep: rewrite(
        message, lambda *_: None, keep, options=lambda run: call("read", **changed(asked, run))
    )


def _cancelled(exc: Exception) -> bool:
    """Whether `exc` is a PDF render stopped by the request's cancel (worker.py, loaded
    with the first PDF: not before)."""
    from .readers.worker import Cancelled

    return isinstance(exc, Cancelled)


def _none_read(paths: list[str]) -> list[dict[str, Any]]:
    """The entries of files not read because the request was cancelled."""
    return [_failed(path, _not_read(path)) for path in paths]


def _not_read(path: str) -> ReadkeeperError:
    return ReadkeeperError(
        "cancelled",
        f"{quoting.name(path)} was not read: the request was cancelled before it was. "
        f"Read it again if you need it ({call('read', file_path=path)}).",
        file_path=path,
    )


def _estimated(services: ReadServices, params: ReadParams) -> Any:
    """The estimate of the read (or the stub it answers with), as sent."""
    import attrs

    return unstructure(pipeline.read(services, attrs.evolve(params, estimate=True)))


def sent_cost(services: ReadServices, result: Any) -> int:
    """The tokens a read's answer sends: its `tokens`, which count what it sends, or a
    stub's note (its `tokens`, when it has one, are the held answer's)."""
    file = result.get("file") if isinstance(result, dict) else None
    if not isinstance(file, dict):
        return 0
    if result.get("type") == "file_unchanged":
        return services.tokens.count(str(file.get("note") or ""))
    return int(file.get("tokens") or 0)
