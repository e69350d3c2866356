"""The protocol's conversion at the edge.

Params arrive as loose JSON: numbers as strings ("42"), a field a method does not have
(refused, known_fields.py: ignoring it would let `head: 3` read the whole file). They
are structured here, once, into typed params, and anything malformed becomes
`bad_params` naming the field. Results are attrs classes unstructured to JSON
with absent (None) fields left out.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any, Literal, TypeVar, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.gen import make_dict_structure_fn

from .. import quoting
from ..errors import ReadkeeperError
from ..message_cap import MAX_NESTING
from .known_fields import check_entry_fields, check_known

T = TypeVar("T")

# --- conversion -------------------------------------------------------------------------

_INT_RE = re.compile(r"\s*[+-]?\d+\s*")
# Every whole number of a request is a line, a count, an offset or a budget: LSP's own
# integer range holds them all, and one bound here keeps a huge one from reaching an
# index or a C call deeper in (an offset of 2**63 made an `internal` error).
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def as_sent(value: Any, most: int = 200) -> str:
    """A value of a request as the JSON the client sent, for the words refusing it: null,
    true and false, integers exact, NaN and Infinity as JSON-RPC parsers read them,
    strings quoted; at most `most` characters (cut between two escapes, then `...`):
    every refusal repeating a value, in every front end (not Python's None, True, nan)."""
    try:
        text = quoting.json_text(value)  # NaN and Infinity: allow_nan's words
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= most else quoting.cut_escaped(text, most) + "..."


def _structure_int(value: Any, _: type) -> int:
    if isinstance(value, bool):
        raise ValueError(f"expected a whole number, got {as_sent(value)}")
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if not whole and not (isinstance(value, str) and len(value) < 64 and _INT_RE.fullmatch(value)):
        raise ValueError(f"expected a whole number, got {as_sent(value)}")
    number = int(value)
    # The bound is the protocol's, not the field's (a search's offset is 0 or more, a
    # read's 1 or more): the hint after it (`_hint`) says what the field takes.
    if number > _INT_MAX:
        raise ValueError(f"expected a whole number no larger than {_INT_MAX}, got {as_sent(value)}")
    if number < _INT_MIN:
        raise ValueError(
            f"expected a whole number no smaller than {_INT_MIN}, got {as_sent(value)}"
        )
    return number


def _structure_bool(value: Any, _: type) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError(f"expected true or false, got {as_sent(value)}")


def _structure_str(value: Any, _: type) -> str:
    if isinstance(value, str):
        return value
    raise ValueError(f"expected a string, got {as_sent(value)}")


# cattrs on its own takes any iterable for a list (a string becomes its characters, so
# `paths: "notalist"` meant ["n", "o", ...]) and indexes whatever it is given as an
# object ("string indices must be integers"). Every list must be a JSON array and every
# object a JSON object, at any depth.


# Every list a request holds is taken whole before any work is done on it, so one cap
# bounds them all here: the entries of any list (an editor's diagnostics of every file
# it checks fits), and tighter, the paths a call names (mentions, paths, file_paths:
# each is read, so each costs a read), counted after duplicates are dropped.
MAX_LIST_ITEMS = 10_000
MAX_PATHS = 1_000


def _list_hook(converter: cattrs.Converter, cls: Any) -> Any:
    (item,) = get_args(cls) or (Any,)

    def structure_list(value: Any, _: type) -> list[Any]:
        if not isinstance(value, list):
            raise ValueError(f"expected a list, got {_shown(value)}")
        if len(value) > MAX_LIST_ITEMS:
            raise ValueError(
                f"holds {len(value):,} entries, over the {MAX_LIST_ITEMS:,} a list may hold: "
                "send it in parts"
            )
        out, problems = [], []
        for index, entry in enumerate(value):
            try:
                out.append(converter.structure(entry, item))
            except Exception as exc:  # re-raised below, with its index
                exc.add_note(IterableValidationNote(f"@ index {index}", index, item))
                problems.append(exc)
                break
        if problems:
            raise IterableValidationError("invalid list", problems, cls)
        return out

    return structure_list


def _dict_hook(converter: cattrs.Converter, cls: Any) -> Any:
    key, item = get_args(cls) or (Any, Any)

    def structure_dict(value: Any, _: type) -> dict[Any, Any]:
        if not isinstance(value, dict):
            raise ValueError(f"expected an object, got {_shown(value)}")
        return {converter.structure(k, key): converter.structure(v, item) for k, v in value.items()}

    return structure_dict


def _class_hook(converter: cattrs.Converter, cls: Any) -> Any:
    fields = make_dict_structure_fn(cls, converter)

    def structure_object(value: Any, _: type) -> Any:
        if not isinstance(value, dict):
            raise ValueError(f"expected an object, got {_shown(value)}")
        check_entry_fields(value, cls)
        return fields(value, cls)

    return structure_object


def _shown(value: Any) -> str:
    kind = {str: "a string", bool: "true/false", int: "a number", float: "a number"}
    return kind.get(type(value), "null" if value is None else type(value).__name__)


_origin: Callable[[Any], Any] = get_origin  # typed loosely: a class's origin, or None


def _make_converter() -> cattrs.Converter:
    converter = cattrs.Converter(omit_if_default=False)
    converter.register_structure_hook(int, _structure_int)
    converter.register_structure_hook(bool, _structure_bool)
    converter.register_structure_hook(str, _structure_str)
    converter.register_structure_hook_factory(
        lambda cls: _origin(cls) is list, lambda cls: _list_hook(converter, cls)
    )
    converter.register_structure_hook_factory(
        lambda cls: _origin(cls) is dict, lambda cls: _dict_hook(converter, cls)
    )
    converter.register_structure_hook_factory(
        lambda cls: isinstance(cls, type) and attrs.has(cls),
        lambda cls: _class_hook(converter, cls),
    )
    converter.register_structure_hook_factory(
        lambda cls: _origin(cls) is Literal, lambda cls: _literal_hook(cls)
    )
    return converter


def _literal_hook(cls: Any) -> Any:
    """A value that must be one of a Literal's choices: the refusal says the value as the
    JSON sent (cattrs said it bare: `got delete (readkeeper: All edits were applied.)`
    read as readkeeper's words, and 600,000 spaces as nothing: round 39)."""
    choices = get_args(cls)

    def structure_literal(value: Any, _: type) -> Any:
        if any(type(value) is type(choice) and value == choice for choice in choices):
            return value
        said = ", ".join(json.dumps(choice) for choice in choices)
        raise ValueError(f"must be one of {said}, got {as_sent(value)}")

    return structure_literal


converter = _make_converter()


def _first_problem(exc: BaseException, prefix: str = "") -> tuple[str, str]:
    """The dotted field path and the message of the first leaf error in `exc`."""
    if isinstance(exc, ClassValidationError | IterableValidationError):
        for sub in exc.exceptions:
            name = ""
            for note in getattr(sub, "__notes__", []):
                if isinstance(note, AttributeValidationNote):
                    name = note.name
                elif hasattr(note, "index"):
                    name = f"[{note.index}]"
            joined = (
                (f"{prefix}{name}" if name.startswith("[") else f"{prefix}.{name}")
                if prefix and name
                else prefix or name
            )
            return _first_problem(sub, joined)
    if isinstance(exc, KeyError):
        return prefix, "is required"
    return prefix, str(exc)


def structure(params: Any, cls: type[T]) -> T:
    """Typed params from a request's JSON, or a `bad_params` error naming the field."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ReadkeeperError(
            "bad_params",
            f"params must be an object, got {type(params).__name__}.",
            field="params",
        )
    _check_depth(params)
    check_known(params, cls)
    try:
        params = _entries_apart(params, cls)
        _check_paths(params, "", _ENTRY_LISTS.get(cls.__name__))
        return converter.structure(params, cls)
    except (ClassValidationError, ValueError, TypeError, KeyError) as exc:
        field, problem = _first_problem(exc)
        # The problem repeats the value sent: one line, nothing unseen (quoting.phrase).
        said = quoting.phrase(f"{field or 'params'} {problem}")
        message = f"Invalid params: {said}.".replace(" .", ".")
        hint = _hint(cls, field or "")
        raise ReadkeeperError(
            "bad_params", f"{message} {hint}" if hint else message, field=field
        ) from None


def _check_depth(params: dict[str, Any]) -> None:
    """Refuse, naming the field, params nesting lists and objects past `MAX_NESTING`
    (the params object counted): every front end's door holds a message to it, and the
    walks after this one (the paths', the structuring's) are recursive. Walked with a
    stack of its own, so no nesting makes it fail."""
    for key, item in params.items():
        stack = [(item, 2)]
        while stack:
            value, depth = stack.pop()
            if not isinstance(value, dict | list):
                continue
            if depth > MAX_NESTING:
                raise ReadkeeperError(
                    "bad_params",
                    f"Invalid params: {quoting.name(str(key))} nests lists and objects "
                    f"more than {MAX_NESTING} levels deep. Send it as the tool's schema "
                    "gives it.",
                    field=str(key),
                )
            items = value.values() if isinstance(value, dict) else value
            stack.extend((entry, depth + 1) for entry in items)


# A batch's list whose entries are answered one by one (`check_entry`): one bad entry
# (not a string, a NUL) is its own error, never the whole call's (attack round 22).
_ENTRY_LISTS = {"ReadManyParams": "file_paths"}
# A list entry that is not a string, carried to `check_entry` as one no file name holds.
NOT_A_STRING = "\x00not a string:"
# An entry holding a lone surrogate escape, which the MCP SDK's parser refuses (the whole
# line with it): the MCP door carries it this way, its surrogates as `\\udXXX` text
# (mcp/unpaired.py `mend`).
LONE_SURROGATE = "\x00lone surrogate:"


def _entries_apart(params: dict[str, Any], cls: type[Any]) -> dict[str, Any]:
    """`params` with the entries of `cls`'s batch list left to `check_entry`: each that
    is not a string carried as `NOT_A_STRING` and its JSON."""
    field = _ENTRY_LISTS.get(cls.__name__)
    entries = params.get(field) if field else None
    if field is None or not isinstance(entries, list):
        return params
    carried = [e if isinstance(e, str) else NOT_A_STRING + as_sent(e) for e in entries]
    return {**params, field: carried}


def check_entry(value: str, field: str) -> None:
    """Refuse (`bad_params`, naming `field`) one entry of a batch's list of paths: not a
    string, or one no file name can hold (a NUL, a lone surrogate)."""
    if value.startswith(NOT_A_STRING):
        got = value[len(NOT_A_STRING) :]
        raise ReadkeeperError(
            "bad_params", f"Invalid params: {field} expected a string, got {got}.", field=field
        )
    if value.startswith(LONE_SURROGATE):
        raise _path_error(field, "holds a lone UTF-16 surrogate escape")
    _check_path_value(value, field)


# The fields whose strings become file names, wherever they sit.
_PATH_FIELDS = frozenset({"file_path", "file_paths", "path", "paths", "mentions", "glob"})


def _check_paths(value: Any, where: str, entries: str | None = None) -> None:
    """Refuse, naming the field, a path that cannot become a file name's bytes. A lone
    surrogate is kept only in the form Python's file APIs give a name that is not UTF-8
    (U+DC80-U+DCFF for the bytes 0x80-0xFF, which readkeeper's own listings show); any
    other lone surrogate, or a NUL, names no file, and would fail deep inside a call.
    The top-level list `entries` (a batch's) is checked entry by entry (`check_entry`)."""
    if isinstance(value, dict):
        for key, item in value.items():
            field = f"{where}.{key}" if where else str(key)
            if key == entries and not where:
                _check_path_count(item, field)  # each entry is checked alone
                continue
            if key in _PATH_FIELDS:
                _check_path_value(item, field)
            elif isinstance(item, dict | list):
                _check_paths(item, field)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_paths(item, f"{where}[{index}]")


def _check_path_count(value: Any, field: str) -> None:
    """Refuse a list of paths naming more than `MAX_PATHS` different ones."""
    if not isinstance(value, list):
        return
    distinct = len({item for item in value if isinstance(item, str)})
    if distinct > MAX_PATHS:
        raise ReadkeeperError(
            "too_large",
            f"{field} names {distinct:,} different paths; one call takes at most "
            f"{MAX_PATHS:,}. Send the first {MAX_PATHS:,}, then the rest in another call.",
            field=field,
        )


def _check_path_value(value: Any, field: str) -> None:
    if isinstance(value, list):
        _check_path_count(value, field)
        for index, item in enumerate(value):
            _check_path_value(item, f"{field}[{index}]")
        return
    if not isinstance(value, str):
        return  # the shape is the structuring's to judge
    try:
        os.fsencode(value)
    except UnicodeEncodeError as exc:
        bad = value[exc.start]
        raise _path_error(field, f"holds U+{ord(bad):04X}, a lone surrogate") from None
    if "\x00" in value:
        raise _path_error(field, "holds a NUL character")


def _path_error(field: str, problem: str) -> ReadkeeperError:
    return ReadkeeperError(
        "bad_params",
        f"Invalid params: {field} {problem}, which no file name can contain. Send the path "
        "as the listing or the user gave it (readkeeper/glob finds a file by part of its "
        "name).",
        field=field,
    )


def _hint(cls: type[Any], field: str) -> str | None:
    """How to write `field` of `cls` right: the method's own words when its field means
    something else than another method's (a search's offset skips results, from 0; a
    read's is the first line, from 1)."""
    return _FIX_OF.get(cls.__name__, {}).get(field) or _FIX.get(field)


# A search's or listing's offset: results skipped, counted from 0.
_SKIPPED = (
    "Send how many results to skip as a whole number, 0 or more (0 shows the first; a "
    "cut answer's next names the offset that shows the rest), e.g. 1000."
)
# The fields whose meaning is a method's own.
_FIX_OF: dict[str, dict[str, str]] = {
    "GrepParams": {
        "offset": _SKIPPED,
        "max_matches": "Send the most matches (or files) to show as a whole number, 1 or "
        "more (a page shows at most 2000), or leave it out for the default of 100.",
        "context": "Send the lines to show around each match as a whole number from 0 to 20.",
    },
    "GlobParams": {"offset": _SKIPPED},
    "ListParams": {
        "offset": _SKIPPED,
        "depth": "Send how many folder levels to list as a whole number from 1 to 10.",
    },
}
# How to write each field right, said after what was wrong with it.
_FIX = {
    "file_path": "Send the file's path, absolute or relative to the workspace root, as a "
    'string, e.g. "src/app.py".',
    "offset": "Send the first line to read as a whole number (the first line is 1), e.g. 42.",
    "limit": "Send the number of lines to read as a whole number, e.g. 200, or leave it out "
    "for the default.",
    "pages": 'Send PDF pages as a string: "3", "1-5" or "2,4-6".',
    "symbol": 'Send a symbol name as a string: "Class.method" or "function".',
    "force": "Send true or false.",
    "render": "Send true or false.",
    "include_images": "Send true or false.",
    "replace_all": "Send true or false.",
    "session": 'Send the session name as a string, e.g. "chat-1".',
    "old_string": "Send the text to replace, exactly as the read showed it (without the line "
    "numbers), as a string.",
    "new_string": "Send the replacement text as a string (an empty string deletes).",
    "content": "Send the whole new content of the file as a string.",
    "paths": 'Send a list of paths, e.g. ["src/app.py"], or leave it out for all.',
    "budget_tokens": "Send the token budget as a whole number, e.g. 20000.",
    "types": 'Send a list of attachment types, e.g. ["diagnostics", "memory"].',
    "mentions": 'Send a list of paths, e.g. ["src/app.py"].',
    "file_paths": 'Send a list of paths, e.g. ["src/app.py", "README.md"].',
    "active_editor": 'Send an object, e.g. {"file_path": "src/app.py"}.',
    "active_editor.selection": 'Send an object, e.g. {"start": {"line": 3, "character": 0}, '
    '"end": {"line": 5, "character": 0}}, or leave it out.',
}


# Fields whose null means something ("unknown"), so they stay even when None.
_MEANINGFUL_NULLS = frozenset({"total_lines"})


def unstructure(result: Any) -> Any:
    """JSON-ready data with absent (None-valued) optional fields dropped."""
    return _drop_none(converter.unstructure(result))


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _drop_none(v) for k, v in value.items() if v is not None or k in _MEANINGFUL_NULLS
        }
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def check_budget_tokens(budget_tokens: int | None) -> None:
    """A call's total token budget (readMany, attachments): when given, 1 or more."""
    if budget_tokens is not None and budget_tokens < 1:
        raise ReadkeeperError(
            "bad_params", "budget_tokens must be 1 or more.", field="budget_tokens"
        )
