"""What a tool's `structuredContent` carries beside its text: the facts a program needs,
never a second rendering of what the model reads, and within the call's budget.

Hosts differ: some forward the text to the model, some the structured result, some both
(and then pay for both). Our tools declare no outputSchema, so the structured result is
optional; each channel keeps the call's budget on its own:

- the text fields a text block already shows are left out (a read's lines, a grep
  match's line, a change's diff, an attachment's body, a read_many refusal's message,
  an edit's snippet and diff); what is kept is counts, kinds, paths and sizes, where the
  page stopped and the next call's arguments, cut and partial flags, and notes;
- what is left is counted as it is sent (compact JSON, valid Unicode) and held to the
  call's budget (budget_tokens, or the cap its text keeps to: max_tokens, changes'
  total cap): a read_many's entries first name their path once, then a list too long for
  the budget (glob's paths, list's entries, grep's matches, ...) keeps its first entries
  (a listing's page one at least, as its text shows one however long),
  says so in `structured_cut` ({"field", "kept", "of"}, and on a paged listing the
  `offset` of the first entry left out, which its `next` then names too). The fixed
  fields of an answer (an empty page's note and next) are sent whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .. import quoting
from ..errors import MAX_CALL_NAME_CHARS, cut_name

# Each tool's long list in its structured result, the one cut to fit (None: no list).
_LISTS: dict[str, tuple[str, ...]] = {
    "glob": ("paths",),
    "list": ("entries",),
    "grep": ("matches", "files", "counts"),
    "changes": ("changes",),
    "attachments": ("attachments", "dropped"),
    "read_many": ("results",),
}
# The text a text block shows, left out of each entry of a list (or of the answer).
_ENTRY_TEXT = {"matches": ("text",), "changes": ("diff",), "attachments": ("content",)}
_EDIT_TEXT = ("snippet", "diff")
_PAGED = ("glob", "list", "grep")


def facts(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """`result` (a successful call's, reads already without their text) without the
    text its text block shows."""
    said = dict(result)
    for field, keys in _ENTRY_TEXT.items():
        entries = said.get(field)
        if isinstance(entries, list) and method in ("grep", "changes", "attachments"):
            said[field] = [_without(entry, keys) for entry in entries]
    if method in ("edit", "write"):
        said = _without(said, _EDIT_TEXT)
        if isinstance(said.get("edit"), dict):
            said["edit"] = _without(said["edit"], _EDIT_TEXT)
    if method == "read_many" and isinstance(said.get("results"), list):
        said["results"] = [_entry_facts(entry) for entry in said["results"]]
    return said


def _without(entry: Any, keys: tuple[str, ...]) -> Any:
    if not isinstance(entry, dict):
        return entry
    return {k: v for k, v in entry.items() if k not in keys}


def _entry_facts(entry: Any) -> Any:
    """A read_many refusal's kind and data, its message (the text shows it) left out; an
    entry's name as given cut past what a call shows whole (round 40: a path sent of
    any length came back whole)."""
    if not isinstance(entry, dict):
        return entry
    path = entry.get("file_path")
    if isinstance(path, str):
        entry = {**entry, "file_path": cut_name(path, MAX_CALL_NAME_CHARS)}
    if not isinstance(entry.get("error"), dict):
        return entry
    return {**entry, "error": _without(entry["error"], ("message",))}


def budget(method: str, arguments: dict[str, Any], settings: Any) -> int | None:
    """The token budget of a call of `method` (a tool with a list), None when it has
    none: its budget_tokens, else the cap its text keeps to (changes' total cap, the
    others' max_tokens)."""
    if method not in _LISTS and method != "stats":
        return None
    given = arguments.get("budget_tokens")
    if isinstance(given, int) and not isinstance(given, bool) and given > 0:
        return given
    if method == "changes":
        return int(settings.changes_total_max_tokens)
    return int(settings.max_tokens)


# The most characters of structured content, as sent, beside a text of at most 500,000
# (read/room.py ANSWER_MAX_CHARS): both travel in one message, which the Python SDK's
# HTTP client drops past 1 MiB. read_many's refusals of 100 paths of 3,000 controls
# each, at a budget of 1,000,000 tokens, made 1,834,623 characters (round 38).
MAX_CHARS = 250_000


def within(
    method: str,
    structured: dict[str, Any],
    cap: Callable[[], int],
    count: Callable[[str], int],
    offset: int = 0,
) -> dict[str, Any]:
    """`structured` held to `cap()` tokens (the call's budget; without one, the text's
    own tokens) as sent: its long list cut to the entries that fit, said in
    `structured_cut`, and to `MAX_CHARS`. Only answers with a list are counted (a read's
    or an edit's facts are a fixed few)."""
    fields = [f for f in _LISTS.get(method, ()) if _long(structured.get(f))]
    if not fields:
        return structured
    structured = quoting.valid_unicode(structured)
    most = cap()

    def fits(text: str) -> bool:  # (a token is a byte or more: a short one is not counted)
        return len(text) <= MAX_CHARS and (len(text.encode()) <= most or count(text) <= most)

    if fits(sent(structured)):
        return structured
    if method == "read_many":  # each entry's path once, before any entry is left out
        structured = {**structured, "results": [_once(e) for e in structured["results"]]}
        if fits(sent(structured)):
            return structured
    # The longest list first, then the next while still over (attachments: the dropped).
    for field in sorted(fields, key=lambda f: -len(structured[f])):
        structured = _fitted(method, structured, field, (most, count, fits), offset)
        if fits(sent(structured)):
            break
    return structured


def _fitted(
    method: str,
    structured: dict[str, Any],
    field: str,
    held: tuple[int, Callable[[str], int], Callable[[str], bool]],
    offset: int,
) -> dict[str, Any]:
    most, count, fits = held
    entries: list[Any] = structured[field]
    base = sent({**structured, field: [], "structured_cut": {"field": field, "kept": 0, "of": 0}})
    room, chars = most - count(base), MAX_CHARS - len(base)
    kept = 0
    for entry in entries:
        said = sent(entry)
        room, chars = room - count(said) - 1, chars - len(said) - 1  # its comma
        if room < 0 or chars < 0:
            break
        kept += 1
    # A page of a listing keeps one entry however long, as its text shows one.
    least = 1 if method in _PAGED else 0
    while True:  # the sum of the entries' counts is close, not exact: checked whole
        kept = max(kept, least)
        fitted = _cut(method, structured, field, kept, offset)
        if kept <= least or fits(sent(fitted)):
            return fitted
        kept = kept * 9 // 10


def _once(entry: Any) -> Any:
    """A read_many entry with its path said once: the read's or refusal's own copy of
    it left out when it is the entry's."""
    if not isinstance(entry, dict):
        return entry
    path = entry.get("file_path")
    result: Any = entry.get("result")
    error: Any = entry.get("error")
    file = result.get("file") if isinstance(result, dict) else None
    if isinstance(file, dict) and file.get("file_path") == path:
        return {**entry, "result": {**result, "file": _without(file, ("file_path",))}}
    data = error.get("data") if isinstance(error, dict) else None
    if isinstance(error, dict) and isinstance(data, dict) and data.get("file_path") == path:
        return {**entry, "error": {**error, "data": _without(data, ("file_path",))}}
    return entry


def _long(value: Any) -> bool:
    return isinstance(value, list) and len(value) > 0


def _cut(
    method: str, structured: dict[str, Any], field: str, kept: int, offset: int
) -> dict[str, Any]:
    entries = structured[field]
    said: dict[str, Any] = {"field": field, "kept": kept, "of": len(entries)}
    if method in _PAGED:
        said["offset"] = offset + kept  # the next call's offset for the entries left out
    cut = {**structured, field: entries[:kept], "structured_cut": said}
    following = structured.get("next")
    if method in _PAGED:
        cut["partial"] = True
        if isinstance(following, dict) and "offset" in following:
            # The rest of this structured page: from the first entry it left out.
            cut["next"] = {**following, "offset": offset + kept}
    return cut


def sent(value: Any) -> str:
    """`value` as the SDK sends it: compact JSON, text as it is (not \\u-escaped)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


__all__ = ["facts", "sent", "within"]
