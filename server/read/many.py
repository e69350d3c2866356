"""`readkeeper/readMany`: several reads in one call, each answered as `readkeeper/read`
answers it (a stub, a diff, lines, or its own error), in the order asked.

With `budget_tokens`, the reads share one budget: each file's cost is estimated first (no
content, nothing recorded), and a file that no longer fits is not read; its entry says
so, with the read that gets it. A file's error never fails the others.

The budget spends what each entry sends (`sent_cost`, issue 34): a read's `tokens` (its
lines, diff, outline, pages or cells), a stub's note (not the answer it stands for),
an error's message (a refusal is sent too, the budget's own included).
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
    results: list[dict[str, Any]] = []
    for done, path in enumerate(params.file_paths):
        try:  # one entry no file name can be (a NUL, not a string) fails alone
            check_entry(path, f"file_paths[{done}]")
        except ReadkeeperError as exc:
            results.append(_failed(_given(path), exc))
            if left is not None:
                left -= services.tokens.count(exc.message)
            continue
        step(f"reading {path}", done, len(params.file_paths))
        one = ReadParams(
            file_path=path,
            offset=params.offset,
            limit=params.limit,
            pages=params.pages,
            session=params.session,
            force=params.force,
            line_format=params.line_format,
        )
        try:
            if left is not None:
                cost = _estimate(services, one)
                if cost > left:
                    raise ReadkeeperError(
                        "token_limit",
                        f"{path} would cost about {cost} tokens, more than the {left} left "
                        f"of budget_tokens. Read it on its own ({_alone(one)}).",
                        file_path=path,
                        tokens=cost,
                    )
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
    if left is not None:
        answer["budget_tokens_left"] = max(left, 0)
    return answer


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


def _alone(one: ReadParams) -> str:
    """The read of one file of a readMany, with the lines or pages it asked for."""
    return call(
        "read", file_path=one.file_path, offset=one.offset, limit=one.limit, pages=one.pages
    )
