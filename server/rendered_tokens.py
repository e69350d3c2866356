"""`tokens` as a front end that sends reads as text counts them (issue 34).

The core counts what the LSP front end sends: a read's JSON fields (a notebook's cells as
compact JSON, rendered pages' result, a text's raw lines). MCP and the CLI send
render.py's text instead, so there a read's `tokens` is the exact count of that text:
the lines under readkeeper's header line and above its note (`render.body`), the rule a
plain text read has always followed on MCP (its numbered lines, nothing else). A
notebook's images, sent as images beside the text, add their own `tokens` (a formula of
their pixels) on every front end alike.

Most reads need no second count: a text, a PDF's page text or a diff without a line
break but LF is shown as it is sent over LSP. Notebooks, outlines and rendered pages are
counted again, as shown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import quoting, render

# The kinds whose LSP count is of one field that render.body shows escaped (quoting.lines).
_ONE_FIELD = {"text": "content", "pdf": "content", "file_changed": "diff"}


# The exact tokens of texts joined by a separator, made of the texts' counts
# (read/joined.py): an outline's are counted once for both front ends.
Joined = Callable[[Sequence[str], str], int]


def recounted(
    result: Any,
    count: Callable[[str], int],
    joined: Joined | None = None,
    steps: render.Steps | None = None,
) -> Any:
    """`result` (a read's JSON) with its file's `tokens` the count of its rendered text
    (of its parts by `joined`, when given and the text is made of parts; its next steps
    in the words `steps` gives them, as render.read is given them)."""
    if not isinstance(result, dict) or not isinstance(result.get("file"), dict):
        return result
    file = result["file"]
    if not isinstance(file.get("tokens"), int):
        return result
    field = _ONE_FIELD.get(str(result.get("type")))
    if field is not None and not quoting.has_break(str(file.get(field, ""))):
        return result  # shown as sent: the core's count is the count
    parts = render.body_parts(result) if joined is not None else None
    if joined is not None and parts is not None:
        tokens = joined(*parts)
        return {**result, "file": {**file, "tokens": tokens}}
    shown = render.body(result, steps)
    if shown is None:
        return result
    tokens = count(shown) + (_image_tokens(file) if result.get("type") == "notebook" else 0)
    return {**result, "file": {**file, "tokens": tokens}}


def recounted_many(result: Any, count: Callable[[str], int], joined: Joined | None = None) -> Any:
    """A readMany result with each file's read `recounted` (its budget left is said by
    the front end as it sends the text: mcp/render.with_left_as_sent)."""
    if not isinstance(result, dict) or not isinstance(result.get("results"), list):
        return result
    items: list[Any] = []
    for item in result["results"]:
        if isinstance(item, dict) and "result" in item:
            item = {**item, "result": recounted(item["result"], count, joined)}
        items.append(item)
    return {**result, "results": items}


def _tokens(result: Any) -> int:
    file = result.get("file") if isinstance(result, dict) else None
    return int(file.get("tokens") or 0) if isinstance(file, dict) else 0


def _image_tokens(file: dict[str, Any]) -> int:
    return sum(
        int(image.get("tokens") or 0)
        for cell in file.get("cells") or []
        for output in cell.get("outputs") or []
        for image in output.get("images") or []
    )


def as_sent(
    method: str, result: Any, count: Callable[[str], int], joined: Joined | None = None
) -> Any:
    """A `read` or `readMany` result with its reads `recounted`; any other as it is."""
    if method == "read":
        return recounted(result, count, joined)
    if method == "readMany":
        return recounted_many(result, count, joined)
    return result
