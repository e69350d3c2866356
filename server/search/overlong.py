"""Matching lines too long to hold: a match on a line of over a mebibyte (a minified
file's one line) is one line of ripgrep's output past `rg_output.MAX_OUTPUT_LINE_BYTES`,
skipped unread. The answer says so rather than leave the match out without a word
(round 41: a 1.1 MB line holding `eval(PAYLOAD)` was hidden, the answer "No matches."
and not partial): it is marked partial, and its note names the first such line and the
read that shows it (cut, as a read cuts every long line).

Where the line is comes from the ends of the output line kept (`rg_output.Overlong`):
ripgrep's JSON begins with the path and ends with the line number when the line's
matches are few; its plain output begins `path NUL number:` for a file's first line
(`blocks.PLAIN_FLAGS`). When neither tells, the note says how many without naming one.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .. import quoting
from ..hints import call
from ..words import count
from .rg import Beneath, Run

_JSON_PATH = re.compile(rb'"path":\{"text":"((?:[^"\\]|\\.)*)"\}')
_JSON_LINE = re.compile(rb'"line_number":(\d{1,12}),')
_PLAIN_LINE = re.compile(rb"(\d{1,12}):")
_NOTHING_FOUND = ("No matches.", "No files match.")


def said(result: dict[str, Any], ran: Run, root: str, cwd: str) -> dict[str, Any]:
    """`result` marked partial and its note saying which matches it left out, when the
    run skipped lines of output for their length."""
    context = ran.overlong.context
    skipped = ran.overlong.count - context
    if not skipped and not context:
        return result
    sentences = []
    if skipped:
        each, was = ("", "was") if skipped == 1 else (" each", "were")
        sentence = (
            f"{count(skipped, 'matching line')} too long to hold (about a mebibyte or more"
            f"{each}) {was} left out"
        )
        first = _first(ran.overlong.ends, Beneath(root, cwd))
        if first is not None and first[1] is None:  # its matches fill the end of the line
            sentence += f"; the first is in {quoting.name(first[0])}"
        elif first is not None:
            path, line = first
            read = call("read", file_path=path, offset=line, limit=1)
            sentence += f"; the first is line {line:,} of {quoting.name(path)}: {read} shows it cut"
        sentences.append(sentence + ".")
    if context:  # round 44: a matching line's neighbour left out without a word
        was = "was" if context == 1 else "were"
        sentences.append(
            f"{count(context, 'context line')} too long to hold {was} left out: a read of "
            "the lines around a match shows them, cut."
        )
    notes = [n for n in [result.get("note", "")] if n and n not in _NOTHING_FOUND]
    result["note"] = " ".join([*notes, *sentences])
    result["partial"] = True
    return result


def _first(ends: list[tuple[bytes, bytes]], beneath: Beneath) -> tuple[str, int | None] | None:
    """The path and line number of the first skipped line that tells them."""
    for head, tail in ends:
        found = _where(head, tail)
        if found is None:
            continue
        path = beneath(found[0])  # None when it leads out: never named
        if path is not None:
            return path, found[1]
    return None


def _where(head: bytes, tail: bytes) -> tuple[str, int | None] | None:
    """The path and line number (None when its end does not say) of a skipped line."""
    if head.startswith(b'{"type":"match"'):
        path, line = _JSON_PATH.search(head), _JSON_LINE.search(tail)
        if path is None:
            return None
        try:
            name = json.loads(b'"' + path.group(1) + b'"')
        except ValueError:
            return None
        number = int(line.group(1)) if line is not None else None
        return (name, number) if isinstance(name, str) else None
    name, nul, rest = head.partition(b"\0")
    plain = _PLAIN_LINE.match(rest) if nul else None
    if plain is None:
        return None
    return name.decode("utf-8", "surrogateescape"), int(plain.group(1))
