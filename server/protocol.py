"""The protocol's request and result types, and their conversion at the edge.

Params arrive as loose JSON: numbers as strings ("42"), unknown extra fields from newer
clients. They are structured here, once, into typed params, and anything malformed
becomes `bad_params` naming the field. Results are attrs classes unstructured to JSON
with absent (None) fields left out.
"""

from __future__ import annotations

import re
from typing import Any, Literal, TypeVar

import attrs
import cattrs
from cattrs.errors import AttributeValidationNote, ClassValidationError, IterableValidationError

from .errors import ReadkeeperError

T = TypeVar("T")

# --- params -----------------------------------------------------------------------------


@attrs.frozen
class ReadParams:
    file_path: str
    offset: int | None = None  # 1-based first line; 0 is taken as 1
    limit: int | None = None  # lines; the default limit when absent
    pages: str | None = None
    session: str = ""
    force: bool = False


@attrs.frozen
class ForgetParams:
    session: str = ""
    paths: list[str] | None = None


@attrs.frozen
class StatsParams:
    session: str | None = None


# --- results ----------------------------------------------------------------------------


@attrs.frozen
class TextFile:
    file_path: str
    content: str
    start_line: int
    num_lines: int
    total_lines: int | None  # None when a ranged read of a huge file stopped before EOF
    tokens: int
    encoding: str
    line_ending: str
    partial: bool = False
    next_offset: int | None = None
    note: str | None = None
    unsaved: bool | None = None
    buffer_version: int | None = None
    truncated_lines: int | None = None


@attrs.frozen
class TextResult:
    file: TextFile
    type: Literal["text"] = "text"


@attrs.frozen
class UnchangedFile:
    file_path: str


@attrs.frozen
class UnchangedResult:
    file: UnchangedFile
    type: Literal["file_unchanged"] = "file_unchanged"


ReadResult = TextResult | UnchangedResult


# --- conversion -------------------------------------------------------------------------

_INT_RE = re.compile(r"\s*[+-]?\d+\s*")


def _structure_int(value: Any, _: type) -> int:
    if isinstance(value, bool):
        raise ValueError(f"expected a whole number, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INT_RE.fullmatch(value):
        return int(value)
    raise ValueError(f"expected a whole number, got {value!r}")


def _structure_bool(value: Any, _: type) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError(f"expected true or false, got {value!r}")


def _structure_str(value: Any, _: type) -> str:
    if isinstance(value, str):
        return value
    raise ValueError(f"expected a string, got {value!r}")


def _make_converter() -> cattrs.Converter:
    converter = cattrs.Converter(omit_if_default=False)
    converter.register_structure_hook(int, _structure_int)
    converter.register_structure_hook(bool, _structure_bool)
    converter.register_structure_hook(str, _structure_str)
    return converter


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
            joined = f"{prefix}.{name}" if prefix and name else prefix or name
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
    try:
        return converter.structure(params, cls)
    except (ClassValidationError, ValueError, TypeError, KeyError) as exc:
        field, problem = _first_problem(exc)
        raise ReadkeeperError(
            "bad_params",
            f"Invalid params: {field or 'params'} {problem}.".replace(" .", "."),
            field=field,
        ) from None


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
