"""A drop-in call's arguments, checked (a `bad_params` naming the field otherwise), and
its way to the core (`Served`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from ... import quoting
from ...errors import ReadkeeperError
from ...protocol.convert import as_sent, converter

Call = Callable[[str, dict[str, Any]], Any]
Content = types.TextContent | types.ImageContent


@dataclass
class Served:
    """One call's way to the core, and the roots it may reach."""

    call: Call
    roots: Callable[[], list[str]]
    session: str | None = None
    # Callers sharing one session that cannot be told apart (HTTP without a session
    # id): none may get a stub for what another read.
    force_reads: bool = False

    def ask(self, method: str, **params: Any) -> Any:
        """`method` with `params` (None values left out), in this call's session."""
        sent = {k: v for k, v in params.items() if v is not None}
        if self.session is not None:
            sent["session"] = self.session
        if self.force_reads and method in ("read", "readMany") and not sent.get("estimate"):
            sent["force"] = True
        return self.call(method, sent)


# How to write each argument right, said after what was wrong with it (the core's
# `_hint`, in the drop-in's names).
_FIX = {
    "path": 'Send the path as a string, absolute or relative to the first root: path="src/app.py".',
    "source": 'Send the path to move as a string: source="old.txt".',
    "destination": 'Send the new path as a string: destination="new.txt".',
    "pattern": 'Send a glob pattern as a string: pattern="**/*.py".',
    "content": "Send the file's whole new text as a string.",
    "head": "Send how many lines to show as a whole number, 0 or more: head=20.",
    "tail": "Send how many lines to show as a whole number, 0 or more: tail=20.",
    "offset": "Send the first line to read as a whole number (the first line is 1): offset=1.",
    "paths": 'Send a list of path strings: paths=["a.txt", "b.txt"].',
    "edits": 'Send a list of objects: edits=[{"oldText": "old", "newText": "new"}].',
    "sortBy": 'Send "name" or "size", or leave sortBy out for "name".',
}


def refused(field: str, problem: str, value: Any, named: str = "") -> ReadkeeperError:
    """A drop-in argument's refusal in the core's words (protocol/convert.py): the
    field, what it takes, the value as the JSON sent (`as_sent`), then how to write it.
    Every check of a drop-in argument ends here; `named` is the part refused
    (`edits[2]`) when it is not the whole field."""
    said = quoting.phrase(f"{named or field} {problem}, got {as_sent(value)}")
    fix = _FIX.get(field.split("[", 1)[0], f"Send {field} as the tool's schema gives it.")
    if problem == "expected true or false":
        fix = f"Send true or false: {field}=true, or leave {field} out for false."
    return ReadkeeperError("bad_params", f"Invalid params: {said}. {fix}", field=field)


def string(args: dict[str, Any], field: str) -> str:
    value = args.get(field)
    if not isinstance(value, str) or not value:
        raise refused(field, "expected a non-empty string", value)
    return value


def count(args: dict[str, Any], field: str) -> int | None:
    """A whole number, 0 or more, taken as the core takes one (a string of digits, 2.0;
    never NaN, Infinity or a number past the protocol's range); None when not sent."""
    value = args.get(field)
    if value is None:
        return None
    try:
        number: int = converter.structure(value, int)
    except ValueError as exc:
        raise refused(field, str(exc).rsplit(", got ", 1)[0], value) from None
    if number < 0:
        raise refused(field, "expected a whole number, 0 or more", value)
    return number


def flag(args: dict[str, Any], field: str) -> bool:
    """true or false (or their strings, as the core takes them); false when not sent.
    Never a number: 0 == False in Python, and dryRun=0 made a real edit."""
    value = args.get(field)
    if value is None:
        return False
    try:
        return converter.structure(value, bool)
    except ValueError:
        raise refused(field, "expected true or false", value) from None


def listed(args: dict[str, Any], field: str) -> list[Any]:
    """A non-empty JSON array (its entries are checked where they are used)."""
    value = args.get(field)
    if not isinstance(value, list) or not value:
        raise refused(field, "expected a non-empty list", value)
    return value


def text_block(value: str) -> types.TextContent:
    return types.TextContent(text=value)
