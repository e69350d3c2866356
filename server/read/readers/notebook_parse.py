"""A notebook's JSON parsed, or the `corrupt` refusal of a file that is no notebook: where
its JSON breaks, shown as its numbered lines kept in the refusal's data (`excerpt`, so
no front end rewords them: errors.CONTENT_FIELDS), and the way to repair it, a read that
shows it as its text (read/damaged.py)."""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable
from typing import Any

import orjson

from ... import quoting
from ...errors import ReadkeeperError, library_words
from ...hints import call
from .. import numbering

_CONTEXT_LINES = 3
# How orjson says the JSON ended and more follows.
_AFTER_DOCUMENT = "unexpected content after document"

# How a refusal of a notebook that is not UTF-8 says so (read/damaged.py tells it apart).
NOT_UTF8 = "it is not UTF-8"


def parse(data: bytes, path: str) -> dict[str, Any]:
    """The notebook's JSON, or a `corrupt` error naming the line that is wrong. Parsed
    from the bytes as they are (orjson): no text copy of a 100 MB file beside them and
    its objects; what orjson refuses (Python's json also takes NaN, integers past 64
    bits, lone surrogates, deeper nesting) is parsed again by Python's json, whose
    errors name the line.

    A damaged notebook costs no more than its text (bench/bench_damaged_notebook.py): a
    merge conflict's marker at the start of a line is in no JSON, so orjson, which sets
    aside many times the file's size before it parses, is not asked; Python's json
    first finds where the JSON breaks keeping no object it parsed (`_dropped`), and
    builds the tree only when there is none; JSON whole and then more (a marker after
    a save) is placed by orjson's own error, not parsed again."""
    parsed = None if _conflicted(data) else _orjson(data, path)
    if isinstance(parsed, dict) and isinstance(parsed.get("nbformat"), int):
        return parsed
    refused = parsed is None
    del parsed
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise corrupt(path, f"{NOT_UTF8} (byte {exc.start})", as_text=False) from None
    if refused:
        _python(text, path, _dropped)  # where it breaks, if it does, at little cost
    raw = _python(text, path, None)
    if not isinstance(raw, dict) or not isinstance(raw.get("nbformat"), int):
        raise corrupt(path, 'its JSON has no "nbformat" version, so it is not a notebook')
    return raw


_MARKERS = (b"<<<<<<<", b"=======", b">>>>>>>")


def _conflicted(data: bytes) -> bool:
    """Whether a line of `data` starts with a merge conflict's marker: no JSON has one
    (a line break is never inside a JSON string, and `<`, `=`, `>` are no token)."""
    return any(data.startswith(m) or data.find(b"\n" + m) >= 0 for m in _MARKERS)


def _orjson(data: bytes, path: str) -> Any:
    """`data` parsed by orjson; None when it refuses it, but for JSON whole and then
    more, refused as Python's json would refuse it ("Extra data") without parsing it
    again."""
    body = memoryview(data)[3:] if data.startswith(codecs.BOM_UTF8) else data
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        text, pos = exc.doc, exc.pos  # raised below: as its context, it would keep the text
        if not exc.msg.startswith(_AFTER_DOCUMENT) or not isinstance(text, str):
            return None
    finally:
        del body  # a memoryview holds its bytes
    raise _not_json(path, text, "Extra data", pos)


def _dropped(pairs: list[tuple[str, Any]]) -> None:
    """An object_pairs_hook keeping nothing: each object parsed is let go at once."""


def _python(text: str, path: str, hook: Callable[[list[tuple[str, Any]]], Any] | None) -> Any:
    """`text` parsed by Python's json (each object through `hook`, when given), or the
    `corrupt` refusal saying where it breaks."""
    try:
        return json.loads(text, object_pairs_hook=hook)
    except RecursionError:
        raise corrupt(path, "its JSON is nested too deeply to be a notebook") from None
    except json.JSONDecodeError as exc:
        msg, pos = exc.msg, exc.pos  # raised below: as its context, it would keep the text
    except ValueError as exc:  # past a limit of Python's (an integer of 4,301+ digits)
        raise corrupt(path, f"Python's JSON parser cannot take it: {library_words(exc)}") from None
    raise _not_json(path, text, msg, pos)


def _not_json(path: str, text: str, msg: str, pos: int) -> ReadkeeperError:
    """The `corrupt` refusal of text that is not JSON (`msg` at character `pos`): where,
    and its lines there, found around `pos` without splitting the whole text."""
    lineno = text.count("\n", 0, pos) + 1
    line_start = text.rfind("\n", 0, pos) + 1
    colno = pos - line_start + 1
    start, low = line_start, lineno
    while start > 0 and lineno - low < _CONTEXT_LINES:
        start, low = text.rfind("\n", 0, start - 1) + 1, low - 1
    end = text.find("\n", pos)
    for _ in range(_CONTEXT_LINES):
        end = text.find("\n", end + 1) if end >= 0 else end
    lines = [line[:200] for line in text[start : end if end >= 0 else len(text)].split("\n")]
    high = low + len(lines) - 1
    shown = numbering.numbered(lines, low)
    excerpt = shown_excerpt("\n".join(shown))
    detail = msg.removesuffix(" at")  # "Invalid control character at": its `at` is ours
    return ReadkeeperError(
        "corrupt",
        f"{quoting.name(path)} is not valid JSON: {detail} at line {lineno}, "
        f"column {colno}. A notebook must be JSON, so none of its cells can be "
        "edited until that line is fixed (a merge conflict or a cut-off save is the "
        f"usual cause). {read_as_text(path)} Lines {low}-{high}:\n{excerpt}",
        file_path=path,
        line=lineno,
        column=colno,
        detail=detail,
        excerpt=excerpt,  # the file's text: no front end rewords it (errors.py)
    )


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def shown_excerpt(excerpt: str) -> str:
    """A file's lines as a refusal shows them: each control character but a tab escaped
    as JSON spells it (a NUL as `\\u0000`), so no raw control byte reaches a message, a
    terminal or a transcript (attack round 27)."""
    return _CONTROL.sub(lambda found: f"\\u{ord(found.group()):04x}", excerpt)


def corrupt(path: str, why: str, as_text: bool = True) -> ReadkeeperError:
    fix = f"{read_as_text(path)} Or ask" if as_text else "Ask"
    return ReadkeeperError(
        "corrupt",
        f"{quoting.name(path)} is not a readable notebook: {why}. {fix} the user to re-save "
        "it from Jupyter, or to restore it from version control.",
        file_path=path,
        detail=why,
    )


def read_as_text(path: str) -> str:
    """The way to repair a damaged notebook: a read shows it as text (read/pipeline.py)."""
    return (
        f"A read ({call('read', file_path=path)}) shows a notebook that is not one as its "
        "text, numbered by line: edit those lines to repair it, then read it again for its "
        "cells."
    )
