"""A request whose JSON spells a lone UTF-16 surrogate (`"\\udc80"`): valid JSON, but
the SDK's parser refuses it and drops the line, so the client would wait for good.
readkeeper answers it itself, before the SDK sees it: `bad_params` naming the field,
as the LSP front end does for a path no file name can hold.

Only a line holding such an escape is parsed here (a raw surrogate cannot reach us:
stdin is decoded with replacement), so every other line costs one regex search.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..protocol.convert import LONE_SURROGATE

_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_LONE = re.compile("[\ud800-\udfff]")
_FIELD_DEPTH = 32


# The tools whose list of paths is read entry by entry, one bad entry refused alone
# (read/many.py): an entry holding a lone surrogate goes on to be refused there.
_BATCH_LISTS = {"read_many": "file_paths", "read_multiple_files": "paths"}


def mend(line: bytes) -> bytes:
    """`line` with each entry of a batch read's list that holds a lone surrogate escape
    carried as `LONE_SURROGATE` and its text with the surrogates as `\\udXXX` (the SDK
    takes it; the entry is refused alone, the others read); any other line as it is
    (one still holding such an escape is `refusal`'s)."""
    if not _ESCAPE.search(line):
        return line
    try:
        message = json.loads(line)
    except ValueError:
        return line
    params = message.get("params") if isinstance(message, dict) else None
    if not isinstance(params, dict) or message.get("method") != "tools/call":
        return line
    name, arguments = params.get("name"), params.get("arguments")
    field = _BATCH_LISTS.get(name) if isinstance(name, str) else None
    if field is None or not isinstance(arguments, dict):
        return line
    entries = arguments.get(field)
    if not isinstance(entries, list):
        return line
    mended = [
        LONE_SURROGATE + _shown(entry) if isinstance(entry, str) and _LONE.search(entry) else entry
        for entry in entries
    ]
    if mended == entries:
        return line
    arguments[field] = mended
    # NaN and Infinity elsewhere are written back as they came (the SDK's parser takes
    # them; the core refuses them, naming their field).
    return json.dumps(message, ensure_ascii=True).encode() + b"\n"


def refusal(line: bytes) -> bytes | None:
    """The JSON-RPC error line answering `line` if it is a request holding a lone
    surrogate in a string; None for every other line (the SDK takes it)."""
    if not _ESCAPE.search(line):
        return None
    try:
        message = json.loads(line)  # unlike orjson and the SDK, accepts lone surrogates
    except ValueError:
        return None
    if not isinstance(message, dict) or "method" not in message:
        return None
    field = _lone_field(message.get("params"), [])
    if field is None or message.get("id") is None:
        return None  # nothing to refuse, or a notification (nobody waits for it)
    leaf = field[-1] if field else "params"
    if leaf.isdigit() and len(field) > 1:  # a list's entry, named as its list's
        leaf = f"{field[-2]}[{leaf}]"
    answer = {
        "jsonrpc": "2.0",
        "id": message["id"],
        "error": {
            "code": -32602,
            "message": (
                f"{leaf} holds a lone UTF-16 surrogate escape, which no file name or text "
                "can hold; send the name as the listing gave it (UTF-8, or \\u escapes "
                "in pairs)."
            ),
            "data": {"kind": "bad_params", "field": leaf, "where": ".".join(field)},
        },
    }
    return json.dumps(answer, ensure_ascii=True).encode() + b"\n"


def _lone_field(value: Any, where: list[str]) -> list[str] | None:
    """The keys leading to the first string (or key) holding a lone surrogate."""
    if len(where) > _FIELD_DEPTH:
        return where
    if isinstance(value, str):
        return where if _LONE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = [*where, _shown(key)]
            if _LONE.search(key):
                return here
            found = _lone_field(item, here)
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _lone_field(item, [*where, str(index)])
            if found is not None:
                return found
    return None


def _shown(key: str) -> str:
    return key.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
