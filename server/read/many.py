"""`readkeeper/readMany`: several reads in one call, each answered as `readkeeper/read`
answers it (a stub, a diff, lines, or its own error), in the order asked.

With `budget_tokens`, the reads share one budget: each file's cost is estimated first (no
content, nothing recorded), and a file that no longer fits is not read; its entry says
so in a short sentence, and the answer's note names the read that gets it (with the
lines or pages asked for). A file's error never fails the others.

The budget spends what each entry sends (`sent_cost`, issue 34): a read's `tokens` (its
lines, diff, outline, pages or cells), a stub's note (not the answer it stands for),
an error's message (a refusal is sent too, the budget's own included). It bounds all of
it: before each file, room is kept for the refusal of every file after it and for the
one note that names the calls that get them (`_OVER`, `_note`), so a file is read only
when it fits what is left beside those, and the refusals are within the budget too.
Only a budget too small to hold a refusal for each file (under 10 tokens a file) is
exceeded, by those refusals alone, no file read. No number in their words is negative.
"""

from __future__ import annotations

from typing import Any

from .. import quoting
from ..errors import ReadkeeperError
from ..hints import call
from ..progress import step
from ..protocol import ReadParams, unstructure
from ..protocol.batch import ReadManyParams
from ..protocol.convert import LONE_SURROGATE, NOT_A_STRING, check_budget_tokens, check_entry
from . import pipeline
from .anchors import AnchorServices
from .anchors import read as read_in_format
from .services import ReadServices

MAX_FILES = 100


def read_many(services: AnchorServices, params: ReadManyParams) -> dict[str, Any]:
    """Serve `readkeeper/readMany` by the rules above."""
    if not params.file_paths or len(params.file_paths) > MAX_FILES:
        raise ReadkeeperError(
            "bad_params",
            f"file_paths must name 1 to {MAX_FILES} files; split a longer list into calls.",
            field="file_paths",
        )
    check_budget_tokens(params.budget_tokens)
    left = params.budget_tokens
    # Room kept for the refusal of each file after the one at hand, and for the note
    # (the module's rule).
    short = services.tokens.count(_OVER) + _WORDING
    kept = short * len(params.file_paths) + services.tokens.count(_note(params)) + _WORDING
    over = False
    results: list[dict[str, Any]] = []
    for done, path in enumerate(params.file_paths):
        kept -= short
        try:  # one entry no file name can be (a NUL, not a string) fails alone
            check_entry(path, f"file_paths[{done}]")
        except ReadkeeperError as exc:
            results.append(_failed(_given(path), exc))
            if left is not None:
                left -= services.tokens.count(exc.message)
            continue
        step(f"reading {path}", done, len(params.file_paths))
        one = _one(params, path)
        try:
            if left is not None:
                cost = _estimate(services, one)
                if cost > left - kept:
                    over = True
                    raise ReadkeeperError("token_limit", _OVER, file_path=path, tokens=cost)
            result = unstructure(read_in_format(services, one))
        except ReadkeeperError as exc:
            results.append(_failed(path, exc))
            if left is not None:
                left -= services.tokens.count(exc.message)
            continue
        except Exception as exc:
            if not _cancelled(exc):
                raise
            # The client cancelled while a PDF render ran: the files read so far are
            # recorded as held, so the answer is theirs, and the rest are not read.
            for rest in params.file_paths[done:]:
                results.append(_failed(rest, _not_read(rest)))
            break
        if left is not None:
            left -= sent_cost(services, result)
        results.append({"file_path": path, "result": result})
    answer: dict[str, Any] = {"results": results}
    if over and left is not None:
        answer["note"] = _note(params)
        left -= services.tokens.count(answer["note"])
    if left is not None:
        answer["budget_tokens_left"] = max(left, 0)
    return answer


# A file the budget cannot hold: one short sentence (its cost is in its data); the
# answer's note names the calls that get such files, once.
_OVER = "Over budget_tokens: not read."
# What a front end's wording of a call may add to its count (MCP's "the read tool").
_WORDING = 1


def _note(params: ReadManyParams) -> str:
    """The calls that get the files the budget could not hold, with the lines or pages
    asked for."""
    asked = {"offset": params.offset, "limit": params.limit, "pages": params.pages}
    return (
        f"The files marked {_OVER!r} did not fit what budget_tokens had left: read each on "
        f"its own ({call('read', file_path='<file>', **asked)}), or in calls of fewer files "
        f"({call('readMany')})."
    )


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


def _failed(path: Any, exc: ReadkeeperError) -> dict[str, Any]:
    return {"file_path": path, "error": {"message": exc.message, "data": exc.to_data()}}


def _cancelled(exc: Exception) -> bool:
    """Whether `exc` is a PDF render stopped by the request's cancel (worker.py, loaded
    with the first PDF: not before)."""
    from .readers.worker import Cancelled

    return isinstance(exc, Cancelled)


def _not_read(path: str) -> ReadkeeperError:
    return ReadkeeperError(
        "cancelled",
        f"{quoting.name(path)} was not read: the request was cancelled before it was. "
        f"Read it again if you need it ({call('read', file_path=path)}).",
        file_path=path,
    )


def _estimate(services: ReadServices, params: ReadParams) -> int:
    """What the read would cost: the estimate's count, or the stub's it answers with."""
    import attrs

    estimated = unstructure(pipeline.read(services, attrs.evolve(params, estimate=True)))
    return sent_cost(services, estimated)


def sent_cost(services: ReadServices, result: Any) -> int:
    """The tokens a read's answer sends: its `tokens`, which count what it sends, or a
    stub's note (its `tokens`, when it has one, are the held answer's)."""
    file = result.get("file") if isinstance(result, dict) else None
    if not isinstance(file, dict):
        return 0
    if result.get("type") == "file_unchanged":
        return services.tokens.count(str(file.get("note") or ""))
    return int(file.get("tokens") or 0)
