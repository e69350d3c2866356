"""A notebook's JSON parsed, or the `corrupt` refusal of a file that is no notebook: where
its JSON breaks, shown as its numbered lines kept in the refusal's data (`excerpt`, so
no front end rewords them: errors.CONTENT_FIELDS), and the way to repair it, a read that
shows it as its text (read/damaged.py)."""

from __future__ import annotations

import codecs
import json
import re
from typing import Any

import orjson

from ... import quoting
from ...errors import ReadkeeperError, library_words
from ...hints import call
from .. import numbering

_CONTEXT_LINES = 3

# How a refusal of a notebook that is not UTF-8 says so (read/damaged.py tells it apart).
NOT_UTF8 = "it is not UTF-8"


def parse(data: bytes, path: str) -> dict[str, Any]:
    """The notebook's JSON, or a `corrupt` error naming the line that is wrong. Parsed
    from the bytes as they are (orjson): no text copy of a 100 MB file beside them and
    its objects; what orjson refuses (Python's json also takes NaN, integers past 64
    bits, lone surrogates, deeper nesting) is parsed again by Python's json, whose
    errors name the line."""
    body = memoryview(data)[3:] if data.startswith(codecs.BOM_UTF8) else data
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        parsed = None
    finally:
        del body  # a memoryview holds its bytes
    if isinstance(parsed, dict) and isinstance(parsed.get("nbformat"), int):
        return parsed
    del parsed
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise corrupt(path, f"{NOT_UTF8} (byte {exc.start})", as_text=False) from None
    try:
        raw = json.loads(text)
    except RecursionError:
        raise corrupt(path, "its JSON is nested too deeply to be a notebook") from None
    except json.JSONDecodeError as exc:
        raise _not_json(path, text, exc) from None
    except ValueError as exc:  # past a limit of Python's (an integer of 4,301+ digits)
        raise corrupt(path, f"Python's JSON parser cannot take it: {library_words(exc)}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("nbformat"), int):
        raise corrupt(path, 'its JSON has no "nbformat" version, so it is not a notebook')
    return raw


def _not_json(path: str, text: str, exc: json.JSONDecodeError) -> ReadkeeperError:
    """The `corrupt` refusal of text that is not JSON: where, and its lines there."""
    lines = text.split("\n")
    low = max(1, exc.lineno - _CONTEXT_LINES)
    high = min(len(lines), exc.lineno + _CONTEXT_LINES)
    shown = numbering.numbered((line[:200] for line in lines[low - 1 : high]), low)
    excerpt = shown_excerpt("\n".join(shown))
    detail = exc.msg.removesuffix(" at")  # "Invalid control character at": its `at` is ours
    return ReadkeeperError(
        "corrupt",
        f"{quoting.name(path)} is not valid JSON: {detail} at line {exc.lineno}, "
        f"column {exc.colno}. A notebook must be JSON, so none of its cells can be "
        "edited until that line is fixed (a merge conflict or a cut-off save is the "
        f"usual cause). {read_as_text(path)} Lines {low}-{high}:\n{excerpt}",
        file_path=path,
        line=exc.lineno,
        column=exc.colno,
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
