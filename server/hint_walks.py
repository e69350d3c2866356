"""A front end's words for the next steps in a result readkeeper wrote: `notes` walks a
result's notes (an MCP tool's, an LSP client's agent tools', a readMany entry's), and
`page_steps` a PDF read's pages (the CLI's, the drop-in's). The words are hints.py's."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from .errors import is_diff, shown_content
from .hints import again

# A front end's words for a message readkeeper wrote: `say(message, keep)`, `keep` the
# file's text the message shows (as `rewrite` keeps it).
Say = Callable[[str, Iterable[str]], str]


def notes(result: Any, say: Say) -> Any:
    """`result` with the notes readkeeper wrote in it said by `say` (a front end's words
    for its next calls): its note, its file's, each dropped attachment's reason, what
    stands for a diff too costly to make (an edit's, a file_changed's, each change's), and each
    of a readMany's results (its read's notes, or its refusal's message, the file's text
    the refusal shows kept). A file's own text is left as it is. One walk for every front
    end that rewords results (MCP's tools, an LSP client's agent tools)."""
    if not isinstance(result, dict):
        return result
    said = _own(_own(dict(result), "note", say), "diff", say)
    file = said.get("file")
    if isinstance(file, dict):
        said["file"] = _own(_own(file, "note", say), "diff", say)
    if isinstance(said.get("dropped"), list):
        said["dropped"] = [_own(item, "reason", say) for item in said["dropped"]]
    if isinstance(said.get("changes"), list):
        said["changes"] = [_own(item, "diff", say) for item in said["changes"]]
    if isinstance(said.get("results"), list):
        said["results"] = [_entry(item, say) for item in said["results"]]
    return said


def _own(item: Any, field: str, say: Say) -> Any:
    """`item` with its `field` said by `say` when it holds readkeeper's words: a note or
    a reason, and a `diff` that is none (errors.is_diff: a change too costly to diff,
    said so); a diff is a file's text, left as it is."""
    text = item.get(field) if isinstance(item, dict) else None
    if not isinstance(text, str) or (field == "diff" and is_diff(text)):
        return item
    return {**item, field: say(text, ())}


def _entry(item: Any, say: Say) -> Any:
    """A readMany entry: its read's notes, or its refusal's message."""
    if not isinstance(item, dict):
        return item
    if "result" in item:
        return {**item, "result": notes(item["result"], say)}
    error = item.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        data = error.get("data")
        kept = shown_content(data) if isinstance(data, dict) else ()
        return {**item, "error": {**error, "message": say(error["message"], kept)}}
    return item


# The end of a PDF page's note that names drawing the page (read/readers/pdf.py's
# `_unread`), as the core writes it: `pages="N", render=true`.
_DRAW_IT = ': read it as an image with pages="{}", render=true]'
_PAGE_HEADER = re.compile(r"--- page (\d+) ---")


def page_steps(content: str, words: Callable[[str], str]) -> str:
    """A PDF read's pages (`content`) with each page's note naming the read that draws it
    (the same read, its pages changed) as `words` (a front end's) says it. Only
    readkeeper's own notes are reworded: the line after a page's header that is no fence,
    and only its end, which names the page's own number; a page's text (fenced, the fence
    closed by its own backticks alone) and a note's account of the failure are left as
    they are."""
    lines = content.split("\n")
    page: str | None = None  # the number of the header just before, outside any fence
    fence: str | None = None
    for at, line in enumerate(lines):
        if fence is not None:
            fence = None if line == fence else fence
        elif page is not None and line.startswith("```"):
            fence = line  # quoting.fence: opened by backticks alone, closed by the same
        elif page is not None and line.endswith(_DRAW_IT.format(page)):
            drawn = line[: -len(_DRAW_IT.format(page))]
            drawing = again(pages=page, render=True)
            lines[at] = drawn + words(f": read it as an image, {drawing}]")
        found = _PAGE_HEADER.fullmatch(line) if fence is None else None
        page = found.group(1) if found else None
    return "\n".join(lines)
