"""ripgrep's `--json` output as one block per file, put in path order, parsed only as far
as a page needs.

ripgrep's threads finish files in any order, but each file's messages come out together
(`begin`, its matches and context, `end`). So a search's output is cut into blocks by
`begin` lines (one message parsed per file), its matches counted by a byte prefix, and
only the blocks a page shows are parsed whole: a search with a hundred thousand matches
costs little more than one with a hundred.

A search of single lines reads ripgrep's plain output instead (`PLAIN_FLAGS`: each line
`path NUL number:text`, `-` for context, a third the bytes of `--json`, which ripgrep
takes longer to write and this process to cut). It is exact only while every line
holds a NUL after its path: a line without one is a path holding a newline, or one of
ripgrep's own messages about a binary file (which `--json` leaves out, showing its
lines): `plain_blocks` then answers None, and the search is made again with `--json`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from . import rg
from .above import Above
from .globs import Glob

_BEGIN = b'{"type":"begin"'
_MATCH = b'{"type":"match"'
_END = b'{"type":"end"'
# ripgrep's plain output, one line per line found, always the path first.
PLAIN_FLAGS = (
    "--line-number",
    "--with-filename",
    "--null",
    "--no-heading",
    "--color=never",
    "--no-context-separator",
)


@dataclass(frozen=True)
class Line:
    """A line of a result: a match's (`event` numbers the match it is part of) or
    context's."""

    path: str
    number: int
    text: str
    match: bool
    event: int = 0


@dataclass
class Block:
    """One file's messages."""

    path: str
    raw: list[bytes] = field(default_factory=list)
    matches: int = 0  # match messages (a multiline match is one)
    # Not 0: raw holds lines of plain output, their `number:text` from this offset.
    plain: int = 0


def blocks(
    root: str,
    cwd: str,
    output: Iterable[bytes],
    matcher: Glob | None,
    above: Above | None = None,
) -> list[Block]:
    """The files' blocks, in path order; paths not beneath `root`, not matching the
    glob, or hidden by the ignore files `above` the folder searched, are left out."""
    inside = rg.Beneath(root, cwd)
    found: list[Block] = []
    current: Block | None = None
    for raw in output:
        if raw.startswith(_BEGIN):
            current = None
            for event in rg.events([raw]):
                data = event.get("data")
                path = data.get("path") if isinstance(data, dict) else None
                printed = rg.text_of(path, "surrogateescape")
                printed = printed.removeprefix("./")
                if matcher is not None and not matcher.matches(printed):
                    continue
                if above is not None and above.hides(printed):
                    continue
                path = inside(printed)
                if path is not None:
                    current = Block(path)
                    found.append(current)
        elif current is not None:
            current.raw.append(raw)
            if raw.startswith(_MATCH):
                current.matches += 1
    found.sort(key=lambda block: block.path)
    return found


def plain_blocks(
    root: str,
    cwd: str,
    output: Iterable[bytes],
    matcher: Glob | None,
    above: Above | None = None,
    *,
    context: bool = True,
) -> list[Block] | None:
    """`blocks` of ripgrep's plain output (PLAIN_FLAGS); None when it is not exact (a
    line without the NUL after its path): search again with `--json`. `context`: False
    when the search asked for none (every line is then a match)."""
    inside = rg.Beneath(root, cwd)
    found: list[Block] = []
    left_out: list[bytes] = []  # the lines of a file left out, dropped at the end
    add = left_out.append
    prefix = b"\0"  # the path and NUL every line of the current file starts with
    for raw in output:
        if raw.startswith(prefix):  # a file's lines come together: one test a line
            add(raw)
            continue
        printed, nul, _ = raw.partition(b"\0")
        if not nul:
            return None
        prefix, add = printed + nul, left_out.append
        shown = os.fsdecode(printed).removeprefix("./")
        hidden = matcher is not None and not matcher.matches(shown)
        if not hidden and not (above is not None and above.hides(shown)):
            path = inside(shown)
            if path is not None:
                found.append(Block(path, plain=len(prefix)))
                add = found[-1].raw.append
        add(raw)
    for block in found:
        if not context:
            block.matches = len(block.raw)
        else:
            start = block.plain
            block.matches = sum(1 for line in block.raw if _MATCH_NUMBER.match(line, start))
    found.sort(key=lambda block: block.path)
    return found


_MATCH_NUMBER = re.compile(rb"\d+:")
_NUMBER = re.compile(rb"(\d+)([:-])")


def counts(found: list[Block]) -> dict[str, int]:
    """Matches per file, as ripgrep counts them (every match on a line)."""
    result: dict[str, int] = {}
    for block in found:
        for event in rg.events([raw for raw in block.raw if raw.startswith(_END)]):
            data = event.get("data")
            stats = data.get("stats") if isinstance(data, dict) else None
            if isinstance(stats, dict) and stats.get("matches"):
                result[block.path] = int(stats["matches"])
    return result


def lines(found: list[Block], skip: int) -> Iterator[Line]:
    """The lines of the blocks in order, from after the first `skip` matches (with the
    context before the next match)."""
    event_id = 0
    for block in found:
        if skip >= block.matches:
            skip -= block.matches
            event_id += block.matches
            continue
        parsed = list(_block_lines(block, event_id))
        event_id += block.matches
        if skip:
            first_event = min(line.event for line in parsed if line.match)
            last_skipped = max(
                i for i, line in enumerate(parsed) if line.match and line.event < first_event + skip
            )
            parsed = parsed[last_skipped + 1 :]
            skip = 0
        yield from parsed


def _block_lines(block: Block, event_id: int) -> Iterator[Line]:
    if block.plain:
        yield from _plain_lines(block, event_id)
        return
    seen: set[int] = set()
    for event in rg.events(block.raw):
        kind, data = event.get("type"), event.get("data")
        if kind not in ("match", "context") or not isinstance(data, dict):
            continue
        number = data.get("line_number")
        if not isinstance(number, int):
            continue
        if kind == "match":
            event_id += 1
        text = rg.text_of(data.get("lines"))
        for i, part in enumerate(text.removesuffix("\n").split("\n")):
            if number + i in seen:
                continue
            seen.add(number + i)
            yield Line(block.path, number + i, part.removesuffix("\r"), kind == "match", event_id)


def _plain_lines(block: Block, event_id: int) -> Iterator[Line]:
    """`_block_lines` of plain output: a line each, decoded as `--json`'s text is."""
    for raw in block.raw:
        number = _NUMBER.match(raw, block.plain)
        if number is None:
            continue
        match = number[2] == b":"
        if match:
            event_id += 1
        text = raw[number.end() :].decode("utf-8", "replace").removesuffix("\r")
        yield Line(block.path, int(number[1]), text, match, event_id)
